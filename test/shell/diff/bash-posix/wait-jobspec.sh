# wait %N: a job spec (the Nth job); an unknown one is an error (127)
(sleep 1; exit 3) & (sleep 0.2; exit 4) &
wait %2; echo "two $?"
wait %1; echo "one $?"
wait %7; echo "none $?"
