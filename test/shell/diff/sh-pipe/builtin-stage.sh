echo abc | read x; echo "[$x]"
