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
