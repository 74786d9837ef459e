# FUNCNAME (innermost first, then main; unset outside functions); the DEBUG trap before each
# simple command with $LINENO that command's line and $? kept, not in functions unless
# extdebug; under extdebug a failing trap skips the command; trap -p shows it
inner() { echo "${FUNCNAME[*]} ${#FUNCNAME[@]}"; }
outer() { inner; echo "${FUNCNAME[0]}"; }
outer
echo "top: [${FUNCNAME[*]}] ${FUNCNAME-unset}"
f() { echo "in f"; }
trap 'echo "debug $LINENO st=$?"' DEBUG
false
echo "after: $?"
f
trap -p DEBUG
trap - DEBUG
shopt -s extdebug
x=1
trap '[ "$LINENO" != 18 ]' DEBUG
x=2
echo "x=$x (line 18 skipped)"
trap - DEBUG
g() { echo "g: ${FUNCNAME[*]}"; }
trap 'echo "debug $LINENO ${FUNCNAME[0]-top}"' DEBUG
g
trap - DEBUG
