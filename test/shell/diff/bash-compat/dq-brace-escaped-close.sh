# in "${x+word}" a backslash before '}' goes, as bash
echo "${IFS+\}z}" "${IFS+\"\}\"z}" "${IFS+a\{b}" "${IFS+\]}" "\}" "${u-\}}"
u=x; printf '<%s> ' "foo ${IFS+a"b$u{ {"{{\}b} c ${IFS+d{}} bar" ${IFS-e{}} baz; echo .
