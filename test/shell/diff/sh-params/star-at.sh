set -- "a b" c; for x in "$@"; do echo "<$x>"; done; for x in "$*"; do echo "<$x>"; done
