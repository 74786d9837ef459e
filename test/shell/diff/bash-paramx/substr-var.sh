x=abcdef; o=2; l=2; echo ${x:o:l} ${x:$o:$l}
