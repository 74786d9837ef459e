set -u; echo ${#x}; echo after
