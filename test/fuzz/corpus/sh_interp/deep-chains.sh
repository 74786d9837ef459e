set -- $(printf "! %.0s" {1..3000}); [ "$@" x ]; test "$@" x
true && true || false && true
if false; then :; elif false; then :; elif true; then echo e; fi
[[ ! ! ! x ]]; [[ ( ( x ) ) ]]
echo $((1?1?1:1:1)) $((x=y=z=1))
