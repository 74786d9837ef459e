a=(1 2 3); unset a[1]; echo ${a[@]} ${#a[@]}
