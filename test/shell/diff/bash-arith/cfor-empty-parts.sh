i=0; for (( ; i<2; )); do echo $i; ((i++)); done
