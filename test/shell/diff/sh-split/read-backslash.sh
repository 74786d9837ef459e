printf "a\\ b c\n" | { read x y; echo "[$x][$y]"; }
