cat <<"EOF"
$HOME `x`
EOF
