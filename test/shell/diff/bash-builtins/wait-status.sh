(exit 6) & p=$!; wait $p; echo $?
