#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# daemons.sh — a daemon is declared once (docs/design.md "How a daemon is declared"):
#   - every program of boxd's daemon table (boxd/daemon.c daemon_table) is built, and its
#     main.c takes its fds through common/daemon_start.h (daemon_fds_take) and drops its
#     privileges through daemon_lock_down (common/privdrop.c);
#   - the fd numbers of the daemons' channels are defined in common/daemon_fds.h alone: no
#     other source of boxd or a daemon #defines a *_FD_* number of its own for them;
#   - in boxd, only daemon.c knows how a daemon is started: its user (box-daemon), its
#     environment (ASAN_OPTIONS, BOX_TEST_* hooks), its stderr rule (daemon_stderr), the
#     fork+exec (spawn_process) — the daemon modules call daemon_spawn() (plan.c composes
#     sandbox environments, recheck.c starts box-recheck: a helper run as the owner);
#   - in boxd, only child.c reaps (waitpid) and signals (kill, pidfd_send_signal) the
#     processes boxd started: one tracker, one reaper, one kill path (cgroup.c kills what
#     is left in a box's cgroup, processes boxd did not start);
#   - each per-box daemon module names its table entry (.id = DAEMON_...), and the ops keep
#     no copy of what the table says (name, ready message, timeouts).
# Trusts: nothing; it is test code reading the sources and the build.
. "$(dirname "$0")/../lib.sh"

BIN=${BOX_BIN:-build/bin}
cd "$(dirname "$0")/../.." || exit 1

table=$(sed -n '/^const struct daemon_desc daemon_table/,/^};/p' boxd/daemon.c)
names=$(grep -oE '\.name = "box-[a-z]+"' <<<"$table" | cut -d'"' -f2)
check "boxd/daemon.c's daemon_table lists the five daemons" \
	test "$(echo $names)" = "box-policyd box-gateway box-shell box-mcpd box-clientd"
for n in $names; do
	check "$n (daemon_table) is built" test -x "$BIN/$n"
	main=$n/main.c
	check "$n: main.c checks its fds with daemon_fds_take (common/daemon_start.h)" \
		grep -q 'daemon_fds_take(' "$main"
	check "$n: main.c drops privileges with daemon_lock_down" grep -q 'daemon_lock_down(' "$main"
done

# fd numbers: #define NAME_FD_... N (N 3-9) anywhere but common/daemon_fds.h.
srcs=$(git ls-files -- boxd box-policyd box-gateway box-mcpd box-clientd box-shell 2>/dev/null |
	grep -E '\.(c|h)$')
own=$(grep -nE '^#define [A-Z_]*FD[A-Z_]* +[3-9]\b' $srcs)
if [ -z "$own" ]; then
	ok "no daemon or boxd source defines a channel fd number of its own (common/daemon_fds.h)"
else
	not_ok "channel fd numbers defined outside common/daemon_fds.h"
	sed 's/^/#   /' <<<"$own"
fi

# In boxd, how a daemon starts is daemon.c's alone.
for pat in 'getpwnam\("box-daemon"\)' 'ASAN_OPTIONS' 'BOX_TEST_GATEWAY_|BOX_TEST_CLOCK|BOX_TEST_POLICYD_EXIT' \
	'daemon_stderr\('; do
	# code lines only (comments may name them); recheck.c starts box-recheck, a helper that
	# runs as the box owner with its groups, not a daemon of the table
	where=$(grep -HnE "$pat" boxd/*.c | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*)' |
		cut -d: -f1 | sort -u | grep -vxE 'boxd/(daemon|plan|recheck).c' | tr '\n' ' ')
	check "boxd: only daemon.c (and plan.c's sandbox environments) has $pat${where:+ (also: $where)}" \
		test -z "$where"
done
for m in policyd gateway shell mcpd clientd; do
	f=boxd/$m.c
	check "boxd/$m.c starts its daemon with daemon_spawn()" grep -q 'daemon_spawn(' "$f"
	check "boxd/$m.c does not fork+exec a daemon itself" \
		bash -c "! grep -qE 'spawn_process\(|spawn_trampoline_fds\(|box_ipc_socketpair\(sv' '$f'"
done
for m in policyd gateway shell mcpd; do
	ops=$(sed -n '/^static const struct box_daemon_ops/,/^};/p' boxd/$m.c)
	check "boxd/$m.c's ops name their daemon_table entry" grep -q '\.id = DAEMON_' <<<"$ops"
	check "boxd/$m.c's ops copy nothing of the table" \
		bash -c "! grep -qE '\\.(name|ready_name|lost_suffix|ready_timeout_ms|exit_wait_ms) =' <<<'$ops'"
done
# One reaper, one kill path: child.c's (code lines only; comments may name the calls).
where=$(grep -HnE '(^|[^_a-z])(waitpid|waitid|kill)\(|pidfd_send_signal' boxd/*.c |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*)' | cut -d: -f1 | sort -u |
	grep -vxE 'boxd/(child|cgroup).c' | tr '\n' ' ')
check "boxd: only child.c reaps and signals its processes${where:+ (also: $where)}" test -z "$where"
check "boxd: boxd.c's SIGCHLD goes to child_reap_all" grep -q 'child_reap_all(' boxd/boxd.c
tap_done
