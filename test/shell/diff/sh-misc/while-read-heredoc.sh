while read a; do echo "got $a"; done <<EOF
one
two
EOF
