n=0; for i in 1 2 3 4 5 6 7 8 9 10; do n=$((n+i)); done; echo $n
