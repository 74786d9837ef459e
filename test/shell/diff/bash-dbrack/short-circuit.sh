x=0; [[ 1 == 2 && $(x=1; echo a) == a ]]; echo $?
[[ 1 == 1 || -f $(echo nofile) ]] && echo short
unset u; set -u; [[ -n "${u-}" && $u == x ]] || echo guarded
