# assigning a readonly variable (outside posix mode) skips the rest of the script's
# current top-level command; the script goes on with the next one, as bash
readonly r=1
r=2; echo same-line
echo "next-line $?"
f() { r=3; echo in-f; }
f; echo after-f
for k in 1 2; do r=4; echo loop$k; done
echo "end $?"
( r=5; echo in-subshell ); echo "sub $?"
readonly xx=1
case 1 in $((xx++)) ) echo hi1 ;; *) echo hi2; esac; echo not-here
echo "${xx}.$?"
(( xx = 3 )); echo "arith cmd $?"
