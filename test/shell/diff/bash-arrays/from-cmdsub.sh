a=($(echo p q r)); echo ${#a[@]} ${a[1]}
