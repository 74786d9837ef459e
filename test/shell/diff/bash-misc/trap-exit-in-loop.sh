# A trap that runs `exit` while the shell spins in `while continue; do continue;
# done` ends the shell: the pending `continue` does not replace the exit.
trap 'echo exiting; exit 3' INT
(sleep 1; kill -s INT $$) &
while continue; do
	continue
done
echo not reached
