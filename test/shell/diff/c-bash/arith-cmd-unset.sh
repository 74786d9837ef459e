set -u; ((x + 1)); echo after
