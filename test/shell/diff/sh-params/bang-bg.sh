sleep 0 & p=$!; [ -n "$p" ] && echo have-pid; wait $p; echo $?
