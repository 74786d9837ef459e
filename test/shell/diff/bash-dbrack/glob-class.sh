[[ x5 == x[0-9] ]] && echo cls
