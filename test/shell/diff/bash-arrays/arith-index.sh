a=(q w e); i=1; echo ${a[i+1]} ${a[$i]}
