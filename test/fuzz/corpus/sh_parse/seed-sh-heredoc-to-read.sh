read a b <<EOF
x y
EOF
echo $a-$b
