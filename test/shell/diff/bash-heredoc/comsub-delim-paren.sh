# a here-document inside $( ) whose delimiter line holds the closing `)` (bash 5.2: the body
# ends there, with a warning, and the `)` closes the substitution); an unterminated $( inside
# a here-document's body
a=$(cat <<EOF
one
EOF )
echo "a=$a"
b=$(cat <<\END
two
END)
echo "b=$b"
echo "$(
cat <<\)
three
))"
read c <<EOF
$(echo never
EOF
echo "c=[$c] $?"
