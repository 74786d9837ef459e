# declare -g in a function sets the global variable and leaves the callers'
# locals alone (a local array shadowed by it used to be freed twice).
f() { local -a w; g; echo "f: ${#w[@]} ${w[0]-unset}"; }
g() { declare -g w=one; echo "g: $w"; }
f
declare -p w
w=zero
f2() { local w=loc; g2; echo "f2: $w"; }
g2() { declare -g w=one; echo "g2: $w"; local w=gl; declare -g w=two; echo "g2 local: $w"; }
f2
echo "top: $w"
f3() { declare -g -a arr=(1 2); declare -gi n=3+4; declare -gx E=1; }
f3
declare -p arr n E
h() { local -a z; local -a z2=(); z=(a b); echo "${z[@]}"; }
h; h
m() { local -a q=(1 2 3); mapfile -t q </dev/null; echo "m: ${#q[@]}"; }
m
