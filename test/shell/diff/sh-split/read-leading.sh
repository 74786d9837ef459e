echo "   lead  trail   " | { read x; echo "[$x]"; }
