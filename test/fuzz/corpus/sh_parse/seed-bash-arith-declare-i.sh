declare -i n; n=2+3; echo $n
