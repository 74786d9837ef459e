a=(x y z); echo ${a[0]} ${a[2]} ${#a[@]}
