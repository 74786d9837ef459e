# shopt -s lastpipe: the last command of a pipeline runs in this shell (no job control here)
echo a b c | read x y z; echo "off: $x"
shopt -s lastpipe
echo a b c | read x y z; echo "on: $x $y $z"
tot=0; printf '1\n2\n3\n' | while read n; do tot=$((tot + n)); done; echo "tot=$tot"
echo q | { read v; false; }; echo "st=$? v=$v PIPESTATUS=${PIPESTATUS[*]}"
! echo q | read w; echo "neg=$? w=$w"
read -r keep <<< kept; echo "$keep"
f() { echo r | { read r; return 7; }; echo notreached; }; f; echo "f=$? r=$r"
exec 0<&-
echo x | cat | read x; echo "x=$x"
exec 0<&-; shopt -s lastpipe; echo hi | cat
