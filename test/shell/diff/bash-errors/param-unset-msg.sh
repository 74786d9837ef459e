unset x; echo ${x?is unset}; echo notreached
