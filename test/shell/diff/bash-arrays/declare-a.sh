declare -a d=(m n); echo ${d[1]}
