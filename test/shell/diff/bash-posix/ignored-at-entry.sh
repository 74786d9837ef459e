# a signal ignored when a shell starts stays ignored: its trap cannot catch it
trap '' USR1
sh -c 'trap "echo caught" USR1; kill -USR1 $$; echo alive'
bash -c 'trap "echo caught" USR1; trap - USR1; kill -USR1 $$; echo alive2'
