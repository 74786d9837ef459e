alias a1="echo a"
unalias a1
a1 2>/dev/null; echo $?
