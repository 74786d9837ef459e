x="a b"; for w in pre${x}post; do echo "<$w>"; done
