# set -x traces for (( ; ; ))'s parts, each pass of for … in, case's word, as bash;
# BASH_XTRACEFD sends the trace to a fd the script opened
exec 2>&1
set -x
for ((i=0; i<=2; i++ )) ; do x=0; done
for w in a 'b c'; do :; done
case "x y" in *) : ;; esac
v=q; case $v in *) : ;; esac
set +x
exec 4>trace.out
BASH_XTRACEFD=4
set -x
echo one
unset BASH_XTRACEFD
echo two
set +x
echo "trace:"; cat trace.out
