#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-install.sh — `make install` into a DESTDIR: every program lands where the
# install variables say, with mode 0755, and nothing is setuid or setgid
# (box-trampoline in particular is never installed setuid); the systemd
# units, sysusers.d, tmpfiles.d and the docs land as 0644 data files.
. test/lib.sh
set -u

dest=$(mktemp -d /tmp/box-install-XXXXXX)
trap 'rm -rf "$dest"' EXIT

if make -s --no-print-directory BUILD="$BOX_BUILD" SAN="${SAN:-}" install \
	DESTDIR="$dest" PREFIX=/usr LIBEXECDIR=/usr/libexec/box >"$dest.log" 2>&1; then
	ok "make install DESTDIR succeeds"
else
	not_ok "make install DESTDIR succeeds"
	sed 's/^/#   /' "$dest.log"
fi
rm -f "$dest.log"

list=$(make -s --no-print-directory BUILD="$BOX_BUILD" SAN="${SAN:-}" print-install-list)
for entry in $list; do
	check "$(basename "$entry") installed as /usr/$entry" test -x "$dest/usr/$entry"
	m=$(stat -c %a "$dest/usr/$entry" 2>/dev/null)
	check "$(basename "$entry") mode is 755 (got $m)" test "$m" = 755
done
data=$(make -s --no-print-directory BUILD="$BOX_BUILD" SAN="${SAN:-}" PREFIX=/usr print-install-data)
for f in $data; do
	check "$(basename "$f") installed as $f" test -f "$dest$f"
	m=$(stat -c %a "$dest$f" 2>/dev/null)
	check "$f mode is 644 (got $m)" test "$m" = 644
done
for f in /lib/systemd/system/boxd.service /lib/systemd/system/boxd.socket \
	/usr/lib/sysusers.d/box.conf /usr/lib/tmpfiles.d/box.conf /usr/share/doc/box/README.md; do
	check "the data list names $f" grep -qxF "$f" <(echo "$data")
done
extra=$(find "$dest" -type f | sed "s|^$dest||" |
	grep -vxF -f <(echo "$list" | sed 's|^|/usr/|'; echo "$data") | wc -l)
check "install places nothing beyond the program and data lists ($extra extra)" test "$extra" -eq 0

# The packaging files are what systemd reads: sysusers.d declares box-daemon
# and box-clients, tmpfiles.d makes /run/box and /var/lib/box (into a scratch root).
su=$dest/usr/lib/sysusers.d/box.conf
check "sysusers.d declares the box-daemon user" grep -qE '^u box-daemon ' "$su"
check "sysusers.d declares the box-clients group" grep -qE '^g box-clients ' "$su"
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	troot=$(mktemp -d /tmp/box-tmpfiles-XXXXXX)
	systemd-tmpfiles --root="$troot" --create "$dest/usr/lib/tmpfiles.d/box.conf" >/dev/null 2>&1
	check "tmpfiles.d creates /run/box 0755" test "$(stat -c %a "$troot/run/box" 2>/dev/null)" = 755
	check "tmpfiles.d creates /var/lib/box 0755" test "$(stat -c %a "$troot/var/lib/box" 2>/dev/null)" = 755
	rm -rf "$troot"
else
	skip "tmpfiles.d applies" "systemd-tmpfiles is not installed"
fi
if [ "$(id -u)" -eq 0 ]; then
	has_user() { getent passwd "$1" >/dev/null; }
	check "make deps created the box-daemon user" has_user box-daemon
fi

suid=$(find "$dest" -type f \( -perm -4000 -o -perm -2000 \) | wc -l)
check "no installed file is setuid or setgid ($suid found)" test "$suid" -eq 0
if [ -e "$dest/usr/libexec/box/box-trampoline" ]; then
	tmode=$(stat -c %a "$dest/usr/libexec/box/box-trampoline")
	check "box-trampoline mode is 755, never setuid (got $tmode)" test "$tmode" = 755
fi
world=$(find "$dest" -type f -perm -0002 | wc -l)
check "no installed file is world-writable" test "$world" -eq 0
tap_done
