set -e; echo a; false; echo b
