#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-alias-mcp.sh — box-alias's MCP mode (a link /run/box/bin/NAME for a stdio
# [mcp.NAME]) against a fake box-mcpd (box-test-fakemcpd: the MCP session
# protocol's box-mcpd side, which records each McpOpen and answers as the
# test's RECORD_DIR/next line says).
#
# Every alias runs in a private mount namespace (unshare -m) where a tmpfs
# covers /run and the fake's socket is bind-mounted on /run/box/mcp.sock
# (or nothing, for "no broker"). Covers: the mode (any argv[0] basename that
# names no shell; box-alias itself and the shells stay shell aliases; the
# file mounted over a shell stays one whatever argv[0] says), McpOpen's
# alias, arguments and cwd, the three fds are the caller's own (no relay:
# the fake reads the caller's stdin and writes its stdout), McpClose's status
# and message, a session closed without McpClose (125), a broken reply
# (125), no /run/box/mcp.sock (127, "no MCP broker in this box"), a socket
# nobody listens on (125), an alias waiting on a session that stays open
# for a second sleeps (under 0.3 s of CPU, not a spin on its socket). As
# root, then as the ordinary user boxtest.
# Trusts: nothing; it is test code.
set -u
. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "t-alias-mcp" "needs root (unshare -m, mounts)"
	tap_done
	exit
fi
if ! unshare -m true 2>/dev/null; then
	skip "t-alias-mcp" "no mount namespaces (unshare -m failed)"
	tap_done
	exit
fi

W=$(mktemp -d /tmp/box-alias-mcp-t.XXXXXX)
chmod 755 "$W"
mkdir -p "$W/bin" "$W/rec" "$W/dir" "$W/mnt"
chmod 755 "$W/bin" "$W/dir" "$W/mnt"
chmod 777 "$W/rec"
cp "$BOX_BIN/box-alias" "$W/bin/box-alias" || { not_ok "box-alias is built"; exit 1; }
chmod 755 "$W/bin/box-alias"
for n in files my.srv-2 sh bash python3; do ln -s box-alias "$W/bin/$n"; done
B=$W/bin
SOCK=$W/mcp.sock
fake_pid=

cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# $1: the socket to mount on /run/box/mcp.sock ("-": none); IN_NS_OVER=FILE
# mounts the alias over FILE; IN_NS_ARGV0 sets argv[0].
cat >"$W/in-ns.sh" <<'EOF'
set -e
sock=$1
shift
mount -t tmpfs -o mode=0755 box-alias-mcp-test /run
mkdir /run/box
if [ "$sock" != - ]; then
	: >/run/box/mcp.sock
	mount --bind "$sock" /run/box/mcp.sock
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

"$BOX_BUILD/test/alias/box-test-fakemcpd" "$SOCK" "$W/rec" 2>"$W/fake.err" &
fake_pid=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { not_ok "the fake box-mcpd listens"; cat "$W/fake.err"; exit 1; }

AS=()
WHO=root
n_case=0
INPUT='{"jsonrpc":"2.0","id":1,"method":"ping"}'

# al SOCK ACTION [VAR=VALUE...] -- ARGV...: one alias run; sets $rec, $rc, $out, $err.
al() {
	local sock=$1 action=$2
	shift 2
	local envs=()
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	n_case=$((n_case + 1))
	rec=m$n_case-$WHO
	out=$W/out.$rec err=$W/err.$rec
	printf '%s %s\n' "$rec" "$action" >"$W/rec/next"
	printf '%s\n' "$INPUT" >"$W/in.$rec"
	(cd "$W/dir" && env IN_NS_ALIAS="$W/bin/box-alias" "${envs[@]}" \
		unshare -m bash "$W/in-ns.sh" "$sock" "${AS[@]}" "$@" <"$W/in.$rec" >"$out" 2>"$err")
	rc=$?
}

has() {
	local f=$W/rec/$rec l
	[ -f "$f" ] || { diag "no record $rec (stderr: $(cat "$err"))"; return 1; }
	for l in "$@"; do
		grep -qFx -- "$l" "$f" || { diag "$rec lacks '$l':" "$(cat "$f")"; return 1; }
	done
}
no_record() { [ ! -e "$W/rec/$rec" ] || { diag "a session was opened: $(cat "$W/rec/$rec")"; return 1; }; }
rc_is() { [ "$rc" -eq "$1" ] || { diag "status $rc, want $1 (stderr: $(cat "$err"))"; return 1; }; }
err_is() { [ "$(cat "$err")" = "$1" ] || { diag "stderr '$(cat "$err")', want '$1'"; return 1; }; }
err_has() { grep -qF -- "$1" "$err" || { diag "stderr lacks '$1':" "$(cat "$err")"; return 1; }; }
t() {
	local name=$1
	shift
	if "$@"; then ok "$WHO: $name"; else not_ok "$WHO: $name"; fi
}
# The identity (device:inode) of a file, as the fake records an fd.
ident() { stat -L -c '%d:%i' "$1"; }

suite() {
	n_case=0
	al "$SOCK" "echo=0:" -- "$B/files" --flag 'two words' ''
	t "an MCP alias: McpOpen with its name, arguments and cwd; status 0" \
		eval 'rc_is 0 && has alias=files nargs=3 arg=--flag "arg=two words" arg= "cwd=$W/dir"'
	t "… fds 0-2 are the caller's own files (stdin r, stdout and stderr w)" \
		eval 'has "fd0=$(ident "$W/in.$rec")" fd0_acc=r "fd1=$(ident "$out")" fd1_acc=w \
			"fd2=$(ident "$err")" fd2_acc=w'
	t "… the broker reads the caller's stdin and writes its stdout itself (no relay)" \
		eval '[ "$(cat "$out")" = "fake-mcpd: $INPUT" ] && err_is ""'
	al "$SOCK" "echo=126:box-mcpd: files: shell:spawn denied by policy (rule no-files)" -- "$B/files"
	t "McpClose 126 with a message: exit 126, the message on stderr" \
		eval 'rc_is 126 && err_is "box-mcpd: files: shell:spawn denied by policy (rule no-files)"'
	al "$SOCK" "echo=3:" -- "$B/my.srv-2"
	t "an alias name with . and -; the server's status (3) is the alias's" \
		eval 'rc_is 3 && has alias=my.srv-2 nargs=0 && err_is ""'
	# The alias waits for McpClose asleep: its CPU (and its unshare's and bash's) stays far
	# under the second the session lasts.
	TIMEFORMAT='%U %S'
	{ time al "$SOCK" "idle=1000:4" -- "$B/files"; } 2>"$W/cpu.$WHO"
	cpu=$(cat "$W/cpu.$WHO")
	t "a session open for 1 s: the alias sleeps meanwhile (CPU ${cpu// /+} s), then exits 4" \
		eval 'rc_is 4 && awk -v u="${cpu% *}" -v s="${cpu#* }" "BEGIN { exit !(u + s < 0.3) }"'
	al "$SOCK" "hangup" -- "$B/files"
	t "box-mcpd closes without McpClose: 125 and a message" \
		eval 'rc_is 125 && err_is "box-mcpd: files: box-mcpd closed the session without saying why (it may have exited)"'
	al "$SOCK" "bad-reply" -- "$B/files"
	t "a reply the session table refuses: 125 and a message" \
		eval 'rc_is 125 && err_has "box-mcpd: files: a broken reply from box-mcpd"'
	al - "echo=0:" -- "$B/files"
	t "no /run/box/mcp.sock: 127, 'no MCP broker in this box'" \
		eval 'rc_is 127 && no_record && err_is "box-mcpd: files: no MCP broker in this box (/run/box/mcp.sock does not exist: the box has no stdio [mcp] server)"'
	al "$W/dead.sock" "echo=0:" -- "$B/files"
	t "a socket nobody listens on: 125, the connect error" \
		eval 'rc_is 125 && no_record && err_has "box-mcpd: files: connect /run/box/mcp.sock: Connection refused"'
	# Shell names stay shell aliases: they go to /run/box/shell.sock, not to box-mcpd.
	al "$SOCK" "echo=0:" -- "$B/bash" -c ':'
	t "bash is a shell alias (no MCP session)" \
		eval 'rc_is 125 && no_record && err_has "box-shell: cannot serve: connect /run/box/shell.sock"'
	al "$SOCK" "echo=0:" -- "$B/python3" -c ':'
	t "python3 is a shell alias (no MCP session)" eval 'rc_is 125 && no_record'
	al "$SOCK" "echo=0:" -- "$B/box-alias" -c ':'
	t "box-alias under its own name is a shell alias" eval 'rc_is 125 && no_record'
	# argv[0] of its own only as root (as boxtest, exec -a names setpriv).
	if [ "$WHO" = root ]; then
		al "$SOCK" "echo=0:" IN_NS_ARGV0=files -- "$B/box-alias"
		t "argv[0] decides: box-alias run as 'files' is the MCP alias files" \
			eval 'rc_is 0 && has alias=files'
		: >"$W/mnt/bash"
		al "$SOCK" "echo=0:" IN_NS_OVER="$W/mnt/bash" IN_NS_ARGV0=files -- "$W/mnt/bash" -c ':'
		t "mounted over .../bash, argv[0] 'files': still the shell alias" \
			eval 'rc_is 125 && no_record'
	fi
}

# A socket nobody listens on: a fake that was killed.
"$BOX_BUILD/test/alias/box-test-fakemcpd" "$W/dead.sock" "$W/rec" 2>/dev/null &
dead=$!
for _ in $(seq 100); do [ -S "$W/dead.sock" ] && break; sleep 0.05; done
kill "$dead"
wait "$dead" 2>/dev/null

suite
t "sessions ran as root" eval 'grep -qx uid=0 "$W/rec/m1-root"'

if id boxtest >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	WHO=boxtest
	AS=(setpriv --reuid=boxtest --regid=boxtest --clear-groups --)
	chmod 0666 "$W/dead.sock"
	chmod 0666 "$W"/in.* 2>/dev/null
	suite
	t "sessions ran as boxtest" eval 'grep -qx "uid=$(id -u boxtest)" "$W/rec/m1-boxtest"'
else
	skip "boxtest: the MCP alias as an ordinary user" "no user boxtest or no setpriv"
fi
tap_done
