#!/usr/bin/env bash
# run.sh — golden tests of box.ini loading: `boxctl check` on every test/config/*.ini.
#
# NAME.ini is checked from its own directory (@CASE@) with `-c box.ini`;
# NAME.out is the expected stdout (exit 0), NAME.err the expected stderr
# (exit 2). Placeholders, in the .ini and the expectations: @TMP@ (a fresh
# fixture tree), @CASE@ (the case directory, the cwd), @HOME@ (the caller's
# passwd home), @USER@ (its name), @UID@. A line "; requires: root" or "; requires: nonroot"
# gates a case. Every valid case is also checked to be a fixed point: its
# normalized output, loaded again, prints the same. No output may contain
# a secret value. NAME.dw, when present, is the case's policy.dw.
# `run.sh --update` rewrites the expectations (review them).
# Trusts: nothing; it is test code. Runs as root or as an ordinary user.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

update=0
[ "${1:-}" = --update ] && update=1
boxctl=${BOXCTL:-$BOX_BIN/boxctl}
case $boxctl in /*) ;; *) boxctl=$PWD/$boxctl ;; esac
if [ ! -x "$boxctl" ]; then
	not_ok "boxctl is built ($boxctl)"
	tap_done
	exit 1
fi

tmp=$(mktemp -d /tmp/box-config-test.XXXXXX)
[ -n "${KEEP:-}" ] && echo "# keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
uid=$(id -u)
home=$(getent passwd "$uid" | cut -d: -f6)
user=$(id -un)

# ---- fixtures ----
fx=$tmp/fx
mkdir -p "$fx/proj/src" "$fx/proj/out/sub" "$fx/bin" "$fx/state" "$tmp/run/box" "$tmp/state"
# box's own directories and the service socket's directory (err-own-dirs)
mkdir -p "$tmp/state/box/other" "$tmp/run/box/abc" "$tmp/sock" "$fx/near-sock"
# hard links under deny (err-deny-links)
mkdir -p "$fx/linkdir/deep"
echo text >"$fx/linked"
ln "$fx/linked" "$fx/linked-too"
echo text >"$fx/linkdir/deep/inner"
ln "$fx/linkdir/deep/inner" "$fx/inner-too"
echo text >"$fx/linkdir/plain"
echo 'SECRET=x' >"$fx/proj/.env"
echo text >"$fx/file.txt"
echo text >"$fx/proj/src/main.c"
cp /bin/true "$fx/bin/true"
cp /bin/true "$fx/setuid"
chmod 4755 "$fx/setuid"
echo 'not a program' >"$fx/noexec.txt"
ln -s "$fx/proj" "$fx/link"
printf '#!/usr/bin/env python3\nprint("agent")\n' >"$fx/run-py"
printf '#!/bin/sh\necho agent\n' >"$fx/run-sh"
printf '#!/usr/bin/env bash\necho agent\n' >"$fx/run-envbash"
printf '#!%s\n' "$fx/run-sh" >"$fx/run-chain"
printf '#!relative/interp\n' >"$fx/run-badinterp"
chmod 755 "$fx/run-py" "$fx/run-sh" "$fx/run-envbash" "$fx/run-chain" "$fx/run-badinterp"
printf 'filesecret\n' >"$fx/secret-ok"
chmod 600 "$fx/secret-ok"
printf 'alice:pw-s3cr3t\n' >"$fx/secret-basic"
chmod 600 "$fx/secret-basic"
printf 'filesecret\n' >"$fx/secret-open"
chmod 644 "$fx/secret-open"
printf 'filesecret\n' >"$fx/proj/out/sub/secret"
chmod 600 "$fx/proj/out/sub/secret"
printf 'filesecret\n' >"$fx/secret-other"
chmod 600 "$fx/secret-other"
[ "$uid" -eq 0 ] && chown 65534:65534 "$fx/secret-other"
: >"$fx/secret-empty"
chmod 600 "$fx/secret-empty"
printf -- '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' >"$fx/ca.pem"
printf '127.0.0.1 api.example.test\n' >"$fx/hosts"

subst() {
	sed -e "s|@CASE@|$2|g" -e "s|@TMP@|$tmp|g" -e "s|@HOME@|$home|g" -e "s|@UID@|$uid|g" \
		-e "s|@USER@|$user|g" "$1"
}
unsubst() {
	sed -e "s|$1|@CASE@|g" -e "s|$tmp|@TMP@|g" -e "s|$home/|@HOME@/|g" -e "s|$home\$|@HOME@|g" \
		-e "s|$home\"|@HOME@\"|g" -e "s|$home |@HOME@ |g" \
		-e "s|^user = $user\$|user = @USER@|"
}

run_check() {
	(cd "$1" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent-home \
		XDG_STATE_HOME="$tmp/state" XDG_RUNTIME_DIR="$tmp/run" BOX_SOCKET="$tmp/sock/boxd.sock" \
		TEST_SECRET=s3cr3t-value TEST_EMPTY= ANTHROPIC_API_KEY=s3cr3t-anthropic \
		"$boxctl" check "${@:2}")
}

landlock_abi=$(python3 -c 'import ctypes; print(max(0, ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1)))' 2>/dev/null || echo 0)
# Memory and pids controllers, v1 hierarchies or the unified tree's controllers.
cgroup_mp=0
if awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ {m=1} $0 ~ / - cgroup / && $NF ~ /(^|,)pids(,|$)/ {p=1}
	END {exit !(m && p)}' /proc/self/mountinfo; then
	cgroup_mp=1
elif f=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo) &&
	grep -qw memory "$f/cgroup.controllers" 2>/dev/null && grep -qw pids "$f/cgroup.controllers"; then
	cgroup_mp=1
fi
n=0
for ini in "$here"/*.ini; do
	name=$(basename "$ini" .ini)
	if grep -q '^; requires: root' "$ini" && [ "$uid" -ne 0 ]; then
		skip "$name" "needs root"
		continue
	fi
	as_nobody=0
	if grep -q '^; requires: nonroot' "$ini" && [ "$uid" -eq 0 ]; then
		if ! command -v setpriv >/dev/null; then
			skip "$name" "needs an ordinary user (no setpriv)"
			continue
		fi
		as_nobody=1
	fi
	if grep -q '^; requires: landlock6' "$ini" && [ "$landlock_abi" -lt 6 ]; then
		skip "$name" "needs Landlock ABI 6 (kernel has $landlock_abi)"
		continue
	fi
	if grep -q '^; requires: cgroup-memory-pids' "$ini" && [ "$cgroup_mp" != 1 ]; then
		skip "$name" "no cgroup memory and pids controllers on this host"
		continue
	fi
	case=$tmp/cases/$name
	mkdir -p "$case/sub"
	echo 'permit(principal, action == Box::Action::"fs:read", resource);' >"$case/policy.dw"
	echo 'permit(principal, action == Box::Action::"fs:read", resource);' >"$case/sub/policy.dw"
	# NAME.dw, when present, is the case's policy.
	[ -f "$here/$name.dw" ] && subst "$here/$name.dw" "$case" >"$case/policy.dw"
	if grep -q '^; crlf' "$ini"; then
		subst "$ini" "$case" | sed 's/$/\r/' | sed '1s/^/\xef\xbb\xbf/' >"$case/box.ini"
	else
		subst "$ini" "$case" >"$case/box.ini"
	fi
	if [ $as_nobody = 1 ]; then
		chmod 711 "$tmp" "$tmp/cases"
		chmod -R a+rX "$case"
		(cd "$case" && env -i PATH=/usr/local/bin:/usr/bin:/bin BOX_SOCKET="$tmp/sock/boxd.sock" \
			setpriv --reuid=65534 --regid=65534 --clear-groups "$boxctl" check -c box.ini) \
			>"$case/stdout" 2>"$case/stderr"
	else
		run_check "$case" -c box.ini >"$case/stdout" 2>"$case/stderr"
	fi
	rc=$?
	n=$((n + 1))
	if grep -rq 's3cr3t\|filesecret' "$case/stdout" "$case/stderr"; then
		not_ok "$name: a secret value was printed"
		continue
	fi
	if [ $update = 1 ]; then
		rm -f "$here/$name.out" "$here/$name.err"
		if [ $rc -eq 0 ]; then
			unsubst <"$case/stdout" "$case" >"$here/$name.out"
		else
			unsubst <"$case/stderr" "$case" >"$here/$name.err"
		fi
		ok "$name (updated, rc $rc)"
		continue
	fi
	if [ -f "$here/$name.out" ]; then
		subst "$here/$name.out" "$case" >"$case/expected"
		if [ $rc -ne 0 ] || ! diff -u "$case/expected" "$case/stdout" >"$case/diff" ||
			[ -s "$case/stderr" ]; then
			not_ok "$name: loads and prints the expected config (rc $rc)"
			[ -f "$case/diff" ] && sed 's/^/#   /' "$case/diff" | head -40
			sed 's/^/#   /' "$case/stderr" | head -40
			continue
		fi
		ok "$name: loads and prints the expected config"
		# Fixed point: the normalized config loads to itself.
		cp "$case/stdout" "$case/normalized.ini"
		run_check "$case" -c normalized.ini >"$case/stdout2" 2>"$case/stderr2"
		if [ $? -eq 0 ] && cmp -s "$case/stdout" "$case/stdout2"; then
			ok "$name: normalized output loads to itself"
		else
			not_ok "$name: normalized output loads to itself"
			diff -u "$case/stdout" "$case/stdout2" | sed 's/^/#   /' | head -20
			sed 's/^/#   /' "$case/stderr2" | head -10
		fi
	elif [ -f "$here/$name.err" ]; then
		subst "$here/$name.err" "$case" >"$case/expected"
		if [ $rc -ne 2 ] || ! diff -u "$case/expected" "$case/stderr" >"$case/diff" ||
			[ -s "$case/stdout" ]; then
			not_ok "$name: refused with the expected errors (rc $rc)"
			[ -f "$case/diff" ] && sed 's/^/#   /' "$case/diff" | head -40
			sed 's/^/#   /' "$case/stderr" | head -40
			continue
		fi
		ok "$name: refused with the expected errors"
	else
		not_ok "$name: has an expectation (.out or .err)"
	fi
done

# Cases that are not a box.ini file.
out=$(run_check "$tmp" -c "$tmp/missing.ini" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [ "$out" = "boxctl: $tmp/missing.ini: cannot be opened: No such file or directory" ]; then
	ok "a missing box.ini is refused with exit 2"
else
	not_ok "a missing box.ini is refused with exit 2 (rc $rc: $out)"
fi
out=$(run_check "$tmp" -c "$fx/proj" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [ "$out" = "boxctl: $fx/proj: is not a regular file" ]; then
	ok "a directory as box.ini is refused"
else
	not_ok "a directory as box.ini is refused (rc $rc: $out)"
fi
mkfifo "$tmp/fifo.ini"
out=$(timeout 5 "$boxctl" check -c "$tmp/fifo.ini" 2>&1)
rc=$?
if [ $rc -eq 2 ]; then
	ok "a FIFO as box.ini is refused without blocking"
else
	not_ok "a FIFO as box.ini is refused without blocking (rc $rc: $out)"
fi
out=$(run_check "$tmp" -x 2>&1)
rc=$?
if [ $rc -eq 2 ]; then ok "an unknown option is a usage error"; else not_ok "an unknown option is a usage error (rc $rc)"; fi
out=$(run_check "$tmp/cases/valid-minimal" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^name = minimal$' <<<"$out"; then
	ok "-c defaults to ./box.ini"
else
	not_ok "-c defaults to ./box.ini (rc $rc)"
fi
if [ "$n" -lt 40 ]; then
	not_ok "at least 40 golden cases ran ($n)"
else
	ok "at least 40 golden cases ran ($n)"
fi
tap_done
