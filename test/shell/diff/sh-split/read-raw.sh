printf "a\\ b\n" | { read -r x y; echo "[$x][$y]"; }
