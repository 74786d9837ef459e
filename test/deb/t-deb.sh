#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# box-test: serial
# t-deb.sh — `make deb` and the package on this host, twice in a row: it builds (debhelper,
# DEB_BUILD_OPTIONS=nocheck; BOX_TEST_DEB=FILE uses a package already built), lintian finds
# nothing its overrides do not explain, it installs, the users and box-clients exist, the
# units are installed and neither enabled nor started (no process runs the installed
# boxd), systemd-analyze verify passes on them, `man` finds every page, the installed
# boxctl runs a box through the installed boxd and helpers (--embedded: the compiled-in
# directories are the package's), `boxctl doctor` runs; then it purges, and nothing of the
# package is left. Only where no other box install exists (it would be replaced); the
# purge is in the EXIT trap. It changes the whole host: serial, and in make check-slow.
# Trusts: nothing; test code.
. test/lib.sh
set -u

if [ "$(id -u)" -ne 0 ]; then
	skip "the Debian package" "needs root (dpkg -i)"
	tap_done
	exit 0
fi
for t in dpkg-buildpackage dh; do
	if ! command -v $t >/dev/null 2>&1; then
		skip "the Debian package" "$t is not installed (make deps)"
		tap_done
		exit 0
	fi
done
# A run cut short (killed past its time cap, the machine stopped) never reached its purge: the
# marker, written before each dpkg -i and removed after the purge, says the installed package
# is this test's own leftover, not someone's install. Purge it first (dpkg --configure -a
# finishes a dpkg run that was cut short with it).
owned=/var/tmp/box-t-deb.installed
if [ -e "$owned" ]; then
	dpkg --configure -a >/dev/null 2>&1
	dpkg --purge box >/dev/null 2>&1
	if dpkg-query -W -f='${Status}' box 2>/dev/null | grep -q installed; then
		not_ok "the package a cut-short run left is purged first"
		tap_done
		exit 1
	fi
	rm -f "$owned"
	echo "# purged the package a cut-short run of this test had left installed"
fi
for f in /usr/sbin/boxd /usr/bin/boxctl /lib/systemd/system/boxd.service /etc/apparmor.d/box-trampoline; do
	if [ -e "$f" ] || dpkg-query -W -f='${Status}' box 2>/dev/null | grep -q installed; then
		skip "the Debian package" "another box install exists here ($f)"
		tap_done
		exit 0
	fi
done

tmp=$(mktemp -d /tmp/box-t-deb-XXXXXX)
chmod 755 "$tmp"
cleanup() {
	dpkg --purge box >/dev/null 2>&1
	dpkg-query -W -f='${Status}' box 2>/dev/null | grep -q installed || rm -f "$owned"
	rm -rf "$tmp"
}
trap cleanup EXIT

deb=${BOX_TEST_DEB:-}
if [ -z "$deb" ]; then
	if make -s --no-print-directory BUILD="$tmp/b" deb >"$tmp/build.log" 2>&1; then
		ok "make deb builds the package"
	else
		not_ok "make deb builds the package"
		tail -n 30 "$tmp/build.log" | sed 's/^/#   /'
	fi
	deb=$(make -s --no-print-directory BUILD="$tmp/b" print-deb)
fi
check "the package is there ($deb)" test -f "$deb"
[ -f "$deb" ] || { tap_done; exit 1; }

if command -v lintian >/dev/null 2>&1; then
	out=$(lintian --fail-on error,warning "$deb" 2>&1 | grep -v 'running with root privileges')
	check "lintian: nothing its overrides do not explain" test -z "$out"
	[ -z "$out" ] || diag "$out"
	ov=packaging/deb/box.lintian-overrides
	check "each lintian override follows a comment that explains it" \
		awk '/^#/ { c = 1; next } /^box:/ { if (!c) exit 1; c = 0; next } { c = 0 }' "$ov"
else
	skip "lintian" "lintian is not installed (make deps)"
fi

files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }')
for f in /usr/bin/boxctl /usr/bin/box-sh /usr/sbin/boxd /usr/libexec/box/box-trampoline \
	/usr/libexec/box/box-recheck /lib/systemd/system/boxd.service /lib/systemd/system/boxd.socket \
	/usr/lib/sysusers.d/box.conf /usr/lib/tmpfiles.d/box.conf /etc/apparmor.d/box-trampoline \
	/usr/share/man/man1/boxctl.1.gz /usr/share/man/man8/boxd.8.gz /usr/share/doc/box/copyright; do
	check "the package holds $f" grep -qxF "$f" <(echo "$files")
done

# The maintainer scripts: users from sysusers.d, nothing started (enabled: checked installed).
dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst >"$tmp/postinst" 2>/dev/null
check "postinst makes the users with systemd-sysusers box.conf" grep -q 'systemd-sysusers.*box.conf' "$tmp/postinst"
check "postinst starts nothing (no deb-systemd-invoke start)" sh -c "! grep -q 'deb-systemd-invoke.*start' '$tmp/postinst'"

for round in 1 2; do
	r="round $round:"
	: >"$owned"
	if dpkg -i "$deb" >"$tmp/install.log" 2>&1; then
		ok "$r dpkg -i installs the package"
	else
		not_ok "$r dpkg -i installs the package"
		sed 's/^/#   /' "$tmp/install.log"
	fi
	check "$r the box-daemon user exists" getent passwd box-daemon
	for du in box-policy box-gateway box-mcp; do
		check "$r the $du user exists" getent passwd "$du"
	done
	check "$r the box-clients group exists" getent group box-clients
	check "$r /var/lib/box and /run/box exist (tmpfiles.d)" test -d /var/lib/box -a -d /run/box
	for u in boxd.socket boxd.service; do
		wants=$(find /etc/systemd/system -name "$u" 2>/dev/null | head -n 1)
		check "$r $u is installed and not enabled" test -f "/lib/systemd/system/$u" -a -z "$wants"
	done
	running=0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = /usr/sbin/boxd ] && running=$((running + 1))
	done
	check "$r nothing was started (no process runs /usr/sbin/boxd)" test "$running" -eq 0
	if [ -e /lib/systemd/system/sockets.target ]; then
		out=$(systemd-analyze verify /lib/systemd/system/boxd.service /lib/systemd/system/boxd.socket 2>&1)
		check "$r systemd-analyze verify passes on the installed units (man:boxd(8) included)" test -z "$out"
		[ -z "$out" ] || diag "$out"
	fi
	for p in boxctl.1 box-sh.1 box.ini.5 box-policy.5 boxd.8 box-policyd.8 box-gateway.8 \
		box-mcpd.8 box-shell.8 box-clientd.8; do
		name=${p%.*} sec=${p##*.}
		check "$r man -w $sec $name finds the installed page" \
			test "$(man -w "$sec" "$name" 2>/dev/null)" = "/usr/share/man/man$sec/$p.gz"
	done
	check "$r man boxctl shows BOXCTL(1)" sh -c "MANWIDTH=100 man boxctl 2>/dev/null | grep -q 'BOXCTL(1)'"
	check "$r man box-policyd shows its system calls" \
		sh -c "MANWIDTH=200 man 8 box-policyd 2>/dev/null | grep -q 'Allowed (.* calls, from box-policyd/seccomp.c)'"

	# The installed programs find each other where the package put them.
	d=$tmp/box$round
	mkdir -p "$d"
	(cd "$d" && /usr/bin/boxctl init --agent generic -- /bin/echo "hello from the package" >/dev/null 2>&1)
	out=$(cd "$d" && BOX_SOCKET="$tmp/none.sock" timeout 300 /usr/bin/boxctl run --embedded 2>"$tmp/run.err")
	rc=$?
	check "$r the installed boxctl runs a box with the installed boxd (exit 0, got $rc)" test "$rc" -eq 0
	check "$r … its agent's output" grep -qx 'hello from the package' <(echo "$out")
	[ "$rc" -eq 0 ] || diag "$(tail -n 5 "$tmp/run.err")"
	/usr/bin/boxctl doctor >"$tmp/doctor" 2>&1
	check "$r boxctl doctor runs and counts what is missing" grep -qE '^[0-9]+ missing$' "$tmp/doctor"

	if dpkg --purge box >"$tmp/purge.log" 2>&1; then
		ok "$r dpkg --purge removes the package"
	else
		not_ok "$r dpkg --purge removes the package"
		sed 's/^/#   /' "$tmp/purge.log"
	fi
	left=$(for f in $files; do [ -e "$f" ] && echo "$f"; done)
	check "$r nothing of the package is left" test -z "$left"
	[ -z "$left" ] || diag "$left"
	check "$r dpkg knows nothing of it" \
		sh -c "! dpkg-query -W -f='\${Status}' box 2>/dev/null | grep -q installed"
	check "$r /etc/apparmor.d/box-trampoline (a conffile) is gone" test ! -e /etc/apparmor.d/box-trampoline
done
tap_done
