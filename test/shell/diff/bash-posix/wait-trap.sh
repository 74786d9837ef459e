# a trapped signal ends `wait` with 128+N after its trap ran
trap 'echo got USR1' USR1
{ sleep 1; kill -USR1 $$; sleep 1; } &
wait; echo "wait $?"
wait; echo "again $?"
