set -u; for i in 1; do echo $x; done; echo after
