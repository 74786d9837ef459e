# declare -f / -F / type print a function as bash does: one command a line, four spaces an indentation
# level, ";" after each but the last of a { } body, if/while/for bodies with it after every command
a=hot
f1() {
cat <<< "abcde"

cat <<< "$a $b"
echo hi >&2; echo x > /dev/null 2>&1
}
f2() { echo a | tr a b && echo c || echo d; x=1 y=2; ! true; sleep 0 & wait; }
f3() { if true; then echo y; elif false; then echo z; else echo n; fi; while false; do :; done; until true; do :; done; }
f4() { for i in a b; do echo $i; done; for j; do :; done; case $1 in a|b) echo ab;; *) echo other;; esac; }
f5() { ( cd /; pwd ); { echo g; } > /dev/null; [[ -n $x && $y == z ]]; (( x += 1 )); }
f6() { local v=1; return 0; } 2>/dev/null
declare -f
declare -F
type f2
declare -f f5 f6
