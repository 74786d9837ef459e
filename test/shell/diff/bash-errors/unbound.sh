set -u; echo $nope; echo after
