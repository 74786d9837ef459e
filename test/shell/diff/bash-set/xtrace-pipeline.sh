set -x; echo a | cat; set +x
