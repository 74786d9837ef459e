set -u; echo hi > $x; echo after
