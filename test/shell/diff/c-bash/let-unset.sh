set -u; let x+1; echo after
