# `return` in a trap: alone, the status the trap began with; `return N`: N
trap 'echo TERM; return' TERM
f() { { sleep 0.2; kill $$; } & until (exit 42); do (exit 42); done; }
f; echo "f $?"
trap 'echo TERM; return 11' TERM
f; echo "f $?"
wait
