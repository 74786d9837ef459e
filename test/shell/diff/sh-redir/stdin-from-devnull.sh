read x < /dev/null; echo "$? [$x]"
