eval "arr=(a b c)"; echo ${arr[2]}
