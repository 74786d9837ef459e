#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# supervise-probe.py — run by a supervised [tool.python3] (supervise = fs) in
# test/integration/t-supervise.sh, in the project directory: each line KEY=VALUE is one
# file system operation and what came of it ("ok…" or "error-ERRNO").
# Trusts: nothing; test code.
import ctypes, errno, os, subprocess, sys, threading


def err(e):
    return "error-" + errno.errorcode.get(e.errno, str(e.errno))


def attempt(key, fn):
    try:
        v = fn()
        print("%s=ok%s" % (key, "" if v is None else ":" + str(v)), flush=True)
    except OSError as e:
        print("%s=%s" % (key, err(e)), flush=True)


def read(p):
    with open(p) as f:
        return f.read().strip()


def write(p, text):
    with open(p, "w") as f:
        f.write(text)


attempt("read_permitted", lambda: read("p.txt"))
attempt("read_env", lambda: read(".env"))
attempt("read_env_abs", lambda: read(os.path.abspath(".env")))
attempt("read_env_symlink", lambda: read("alias"))
attempt("read_env_proc_cwd", lambda: read("/proc/self/cwd/.env"))
# spelled from the system runtime (which is read without a decision) and out of it
attempt("read_env_via_usr", lambda: read("/usr/lib/../.." + os.path.abspath(".env")))
attempt("stat_env_via_usr", lambda: os.stat("/usr/lib/../.." + os.path.abspath(".env")).st_size)
attempt("read_runtime", lambda: len(read("/usr/lib/os-release")) > 0)
attempt("read_runtime_lib_link", lambda: len(read("/lib/os-release")) > 0)
attempt("stat_runtime_missing", lambda: os.stat("/usr/lib/no-such-file-here"))
attempt("stat_env", lambda: os.stat(".env").st_size)
attempt("opath_env", lambda: os.close(os.open(".env", os.O_PATH)))
attempt("pid1_mem", lambda: os.close(os.open("/proc/1/mem", os.O_RDONLY)))
attempt("pid1_environ", lambda: read("/proc/1/environ"))
attempt("own_status", lambda: read("/proc/self/status").startswith("Name:"))
attempt("write_permitted", lambda: write("w/new.txt", "written"))
attempt("read_back", lambda: read("w/new.txt"))
attempt("write_refused", lambda: write("ro/x.txt", "nope"))
attempt("write_refused_exists", lambda: str(os.path.exists("ro/x.txt")))
attempt("listdir", lambda: ",".join(sorted(os.listdir("ls"))))
attempt("rename", lambda: os.rename("w/new.txt", "w/renamed.txt"))
attempt("rename_refused", lambda: os.rename("w/keep.txt", "w/moved.txt"))
attempt("keep_still_there", lambda: read("w/keep.txt"))
attempt("mkdir", lambda: os.mkdir("w/d"))
attempt("mkdir_refused", lambda: os.mkdir("ro/d"))
attempt("unlink", lambda: os.unlink("w/renamed.txt"))
attempt("unlink_refused", lambda: os.unlink("w/keep.txt"))


def dirfd_env():
    d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(os.open(".env", os.O_RDONLY, dir_fd=d))
    finally:
        os.close(d)


attempt("read_env_dirfd", dirfd_env)


def chdir_env():
    os.chdir("sub")
    try:
        return read("../.env")
    finally:
        os.chdir("..")


attempt("read_env_after_chdir", chdir_env)
attempt("read_permitted_after_chdir",
        lambda: (os.chdir("sub"), read("../p.txt"), os.chdir(".."))[1])


def threads():
    n_ok = [0]
    lock = threading.Lock()

    def run():
        for _ in range(40):
            if read("p.txt") == "proj-content":
                with lock:
                    n_ok[0] += 1
    ts = [threading.Thread(target=run) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return n_ok[0]


attempt("threads", threads)


def child():
    r = subprocess.run([sys.executable, "-c", "open('.env').read()"], capture_output=True)
    return "rc%d:%s" % (r.returncode, "PermissionError" in r.stderr.decode())


attempt("child", child)
attempt("cloexec", lambda: os.get_inheritable(os.open("p.txt", os.O_RDONLY | os.O_CLOEXEC)))


def inheritable():
    # libc's open: python's own os.open always adds O_CLOEXEC
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(b"p.txt", os.O_RDONLY)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "open")
    return os.get_inheritable(fd)


attempt("inheritable", inheritable)


attempt("truncate", lambda: os.truncate("w/t.txt", 2) or read("w/t.txt"))
attempt("truncate_refused", lambda: os.truncate("ro/f.txt", 0))
attempt("chmod", lambda: os.chmod("w/t.txt", 0o600) or oct(os.stat("w/t.txt").st_mode & 0o777))
attempt("chmod_refused", lambda: os.chmod("ro/f.txt", 0o600))
attempt("utime_refused", lambda: os.utime("ro/f.txt", (1, 1)))
attempt("utime", lambda: os.utime("w/t.txt", (1, 1)) or int(os.stat("w/t.txt").st_mtime))
attempt("link", lambda: os.link("w/t.txt", "w/t2.txt") or os.stat("w/t2.txt").st_nlink)
attempt("link_env_refused", lambda: os.link(".env", "w/leak"))
attempt("symlink", lambda: os.symlink("t.txt", "w/s.txt") or read("w/s.txt"))
attempt("symlink_env_refused", lambda: os.symlink("../.env", "w/leak2"))
attempt("mkfifo", lambda: os.mkfifo("w/fifo"))
attempt("fifo_open_no_hang", lambda: os.close(os.open("w/fifo", os.O_RDONLY)))


def unix(kind, path):
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if kind == "bind":
            s.bind(path)
            s.listen(1)
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(path)  # decided too: its own socket, permitted
            c.close()
        else:
            s.connect(path)
    finally:
        s.close()


def tcp_refused():
    import socket
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", 1))  # no decision: not AF_UNIX
    finally:
        s.close()


attempt("unix_bind_connect", lambda: unix("bind", "w/p.sock"))
attempt("unix_bind_refused", lambda: unix("bind", "ro/b.sock"))
attempt("unix_bind_refused_exists", lambda: str(os.path.exists("ro/b.sock")))
attempt("unix_connect_refused", lambda: unix("connect", "ro/s.sock"))
attempt("unix_connect_abstract", lambda: unix("connect", "\0box-test-no-such-abstract"))
attempt("tcp_connect", tcp_refused)

# Datagrams to named sockets: the destination decided as a connect's (fs:write of the file).
import socket
dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
dg.bind("w/dg.sock")
dg.settimeout(10)


class mmsghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.c_void_p), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int), ("pad", ctypes.c_int), ("len", ctypes.c_uint)]


class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def sendmmsg(path, payloads):
    """sendmmsg(2) through libc (python has none): one datagram per payload to PATH."""
    libc = ctypes.CDLL(None, use_errno=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    raw = path.encode()
    addr = ctypes.create_string_buffer(b"\x01\x00" + raw, 2 + len(raw) + 1)  # AF_UNIX
    bufs = [ctypes.create_string_buffer(p) for p in payloads]
    iovs = (iovec * len(bufs))(*[iovec(ctypes.addressof(b), len(b.raw) - 1) for b in bufs])
    msgs = (mmsghdr * len(bufs))()
    for i in range(len(bufs)):
        msgs[i].name = ctypes.addressof(addr)
        msgs[i].namelen = 2 + len(raw) + 1
        msgs[i].iov = ctypes.addressof(iovs) + i * ctypes.sizeof(iovec)
        msgs[i].iovlen = 1
    try:
        n = libc.sendmmsg(s.fileno(), msgs, len(bufs), 0)
        if n < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return n
    finally:
        s.close()


def dgram(how, path, payload=b"hello"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        if how == "sendto":
            s.sendto(payload, path)
        else:
            s.sendmsg([payload], [], 0, path)
    finally:
        s.close()
    if path == "w/dg.sock":
        return dg.recv(100).decode()


attempt("dgram_sendto", lambda: dgram("sendto", "w/dg.sock"))
attempt("dgram_sendmsg", lambda: dgram("sendmsg", "w/dg.sock", b"viamsg"))
attempt("dgram_sendmmsg", lambda: "%d:%s" % (sendmmsg("w/dg.sock", [b"m1", b"m2"]),
                                             dg.recv(100).decode() + dg.recv(100).decode()))
attempt("dgram_sendto_refused", lambda: dgram("sendto", "ro/d.sock"))
attempt("dgram_sendmsg_refused", lambda: dgram("sendmsg", "ro/d.sock"))
attempt("dgram_sendmmsg_refused", lambda: sendmmsg("ro/d.sock", [b"x"]))
attempt("dgram_abstract", lambda: dgram("sendto", "\0box-test-no-such-abstract-dgram"))


def swapped():
    # the test swaps w/dd between a directory and a link to secretdir from outside the box
    seen = {}
    for _ in range(400):
        try:
            v = read("w/dd/x")
        except OSError as e:
            v = err(e)
        seen[v] = seen.get(v, 0) + 1
    return ",".join(sorted(seen))


attempt("swapped", swapped)


def nondumpable():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0
        raise OSError(ctypes.get_errno(), "prctl")
    return read("p.txt")


attempt("nondumpable", nondumpable)
# its memory unreadable now: a datagram to the permitted socket is refused, never passed
attempt("nondumpable_sendto", lambda: dgram("sendto", "w/dg.sock"))
