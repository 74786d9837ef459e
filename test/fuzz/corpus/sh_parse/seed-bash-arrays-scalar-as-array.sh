s=str; echo ${s[0]} ${#s[@]}
