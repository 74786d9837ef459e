a=("a b" c); for x in "${a[@]}"; do echo "<$x>"; done
