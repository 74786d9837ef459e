echo "echo in-s \$1" | sh -s -- one
