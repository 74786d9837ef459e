x=; echo ${x:?empty here}; echo after
