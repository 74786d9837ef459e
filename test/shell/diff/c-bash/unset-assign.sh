set -u; x=$y; echo after
