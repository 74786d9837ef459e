x=; echo ${x:?}; echo after
