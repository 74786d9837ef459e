#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-alias.sh — the shell alias (box-alias) against a fake box-shell
# (box-test-fakeshell: the session protocol's box-shell side, which records
# what each ShellOpen carried and answers as the session's FAKE_ACTION says).
#
# Every alias runs in a private mount namespace (unshare -m) where a tmpfs
# covers /run and the fake's socket is bind-mounted on /run/box/shell.sock,
# so nothing global changes. Covers every argument form of docs/boxctl.1.md, the
# dialect (argv[0], the mounted file's name), python3, the environment and
# cwd, the three fds (the very files of the caller: no relay), statuses,
# every 125 (no server, refused connection, server closes, ShellDenied, a
# broken reply, refused options, oversize), --version/--help, signal
# forwarding (and signals ignored at entry), the hang-up, a 1 MiB -c text
# (in-process: execve caps one argument at 128 KiB) and a 100 KiB one
# through the program. As root, then the same as the ordinary user boxtest.
# Trusts: nothing; it is test code.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	skip "t-alias" "needs root (unshare -m, mounts)"
	tap_done
	exit
fi
if ! unshare -m true 2>/dev/null; then
	skip "t-alias" "no mount namespaces (unshare -m failed)"
	tap_done
	exit
fi

W=$(mktemp -d /tmp/box-alias-t.XXXXXX)
chmod 755 "$W"
mkdir -p "$W/bin" "$W/rec" "$W/dir" "$W/mnt"
chmod 755 "$W/bin" "$W/dir" "$W/mnt"
cp "$BOX_BIN/box-alias" "$W/bin/box-alias" || { not_ok "box-alias is built"; exit 1; }
cp "$BOX_BUILD/test/alias/box-test-alias-inproc" "$W/bin/inproc" ||
	{ not_ok "box-test-alias-inproc is built"; exit 1; }
for n in sh bash zsh dash rbash python3 python foo; do ln -s box-alias "$W/bin/$n"; done
chmod 755 "$W/bin"/box-alias "$W/bin/inproc"
SOCK=$W/shell.sock
fake_pid=

cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# The namespace's set-up: /run is a tmpfs, /run/box/shell.sock the socket
# named by $1 (nothing for "-"); IN_NS_OVER=FILE also mounts the alias over
# FILE (as the trampoline mounts it over /bin/bash); IN_NS_ARGV0 sets argv[0].
cat >"$W/in-ns.sh" <<'EOF'
set -e
sock=$1
shift
mount -t tmpfs -o mode=0755 box-alias-test /run
mkdir /run/box
if [ "$sock" != - ]; then
	: >/run/box/shell.sock
	mount --bind "$sock" /run/box/shell.sock
fi
if [ -n "${IN_NS_OVER:-}" ]; then
	mount --bind "$IN_NS_ALIAS" "$IN_NS_OVER"
fi
unset IN_NS_OVER IN_NS_ALIAS
if [ -n "${IN_NS_ARGV0:-}" ]; then
	a0=$IN_NS_ARGV0
	unset IN_NS_ARGV0
	exec -a "$a0" "$@"
fi
exec "$@"
EOF

"$BOX_BUILD/test/alias/box-test-fakeshell" "$SOCK" "$W/rec" 2>"$W/fake.err" &
fake_pid=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { not_ok "the fake box-shell listens"; cat "$W/fake.err"; exit 1; }

# AS: empty (root) or the setpriv prefix that runs the alias as boxtest.
AS=()
WHO=root
# STDIN: what the alias's fd 0 is.
STDIN=/dev/null
n_case=0

# al ACTION [VAR=VALUE...] -- ARGV...: run ARGV (the alias) in its namespace
# with FAKE_ACTION=ACTION; sets $rec (the record's name), $rc, $out, $err.
al() {
	local action=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	n_case=$((n_case + 1))
	rec=c$n_case-$WHO
	out=$W/out.$rec err=$W/err.$rec
	env FAKE_RECORD="$rec" FAKE_ACTION="$action" IN_NS_ALIAS="$W/bin/box-alias" "${envs[@]}" \
		unshare -m bash "$W/in-ns.sh" "$SOCK" "${AS[@]}" "$@" <"$STDIN" >"$out" 2>"$err"
	rc=$?
}

# has KEY=VALUE...: every line is in the current record.
has() {
	local f=$W/rec/$rec l
	[ -f "$f" ] || { diag "no record $rec (stderr: $(cat "$err"))"; return 1; }
	for l in "$@"; do
		grep -qFx -- "$l" "$f" || { diag "$rec lacks '$l':" "$(cat "$f")"; return 1; }
	done
}

# args_are A...: the record's positional parameters, in order.
args_are() {
	local want got
	want=$(printf 'arg=%s\n' "$@")
	[ $# -eq 0 ] && want=
	got=$(grep '^arg=' "$W/rec/$rec")
	[ "$got" = "$want" ] || { diag "$rec args: '$got', want '$want'"; return 1; }
	has "nargs=$#"
}

rc_is() { [ "$rc" -eq "$1" ] || { diag "status $rc, want $1 (stderr: $(cat "$err"))"; return 1; }; }
err_has() { grep -qF -- "$1" "$err" || { diag "stderr lacks '$1':" "$(cat "$err")"; return 1; }; }
no_record() { [ ! -e "$W/rec/$rec" ] || { diag "a session was opened: $(cat "$W/rec/$rec")"; return 1; }; }

# t NAME CMD...: one test line, named with who ran it.
t() {
	local name=$1
	shift
	if "$@"; then ok "$WHO: $name"; else not_ok "$WHO: $name"; fi
}

B=$W/bin

case_forms() {
	al "" -- "$B/bash" -c 'echo hi'
	t "bash -c CMD: mode command, \$0 = argv[0], status 0" \
		eval 'rc_is 0 && has mode=command "command=echo hi" "arg0=$B/bash" invoked_as=bash \
			errexit=0 login=0 && args_are'
	al "" -- "$B/bash" -lc 'echo hi'
	t "bash -lc CMD: login" eval 'rc_is 0 && has mode=command "command=echo hi" login=1 errexit=0'
	al "" -- "$B/sh" -ec 'false; echo x'
	t "sh -ec CMD: errexit, dialect sh" \
		eval 'has mode=command "command=false; echo x" errexit=1 invoked_as=sh'
	al "" -- "$B/bash" -c -e 'echo $0'
	t "bash -c -e CMD: options after -c, before the command" \
		eval 'has mode=command "command=echo \$0" errexit=1 && args_are'
	al "" -- "$B/bash" -c 'echo "$@"' zero one 'two words' ''
	t "-c CMD ARG0 ARGS: \$0 and \$1... (an empty one too)" \
		eval 'has arg0=zero && args_are one "two words" ""'
	al "" -- "$B/bash" -c 'echo' --login -x
	t "after CMD everything is an operand (\$0 = --login)" \
		eval 'has arg0=--login login=0 xtrace=0 && args_are -x'
	al "" -- "$B/bash" -euo pipefail -c 'echo'
	t "-euo pipefail: each o takes the next word" eval 'has errexit=1 nounset=1 pipefail=1'
	al "" -- "$B/bash" -oe pipefail -x -c 'echo'
	t "-oe pipefail -x" eval 'has errexit=1 pipefail=1 xtrace=1 nounset=0'
	al "" -- "$B/bash" -o errexit -o nounset -o xtrace +x -c 'echo'
	t "-o errexit -o nounset -o xtrace, +x turns xtrace off" \
		eval 'has errexit=1 nounset=1 xtrace=0'
	al "" -- "$B/bash" --login --norc --noprofile --posix -c 'echo'
	t "--login --norc --noprofile --posix" eval 'rc_is 0 && has login=1 mode=command'
	al "" -- "$B/bash" -c -- 'echo' a0
	t "-c -- CMD ARG0" eval 'has "command=echo" arg0=a0'
	al "" -- "$B/bash" -c ''
	t "-c '': an empty command" eval 'rc_is 0 && has mode=command command_len=0'
	al "" -- "$B/bash" -s x 'y z'
	t "-s ARGS: mode stdin, \$1... = ARGS" \
		eval 'has mode=stdin "arg0=$B/bash" && args_are x "y z" && ! grep -q ^script= "$W/rec/$rec"'
	al "" -- "$B/bash"
	t "no operand, stdin no terminal: mode stdin" eval 'has mode=stdin && args_are'
	al "" -- "$B/bash" -i
	t "-i: interactive even without a terminal" eval 'has mode=interactive'
	al "" -- "$B/bash" -x ./script.sh a 'b c'
	t "SCRIPT ARGS: mode script, \$0 = SCRIPT" \
		eval 'has mode=script script=./script.sh arg0=./script.sh xtrace=1 && args_are a "b c"'
	al "" -- "$B/bash" - -c
	t "a lone - ends the options: '-c' is the script" eval 'has mode=script script=-c'
	al "" -- "$B/bash" -s -c 'echo c' a
	t "-c wins over -s (as in bash)" eval 'has mode=command "command=echo c" arg0=a'
	if command -v script >/dev/null; then
		n_case=$((n_case + 1))
		rec=c$n_case-$WHO
		err=$W/err.$rec
		script -qec "env FAKE_RECORD=$rec FAKE_ACTION= unshare -m bash $W/in-ns.sh $SOCK ${AS[*]} $B/bash" \
			/dev/null </dev/null >"$W/out.$rec" 2>"$err"
		t "no operand at a terminal: mode interactive" eval 'has mode=interactive && args_are'
	else
		skip "$WHO: no operand at a terminal" "no script(1) to make a terminal"
	fi
}

case_dialects() {
	local n
	for n in sh bash zsh dash rbash; do
		al "" -- "$B/$n" -c ':'
		t "invoked as $n: dialect $n" eval 'has invoked_as=$n'
	done
	al "" -- "$B/box-alias" -c ':'
	t "invoked as box-alias itself: dialect sh" eval 'has invoked_as=sh'
	al "" -- "$B/python3" -c 'print(1)' x
	t "python3 ARGS: the host command python3 \"\$@\", arguments unparsed" \
		eval 'rc_is 0 && has mode=command "command=python3 \"\$@\"" arg0=$B/python3 invoked_as=sh \
			errexit=0 && args_are -c "print(1)" x'
	al "" -- "$B/python" -V
	t "python ARGS: python3 too" eval 'has "command=python3 \"\$@\"" invoked_as=sh && args_are -V'
	al "" -- "$B/python3" -z --what
	t "python3 takes any option (they are python's)" eval 'rc_is 0 && args_are -z --what'
	# The file mounted over a shell: its name decides whatever argv[0] says (root only: argv[0]).
	if [ "$WHO" = root ]; then
		: >"$W/mnt/bash"
		al "" IN_NS_OVER="$W/mnt/bash" IN_NS_ARGV0=weird -- "$W/mnt/bash" -c ':'
		t "mounted over .../bash, argv[0] 'weird': dialect bash" \
			eval 'has invoked_as=bash arg0=weird'
		al "" IN_NS_ARGV0=-bash -- "$B/bash" -c ':'
		t "argv[0] -bash: a login shell, dialect bash" eval 'has invoked_as=bash login=1 arg0=-bash'
		al "" IN_NS_ARGV0=-sh -- "$B/foo"
		t "argv[0] -sh, no operand: login, mode stdin, \$0 = -sh" \
			eval 'has invoked_as=sh login=1 mode=stdin arg0=-sh'
	fi
}

case_env_cwd() {
	al "" T_ONE='a b' T_TWO= -- "$B/bash" -c ':'
	t "the environment travels" eval 'has "env=T_ONE=a b" "env=T_TWO="'
	al "" -- env -i PATH=/usr/bin:/bin FAKE_RECORD="c$((n_case + 1))-$WHO" FAKE_ACTION= T_A=1 \
		'BASH_FUNC_f%%=() { :; }' 'A-B=1' "$B/bash" -c ':'
	rec=c$((n_case))-$WHO
	t "entries no shell can name are left out (BASH_FUNC_f%%, A-B)" \
		eval 'rc_is 0 && has env_count=4 env=T_A=1'
	(cd "$W/dir" && al "" -- "$B/bash" -c ':')
	rec=c$((n_case + 1))-$WHO
	n_case=$((n_case + 1))
	t "cwd is the caller's" eval 'has cwd=$W/dir'
	mkdir "$W/gone"
	chmod 755 "$W/gone"
	(cd "$W/gone" && rmdir "$W/gone" && al exit=0 -- "$B/bash" -c ':')
	n_case=$((n_case + 1))
	rec=c$n_case-$WHO
	err=$W/err.$rec
	t "a removed cwd: 125, says so, no session" \
		eval 'grep -q "cannot serve: the current directory" "$err" && no_record'
}

case_fds() {
	STDIN=$W/stdin.txt
	printf 'hello\nworld\n' >"$STDIN"
	al out,in,exit=0 -- "$B/bash" -c 'cat'
	STDIN=/dev/null
	t "stdout and stderr: what box-shell writes on the passed fds reaches the caller's files" \
		eval 'grep -qx "fake-shell: to stdout" "$out" && grep -qx "fake-shell: to stderr" "$err"'
	t "stdin: box-shell reads the caller's stdin" eval 'has "stdin=hello\\nworld\\n" fd0_acc=r'
	t "no relay: fds 1 and 2 are the caller's very files" \
		eval 'has "fd1=$(stat -c %d:%i "$out")" "fd2=$(stat -c %d:%i "$err")" \
			"fd0=$(stat -c %d:%i "$W/stdin.txt")" fd1_acc=w fd2_acc=w'
	al exit=0 -- sh -c 'exec "$0" -c : <&-' "$B/bash"
	t "a closed fd 0 is passed as /dev/null" \
		eval 'has "fd0=$(stat -L -c %d:%i /dev/null)" fd0_acc=rw'
}

case_status() {
	local s
	for s in 0 1 3 126 127 255; do
		al exit=$s -- "$B/bash" -c ':'
		t "ShellExit $s: the alias exits $s" rc_is "$s"
	done
}

case_125() {
	local save=$SOCK
	SOCK=-
	al "" -- "$B/bash" -c ':'
	SOCK=$save
	t "no box-shell: 125, cannot serve: connect" \
		eval 'rc_is 125 && err_has "box-shell: cannot serve: connect /run/box/shell.sock: No such file"'
	SOCK=$W/dead.sock
	al "" -- "$B/bash" -c ':'
	SOCK=$save
	t "a socket nobody listens on: 125, connection refused" \
		eval 'rc_is 125 && err_has "cannot serve: connect /run/box/shell.sock: Connection refused"'
	al close -- "$B/bash" -c ':'
	t "box-shell closes without ShellExit: 125, says so" \
		eval 'rc_is 125 && err_has "box-shell: cannot serve: box-shell closed the session before the command ended"'
	al "deny=the box is stopping" -- "$B/bash" -c ':'
	t "ShellDenied: printed, 125" eval 'rc_is 125 && err_has "box-shell: the box is stopping"'
	al bad-reply -- "$B/bash" -c ':'
	t "a message box-shell may not send: 125, a broken reply" \
		eval 'rc_is 125 && err_has "box-shell: cannot serve: a broken reply from box-shell"'
	al "" -- "$B/bash" -z -c ':'
	t "bash -z: 125, names it and what is accepted, no session" \
		eval 'rc_is 125 && err_has "-z: invalid option" && err_has "accepts -c CMD" && no_record'
	al "" -- "$B/bash" -c
	t "-c without a command: 125" eval 'rc_is 125 && err_has "-c: option requires an argument" && no_record'
	al "" -- "$B/bash" -o emacs -c ':'
	t "-o emacs: 125" eval 'rc_is 125 && err_has "-o emacs: invalid option name" && no_record'
	al "" -- "$B/bash" -o
	t "-o without a name: 125" eval 'rc_is 125 && err_has "option requires an argument" && no_record'
	al "" -- "$B/bash" --rcfile x -c ':'
	t "--rcfile: 125" eval 'rc_is 125 && err_has "--rcfile: invalid option" && no_record'
	al "" -- "$B/sh" -v script
	t "sh -v: 125" eval 'rc_is 125 && err_has "-v: invalid option" && no_record'
	al "" -- "$B/bash" +c ':'
	t "+c: 125" eval 'rc_is 125 && err_has "+c: invalid option" && no_record'
	al "" -- "$B/bash" ''
	t "an empty script name: 125" eval 'rc_is 125 && err_has "script name is empty" && no_record'
}

case_version() {
	local save=$SOCK
	SOCK=-
	al "" -- "$B/bash" --version
	t "--version: box-shell's, answered by the alias itself (no box-shell needed)" \
		eval 'rc_is 0 && grep -q "^box-shell [0-9]" "$out" && grep -q "\"bash\" is box.s shell alias; it answers --version itself" "$out"'
	al "" -- "$B/sh" -e --version -c ':'
	t "--version among other options" eval 'rc_is 0 && grep -q "^box-shell " "$out"'
	al "" -- "$B/bash" --help
	t "--help: what the alias accepts, saying it is the alias's" \
		eval 'rc_is 0 && grep -q "^Usage: bash" "$out" && grep -q "this help comes from the alias itself" "$out"'
	SOCK=$save
}

case_big() {
	al "" -- "$B/inproc" bash 1048576
	t "a 1 MiB -c text arrives whole (in-process: fragments)" \
		eval 'rc_is 0 && has command_len=1048576 && cmp -s "$W/rec/$rec.command" <(expected 1048576)'
	al "" -- "$B/inproc" bash 1048577
	t "1 MiB + 1: 125, says the cap, no session" \
		eval 'rc_is 125 && err_has "box-shell takes at most 1048576" && no_record'
	al "" -- "$B/bash" -c "$(expected 102400)"
	t "a 100 KiB -c text through execve (fragmented)" \
		eval 'rc_is 0 && has command_len=102400 && cmp -s "$W/rec/$rec.command" <(expected 102400)'
}

# expected SIZE: the text box-test-alias-inproc builds.
expected() {
	printf 'echo '
	yes abcdefghijklmnopqrstuvwxyz | tr -d '\n' | head -c $(($1 - 5))
}

# bg ACTION ARGV...: start the alias in the background, wait for "ready" on its stdout.
bg() {
	local action=$1
	shift
	n_case=$((n_case + 1))
	rec=c$n_case-$WHO
	out=$W/out.$rec err=$W/err.$rec
	env FAKE_RECORD="$rec" FAKE_ACTION="$action" \
		unshare -m bash "$W/in-ns.sh" "$SOCK" "${AS[@]}" "$@" </dev/null >"$out" 2>"$err" &
	pid=$!
	wait_for "$out" '^ready$'
}

wait_for() {
	for _ in $(seq 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	diag "timed out waiting for '$2' in $1"
	return 1
}

case_signals() {
	# Job control on: background jobs keep SIGINT (without it they ignore it).
	set -m
	bg ready,wait-signal=2 "$B/bash" -c 'sleep 100'
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	t "SIGINT to the alias: ShellSignal 2, then the status box-shell says (130)" \
		eval 'rc_is 130 && has signal=2'
	bg ready,wait-signal=2 "$B/bash" -c 'sleep 100'
	local sig ok=1
	for sig in WINCH:28 TERM:15 HUP:1; do
		kill -"${sig%:*}" "$pid"
		wait_for "$W/rec/$rec" "^signal=${sig#*:}\$" || ok=0
	done
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	t "SIGWINCH SIGTERM SIGHUP SIGINT: each forwarded, in order" \
		eval '[ $ok = 1 ] && rc_is 130 && [ "$(grep ^signal= "$W/rec/$rec" | tr "\n" " ")" = "signal=28 signal=15 signal=1 signal=2 " ]'
	bg ready,hold "$B/bash" -c 'sleep 100'
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	t "the alias killed: box-shell sees the hang-up" wait_for "$W/rec/$rec" '^hangup$'
	set +m
	# Without job control the background alias starts with SIGINT ignored: it stays so.
	bg ready,wait-signal=15 "$B/bash" -c 'sleep 100'
	kill -INT "$pid"
	sleep 0.3
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	t "a signal ignored at entry (a background job's SIGINT) is not forwarded" \
		eval 'rc_is 143 && [ "$(grep ^signal= "$W/rec/$rec" | tr "\n" " ")" = "signal=15 " ]'
}

suite() {
	n_case=0
	case_forms
	case_dialects
	case_env_cwd
	case_fds
	case_status
	case_125
	case_version
	case_big
	case_signals
	t "every session was a well-formed ShellOpen (no refused one)" eval '[ ! -e "$W/rec/refused" ]'
}

# A socket nobody listens on: a fake that was killed.
"$BOX_BUILD/test/alias/box-test-fakeshell" "$W/dead.sock" "$W/rec" 2>/dev/null &
dead=$!
for _ in $(seq 100); do [ -S "$W/dead.sock" ] && break; sleep 0.05; done
kill "$dead"
wait "$dead" 2>/dev/null

suite
t "sessions ran as root" eval 'grep -qx uid=0 "$W/rec/c1-root"'

if id boxtest >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	WHO=boxtest
	AS=(setpriv --reuid=boxtest --regid=boxtest --clear-groups --)
	chmod 0666 "$W/dead.sock"
	suite
	t "sessions ran as boxtest" eval 'grep -qx "uid=$(id -u boxtest)" "$W/rec/c1-boxtest"'
else
	skip "boxtest: the alias as an ordinary user" "no user boxtest or no setpriv"
fi

# The program itself: static (plain build), the session protocol only, nothing of NSS.
syms=$(nm "$B/box-alias" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TtDdRrBbWw]$/ { print $3 }')
if [ -z "${SAN:-}" ]; then
	if ! readelf -l "$B/box-alias" | grep -q INTERP && ! readelf -d "$B/box-alias" | grep -q NEEDED
	then
		ok "box-alias is static: no program interpreter, no shared library"
	else
		not_ok "box-alias is static: $(readelf -d "$B/box-alias" | grep NEEDED | tr -s ' ')"
	fi
else
	# Sanitizer runtimes cannot be linked statically (box-alias/module.mk).
	if readelf -d "$B/box-alias" | grep -q 'NEEDED.*libasan\|NEEDED.*libubsan'; then
		ok "box-alias (SAN build) links the sanitizer runtimes dynamically"
	else
		not_ok "box-alias (SAN build) links the sanitizer runtimes dynamically"
	fi
fi
foreign=
for s in box_proto_client box_proto_policy box_proto_plan box_proto_recheck box_proto_gateway \
	bp_decide getpwnam getpwuid getpwnam_r getpwuid_r getgrnam getgrgid initgroups getaddrinfo \
	gethostbyname dlopen_nss __nss_database_lookup; do
	grep -qx "$s" <<<"$syms" && foreign="$foreign $s"
done
if grep -qx box_proto_session <<<"$syms" && [ -z "$foreign" ]; then
	ok "box-alias links the session table and no other protocol's, nor NSS"
else
	not_ok "box-alias links the session table and no other protocol's, nor NSS:$foreign"
fi

# The user documentation names every option --help lists (docs/box-shell.8.md, "## alias").
doc=$(awk '/^## alias/ { on = 1; next } on && /^## / { exit } on' "$root/docs/box-shell.8.md")
missing=
for o in $("$B/box-alias" --help | grep -oE '(^|[ ,])[-+][-a-z]+' | tr -d ' ,' | sort -u); do
	grep -qF -- "\`$o" <<<"$doc" || grep -qE -- "\`[^\`]* $o[ \`]" <<<"$doc" || missing="$missing $o"
done
if [ -z "$missing" ] && [ -n "$doc" ]; then
	ok "docs/box-shell.8.md (alias) names every option of --help"
else
	not_ok "docs/box-shell.8.md (alias) lacks:$missing"
fi
tap_done
