x=$(: ignored); echo "[$x]" $?
