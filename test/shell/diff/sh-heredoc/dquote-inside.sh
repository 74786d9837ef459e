cat <<EOF
"quoted" 'single'
EOF
