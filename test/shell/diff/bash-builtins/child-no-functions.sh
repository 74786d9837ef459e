f() { echo "function, not the builtin"; }
echo() { builtin echo "func echo $*"; }
echo hi
printf "a\n" | xargs echo
env echo via-env
unset -f echo
