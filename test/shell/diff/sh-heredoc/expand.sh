x=world; cat <<EOF
hello $x $((1+1)) $(echo sub)
EOF
