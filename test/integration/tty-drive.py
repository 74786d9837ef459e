#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# tty-drive.py — give a command a real terminal (a pty this script holds the
# master of) for test/integration/t-tty.sh, without making it the command's
# controlling terminal (so closing the master sends no SIGHUP: the command
# must notice the hang-up itself).
#
#   tty-drive.py [options] -- CMD...
#     --stdin tty|null|PATH      fd 0 (default tty); PATH: opened read-only
#     --stdout tty|PATH          fd 1 (default tty); PATH: created/truncated
#     --stderr tty|PATH          fd 2 (default tty)
#     --wait TEXT                before acting, wait for TEXT in the output
#     --type TEXT                then type TEXT (\r ends a line)
#     --hangup                   then close the master (the terminal goes away)
#     --slave-mode 0600          chmod the slave before starting (root: item 9)
#     --winsize ROWSxCOLS        the terminal's size before starting
#     --resize ROWSxCOLS         as the action: resize the terminal, SIGWINCH the command
#     --out FILE                 what the terminal showed
#   Prints "rc=N" (or rc=timeout), "modes=same|changed" (the terminal's
#   termios after vs before), "host_pts=DEV:INO" of the slave.
# Trusts: nothing; test code.
import argparse, fcntl, os, pty, select, signal, struct, subprocess, sys, termios, time

ap = argparse.ArgumentParser()
ap.add_argument("--stdin", default="tty")
ap.add_argument("--stdout", default="tty")
ap.add_argument("--stderr", default="tty")
ap.add_argument("--wait")
ap.add_argument("--type")
ap.add_argument("--hangup", action="store_true")
ap.add_argument("--slave-mode")
ap.add_argument("--winsize")
ap.add_argument("--resize")
ap.add_argument("--out")
ap.add_argument("--timeout", type=float, default=30)
ap.add_argument("cmd", nargs="+")
a = ap.parse_args()

master, slave = pty.openpty()


def set_size(spec):
    rows, cols = (int(x) for x in spec.split("x"))
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


if a.winsize:
    set_size(a.winsize)
if a.slave_mode:
    os.chmod(os.ttyname(slave), int(a.slave_mode, 8))
st = os.fstat(slave)
print("host_pts=%d:%d" % (st.st_dev, st.st_ino), flush=True)
print("host_pts_path=%s" % os.ttyname(slave), flush=True)
before = termios.tcgetattr(slave)


def fd_for(spec, write):
    if spec == "tty":
        return slave
    if spec == "null":
        return os.open("/dev/null", os.O_RDWR)
    if write:
        return os.open(spec, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    return os.open(spec, os.O_RDONLY)


fds = [fd_for(a.stdin, False), fd_for(a.stdout, True), fd_for(a.stderr, True)]
p = subprocess.Popen(a.cmd, stdin=fds[0], stdout=fds[1], stderr=fds[2], start_new_session=True)
for fd in set(fds):
    if fd != slave:
        os.close(fd)

shown = b""
acted = a.wait is None and not (a.type or a.hangup or a.resize)
deadline = time.time() + a.timeout


def act():
    global master
    if a.resize:
        set_size(a.resize)
        os.kill(p.pid, signal.SIGWINCH)  # not its controlling terminal: say it ourselves
    if a.type:
        os.write(master, a.type.encode().decode("unicode_escape").encode())
    if a.hangup:
        os.close(master)
        master = -1


if a.wait is None and (a.type or a.hangup or a.resize):
    time.sleep(0.5)
    act()
    acted = True
rc = None
while time.time() < deadline:
    rc = p.poll()
    if rc is not None and master < 0:
        break
    if master >= 0:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                d = os.read(master, 65536)
            except OSError:
                d = b""
            if d:
                shown += d
                if not acted and a.wait and a.wait.encode() in shown:
                    act()
                    acted = True
                continue
        if rc is not None:
            break
    else:
        time.sleep(0.1)
if rc is None:
    rc = p.poll()
if rc is None:
    print("rc=timeout", flush=True)
    p.kill()
    p.wait()
else:
    print("rc=%d" % rc, flush=True)
if master >= 0:
    after = termios.tcgetattr(slave)
    print("modes=%s" % ("same" if after == before else "changed"), flush=True)
os.close(slave)
if a.out:
    with open(a.out, "wb") as f:
        f.write(shown)
