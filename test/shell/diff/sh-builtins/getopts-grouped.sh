set -- -xy file; while getopts xy o; do echo $o; done; shift $((OPTIND-1)); echo $1
