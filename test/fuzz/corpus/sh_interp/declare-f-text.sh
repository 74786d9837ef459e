f() { echo $( echo a $( echo b ) ); for i in $(x); do :; done; }
declare -f f
type f
declare -F
