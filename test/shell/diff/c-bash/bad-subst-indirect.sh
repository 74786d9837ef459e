echo ${x!y}; echo after
