i=0; while IFS= read -r line; do i=$((i+1)); done <<< $'a\nb\nc'; echo $i
