echo ${1x}; echo after
