# <(…) and >(…) anywhere unquoted in a word (bash): after NAME= of an assignment (also one
# before a command or function), --opt=<(…), 2>(…) is a word; not in quotes, a here-doc or
# an arithmetic text
f() { echo "x=${x#/dev/fd/} 1=${1#/dev/fd/}"; cat "$x"; cat "$1"; }
x=<(echo from-x) f <(echo from-arg)
x=<(echo only-x) f
x=<(echo cmd-x) cat /dev/null
y=<(echo assigned); cat "$y" 2>/dev/null || echo closed-after-assignment
echo --opt=<(true) b:<(true) "q<(true)" 'q<(true)' | sed 's#/dev/fd/[0-9]*#FD#g'
echo 2>(true) | sed 's#/dev/fd/[0-9]*#FD#g'
v=1; echo $(( v<(2) )) $(( $v<(2) ))
cat <<E
a<(true) 
<(true)
E
echo ${u:-<(true)} | sed 's#/dev/fd/[0-9]*#FD#g'
