# \U and \u escapes past ASCII outside a UTF-8 locale are kept as text, up
# to 10 bytes (\U0DDDDDDD): the buffer they were written to held 8.
echo $'\U0ddddddd' $'\U7fffffff|\u12345' $'\U0010ffff'
echo -e '\U0ddddddd' '\U7fffffff\u12345'
printf '%b|' '\U0ddddddd' '\u0123x'; echo
printf '\U0ddddddd|\uffff|\n'
x=$'\U0ddddddd\U0ddddddd'; echo ${#x}
