echo to-file >& out; cat out
exec 3<&0; read -u 3 x <<< unused; echo "[$x]"
