printf "1\n2\n3\n" | while read n; do echo "n=$n"; done
