p='import sys; print(sys.orig_argv[0])'
(exec -a myname python3 -c "$p")
(exec -amy2 python3 -c "$p")
(exec -l python3 -c "$p")
(exec -l -a other python3 -c "$p")
(exec -a x -- python3 -c "$p")
(export E2E_V=1; exec -c python3 -c 'print(repr(open("/proc/self/environ", "rb").read()))')
(E2E_W=1 exec -c env; echo not-reached)
(exec -x true; echo "bad option $?")
(exec -a; echo "missing name $?")
exec -a name 3>/dev/null
echo "no command $?"
f() { exec -a ugrep grep "$@"; }
printf 'a1\nb\na2\n' | (f a | head -1)
