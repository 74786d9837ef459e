cat <<EOF
a\$b \\ \x
EOF
