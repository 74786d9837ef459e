# disown: the shell forgets a job (wait does not wait for it); kill -n NUMBER as kill -s
sleep 30 & long=$!
sleep 0.1 &
disown %1
wait
echo "waited without the disowned job"
kill -n 9 $long; echo "kill -n: $?"
sleep 30 & p=$!
kill -n 15 $p; wait $p; echo "status $?"
disown -a; echo "disown -a: $?"
disown -z 2>/dev/null; echo "bad option: $?"
