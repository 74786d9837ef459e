for i in {1..100}; do x=$(echo $i); done
