# echo -e and %b keep \' \" \? as written (printf's format and $'…' do not); $'\c\\' is one
# control character; $'…' in the word of "${x-word}" and in a ${x/p/r} pattern; a newline an
# alias brings is no line; set -o history is accepted
echo -e "\'a\"" '\?'
printf '%b\n' "\'b\"" '\?'
printf "\'c\" \?\n"
echo $'\'d\"\?'
printf '%s\n' $'\c[\c\\\c]\c^\c_\c?' | od -An -tx1
unset t; v="'"
printf '[%s]\n' "${t:-$'\t'}" "${t-$'a\tb'}" "${t:+$'\t'}" "${v/$'\''/x}" ${v/$'\''/y} "${v/x/$'\x5c\''}"
set -o history; echo "history: $?"
shopt -s expand_aliases
alias two=$'echo one\n\nnosuchcmd_b24\n'
two
echo "line $LINENO"
