echo "$(echo "$(echo "a b")")"
