set -u; f() { echo $x; }; f; echo after
