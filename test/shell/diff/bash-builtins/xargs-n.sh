printf "1 2 3 4 5\n" | xargs -n 2 echo
