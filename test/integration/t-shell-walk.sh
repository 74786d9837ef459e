#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-walk.sh — grep -r through box's shell in a real box opens a directory's run of
# permitted files together (libshell/fsops.c sh_fs_open_read_entries; docs/box-shell.8.md),
# with the same decisions, opens and outcomes as one open each:
#   - over 150 files in one directory (three runs of at most 64; one of 700 KB, read in
#     several reads), a subdirectory and a refused file amid them and a symlink (not followed
#     by -r), its output is GNU grep's but for the refused file, which gets the policy's
#     message and "Permission denied";
#   - the log holds, per permitted file, exactly one permit and one descriptor_issued
#     outcome; for the refused one a deny and no outcome;
#   - a directory moved while its files are being opened (the test hook
#     BOX_TEST_SHELL_OPEN_ENTRIES_DELAY_MS holds the opens back 3 s after the first check;
#     the agent, told by inotify that the directory was opened to be listed, renames it
#     then): nothing opened from it is read — each open is recorded as an attempt that
#     failed and is made again alone, where the old path now leads to nothing;
#   - a symlink to a refused file swapped in for a listed file in that window: its open
#     fails (O_NOFOLLOW), is recorded so, and is made again alone, decided on the target:
#     refused, nothing of it read.
# Root and boxtest each run both boxes.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	mkdir -p "$P/big/sub" "$P/race/pub" "$P/race/swap" "$D/out"
	python3 - "$P" <<'PY'
import os, sys
p = sys.argv[1]
for i in range(150):
    with open(os.path.join(p, "big", "f%03d.c" % i), "w") as f:
        # f073.c: 700 KB, so read in several reads, its match's line number past them all
        pad = "plain\n" * 120000 if i == 73 else ""
        f.write("int x%d;\n%s%s\nreturn;\n" % (i, pad, "needle_walk here %d" % i if i % 10 == 3 else "plain"))
with open(os.path.join(p, "big", "secret.c"), "w") as f:
    f.write("needle_walk in the secret\n")
for i in range(3):
    with open(os.path.join(p, "big", "sub", "s%d.c" % i), "w") as f:
        f.write("needle_walk below %d\n" % i)
os.symlink("f003.c", os.path.join(p, "big", "link.c"))
for i in range(5):
    with open(os.path.join(p, "race", "pub", "r%d.txt" % i), "w") as f:
        f.write("needle_race %d\n" % i)
with open(os.path.join(p, "race", "swap", "x.txt"), "w") as f:
    f.write("needle_race swap\n")
PY
	chmod -R a+rwX "$D"
	chown -R "$u" "$D" 2>/dev/null
	cat >"$D/policy.cedar" <<'EOF'
permit (principal, action, resource);
@id("no_secret")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*/big/secret.c" || context.input.path like "*/race/moved/*" };
EOF
	cat >"$D/agent.py" <<EOF
import os, subprocess, sys, time
out = "$D/out"
mode = sys.argv[1]
if mode == "walk":
    r = subprocess.run(["/run/box/bin/bash", "-c", "grep -rn needle_walk big"], cwd="$P",
                       capture_output=True, text=True)
    open(out + "/walk.stdout", "w").write(r.stdout)
    open(out + "/walk.stderr", "w").write(r.stderr)
    open(out + "/walk.rc", "w").write("%d\n" % r.returncode)
else:
    # Told when box's shell opens race/pub or race/swap to list it (inotify IN_OPEN): its
    # files are then decided and the opens held back 3 s after the first check; the agent
    # acts in there: race/pub is renamed, race/swap/x.txt becomes a symlink to the refused
    # big/secret.c.
    import ctypes, struct
    libc = ctypes.CDLL(None, use_errno=True)
    ino = libc.inotify_init1(os.O_CLOEXEC)
    wd = {libc.inotify_add_watch(ino, ("$P/race/" + d).encode(), 0x20): d for d in ("pub", "swap")}
    if ino < 0 or -1 in wd:
        sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
    g = subprocess.Popen(["/run/box/bin/bash", "-c", "grep -rnE 'needle_race|needle_walk' race"],
                         cwd="$P", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    todo = set(wd.values())
    while todo:
        buf = os.read(ino, 4096)
        at = 0
        while at < len(buf):
            w, mask, cookie, n = struct.unpack_from("iIII", buf, at)
            at += 16 + n
            d = wd.get(w)
            if d not in todo:
                continue
            todo.discard(d)
            time.sleep(0.5)
            if d == "pub":
                os.rename("$P/race/pub", "$P/race/moved")
            else:
                os.rename("$P/race/swap/x.txt", "$P/race/swap/x.old")
                os.symlink("$P/big/secret.c", "$P/race/swap/x.txt")
    so, se = g.communicate()
    open(out + "/race.stdout", "w").write(so)
    open(out + "/race.stderr", "w").write(se)
    open(out + "/race.rc", "w").write("%d\n" % g.returncode)
print("agent done", flush=True)
EOF
	for b in walk race; do
		python_agent_ini "$D/$b.ini" "e2e-walk$b-$$" "$D/state/$b" policy.cedar
		sed -i "s|agent.py\$|agent.py $b|; s|^write = $P\$|write = $P\nwrite = $D/out|" "$D/$b.ini"
	done
	chown -R "$u" "$D" 2>/dev/null

	# ---- 1. the walk: GNU grep's output, the refused file aside
	as_user "$u" "timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -q -c '$D/walk.ini'" \
		>"$D/walk.out" 2>"$D/walk.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -qx "agent done" "$D/walk.out"; then
		ok "$u: the box ran grep -rn through box's shell"
	else
		not_ok "$u: the box ran grep -rn (boxctl $rc)"
		sed 's/^/#   /' "$D/walk.out" "$D/walk.err" | head -20
	fi
	(cd "$P" && grep -rn needle_walk big) | grep -v '^big/secret.c:' | sort >"$D/gnu.sorted"
	sort "$D/out/walk.stdout" >"$D/box.sorted" 2>/dev/null
	if [ -s "$D/gnu.sorted" ] && cmp -s "$D/gnu.sorted" "$D/box.sorted"; then
		ok "$u: grep -rn's matches are GNU grep's ($(wc -l <"$D/gnu.sorted") lines, the refused file aside)"
	else
		not_ok "$u: grep -rn's matches differ from GNU grep's"
		diff "$D/gnu.sorted" "$D/box.sorted" | head -10 | sed 's/^/#   /'
	fi
	check "$u: the refused file: the policy's message and Permission denied" \
		grep -q "big/secret.c: Permission denied" "$D/out/walk.stderr"
	check "$u: grep exits 2 for the refused file" grep -qx 2 "$D/out/walk.rc"
	check "$u: the symlink is not followed by -r (no big/link.c line)" \
		bash -c "! grep -q '^big/link.c:' '$D/out/walk.stdout'"
	# One permit and one descriptor_issued outcome per permitted file; a deny, no outcome,
	# for the refused one.
	python3 - "$D/state/walk/decisions.jsonl" "$P/big" >"$D/walk.log-check" 2>&1 <<'PY'
import json, sys
log, big = sys.argv[1], sys.argv[2]
dec, rec = {}, {}
for line in open(log):
    o = json.loads(line)
    if o.get("action") != "fs:read" or o.get("input", {}).get("operation") != "read_content":
        continue
    path = o["input"]["path"]
    if not path.startswith(big + "/"):
        continue
    if o.get("record"):
        rec.setdefault(path, []).append(o["output"]["result"])
    else:
        dec.setdefault(path, []).append(o["verdict"])
bad = []
files = ["%s/f%03d.c" % (big, i) for i in range(150)] + ["%s/sub/s%d.c" % (big, i) for i in range(3)]
for f in files:
    if dec.get(f) != ["permit"] or rec.get(f) != ["descriptor_issued"]:
        bad.append("%s: decisions %s, outcomes %s" % (f, dec.get(f), rec.get(f)))
s = big + "/secret.c"
if dec.get(s) != ["deny"] or s in rec:
    bad.append("%s: decisions %s, outcomes %s" % (s, dec.get(s), rec.get(s)))
print("\n".join(bad[:10]) if bad else "ok %d files" % len(files))
PY
	if grep -qx "ok 153 files" "$D/walk.log-check"; then
		ok "$u: the log: one permit and one descriptor_issued outcome per file, a deny alone for the refused one"
	else
		not_ok "$u: the walk's log lines"
		sed 's/^/#   /' "$D/walk.log-check" | head -10
	fi

	# ---- 2. the directory moved between the first check and the opens
	as_user "$u" "BOX_TEST_SHELL_OPEN_ENTRIES_DELAY_MS=3000 timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -q -c '$D/race.ini'" \
		>"$D/race.out" 2>"$D/race.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -qx "agent done" "$D/race.out" && [ -d "$P/race/moved" ]; then
		ok "$u: the agent moved race/pub while box's shell was opening its files"
	else
		not_ok "$u: the race box ran (boxctl $rc)"
		sed 's/^/#   /' "$D/race.out" "$D/race.err" | head -20
	fi
	if [ -f "$D/out/race.stdout" ] && ! grep -q needle "$D/out/race.stdout"; then
		ok "$u: nothing opened from the moved directory, nor the swapped-in secret, was read"
	else
		not_ok "$u: grep read files opened from the moved directory"
		sed 's/^/#   /' "$D/out/race.stdout" | head -5
	fi
	check "$u: each file opened again alone: No such file or directory" \
		grep -q "race/pub/r0.txt: No such file or directory" "$D/out/race.stderr"
	check "$u: a symlink swapped in: opened alone, decided on its target, Permission denied" \
		grep -q "race/swap/x.txt: Permission denied" "$D/out/race.stderr"
	python3 - "$D/state/race/decisions.jsonl" "$P/race/pub" "$P" >"$D/race.log-check" 2>&1 <<'PY'
import json, sys
log, pub, proj = sys.argv[1], sys.argv[2], sys.argv[3]
dec, rec = {}, {}
for line in open(log):
    o = json.loads(line)
    path = o.get("input", {}).get("path", "")
    if o.get("action") != "fs:read" or not path.startswith(proj + "/"):
        continue
    if o.get("record"):
        rec.setdefault(path, []).append(o["output"]["result"] if "output" in o else o["record"])
    else:
        dec.setdefault(path, []).append(o["verdict"])
bad = []
for i in range(5):
    f = "%s/r%d.txt" % (pub, i)
    if dec.get(f) != ["permit"] or rec.get(f) != ["error"]:
        bad.append("%s: decisions %s, outcomes %s" % (f, dec.get(f), rec.get(f)))
x, secret = proj + "/race/swap/x.txt", proj + "/big/secret.c"
if dec.get(x) != ["permit"] or rec.get(x) != ["error"]:
    bad.append("%s: decisions %s, outcomes %s" % (x, dec.get(x), rec.get(x)))
if "deny" not in dec.get(secret, []) or secret in rec:
    bad.append("%s: decisions %s, outcomes %s" % (secret, dec.get(secret), rec.get(secret)))
print("\n".join(bad) if bad else "ok")
PY
	if grep -qx ok "$D/race.log-check"; then
		ok "$u: the log: each file's permit, then its open recorded as an attempt that failed (an error outcome); the swapped link's target denied"
	else
		not_ok "$u: the race's log lines"
		sed 's/^/#   /' "$D/race.log-check" | head -10
	fi
done
tap_done
