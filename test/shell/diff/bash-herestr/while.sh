while read l; do echo "[$l]"; done <<< "only"
