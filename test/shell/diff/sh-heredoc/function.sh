f() { cat <<EOF
in f: $1
EOF
}; f arg
