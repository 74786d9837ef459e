# line numbers inside a command substitution (its first command at the line it ends on,
# leading blank lines not counted); aliases in POSIX mode expanded when a $( ) is parsed (one
# may close it); an alias that is the reserved word ending a list; a syntax error after an
# alias shows the line as written
echo x; echo $(echo $LINENO
nosuchcmd_b24; echo $LINENO)
echo `echo ab #c
nosuchcmd_b24`
echo $(
nosuchcmd_b24)
f() {
	echo $(echo in f
	nosuchcmd_b24)
}
f
shopt -s expand_aliases
alias DO='{ ' DONE='}'
DO
echo grouped; DONE
set -o posix
alias switch=case short='echo short )' ll='echo ll'
echo $( switch foo in foo) echo ok 1;; esac )
echo "$( switch foo in (foo) echo ok 2;; esac )"
echo $( short
echo $(ll -x)
got=$(DO
echo ok 3; DONE)
echo "$got"
alias math1='echo $( date )'
math1)
echo not reached
