x="a   b"; y=$x; echo "$y"
