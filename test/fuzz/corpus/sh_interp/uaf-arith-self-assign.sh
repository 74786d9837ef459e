i=i=0; (( i++ )); (( i++ )); echo $i
0; (( i++ )); (( i++ )); echo $i
