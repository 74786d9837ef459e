cat <<EOF
line
