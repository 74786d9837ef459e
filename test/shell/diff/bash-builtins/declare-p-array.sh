a=(1 "2 3"); declare -p a
