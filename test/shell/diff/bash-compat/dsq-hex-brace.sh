# $'\x{HHH}': every hex digit up to '}', the low byte (bash); \x{} is a NUL that ends the string
printf '<%s>\n' $'ab\x{41}cd' $'ab\x{}cd' $'ab\x{4}cd' $'\x{ab}cX' $'\x{1}bcd' $'\x{441}b' $'\x{0000000000041}z' $'a\x{4g' | od -c | sed 's/  */ /g'
