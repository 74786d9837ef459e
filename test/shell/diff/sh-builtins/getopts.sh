set -- -a -b val c; while getopts ab: o; do echo "$o ${OPTARG-}"; done; echo $OPTIND
