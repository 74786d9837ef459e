i=0; while (( i < 100 )); do ((i++)); done; echo $i
