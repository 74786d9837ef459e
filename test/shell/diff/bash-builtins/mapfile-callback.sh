# mapfile's -C/-c callback (index and line as two more words), -O origin (no clearing),
# -s skip, -n 0 (all lines)
printf '%s\n' one two three four five >data
mapfile -C 'echo cb' -c 2 A <data; echo "${#A[@]}"
mapfile -t -C 'printf "[%s|%s]\n"' -c 1 -n 2 B <data
x=(a b c d); mapfile -t -O 2 -s 3 x <data; declare -p x
mapfile -n 0 -t all <data; echo "${#all[@]} ${all[4]}"
printf 'p\0q\0' | { mapfile -C echo -c 1 -d '' z; echo "${z[@]}"; }
mapfile -c 0 -C echo q <data; echo "st=$?"
