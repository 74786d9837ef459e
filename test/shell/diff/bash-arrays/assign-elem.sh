a[3]=three; a[0]=zero; echo ${#a[@]} ${a[3]}
