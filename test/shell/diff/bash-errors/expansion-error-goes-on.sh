# A bad substitution or an arithmetic error in an expansion (outside posix mode) skips the rest
# of the top-level command, and the script goes on with the next one, status 1; an error in a
# substring's offset names the parameter; ${#:} ${#/} ${#%} ${#=} ${#+} are bad substitutions;
# ${!-w} ${!:-w} ${!+w} are $! with an operator
echo ${#1xyz}; echo same line
echo "next $?"
f() { echo ${#:}; echo in f; }
f; echo after f
echo ${#/}
echo ${#%}
echo ${#=}
echo ${#+}
echo $((1+)); echo same line
echo "next $?"
x=abc; echo ${x:%}; echo same line
set -- a b; echo ${@:1:%}
echo ${1:%}
for i in 1 2; do echo ${x:$i:+}; echo loop; done
echo "${!-no bg}" "${!:-no bg}" "${!+set}"
sleep 0 &
case ${!-x} in [0-9]*) echo pid ;; *) echo none ;; esac
echo ${!:+set}
echo ${#-} ${#?} ${#:-d}
echo last
