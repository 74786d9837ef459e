a=(hello); echo ${#a[0]}
