printf "a b\0c\0" | xargs -0 -n1 echo
