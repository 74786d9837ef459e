x=abcdef; echo ${x:1:-2}
