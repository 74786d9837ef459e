set --; for x in "$@"; do echo no; done; echo "[$@]" "$#"
