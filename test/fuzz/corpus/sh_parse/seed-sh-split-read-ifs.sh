echo "a:b:c" | { IFS=: read x y z; echo "$x|$y|$z"; }
