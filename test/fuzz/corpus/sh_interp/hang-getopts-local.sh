# a recursive function with a local OPTIND over grouped options
f() { local OPTIND=1 o n=$1; shift; while getopts abc o "$@"; do [ "$o" = a ] && [ "$n" -lt 3 ] && f $((n + 1)) -ab -c; done; }; f 1 -ab -c
g() { local OPTIND o; while getopts xyz o "$@"; do [ "$o" = y ] && g -z; done; }; g -xyz
