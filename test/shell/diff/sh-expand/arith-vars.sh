a=5 b=3; echo $((a+b)) $((a*b)) $(($a-$b))
