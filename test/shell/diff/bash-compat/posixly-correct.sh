# assigning POSIXLY_CORRECT turns posix mode on (bash): an assignment before a special
# builtin then stays
x=2; x+=5 eval printf '"$x "'; echo "$x"
POSIXLY_CORRECT=1
x=2; x+=5 eval printf '"$x "'; echo "$x"
set -o | grep '^posix'
