# a signal during a job's last command: its trap still runs before the job ends
{ trap 'echo got TERM' TERM; : > ready2; sleep 1; } &
while [ ! -e ready2 ]; do sleep 0.05; done
kill $!; wait; echo "done $?"
trap 'echo got USR2' USR2
kill -USR2 $$
