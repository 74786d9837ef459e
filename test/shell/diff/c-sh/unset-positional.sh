set -u; echo "$3"; echo after
