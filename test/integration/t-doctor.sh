#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-doctor.sh — `boxctl doctor` against this host's facts, each found here by other means
# (python3's ctypes for the system calls, util-linux unshare, /proc and /sys): the Landlock
# ABI, seccomp user notification, pidfd, the AppArmor sysctl, cgroup v2 and its
# controllers, user namespaces as root and as boxtest, the box-clients group, and the
# service socket (absent; a private service boxd that answers). Each "missing" line
# carries its fix, the last line counts them and the exit status follows. Then the
# box-trampoline AppArmor profile: parsed by an AppArmor >= 4 parser when there is one.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
chmod 755 "$W"
export BOX_SOCKET="$W/none.sock"
"$RB/boxctl" doctor >out 2>err
rc=$?
line() { grep -E "^[a-z]+ +$1 " out; }
state() { line "$1" | awk '{ print $1 }'; }

# The kernel's answers, asked directly.
py() { python3 -c "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); $1"; }
abi=$(py 'print(l.syscall(444, None, 0, 1))')
if [ "$abi" -ge 1 ] 2>/dev/null; then
	check "Landlock: ok, ABI $abi as the kernel says" grep -qE "^ok +Landlock +ABI $abi\$" out
else
	check "Landlock: missing, with a fix" grep -qE '^missing +Landlock .* fix: ' out
fi
notif=$(py 'a = ctypes.c_uint(0x7fc00000); print(l.syscall(317, 2, 0, ctypes.byref(a)))')
check "seccomp user notif: $([ "$notif" = 0 ] && echo ok || echo missing) as the kernel says" \
	test "$(state 'seccomp user notif')" = "$([ "$notif" = 0 ] && echo ok || echo missing)"
pidfd=$(py 'print(1 if l.syscall(434, os.getpid(), 0) >= 0 else 0)')
check "pidfd: $([ "$pidfd" = 1 ] && echo ok || echo missing) as the kernel says" \
	test "$(state pidfd)" = "$([ "$pidfd" = 1 ] && echo ok || echo missing)"
aa=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ ! -e "$aa" ]; then
	check "AppArmor userns: ok, the sysctl is not present here" \
		grep -qE '^ok +AppArmor userns +kernel.apparmor_restrict_unprivileged_userns is not present' out
else
	v=$(cat "$aa")
	check "AppArmor userns: the sysctl's value $v is reported" \
		grep -qE "AppArmor userns .*kernel.apparmor_restrict_unprivileged_userns = $v" out
fi
c2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if [ -z "$c2" ]; then
	check "cgroup v2: missing (none mounted), with the boot setting" \
		grep -qE '^missing +cgroup v2 .*systemd.unified_cgroup_hierarchy=1' out
elif grep -qwE 'memory|pids' "$c2/cgroup.controllers" 2>/dev/null; then
	check "cgroup v2: ok at $c2 (root)" grep -qE "^ok +cgroup v2 +$c2 " out
else
	check "cgroup v2: missing at $c2 (no memory or pids controller), with the boot setting" \
		grep -qE "^missing +cgroup v2 +mounted at $c2 .*systemd.unified_cgroup_hierarchy=1" out
fi
if [ "$(id -u)" -eq 0 ] && unshare --user --map-current-user --mount true 2>/dev/null; then
	check "user namespaces: ok as root, as unshare(1) finds" test "$(state 'user namespaces')" = ok
fi
check "service socket: missing at $BOX_SOCKET, with the systemctl fix" \
	grep -qE "^missing +service socket +$BOX_SOCKET: No such file or directory — fix: systemctl enable --now boxd.socket" out
n=$(grep -c '^missing ' out)
check "every missing line names its fix" test "$(grep '^missing ' out | grep -vc ' fix: ')" -eq 0
check "the last line counts the missing layers ($n)" test "$(tail -n 1 out)" = "$n missing"
check "exit status 1 with something missing, else 0 (got $rc)" \
	test "$rc" -eq "$([ "$n" -gt 0 ] && echo 1 || echo 0)"
check "nothing on stderr" test ! -s err
diag "$(cat out)"

# As boxtest: user namespaces as unshare(1) finds them for that user; the group's fix.
if [ "$(id -u)" -eq 0 ] && have_boxtest && getent group box-clients >/dev/null &&
	! id -nG boxtest | tr ' ' '\n' | grep -qx box-clients; then
	as_user boxtest "'$RB/boxctl' doctor" >out.boxtest 2>&1
	want=missing
	su -s /bin/sh boxtest -c 'unshare --user --map-current-user --mount true' 2>/dev/null && want=ok
	check "boxtest: user namespaces $want, as unshare(1) finds for boxtest" \
		grep -qE "^$want +user namespaces " out.boxtest
	check "boxtest: not in box-clients, told the usermod line" \
		grep -qxE 'missing +box-clients group +boxtest is not in box-clients — fix: usermod -aG box-clients boxtest \(as root; then log in again\)' out.boxtest
	# A private service boxd: its socket (0660 root:box-clients) refuses boxtest, answers root.
	export BOX_SOCKET="$W/boxd.sock"
	"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
	_run_pids+=("$!")
	for _ in $(seq 100); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
	"$RB/boxctl" doctor >out.svc 2>&1
	check "root: the service socket answers (mode 660)" \
		grep -qxE "ok +service socket +$BOX_SOCKET answers \(mode 660\)" out.svc
	as_user boxtest "'$RB/boxctl' doctor" >out.boxtest 2>&1
	check "boxtest: the service socket refuses it, with the usermod fix" \
		grep -qE "^missing +service socket +$BOX_SOCKET refuses boxtest \(Permission denied\) — fix: usermod -aG box-clients boxtest" out.boxtest
else
	skip "doctor as a user outside box-clients" "needs root, boxtest outside box-clients"
fi

# The AppArmor profile the package installs: AppArmor 4 syntax (abi 4.0, userns).
prof=$BOX_BUILD/packaging/box-trampoline
check "the profile is built ($prof)" test -f "$prof"
check "… declares abi 4.0 and the userns rule" sh -c "grep -qx 'abi <abi/4.0>,' '$prof' && grep -qxE ' *userns,' '$prof'"
if command -v apparmor_parser >/dev/null 2>&1; then
	major=$(apparmor_parser --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p' | head -n 1)
	if [ "${major:-0}" -ge 4 ]; then
		check "apparmor_parser $major.x parses the profile" apparmor_parser -Q -K -T "$prof"
	else
		# Evidence for the skip: this parser does refuse the file.
		check "apparmor_parser ${major:-?}.x refuses the AppArmor 4 profile (as expected)" \
			sh -c "! apparmor_parser -Q -K -T '$prof' 2>/dev/null"
		skip "apparmor_parser parses the profile" "skipped: apparmor_parser 3.x cannot parse userns rules"
	fi
else
	skip "apparmor_parser parses the profile" "apparmor_parser is not installed"
fi
tap_done
