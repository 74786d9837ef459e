#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-user.sh — `boxctl run` as an ordinary user (`boxtest`, created with
# a home when missing): an embedded boxd through unprivileged user
# namespaces, the agent running as that user, pids_max through
# RLIMIT_NPROC; and the load refusal (exit 2, naming box.ini:LINE) for a
# grant the box owner cannot reach — both when boxctl itself sees it and when
# only boxd's recheck as the owner does (root naming `[agent] user`).
. test/lib.sh
. test/integration/lib-run.sh
set -u

if ! have_boxtest; then
	skip "ordinary user boxtest" "cannot create it (not root)"
	tap_done
	exit 0
fi
uid=$(id -u boxtest)
cd "$W"
mkdir private
chmod 700 private
echo private >private/f
mkdir pub
echo public >pub/f
chmod 755 pub
chmod 644 pub/f

cat >id.ini <<EOF
[box]
name = user-id-$$

[agent]
command = /bin/sh -c "id -u; cat $W/pub/f"
workspace = $W/pub

[agent.filesystem]
read = $W/pub
EOF
# /bin/sh is replaced by box's shell alias: use a program instead.
cat >id.ini <<EOF
[box]
name = user-id-$$

[agent]
command = /usr/bin/python3 -c "import os; print(os.getuid()); print(open('$W/pub/f').read().strip())"
workspace = $W/pub

[agent.filesystem]
read = $W/pub
EOF
chmod 644 id.ini
out=$(as_boxtest "'$RB/boxctl' run -q -c id.ini" 2>err)
rc=$?
check "user: an embedded box runs (exit 0)" test "$rc" = 0
check "user: the agent runs as boxtest" test "$(head -1 <<<"$out")" = "$uid"
check "user: it reads its grant" test "$(tail -1 <<<"$out")" = public
sed 's/^/#   /' err

# pids_max through RLIMIT_NPROC
cat >pub/forkbomb.py <<'EOF'
import os, time
n = 0
try:
    for i in range(300):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
    print("forks", n, "no limit")
except OSError as e:
    print("forks", n, "errno", e.errno)
EOF
chmod 644 pub/forkbomb.py
cat >pids.ini <<EOF
[box]
name = user-pids-$$

[agent]
command = /usr/bin/python3 forkbomb.py
workspace = $W/pub
pids_max = 30

[agent.filesystem]
read = $W/pub
EOF
chmod 644 pids.ini
out=$(as_boxtest "'$RB/boxctl' run -c pids.ini" 2>err)
n=$(sed -n 's/^forks \([0-9]*\) errno 11$/\1/p' <<<"$out")
check "user: pids_max contains a fork bomb (EAGAIN; $out)" test -n "$n" && test "$n" -lt 30
check "user: pids_max by RLIMIT_NPROC is disclosed" grep -q "^box: warning: pids_max is enforced with RLIMIT_NPROC" err

# an unreachable grant, seen by boxctl as the user: exit 2, file:line
cat >unreach.ini <<EOF
[box]
name = user-unreach-$$

[agent]
command = /bin/cat f
workspace = $W/pub

[agent.filesystem]
read = $W/private
EOF
chmod 644 unreach.ini
as_boxtest "'$RB/boxctl' run -q -c unreach.ini" >/dev/null 2>err
rc=$?
check "user: an unreachable grant is a load refusal (exit 2)" test "$rc" = 2
check "user: the refusal names unreach.ini:9 [agent.filesystem] read" \
	grep -q "^boxctl: unreach.ini:9: \[agent.filesystem\] read: " err

# root naming [agent] user: only boxd's recheck as the owner can see it
cat >recheck.ini <<EOF
[box]
name = user-recheck-$$

[agent]
command = /bin/cat f
workspace = $W/pub
user = boxtest

[agent.filesystem]
read = $W/private
EOF
"$RB/boxctl" run -q -c recheck.ini >/dev/null 2>err
rc=$?
check "recheck: a grant the owner cannot reach is refused by boxd (exit 2)" test "$rc" = 2
check "recheck: it names recheck.ini:10 and the owner" \
	grep -qE "^boxctl: recheck.ini:10: \[agent.filesystem\] read: the box owner \(boxtest\) cannot (reach|read) $W/private" err
sed "s/^/#   /" err
check "recheck: nothing of the private file leaks" test "$(grep -c private/f err)" = 0

# root naming [agent] user, reachable: the agent runs as that user
cat >asuser.ini <<EOF
[box]
name = user-asuser-$$

[agent]
command = /usr/bin/id -u
workspace = $W/pub
user = boxtest
EOF
out=$("$RB/boxctl" run -q -c asuser.ini 2>err)
check "root with [agent] user: the agent runs as boxtest" test "$out" = "$uid"
tap_done
