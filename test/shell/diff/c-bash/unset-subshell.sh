set -u; (echo $x); echo "subshell $?"
