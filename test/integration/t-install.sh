#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-install.sh — `make install` into a DESTDIR: every program lands where the
# install variables say, with mode 0755, and nothing is setuid or setgid
# (box-trampoline in particular is never installed setuid); the systemd
# units, sysusers.d, tmpfiles.d, the AppArmor profile, the docs and the man
# pages land as 0644 data files. The install directories reach what embeds
# them (packaging/install.mk): the binaries (boxd's libexec dir, boxctl's
# sbin dir), the units (ExecStart), the profile; changing PREFIX rebuilds
# exactly those, and the same PREFIX twice rebuilds nothing. A boxctl that
# finds no boxd names every place it looked. `man -l` reads each page.
# The build is a private copy of the tests' tree: a PREFIX of its own must
# not relink the binaries other tests are running.
. test/lib.sh
set -u

tmp=$(mktemp -d /tmp/box-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
bld=$tmp/build
mkdir -p "$bld"
# Everything but the tests' own programs and logs (kept times: nothing rebuilds for the copy).
(cd "$BOX_BUILD" && tar --exclude=./test --exclude=./test-logs --exclude=./bin/box-test-\* -cf - .) |
	(cd "$bld" && tar -xf -)

mk() { make -s --no-print-directory BUILD="$bld" SAN="${SAN:-}" "$@"; }
# rebuilt MAKE-ARGS...: the programs a make run links, one per line.
rebuilt() { make --no-print-directory BUILD="$bld" SAN="${SAN:-}" "$@" all 2>&1 |
	grep -oE '^cc .* -o [^ ]+/bin/[^ ]+' | sed -E 's#.*/bin/##' | sort | tr '\n' ' '; }

if mk install DESTDIR="$dest" PREFIX=/usr >"$tmp/log" 2>&1; then
	ok "make install DESTDIR PREFIX=/usr succeeds"
else
	not_ok "make install DESTDIR PREFIX=/usr succeeds"
	sed 's/^/#   /' "$tmp/log"
fi

list=$(mk PREFIX=/usr print-install-list)
for entry in $list; do
	check "$(basename "$entry") installed as $entry" test -x "$dest$entry"
	m=$(stat -c %a "$dest$entry" 2>/dev/null)
	check "$entry mode is 755 (got $m)" test "$m" = 755
done
for p in /usr/bin/boxctl /usr/bin/box-sh /usr/sbin/boxd /usr/libexec/box/box-trampoline \
	/usr/libexec/box/box-recheck; do
	check "the program list names $p" grep -qxF "$p" <(echo "$list")
done
data=$(mk PREFIX=/usr print-install-data)
for f in $data; do
	check "$(basename "$f") installed as $f" test -f "$dest$f"
	m=$(stat -c %a "$dest$f" 2>/dev/null)
	check "$f mode is 644 (got $m)" test "$m" = 644
done
for f in /lib/systemd/system/boxd.service /lib/systemd/system/boxd.socket \
	/usr/lib/sysusers.d/box.conf /usr/lib/tmpfiles.d/box.conf /usr/share/doc/box/README.md \
	/etc/apparmor.d/box-trampoline /usr/share/man/man1/boxctl.1 /usr/share/man/man8/boxd.8 \
	/usr/share/man/man5/box.ini.5 /usr/share/man/man5/box-policy.5 /usr/share/man/man1/box-sh.1 \
	/usr/share/man/man8/box-policyd.8 /usr/share/man/man8/box-gateway.8 \
	/usr/share/man/man8/box-mcpd.8 /usr/share/man/man8/box-shell.8 \
	/usr/share/man/man8/box-clientd.8; do
	check "the data list names $f" grep -qxF "$f" <(echo "$data")
done
extra=$(find "$dest" -type f | sed "s|^$dest||" |
	grep -vxF -f <(echo "$list"; echo "$data") | wc -l)
check "install places nothing beyond the program and data lists ($extra extra)" test "$extra" -eq 0

# ---- the install directories reach what embeds them ----
check "boxd has /usr/libexec/box compiled in" grep -qaF /usr/libexec/box "$dest/usr/sbin/boxd"
check "boxd has no /usr/local path compiled in" sh -c "! grep -qaF /usr/local/libexec '$dest/usr/sbin/boxd'"
check "boxctl has /usr/sbin compiled in (where it finds boxd)" grep -qaF /usr/sbin "$dest/usr/bin/boxctl"
unit=$dest/lib/systemd/system/boxd.service
check "boxd.service starts the installed boxd" grep -qxF 'ExecStart=/usr/sbin/boxd --listen /run/box/boxd.sock' "$unit"
check "boxd.service documents boxd(8)" grep -qE '^Documentation=man:boxd\(8\)' "$unit"
check "no @VARIABLE@ is left in the units or the profile" \
	sh -c "! grep -q '@[A-Z]*@' '$unit' '$dest/lib/systemd/system/boxd.socket' '$dest/etc/apparmor.d/box-trampoline'"
check "the AppArmor profile names the installed trampoline" \
	grep -qE '^profile box-trampoline /usr/libexec/box/box-trampoline ' "$dest/etc/apparmor.d/box-trampoline"
check "… and the installed boxd (its confined daemons' user namespaces)" \
	grep -qE '^profile boxd /usr/sbin/boxd flags=\(unconfined\) \{' "$dest/etc/apparmor.d/box-trampoline"
# Units systemd accepts: verified in a copy of the DESTDIR root with the host's targets
# (what the units are ordered against); the binary ExecStart names must be there.
if command -v systemd-analyze >/dev/null 2>&1 && [ -e /lib/systemd/system/sockets.target ]; then
	vroot=$tmp/vroot
	cp -a "$dest" "$vroot"
	cp -a /lib/systemd/system/*.target "$vroot/lib/systemd/system/"
	units="$vroot/lib/systemd/system/boxd.service $vroot/lib/systemd/system/boxd.socket"
	# shellcheck disable=SC2086
	out=$(systemd-analyze verify --man=no --root="$vroot" $units 2>&1)
	check "systemd-analyze verify passes on the installed units" test -z "$out"
	[ -z "$out" ] || diag "$out"
	rm -f "$vroot/usr/sbin/boxd"
	# shellcheck disable=SC2086
	check "… and fails when the boxd ExecStart names is missing" \
		sh -c "systemd-analyze verify --man=no --root='$vroot' $units 2>&1 | grep -q 'usr/sbin/boxd'"
else
	skip "systemd-analyze verify" "systemd-analyze or the host's systemd units are absent"
fi

# A new PREFIX rebuilds what embeds a path, and only that; the same one again, nothing.
r=$(rebuilt PREFIX=/opt/box-t-install)
check "PREFIX=/opt/box-t-install relinks boxctl and boxd only (got: $r)" test "$r" = "boxctl boxd "
check "… and boxd has /opt/box-t-install/libexec/box compiled in" \
	grep -qaF /opt/box-t-install/libexec/box "$bld/bin/boxd"
r=$(rebuilt PREFIX=/opt/box-t-install)
check "the same PREFIX again rebuilds nothing (got: '$r')" test -z "$r"
check "a relative LIBEXECDIR is refused" sh -c "! make -s --no-print-directory BUILD='$bld' LIBEXECDIR=lib/box all >/dev/null 2>&1"

# A boxctl that finds no boxd (alone, its PREFIX empty) names every place it looked.
mkdir -p "$tmp/alone/bin" "$tmp/cfg"
cp "$bld/bin/boxctl" "$tmp/alone/bin/boxctl"
(cd "$tmp/cfg" && "$tmp/alone/bin/boxctl" init --agent generic -- true >/dev/null 2>&1)
err=$(cd "$tmp/cfg" && BOX_SOCKET="$tmp/no.sock" "$tmp/alone/bin/boxctl" run 2>&1 >/dev/null)
check "boxctl without boxd names where it looked" \
	grep -qF "$tmp/alone/bin/boxd, $tmp/alone/sbin/boxd, /opt/box-t-install/sbin/boxd" <(echo "$err")
[ -n "$err" ] && diag "$err"
# boxd beside it, none of its helpers: the start fails naming both places boxd looked.
cp "$bld/bin/boxd" "$tmp/alone/bin/boxd"
err=$(cd "$tmp/cfg" && BOX_SOCKET="$tmp/no.sock" timeout 120 "$tmp/alone/bin/boxctl" run 2>&1 >/dev/null)
check "a boxd without box-recheck names both places it looked" \
	grep -qF "cannot find box-recheck ($tmp/alone/bin/box-recheck or /opt/box-t-install/libexec/box/box-recheck)" <(echo "$err")
[ -n "$err" ] && diag "$err"

# ---- the man pages: each reads with man -l, under its name and section ----
if command -v man >/dev/null 2>&1; then
	for m in $(echo "$data" | grep '^/usr/share/man/'); do
		n=$(basename "$m")
		title=$(echo "${n%.*}" | tr a-z A-Z)
		out=$(MANWIDTH=100 man -l "$dest$m" 2>"$tmp/man.err")
		check "man -l $n renders its title ${title}(${n##*.})" grep -qF "${title}(${n##*.})" <(echo "$out")
		# troff's "cannot adjust line" and "table squeezed" warnings are layout, not errors.
		check "man -l $n has a NAME section and no error" \
			sh -c "printf '%s\n' \"\$1\" | grep -qx NAME && ! grep -qi error '$tmp/man.err'" _ "$out"
	done
	out=$(MANWIDTH=200 man -l "$dest/usr/share/man/man8/box-policyd.8")
	check "box-policyd(8) lists its allow-list from box-policyd/seccomp.c" \
		grep -qE 'Allowed \([0-9]+ calls, from box-policyd/seccomp.c\): .*epoll_wait' <(echo "$out")
	out=$(MANPATH="$dest/usr/share/man" man -w boxctl 2>&1)
	check "man finds boxctl(1) in the installed MANDIR" test "$out" = "$dest/usr/share/man/man1/boxctl.1"
else
	skip "man pages read" "man is not installed"
fi

# The packaging files are what systemd reads: sysusers.d declares box-daemon
# and box-clients, tmpfiles.d makes /run/box and /var/lib/box (into a scratch root).
su=$dest/usr/lib/sysusers.d/box.conf
check "sysusers.d declares the box-daemon user" grep -qE '^u box-daemon ' "$su"
check "sysusers.d declares the box-clients group" grep -qE '^g box-clients ' "$su"
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	troot=$tmp/troot
	mkdir -p "$troot"
	systemd-tmpfiles --root="$troot" --create "$dest/usr/lib/tmpfiles.d/box.conf" >/dev/null 2>&1
	check "tmpfiles.d creates /run/box 0755" test "$(stat -c %a "$troot/run/box" 2>/dev/null)" = 755
	check "tmpfiles.d creates /var/lib/box 0755" test "$(stat -c %a "$troot/var/lib/box" 2>/dev/null)" = 755
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
