# a background job's last command is the job: $! is its pid, a signal reaches it
sh -c 'echo $$ > pid' & p=$!
wait
[ "$(cat pid)" = "$p" ] && echo 'same pid'
sh -c 'trap "echo got HUP; exit 3" HUP; : > ready; sleep 2; echo late' &
while [ ! -e ready ]; do sleep 0.05; done
kill -HUP $!; wait $!; echo "job $?"
