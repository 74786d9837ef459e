# set -o posix: an assignment before a special builtin stays; before others it does not
x=a:b:c
IFS=: true
echo $x
set -o posix
IFS=: export y
echo $x
IFS=' '
v=1 :
echo "v=$v"
w=2 true
echo "w=${w-unset}"
[ -o posix ] && echo posix on
