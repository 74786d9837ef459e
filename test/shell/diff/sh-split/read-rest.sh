echo "a b c d" | { read x y; echo "$x|$y"; }
