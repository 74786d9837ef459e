# `exit` alone in a trap: the status the trap began with
(trap 'echo trapped; exit' EXIT; (exit 3))
echo "sub $?"
(trap 'false; exit' EXIT; true)
echo "sub2 $?"
