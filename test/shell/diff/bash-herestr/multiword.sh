cat <<< "a   b"
