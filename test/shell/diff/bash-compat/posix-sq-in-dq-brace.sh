# posix mode: a single quote in "${x+'…}" is a plain character; outside posix mode it quotes
echo "foo ${IFS+'bar'} baz" "${u-'a b'}"
set -o posix
echo "foo ${IFS+'bar} baz"
echo "${u-'x}" "${IFS:+a'b}"
