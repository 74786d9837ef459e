echo "a::c" | { IFS=: read x y z; echo "[$x][$y][$z]"; }
