set -u; f() { echo $x; }; f 2>/dev/null; echo after
