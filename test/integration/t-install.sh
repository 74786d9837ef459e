#!/usr/bin/env bash
# t-install.sh — `make install` into a DESTDIR: every program lands where the
# install variables say, with mode 0755, and nothing is setuid or setgid
# (box-trampoline in particular is never installed setuid).
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
extra=$(find "$dest" -type f | sed "s|^$dest/usr/||" | grep -vxF -f <(echo "$list") | wc -l)
check "install places nothing beyond the program list ($extra extra)" test "$extra" -eq 0

suid=$(find "$dest" -type f \( -perm -4000 -o -perm -2000 \) | wc -l)
check "no installed file is setuid or setgid ($suid found)" test "$suid" -eq 0
if [ -e "$dest/usr/libexec/box/box-trampoline" ]; then
	tmode=$(stat -c %a "$dest/usr/libexec/box/box-trampoline")
	check "box-trampoline mode is 755, never setuid (got $tmode)" test "$tmode" = 755
fi
world=$(find "$dest" -type f -perm -0002 | wc -l)
check "no installed file is world-writable" test "$world" -eq 0
tap_done
