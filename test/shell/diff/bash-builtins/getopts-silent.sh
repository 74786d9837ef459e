set -- -z; getopts ":a" o; echo "$o $OPTARG"
