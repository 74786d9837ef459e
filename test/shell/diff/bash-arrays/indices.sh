a=(a b c); echo ${!a[@]}
