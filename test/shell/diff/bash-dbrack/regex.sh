[[ abc123 =~ ^[a-z]+[0-9]+$ ]] && echo re
