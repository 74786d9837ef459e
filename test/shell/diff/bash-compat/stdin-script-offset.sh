# A script read from a regular file on stdin: a command that reads stdin takes the
# script's next lines, and the script goes on after them (bash keeps fd 0's offset)
printf 'echo before\nbash ./sub.sh\nthis line for sub\necho after\nread x; echo "x=$x"\nnext\nfalse\n' >main.in
printf 'read line\necho "sub read: $line"\n' >sub.sh
bash <main.in; echo "rc=$?"
bash -s a b <main.in; echo "rc=$?"
{ echo 'echo first'; cat main.in; } >m2.in
exec 3<&0; bash <m2.in; echo "rc=$?"
