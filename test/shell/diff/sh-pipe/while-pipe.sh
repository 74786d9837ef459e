printf "a\nb\n" | while read l; do echo "[$l]"; done
