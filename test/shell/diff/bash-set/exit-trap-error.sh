trap "echo exit-trap" EXIT; set -e; false
