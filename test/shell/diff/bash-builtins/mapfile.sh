mapfile -t lines <<< "$(printf "a\nb\nc")"; echo ${#lines[@]} ${lines[2]}
printf "x\ny\n" | { readarray arr; printf "[%s]" "${arr[@]}"; echo; }
mapfile -n 1 one <<< $'p\nq'; echo "${one[0]}"
