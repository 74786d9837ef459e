printf "last" | { read x; echo "$? [$x]"; }
