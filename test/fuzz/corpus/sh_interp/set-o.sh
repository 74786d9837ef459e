set -o | while read -r n v; do [ "$v" = on ] && echo "$n"; done
