set -- $(seq 1 50); echo $#; echo ${50}
