x=world; cat <<'EOF'
hello $x
EOF
