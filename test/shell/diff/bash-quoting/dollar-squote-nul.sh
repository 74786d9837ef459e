# A NUL from an escape ends the $'…' string; the word goes on after it (bash)
echo $'str\x00'rest "$'a\0b'" $'a\000b'c $'\x0'x $'\u0000'y $'\c@'z $'\cA' | od -c | head -3
x=$'ab\x00cd'; echo "${#x} $x"
printf '%s\n' $'one\x00two' $'\x01\x00'
