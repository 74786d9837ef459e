x=1; declare -p x
