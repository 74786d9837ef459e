x=val; echo "a  $x" "\$x" "q\"q" "back\\slash"
