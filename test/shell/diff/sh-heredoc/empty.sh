cat <<EOF
EOF
echo end
