printf "%d\n" "'A"
