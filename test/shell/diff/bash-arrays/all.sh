a=(1 2 3); echo "${a[@]}"; echo "${a[*]}"
