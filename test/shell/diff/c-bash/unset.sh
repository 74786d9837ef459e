set -u; echo before; echo $x; echo after
