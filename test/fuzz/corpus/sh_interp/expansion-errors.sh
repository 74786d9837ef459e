set -- -a -b
readonly OPTARG
getopts :a o; getopts b o; getopts b o
echo ${#:} ${!-x} ${#1z}; echo $((1+)); x=abc; echo ${x:%}
readonly -a r=(1); readonly r=(2); export -A q="([k]=v)"; declare -p r q
