# A foreground program killed by a signal is reported on stderr as bash does: nothing for
# SIGINT/SIGPIPE; the description alone when the signal is trapped (or ignored by a trap) and
# for SIGTERM; else "NAME: line N: PID DESCRIPTION  COMMAND" (the pid filtered out here)
die() { python3 -c "import os,signal; signal.signal(signal.SIG$1, signal.SIG_DFL); os.kill(os.getpid(), signal.SIG$1)"; }
trap ':' USR2
python3 -c 'import os,signal; os.kill(os.getpid(), signal.SIGUSR2)'
echo st=$?
trap '' HUP
die HUP; echo st=$?
trap - HUP USR2
python3 -c 'import os,signal; os.kill(os.getpid(), signal.SIGTERM)'; echo st=$?
python3 -c 'import os,signal; os.kill(os.getpid(), signal.SIGPIPE)'; echo st=$?
python3 -c 'import os,signal; os.kill(os.getpid(), signal.SIGINT)'; echo st=$?
{ X=1 python3 -c 'import os,signal; os.kill(os.getpid(), signal.SIGUSR1)'; echo st=$?; python3 -c 'import os,signal; os.kill(os.getpid(), signal.SIGKILL)'; echo st=$?; } 2>&1 | sed -E 's/: line ([0-9]+): +[0-9]+ /: line \1: PID /'
