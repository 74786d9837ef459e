# SPDX-License-Identifier: Apache-2.0
# lib-config.sh — the fixtures and case setup of test/config/'s tests (run.sh, check-vs-run.sh):
# boxctl ($boxctl), a fresh fixture tree ($tmp, $fx), the placeholders of the cases (subst,
# unsubst), `boxctl check` in a fixed environment (run_check), the host's Landlock ABI and
# cgroup controllers, and case_prepare INI: the case's directory $case with its box.ini and
# policy, $name, and $as_nobody (1: run as nobody); it returns 1 after a skip line when the
# host cannot run the case; run_env DIR CMD ARGS: CMD in DIR in the environment run_check
# gives `boxctl check`; as_nobody_run DIR CMD ARGS: CMD as nobody. Source after test/lib.sh, with $here set.
# Trusts: nothing; it is test code.

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
chmod 700 "$tmp/run/box" # as boxd makes it: an embedded boxd of check-vs-run.sh runs boxes there
# a directory nobody may create its state dir in (valid-user: root names nobody)
mkdir -p "$tmp/nobody-state"
if [ "$uid" -eq 0 ]; then
	chmod 711 "$tmp"
	chown 65534:65534 "$tmp/nobody-state"
fi
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
# a real certificate (box-gateway parses it when a box of valid-full runs)
"$here/../servers/mkca.sh" "$tmp/ca" upstream.test >/dev/null 2>&1 && cp "$tmp/ca/ca.pem" "$fx/ca.pem" ||
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

run_env() {
	(cd "$1" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent-home \
		XDG_STATE_HOME="$tmp/state" XDG_RUNTIME_DIR="$tmp/run" BOX_SOCKET="$tmp/sock/boxd.sock" \
		TEST_SECRET=s3cr3t-value TEST_EMPTY= ANTHROPIC_API_KEY=s3cr3t-anthropic \
		ASAN_OPTIONS="${ASAN_OPTIONS:-}" "${@:2}")
}
run_check() { run_env "$1" "$boxctl" check "${@:2}"; }
# as_nobody_run DIR CMD...: CMD in DIR as nobody (setpriv), the case tree made readable by it.
as_nobody_run() {
	chmod 711 "$tmp" "$tmp/cases"
	chmod -R a+rX "$1"
	(cd "$1" && env -i PATH=/usr/local/bin:/usr/bin:/bin BOX_SOCKET="$tmp/sock/boxd.sock" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "${@:2}")
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

case_prepare() {
	local ini=$1
	name=$(basename "$ini" .ini)
	if grep -q '^; requires: root' "$ini" && [ "$uid" -ne 0 ]; then
		skip "$name" "needs root"
		return 1
	fi
	as_nobody=0
	if grep -q '^; requires: nonroot' "$ini" && [ "$uid" -eq 0 ]; then
		if ! command -v setpriv >/dev/null; then
			skip "$name" "needs an ordinary user (no setpriv)"
			return 1
		fi
		as_nobody=1
	fi
	if grep -q '^; requires: landlock6' "$ini" && [ "$landlock_abi" -lt 6 ]; then
		skip "$name" "needs Landlock ABI 6 (kernel has $landlock_abi)"
		return 1
	fi
	if grep -q '^; requires: cgroup-memory-pids' "$ini" && [ "$cgroup_mp" != 1 ]; then
		skip "$name" "no cgroup memory and pids controllers on this host"
		return 1
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
	return 0
}
