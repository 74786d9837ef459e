cat <<EOF | cat
piped
EOF
