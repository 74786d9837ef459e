touch n1; set -f; echo n*; set +f; echo n*
