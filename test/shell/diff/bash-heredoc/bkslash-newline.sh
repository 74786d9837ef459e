# Backslash-newline in here-docs: inside the operator and before the delimiter,
# and in an unquoted body (where the line join happens before the delimiter is looked for) (bash; dash keeps the pair at the delimiter)
cat <\
<\
EOF
joined-op
EOF
cat <<\
 EOF
delim-after-continuation
EOF
cat <\
<\
- EOF
	strip-tabs
	EOF
cat <<EOF
one \
two
EO\
F
cat <<EOF
c\
EOF
escaped \\
EOF
cat <<"EOF"
quoted body keeps a\
EOF
cat <<-EOF
	a\
	b
	EOF
cat <<"\E"
dquoted-delim
\E
cat <<"\\E"
dquoted-escaped-delim
\E
cat <<'\E'
squoted-delim
\E
