unset IFS; x="a b"; for w in $x; do echo "<$w>"; done
