sleep 5 & p=$!; kill $p; wait $p; echo $?
