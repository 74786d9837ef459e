set -u; echo $((x + 1)); echo after
