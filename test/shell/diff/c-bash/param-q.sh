echo ${x?}; echo after
