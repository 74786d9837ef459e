# A recursive function with a local OPTIND and getopts over grouped options:
# the caller's loop resumes where it was (it used to restart forever).
f() {
	local OPTIND=1 o n=$1
	shift
	while getopts abc o "$@"; do
		echo "$n: $o (OPTIND=$OPTIND)"
		if [ "$o" = a ] && [ "$n" -lt 3 ]; then f $((n + 1)) -ab -c; fi
	done
	echo "$n: done OPTIND=$OPTIND"
}
f 1 -ab -c
# the callee's arguments are shorter than the caller's position in its group
g() {
	local OPTIND=1 o
	while getopts xyz o "$@"; do
		echo "g $* -> $o"
		[ "$o" = y ] && g -z
	done
}
g -xyz
# a grouped position never outlives its argument
getopts ab x -ab; echo "$x $OPTIND"; getopts ab x -c 2>/dev/null; echo "$x $OPTIND $?"
OPTIND=1; while getopts :a:bc o -a1 -b -c -d -a; do echo "$o ${OPTARG-unset} $OPTIND"; done
echo "end $OPTIND"
set -- -xy -z arg rest
OPTIND=1; while getopts xyz: o; do echo "$o ${OPTARG-}"; done; shift $((OPTIND - 1)); echo "$@"
OPTIND=3; getopts a o -a; echo "$o $? $OPTIND"
# local OPTIND without a value, nested groups, option arguments
f() { local OPTIND o; while getopts "ab" o "$@"; do echo "f$#:$o"; [ "$o" = a ] && f -b; done; }; f -a -b
g() { local OPTIND=1 o; while getopts "abc" o "$@"; do echo "g:$o $OPTIND"; case $o in a) g -bc;; b) g -c;; esac; done; }; g -abc -a
h() { local OPTIND o; while getopts ":x:y" o "$@"; do echo "h:$o:${OPTARG-}"; [ "$o" = x ] && h -y; done; }; h -xarg -y -x v
