set -u; echo ${1-none}; echo $#
