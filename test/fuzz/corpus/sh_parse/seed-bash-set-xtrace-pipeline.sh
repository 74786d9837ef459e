set -x; { echo a; } 2>/dev/null | cat; set +x
