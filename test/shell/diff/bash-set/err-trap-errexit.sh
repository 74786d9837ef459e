set -e; trap "echo err-trap" ERR; false; echo never
