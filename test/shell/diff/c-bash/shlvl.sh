# SHLVL as bash counts it: +1 per bash started, one lower for a program bash runs
# without a fork (the last command of -c, of ( ), of $( ), after exec); dash leaves it.
echo "start ${SHLVL-unset}"
printenv SHLVL
printenv SHLVL | cat
(printenv SHLVL)
(true; printenv SHLVL)
{ printenv SHLVL; }
echo "$(printenv SHLVL)" "$(true; printenv SHLVL)"
bash -c 'printenv SHLVL; echo "in $SHLVL"'
bash -c 'exec printenv SHLVL'
bash -c 'bash -c "echo two \$SHLVL"'
SHLVL=7 bash -c 'echo $SHLVL'
SHLVL=x bash -c 'echo $SHLVL'
SHLVL=-4 bash -c 'echo $SHLVL'
SHLVL=998 bash -c 'echo $SHLVL'
SHLVL=5 sh -c 'echo dash $SHLVL'
declare -p SHLVL
printenv SHLVL
