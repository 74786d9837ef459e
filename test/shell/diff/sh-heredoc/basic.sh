cat <<EOF
line1
line2
EOF
