# getopts clears OPTARG at the end of the options and after a reported error even when it is
# readonly (bash's unbind); after an option without an argument a readonly OPTARG stays
set -- -a -b x -- y
OPTARG=5; getopts a o; echo "o=$o ${OPTARG-unset}"
OPTARG=5; getopts a o 2>&1; echo "o=$o ${OPTARG-unset}"
OPTARG=5; getopts a o; echo "st=$? o=$o ${OPTARG-unset}"
bash -c 'set -- -a; readonly OPTARG=5; getopts a o; declare -p OPTARG' 2>&1
bash -c 'set -- -b; readonly OPTARG=5; getopts a o; declare -p OPTARG' 2>&1
bash -c 'set -- b; readonly OPTARG=5; getopts a o; echo "${OPTARG-unset}"' 2>&1
bash -c 'set --; readonly OPTARG=5; getopts a o; echo "${OPTARG-unset}"' 2>&1
bash -c 'set -- -b; readonly OPTARG=5; getopts :a o; declare -p OPTARG' 2>&1
bash -c 'set -- -c; readonly OPTARG; getopts c: o; echo "${OPTARG-unset}"; typeset -r RO=foo; OPTARG=RO; echo $?' 2>&1
