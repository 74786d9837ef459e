x=v; echo ${x-def} ${x:-def2}
