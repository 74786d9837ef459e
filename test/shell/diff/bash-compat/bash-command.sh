# BASH_COMMAND: the simple command running, as written; in a trap the one trapped
echo $BASH_COMMAND
x=1 echo "$BASH_COMMAND"
f() { echo "in f: $BASH_COMMAND"; }; f a 'b c'
trap 'echo "trap: $BASH_COMMAND"' EXIT
false
