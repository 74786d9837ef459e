IFS=" :"; x="a : b:c  d"; for w in $x; do echo "<$w>"; done
