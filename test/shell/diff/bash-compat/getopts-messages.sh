# getopts' messages as bash's: "$0: illegal option -- c" (none with OPTERR=0), its usage
# line alone, -a an invalid option, a bad NAME still moves OPTIND
getopts; echo $?
getopts opts; echo $?
getopts -a opts name; echo $?
set -- -x -y -b
getopts xb: o; echo "$? $o"
getopts xb: o; echo "$? $o ${OPTARG-unset}"
getopts xb: o; echo "$? $o ${OPTARG-unset}"
OPTIND=1 OPTERR=0
getopts x o; getopts x o; echo "quiet $? $o"
OPTIND=1 OPTERR=1
getopts :x bad-name; echo "$? OPTIND=$OPTIND"
readonly OPTARG; OPTIND=2; getopts x o; echo "ro $? $o"
