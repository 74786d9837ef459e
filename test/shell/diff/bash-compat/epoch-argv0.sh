# EPOCHSECONDS, EPOCHREALTIME (the clock now) and BASH_ARGV0 (assigning sets $0), as bash
now=$(date +%s); e=$EPOCHSECONDS
(( e >= now - 2 && e <= now + 2 )) && echo secs ok
r=$EPOCHREALTIME; [[ $r =~ ^[0-9]+\.[0-9]{6}$ ]] && echo real ok
(( ${r%.*} >= now - 2 )) && echo real near
[[ $BASH_ARGV0 == "$0" ]] && echo same
BASH_ARGV0=hello; echo "$0 $BASH_ARGV0"
f() { BASH_ARGV0=$1; }; f arg0; echo "$0 $BASH_ARGV0"
