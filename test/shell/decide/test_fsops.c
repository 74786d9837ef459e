/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_fsops.c — libshell/fsops.c against a recording decider: the exact
 * decisions (action, operation, canonical path) and outcomes of every file
 * operation (docs/box-policy.5.md), denials (EACCES + "box-shell: CMD: MESSAGE"),
 * batches of directory entries, and the openat2 guarantee: a symlink swapped
 * in between the decision and the open is never followed (a deterministic
 * swap inside the decision, the 8-try limit, and a racing thread). All of it
 * runs twice: with openat2, then with openat2 refused by a seccomp filter
 * (ENOSYS, as the box's filter answers), through fsops's component walk and
 * the directories it holds open (a held one moved, its fd number taken).
 *
 * The decider here is this file's own implementation of decide.h (as
 * cmd.h allows test programs): it logs each call into a string and denies
 * any path containing DENY_MARK.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "decide.h"
#include "fsops.h"
#include "tap.h"

/* The helpers below take their formats from this file only. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

#define DENY_MARK "forbidden"

/* ---- the recording decider --------------------------------------------------- */

struct sh_decider {
	char log[1 << 16];
	size_t len;
	unsigned decisions, batches, batch_sizes[64];
	/* called inside each fs decision (the deterministic race) */
	void (*during)(struct sh_decider *d, const char *path);
	unsigned during_calls;
	bool quiet; /* do not log (the racing loop) */
};

static const char *const A[] = { "fs:read", "fs:write", "fs:delete", "fs:move" };
static const char *const OPS[] = {
	"read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec",
	"write_content", "create_dir", "set_permissions", "symlink",
	"remove_file", "remove_dir", "rename",
};
static const char *const RES[] = { "completed", "descriptor_issued", "indeterminate" };
static char base[4096]; /* the canonical temp dir; logged as "@" */

static void
dlog(struct sh_decider *d, const char *fmt, const char *a, const char *b, const char *path,
     const char *c)
{
	if (d->quiet)
		return;
	char p[4096];
	size_t bl = strlen(base);
	if (strncmp(path, base, bl) == 0)
		snprintf(p, sizeof(p), "@%s", path + bl);
	else
		snprintf(p, sizeof(p), "%s", path);
	int n = snprintf(d->log + d->len, sizeof(d->log) - d->len, fmt, a, b, p, c);
	if (n > 0 && (size_t)n < sizeof(d->log) - d->len)
		d->len += (size_t)n;
}

void
sh_verdict_clear(struct sh_verdict *v)
{
	free(v->message);
	v->message = NULL;
	v->permit = false;
}

int
sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out)
{
	d->decisions++;
	dlog(d, "%s %s %s%s\n", A[r->action], OPS[r->op], r->path, "");
	if (d->during)
		d->during(d, r->path);
	out->permit = strstr(r->path, DENY_MARK) == NULL;
	out->message = NULL;
	if (!out->permit) {
		char m[4200];
		snprintf(m, sizeof(m), "policy denied this operation on '%s' [policy: t].",
			 r->path);
		out->message = strdup(m);
	}
	return 0;
}

int
sh_decide_fs_batch(struct sh_decider *d, const struct sh_fs_request *r, size_t n,
		   struct sh_verdict *out)
{
	if (n > SH_DECIDE_BATCH_MAX)
		return -E2BIG;
	if (d->batches < 64)
		d->batch_sizes[d->batches] = (unsigned)n;
	d->batches++;
	for (size_t i = 0; i < n; i++)
		sh_decide_fs(d, &r[i], &out[i]);
	return 0;
}

int
sh_record_fs(struct sh_decider *d, const struct sh_fs_request *r, bool failed,
	     enum sh_fs_result result, uint64_t decide_id)
{
	(void)decide_id;
	dlog(d, "  %s %s %s -> %s\n", A[r->action], OPS[r->op], r->path,
	     failed ? "error" : RES[result]);
	return 0;
}

int
sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out)
{
	out->permit = true;
	out->message = NULL;
	return 0;
}

int
sh_decide_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *pp,
		struct sh_verdict *out)
{
	return sh_decide_exec(d, r, out);
}

int
sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status)
{
	return 0;
}

int
sh_record_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *pp,
		int status)
{
	return 0;
}
bool
sh_decider_wants_outcomes(const struct sh_decider *d)
{
	(void)d;
	return false;
}


int
sh_decider_flush(struct sh_decider *d)
{
	return 0;
}

const char *
sh_decider_home(const struct sh_decider *d)
{
	return "/nonexistent-home";
}

/* ---- fixtures -------------------------------------------------------------------- */

static struct sh_decider D;
static struct sh_fs FS;
static int err_pipe[2];

static void
sh(const char *fmt, const char *arg)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	if (system(cmd) != 0)
		printf("#   setup failed: %s\n", cmd);
}

static void
reset(void)
{
	D.len = 0;
	D.log[0] = '\0';
	D.decisions = 0;
	D.batches = 0;
	D.during = NULL;
	D.during_calls = 0;
	D.quiet = false;
}

/* What went to the denial fd since the last call. */
static const char *
err_text(void)
{
	static char buf[8192];
	ssize_t n = read(err_pipe[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
setup(void)
{
	char tmpl[] = "/tmp/shdecide-fsops-XXXXXX";
	if (!mkdtemp(tmpl))
		abort();
	if (!realpath(tmpl, base))
		abort();
	sh("cd %s && mkdir -p d sub/inner forbidden && echo hello > a.txt && "
	   "echo secret > forbidden/s.txt && ln -s d dlink && ln -s a.txt alink && "
	   "ln -s sub/inner deep && echo x > d/x && echo target > sub/inner/t", base);
	FS.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	FS.cwd = base;
	FS.decider = &D;
	if (pipe2(err_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		abort();
	FS.err_fd = err_pipe[1];
	FS.cmd_name = "cat";
}

/* ---- canonical paths ---------------------------------------------------------- */

static void
test_canon(void)
{
	char *c = NULL;
	char want[8192];

	CHECK_INT(sh_fs_canon(&FS, "alink", false, &c), 0);
	snprintf(want, sizeof(want), "%s/a.txt", base);
	CHECK_STR(c, want);
	free(c);
	/* entry: every component but the last */
	CHECK_INT(sh_fs_canon(&FS, "dlink", true, &c), 0);
	snprintf(want, sizeof(want), "%s/dlink", base);
	CHECK_STR(c, want);
	free(c);
	/* ".." after a link is the parent of what it points to (sub/, which has no d/) */
	CHECK_INT(sh_fs_canon(&FS, "deep/../d/./x", false, &c), -ENOENT);
	CHECK_INT(sh_fs_canon(&FS, "deep/../inner/./t", false, &c), 0);
	snprintf(want, sizeof(want), "%s/sub/inner/t", base);
	CHECK_STR(c, want);
	free(c);
	CHECK_INT(sh_fs_canon(&FS, "deep/t", false, &c), 0);
	snprintf(want, sizeof(want), "%s/sub/inner/t", base);
	CHECK_STR(c, want);
	free(c);
	/* a missing last component is allowed (creation), a missing middle one is not */
	CHECK_INT(sh_fs_canon(&FS, "d/new", false, &c), 0);
	free(c);
	CHECK_INT(sh_fs_canon(&FS, "nope/new", false, &c), -ENOENT);
	CHECK_INT(sh_fs_canon(&FS, "a.txt/x", false, &c), -ENOTDIR);
	CHECK_INT(sh_fs_canon(&FS, "/", false, &c), 0);
	CHECK_STR(c, "/");
	free(c);
	CHECK_INT(sh_fs_canon(&FS, "/..", false, &c), 0);
	CHECK_STR(c, "/");
	free(c);
}

static void
test_canon_loop(void)
{
	char *c = NULL;
	sh("cd %s && ln -sf loop1 loop2 && ln -sf loop2 loop1", base);
	CHECK_INT(sh_fs_canon(&FS, "loop1", false, &c), -ELOOP);
	reset();
	CHECK_INT(sh_fs_open(&FS, "loop1", O_RDONLY, 0), -ELOOP);
	CHECK_INT(D.decisions, 0); /* nothing to decide: the system call fails the same way */
}

/* ---- each operation's decisions ------------------------------------------------- */

static void
test_open_read(void)
{
	reset();
	int fd = sh_fs_open(&FS, "alink", O_RDONLY, 0);
	CHECK(fd >= 0);
	char buf[16] = "";
	CHECK_INT(read(fd, buf, sizeof(buf)), 6);
	CHECK(memcmp(buf, "hello\n", 6) == 0);
	CHECK_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	CHECK_STR(D.log, "fs:read read_content @/a.txt\n"
			 "  fs:read read_content @/a.txt -> descriptor_issued\n");
}

static void
test_open_write_rdwr(void)
{
	reset();
	int fd = sh_fs_open(&FS, "d/new.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	close(fd);
	fd = sh_fs_open(&FS, "dlink/new.txt", O_RDWR, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_STR(D.log, "fs:write write_content @/d/new.txt\n"
			 "  fs:write write_content @/d/new.txt -> descriptor_issued\n"
			 "fs:read read_content @/d/new.txt\n"
			 "fs:write write_content @/d/new.txt\n"
			 "  fs:read read_content @/d/new.txt -> descriptor_issued\n"
			 "  fs:write write_content @/d/new.txt -> descriptor_issued\n");
}

static void
test_open_missing(void)
{
	reset();
	CHECK_INT(sh_fs_open(&FS, "missing.txt", O_RDONLY, 0), -ENOENT);
	CHECK_STR(D.log, "fs:read read_content @/missing.txt\n"
			 "  fs:read read_content @/missing.txt -> error\n");
}

static void
test_own_streams(void)
{
	reset();
	int fd = sh_fs_open(&FS, "/dev/stderr", O_WRONLY | O_TRUNC, 0);
	CHECK(fd >= 3);
	struct stat a, b;
	CHECK(fstat(fd, &a) == 0 && fstat(2, &b) == 0 && a.st_ino == b.st_ino &&
	      a.st_dev == b.st_dev);
	CHECK_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	fd = sh_fs_open(&FS, "/dev/fd/0", O_RDONLY, 0);
	CHECK(fd >= 3);
	close(fd);
	CHECK_INT(sh_fs_open(&FS, "/dev/fd/999", O_RDONLY, 0), -EBADF);
	CHECK_INT(D.decisions, 0);
}

static void
test_denied(void)
{
	reset();
	(void)err_text();
	CHECK_INT(sh_fs_open(&FS, "forbidden/s.txt", O_RDONLY, 0), -EACCES);
	/* a denied request has no outcome */
	CHECK_STR(D.log, "fs:read read_content @/forbidden/s.txt\n");
	char want[8192];
	snprintf(want, sizeof(want),
		 "box-shell: cat: policy denied this operation on '%s/forbidden/s.txt' "
		 "[policy: t].\n",
		 base);
	CHECK_STR(err_text(), want);
}

static void
test_stat_readlink(void)
{
	struct stat st;
	char *t = NULL;
	reset();
	CHECK_INT(sh_fs_stat(&FS, "dlink", &st, true), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_INT(sh_fs_stat(&FS, "dlink", &st, false), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_INT(sh_fs_readlink(&FS, "alink", &t), 0);
	CHECK_STR(t, "a.txt");
	free(t);
	CHECK_STR(D.log, "fs:read read_metadata @/d\n"
			 "  fs:read read_metadata @/d -> completed\n"
			 "fs:read read_metadata @/dlink\n"
			 "  fs:read read_metadata @/dlink -> completed\n"
			 "fs:read read_link @/alink\n"
			 "  fs:read read_link @/alink -> completed\n");
}

/* sh_fs_stat_at: the decision sh_fs_stat makes, the stat through the open directory. */
static void
test_stat_at(void)
{
	struct stat st, st2;
	reset();
	DIR *dir = sh_fs_opendir(&FS, "d");
	CHECK(dir != NULL);
	if (!dir)
		return;
	CHECK_INT(sh_fs_stat_at(&FS, dirfd(dir), "d/x", "x", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_INT(stat("d/x", &st2), 0);
	CHECK(st.st_ino == st2.st_ino);
	CHECK_INT(sh_fs_stat_at(&FS, dirfd(dir), "d/missing", "missing", &st), -ENOENT);
	/* a name that is no single component: the ordinary stat of the path */
	CHECK_INT(sh_fs_stat_at(&FS, dirfd(dir), "d/.", ".", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	closedir(dir);
	dir = sh_fs_opendir(&FS, ".");
	CHECK(dir != NULL);
	if (!dir)
		return;
	(void)err_text();
	CHECK_INT(sh_fs_stat_at(&FS, dirfd(dir), "forbidden", "forbidden", &st), -EACCES);
	CHECK_INT(sh_fs_stat_at(&FS, dirfd(dir), "dlink", "dlink", &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	closedir(dir);
	CHECK_STR(D.log, "fs:read enumerate @/d\n"
			 "  fs:read enumerate @/d -> descriptor_issued\n"
			 "fs:read read_metadata @/d/x\n"
			 "  fs:read read_metadata @/d/x -> completed\n"
			 "fs:read read_metadata @/d/missing\n"
			 "  fs:read read_metadata @/d/missing -> error\n"
			 "fs:read read_metadata @/d\n"
			 "  fs:read read_metadata @/d -> completed\n"
			 "fs:read enumerate @\n"
			 "  fs:read enumerate @ -> descriptor_issued\n"
			 "fs:read read_metadata @/forbidden\n"
			 "fs:read read_metadata @/dlink\n"
			 "  fs:read read_metadata @/dlink -> completed\n");
}

static void
test_dirs(void)
{
	char *c = NULL;
	reset();
	CHECK_INT(sh_fs_mkdir(&FS, "newdir", 0755), 0);
	CHECK_INT(sh_fs_mkdir(&FS, "newdir", 0755), -EEXIST);
	CHECK_INT(sh_fs_chdir_check(&FS, "deep", &c), 0);
	char want[8192];
	snprintf(want, sizeof(want), "%s/sub/inner", base);
	CHECK_STR(c, want);
	free(c);
	DIR *dir = sh_fs_opendir(&FS, "newdir");
	CHECK(dir != NULL);
	if (dir)
		closedir(dir);
	CHECK_INT(sh_fs_rmdir(&FS, "newdir"), 0);
	CHECK_STR(D.log, "fs:write create_dir @/newdir\n"
			 "  fs:write create_dir @/newdir -> completed\n"
			 "fs:write create_dir @/newdir\n"
			 "  fs:write create_dir @/newdir -> error\n"
			 "fs:read change_dir @/sub/inner\n"
			 "  fs:read change_dir @/sub/inner -> completed\n"
			 "fs:read enumerate @/newdir\n"
			 "  fs:read enumerate @/newdir -> descriptor_issued\n"
			 "fs:delete remove_dir @/newdir\n"
			 "  fs:delete remove_dir @/newdir -> completed\n");
}

static void
test_rename(void)
{
	sh("cd %s && echo 1 > r1 && echo 2 > r2 && mkdir -p rd1 rd2", base);
	reset();
	CHECK_INT(sh_fs_rename(&FS, "r1", "r3"), 0);  /* destination absent */
	CHECK_INT(sh_fs_rename(&FS, "r3", "r2"), 0);  /* destination replaced */
	CHECK_INT(sh_fs_rename(&FS, "rd1", "rd2"), 0); /* empty directory replaced */
	CHECK_STR(D.log, "fs:read read_content @/r1\n"
			 "fs:move rename @/r1\n"
			 "fs:move rename @/r3\n"
			 "  fs:read read_content @/r1 -> completed\n"
			 "  fs:move rename @/r1 -> completed\n"
			 "  fs:move rename @/r3 -> completed\n"
			 "fs:read read_content @/r3\n"
			 "fs:move rename @/r3\n"
			 "fs:move rename @/r2\n"
			 "fs:delete remove_file @/r2\n"
			 "  fs:read read_content @/r3 -> completed\n"
			 "  fs:move rename @/r3 -> completed\n"
			 "  fs:move rename @/r2 -> completed\n"
			 "  fs:delete remove_file @/r2 -> completed\n"
			 "fs:read read_content @/rd1\n"
			 "fs:move rename @/rd1\n"
			 "fs:move rename @/rd2\n"
			 "fs:delete remove_dir @/rd2\n"
			 "  fs:read read_content @/rd1 -> completed\n"
			 "  fs:move rename @/rd1 -> completed\n"
			 "  fs:move rename @/rd2 -> completed\n"
			 "  fs:delete remove_dir @/rd2 -> completed\n");
	/* a denied leg stops the rename, nothing moved */
	reset();
	CHECK_INT(sh_fs_rename(&FS, "r2", "forbidden/r2"), -EACCES);
	CHECK_INT(access("r2", F_OK), 0);
	CHECK_STR(D.log, "fs:read read_content @/r2\n"
			 "fs:move rename @/r2\n"
			 "fs:move rename @/forbidden/r2\n");
	(void)err_text();
}

/* A rename across file systems is the kernel's EXDEV, returned as such (mv then
 * copies): not taken for a symlink race, retried and refused as one. */
static void
test_rename_cross_device(void)
{
	struct stat a, b;
	char other[] = "/dev/shm/shdecide-xdev-XXXXXX";
	if (stat(base, &a) < 0 || !mkdtemp(other))
		abort();
	if (stat(other, &b) < 0 || a.st_dev == b.st_dev) {
		rmdir(other);
		SKIP("/dev/shm is on the same file system as /tmp here");
		return;
	}
	sh("cd %s && echo x > xdev", base);
	char to[4200];
	snprintf(to, sizeof(to), "%s/xdev", other);
	(void)err_text();
	reset();
	CHECK_INT(sh_fs_rename(&FS, "xdev", to), -EXDEV);
	CHECK_INT(access("xdev", F_OK), 0);
	CHECK(strstr(err_text(), "race") == NULL);
	/* decided once (three legs), not eight times */
	CHECK(strstr(D.log, "fs:move rename @/xdev\n") != NULL);
	CHECK(strstr(strstr(D.log, "fs:move rename @/xdev\n") + 1, "fs:move rename @/xdev\n") ==
	      NULL);
	sh("rm -rf %s", other);
}

static void
test_links(void)
{
	reset();
	CHECK_INT(sh_fs_link(&FS, "a.txt", "hard"), 0);
	CHECK_INT(sh_fs_symlink(&FS, "sub/inner/t", "sym"), 0);
	CHECK_INT(sh_fs_symlink(&FS, "../nowhere/x", "d/dangling"), 0);
	CHECK_INT(sh_fs_unlink(&FS, "sym"), 0);
	CHECK_STR(D.log, "fs:read read_content @/a.txt\n"
			 "fs:write write_content @/hard\n"
			 "  fs:read read_content @/a.txt -> completed\n"
			 "  fs:write write_content @/hard -> completed\n"
			 "fs:read read_content @/sub/inner/t\n"
			 "fs:write symlink @/sym\n"
			 "  fs:read read_content @/sub/inner/t -> completed\n"
			 "  fs:write symlink @/sym -> completed\n"
			 "fs:read read_content @/nowhere/x\n"
			 "fs:write symlink @/d/dangling\n"
			 "  fs:read read_content @/nowhere/x -> completed\n"
			 "  fs:write symlink @/d/dangling -> completed\n"
			 "fs:delete remove_file @/sym\n"
			 "  fs:delete remove_file @/sym -> completed\n");
}

static void
test_chmod_touch_truncate(void)
{
	struct stat st;
	reset();
	CHECK_INT(sh_fs_chmod(&FS, "a.txt", 04755, true), -EPERM);
	CHECK_INT(sh_fs_chmod(&FS, "a.txt", 02755, true), -EPERM);
	CHECK_INT(D.decisions, 0); /* refused before any decision */
	CHECK_INT(sh_fs_chmod(&FS, "alink", 0600, true), 0);
	CHECK_INT(stat("a.txt", &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	CHECK_INT(sh_fs_utimens(&FS, "alink", ts, true), 0);
	CHECK_INT(stat("a.txt", &st), 0);
	CHECK_INT(st.st_mtime, 1000000000);
	CHECK_INT(sh_fs_truncate(&FS, "a.txt", 2), 0);
	CHECK_INT(stat("a.txt", &st), 0);
	CHECK_INT(st.st_size, 2);
	CHECK_STR(D.log, "fs:write set_permissions @/a.txt\n"
			 "  fs:write set_permissions @/a.txt -> completed\n"
			 "fs:write write_content @/a.txt\n"
			 "  fs:write write_content @/a.txt -> completed\n"
			 "fs:write write_content @/a.txt\n"
			 "  fs:write write_content @/a.txt -> completed\n");
}

/* ---- batches ---------------------------------------------------------------------- */

static void
test_batches(void)
{
	sh("mkdir -p %s/many && cd %s/many && for i in $(seq 1 300); do echo $i > f$i; done && "
	   "echo no > forbidden_1 && ln -s ../a.txt lnk",
	   base);
	char *names[302];
	bool ok[302];
	for (int i = 0; i < 300; i++) {
		char n[16];
		snprintf(n, sizeof(n), "f%d", i + 1);
		names[i] = strdup(n);
	}
	names[300] = strdup("forbidden_1");
	names[301] = strdup("lnk");
	reset();
	CHECK_INT(sh_fs_decide_entries(&FS, "many", names, 302, SH_FS_READ, SH_OP_READ_CONTENT,
				       ok),
		  0);
	CHECK_INT(D.batches, 2);
	CHECK_INT(D.batch_sizes[0], 256);
	CHECK_INT(D.batch_sizes[1], 46);
	CHECK_INT(D.decisions, 302);
	CHECK(ok[0] && ok[299] && !ok[300] && ok[301]);
	/* the link's entry is decided as what it points to */
	CHECK(strstr(D.log, "fs:read read_content @/a.txt\n") != NULL);
	/* opening them asks nothing more */
	for (int i = 0; i < 300; i++) {
		char p[64];
		snprintf(p, sizeof(p), "many/%s", names[i]);
		int fd = sh_fs_open(&FS, p, O_RDONLY, 0);
		CHECK(fd >= 0);
		close(fd);
	}
	CHECK_INT(D.decisions, 302);
	int fd = sh_fs_open(&FS, "many/lnk", O_RDONLY, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(D.decisions, 302);
	/* the denied one fails as EACCES with its message, without a new decision */
	(void)err_text();
	CHECK_INT(sh_fs_open(&FS, "many/forbidden_1", O_RDONLY, 0), -EACCES);
	CHECK_INT(D.decisions, 302);
	CHECK(strstr(err_text(), "box-shell: cat: policy denied") != NULL);
	/* used once: a second open decides again */
	fd = sh_fs_open(&FS, "many/f1", O_RDONLY, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(D.decisions, 303);
	/* typed: a d_type that says "no link" is taken (a link named so is then refused by
	 * openat2 and decided again, never followed unseen) */
	unsigned char types[2] = { DT_REG, DT_REG };
	char *two[2] = { names[1], names[301] }; /* f2 and the link lnk, claimed regular */
	bool ok2[2];
	unsigned before = D.decisions;
	CHECK_INT(sh_fs_decide_entries_typed(&FS, "many", two, types, 2, SH_FS_READ,
					     SH_OP_READ_CONTENT, ok2),
		  0);
	CHECK_INT(D.decisions, before + 2);
	CHECK(strstr(D.log, "fs:read read_content @/many/lnk\n") != NULL);
	fd = sh_fs_open(&FS, "many/lnk", O_RDONLY, 0);
	/* the batch's verdict was for the link itself: openat2 refused it (an error outcome),
	 * then it was decided again on what it points to, and opened */
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(D.decisions, before + 3);
	CHECK(strstr(D.log, "  fs:read read_content @/many/lnk -> error\n"
			    "fs:read read_content @/a.txt\n") != NULL);
	sh_fs_batch_forget();
	/* forgotten (a command ended): decided again */
	CHECK_INT(sh_fs_decide_entries(&FS, "many", names, 2, SH_FS_READ, SH_OP_READ_CONTENT, ok),
		  0);
	CHECK_INT(D.decisions, before + 5);
	sh_fs_batch_forget();
	fd = sh_fs_open(&FS, "many/f2", O_RDONLY, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(D.decisions, before + 6);
	/* each permitted open recorded its outcome */
	CHECK(strstr(D.log, "  fs:read read_content @/many/f300 -> descriptor_issued\n") != NULL);
	for (int i = 0; i < 302; i++)
		free(names[i]);
}

/* ---- the symlink race ------------------------------------------------------------ */

/* Inside the first decision: replace race/d (a directory) with a link to forbidden/. */
static void
swap_once(struct sh_decider *d, const char *path)
{
	if (d->during_calls++ > 0)
		return;
	char a[8192], b[8192];
	snprintf(a, sizeof(a), "%s/race/d", base);
	snprintf(b, sizeof(b), "%s/race/d.link", base);
	if (renameat2(AT_FDCWD, b, AT_FDCWD, a, RENAME_EXCHANGE) < 0)
		printf("#   exchange failed: %s\n", strerror(errno));
}

static void
test_swap_between_decision_and_open(void)
{
	sh("cd %s && mkdir -p race/d && echo allowed > race/d/s.txt && "
	   "ln -sfn ../forbidden race/d.link", base);
	reset();
	(void)err_text();
	D.during = swap_once;
	int fd = sh_fs_open(&FS, "race/d/s.txt", O_RDONLY, 0);
	/* first decided on race/d/s.txt, the open hit the link (ELOOP): decided again on the
	 * forbidden target, denied */
	CHECK_INT(fd, -EACCES);
	CHECK_STR(D.log, "fs:read read_content @/race/d/s.txt\n"
			 "  fs:read read_content @/race/d/s.txt -> error\n"
			 "fs:read read_content @/forbidden/s.txt\n");
	(void)err_text();
}

/*
 * Every decision moves the directory it names away and leaves a link in its
 * place, so every open hits a link: the 8-try limit.
 */
static void
move_away(struct sh_decider *d, const char *path)
{
	char dir[8192], moved[8192 + 16];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(moved, sizeof(moved), "%s/../m%u", dir, d->during_calls++);
	if (rename(dir, moved) < 0 || symlink(strrchr(moved, '/') + 1, dir) < 0)
		printf("#   move_away failed: %s\n", strerror(errno));
}

static void
test_retry_limit(void)
{
	sh("cd %s && mkdir -p race2/d && echo ok > race2/d/f", base);
	reset();
	(void)err_text();
	D.during = move_away;
	int fd = sh_fs_open(&FS, "race2/d/f", O_RDONLY, 0);
	CHECK_INT(fd, -EACCES);
	CHECK_INT(D.decisions, 8);
	CHECK(strstr(err_text(), "kept changing") != NULL);
}

static atomic_bool race_stop;

static void *
racer(void *arg)
{
	char a[8192], b[8192];
	snprintf(a, sizeof(a), "%s/race3/d", base);
	snprintf(b, sizeof(b), "%s/race3/d.link", base);
	while (!atomic_load(&race_stop))
		(void)renameat2(AT_FDCWD, b, AT_FDCWD, a, RENAME_EXCHANGE);
	return NULL;
}

static void
test_racing_thread(void)
{
	sh("cd %s && mkdir -p race3/d && echo allowed > race3/d/s.txt && "
	   "ln -sfn ../forbidden race3/d.link", base);
	reset();
	D.quiet = true;
	pthread_t t;
	atomic_store(&race_stop, false);
	pthread_create(&t, NULL, racer, NULL);
	unsigned opened = 0, refused = 0, leaked = 0, other = 0;
	/* 2000 opens, more (a bounded number) until the racer was seen to win once */
	for (int i = 0; i < 2000 || (refused == 0 && i < 50000); i++) {
		if (i % 256 == 255)
			sched_yield(); /* a loaded machine: let the racer run */
		int fd = sh_fs_open(&FS, "race3/d/s.txt", O_RDONLY, 0);
		if (fd >= 0) {
			char buf[32] = "";
			ssize_t n = read(fd, buf, sizeof(buf) - 1);
			if (n > 0 && strncmp(buf, "allowed", 7) == 0)
				opened++;
			else
				leaked++;
			close(fd);
		} else if (fd == -EACCES) {
			refused++;
		} else {
			other++; /* ENOENT while the rename is half-way is fine */
		}
		(void)err_text();
	}
	atomic_store(&race_stop, true);
	pthread_join(t, NULL);
	printf("# race: %u opened the allowed file, %u refused, %u other, %u forbidden\n", opened,
	       refused, other, leaked);
	CHECK_INT(leaked, 0);
	CHECK(opened > 0);
	CHECK(refused > 0);
}

/* ---- the walk (openat2 refused, as in a box) and the directories it holds ------ */

/* First bytes of FILE (relative to base) opened through fsops, or "" (and the error). */
static const char *
read_via_fs(const char *file)
{
	static char buf[64];
	buf[0] = '\0';
	int fd = sh_fs_open(&FS, file, O_RDONLY, 0);
	if (fd < 0) {
		snprintf(buf, sizeof(buf), "(%s)", strerror(-fd));
		return buf;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

/* The fds at 100 and above (fsops's own) whose /proc/self/fd link reads WANT: up to MAX. */
static int
own_fds_linking(const char *want, int *fds, int max)
{
	char link[64], got[8192];
	int n = 0;
	for (int fd = 100; fd < 1024 && n < max; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t l = readlink(link, got, sizeof(got) - 1);
		if (l < 0)
			continue;
		got[l] = '\0';
		if (strcmp(got, want) == 0)
			fds[n++] = fd;
	}
	return n;
}

/* The fds at 100 and above whose path is base/REL (the walk's held directories). */
static int
held_fds(const char *rel, int *fds, int max)
{
	char want[8192];
	snprintf(want, sizeof(want), "%s/%s", base, rel);
	return own_fds_linking(want, fds, max);
}

/*
 * A held directory moved away and another one made at its path: the next
 * open in that path opens the new one (the kernel's path of the held fd no
 * longer matches), and the moved one is reached at its new path.
 */
static void
test_walk_held_dir_moved(void)
{
	sh("cd %s && mkdir -p held/d && echo one > held/d/f", base);
	reset();
	CHECK_STR(read_via_fs("held/d/f"), "one\n");
	int fds[4];
	CHECK_INT(held_fds("held/d", fds, 4), 1); /* held: the next entry costs no walk */
	sh("cd %s && mv held/d held/e && mkdir held/d && echo two > held/d/f", base);
	CHECK_STR(read_via_fs("held/d/f"), "two\n");
	CHECK_STR(read_via_fs("held/e/f"), "one\n");
	/* a link swapped in for the held directory's path: decided again where it leads */
	sh("cd %s && rm -rf held/d && ln -s ../forbidden held/d", base);
	reset();
	CHECK_STR(read_via_fs("held/d/s.txt"), "(Permission denied)");
	CHECK(strstr(D.log, "fs:read read_content @/forbidden/s.txt\n") != NULL);
	(void)err_text();
}

/* The fd at 100 and above of fsops's inotify instance, or -1. */
static int
watch_instance(void)
{
	int fd;
	return own_fds_linking("anon_inode:inotify", &fd, 1) == 1 ? fd : -1;
}

/* The instance FD watches the inode of base/REL (its fdinfo names each watch's inode). */
static bool
watches(int fd, const char *rel)
{
	char p[8192], want[64], line[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (stat(p, &st) < 0)
		return false;
	snprintf(want, sizeof(want), " ino:%lx ", (unsigned long)st.st_ino);
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(p, "re");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f))
		found = strncmp(line, "inotify wd:", 11) == 0 && strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * A held directory is watched, with every directory above it, so that its
 * entries cost no readlink each; a directory above it renamed (the held one
 * itself untouched) is seen at the next open, and a new directory at the old
 * path is the one opened.
 */
static void
test_walk_held_watched(void)
{
	sh("cd %s && mkdir -p anc/mid/d && echo old > anc/mid/d/f", base);
	reset();
	CHECK_STR(read_via_fs("anc/mid/d/f"), "old\n");
	int in = watch_instance();
	CHECK(in >= 100);
	if (in < 0)
		return;
	CHECK(watches(in, "anc/mid/d"));
	CHECK(watches(in, "anc/mid"));
	CHECK(watches(in, "anc"));
	CHECK(watches(in, "."));
	sh("cd %s && mv anc anc2 && mkdir -p anc/mid/d && echo new > anc/mid/d/f", base);
	CHECK_STR(read_via_fs("anc/mid/d/f"), "new\n");
	CHECK_STR(read_via_fs("anc2/mid/d/f"), "old\n");
	/* the held directory removed and a link put at its path: the link is decided */
	sh("cd %s && rm -rf anc/mid/d && ln -s ../../forbidden anc/mid/d", base);
	reset();
	CHECK_STR(read_via_fs("anc/mid/d/s.txt"), "(Permission denied)");
	CHECK(strstr(D.log, "fs:read read_content @/forbidden/s.txt\n") != NULL);
	(void)err_text();
}

/* The watches of the instance FD (its fdinfo's "inotify wd:" lines). */
static int
watch_count(int fd)
{
	char p[64], line[512];
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(p, "re");
	int n = 0;
	while (f && fgets(line, sizeof(line), f))
		n += strncmp(line, "inotify wd:", 11) == 0;
	if (f)
		fclose(f);
	return n;
}

/*
 * A walk of many directories: each watch pins an inode in the kernel, so an
 * instance holds at most 4,096 (fsops's WALKCACHE_WATCHES_MAX) before a new
 * one takes over; every file is still read through a checked directory.
 */
static void
test_walk_watch_cap(void)
{
	char dir[8192];
	snprintf(dir, sizeof(dir), "%s/wide", base);
	CHECK(mkdir(dir, 0755) == 0);
	for (int i = 1; i <= 4300; i++) {
		char p[8300], text[16];
		snprintf(p, sizeof(p), "%s/wide/d%d", base, i);
		int n = snprintf(text, sizeof(text), "%d\n", i);
		int fd = -1;
		if (mkdir(p, 0755) == 0 && strlen(p) + 2 < sizeof(p)) {
			strcat(p, "/f");
			fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		}
		if (fd < 0 || write(fd, text, (size_t)n) != n)
			printf("#   setup failed: %s\n", p);
		if (fd >= 0)
			close(fd);
	}
	reset();
	bool all = true;
	for (int i = 1; i <= 4300; i++) {
		char f[64], want[16];
		snprintf(f, sizeof(f), "wide/d%d/f", i);
		snprintf(want, sizeof(want), "%d\n", i);
		const char *got = read_via_fs(f);
		if (strcmp(got, want) != 0 && all) {
			printf("#   %s: %s\n", f, got);
			all = false;
		}
	}
	CHECK(all);
	int in = watch_instance();
	CHECK(in >= 100);
	if (in >= 0) {
		int n = watch_count(in);
		CHECK(n > 0 && n <= 4096 + 64);
		if (n <= 0 || n > 4096 + 64)
			printf("#   watches: %d\n", n);
	}
	sh("rm -rf %s/wide", base);
}

/*
 * A script's redirection takes a held fd's number (`exec 105<dir`): the
 * directory it now names is never used for the held path, and evicting the
 * held entry later does not close the script's fd.
 */
static void
test_walk_held_fd_taken(void)
{
	sh("cd %s && mkdir -p take/a take/b && echo A > take/a/f && echo B > take/b/f", base);
	reset();
	CHECK_STR(read_via_fs("take/a/f"), "A\n");
	int fds[4];
	int n = held_fds("take/a", fds, 4);
	CHECK_INT(n, 1);
	if (n != 1)
		return;
	char b[8192];
	snprintf(b, sizeof(b), "%s/take/b", base);
	int other = open(b, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(other >= 0 && dup2(other, fds[0]) == fds[0]);
	close(other);
	CHECK_STR(read_via_fs("take/a/f"), "A\n");
	/* more directories than are held: every older one is evicted */
	for (int i = 0; i < 12; i++) {
		char mk[128], f[64];
		snprintf(mk, sizeof(mk), "cd %%s && mkdir -p take/n%d && echo %d > take/n%d/f", i,
			 i, i);
		sh(mk, base);
		snprintf(f, sizeof(f), "take/n%d/f", i);
		(void)read_via_fs(f);
	}
	CHECK(fcntl(fds[0], F_GETFD) >= 0); /* still the script's */
	int still = held_fds("take/b", fds + 1, 3);
	CHECK(still >= 1 && fds[1] == fds[0]);
	close(fds[0]);
}

/* fsops's walk runs where openat2 answers ENOSYS, as the box's seccomp filter makes it. */
static bool
refuse_openat2(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f };
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

/* RUN with the test named "walk: NAME". */
#define RUN_WALK(fn)                                                                      \
	do {                                                                              \
		int before_ = tap_failed_checks;                                          \
		fn();                                                                     \
		if (tap_failed_checks != before_) {                                       \
			printf("not ok - walk: %s\n", #fn);                              \
			tap_failed++;                                                     \
		} else {                                                                  \
			printf("ok - walk: %s\n", #fn);                                  \
			tap_passed++;                                                     \
		}                                                                         \
		fflush(stdout);                                                           \
	} while (0)

#define ALL_TESTS(R)                                                                      \
	do {                                                                              \
		R(test_canon);                                                            \
		R(test_canon_loop);                                                       \
		R(test_open_read);                                                        \
		R(test_open_write_rdwr);                                                  \
		R(test_open_missing);                                                     \
		R(test_own_streams);                                                      \
		R(test_denied);                                                           \
		R(test_stat_readlink);                                                    \
		R(test_stat_at);                                                          \
		R(test_dirs);                                                             \
		R(test_rename);                                                           \
		R(test_rename_cross_device);                                              \
		R(test_links);                                                            \
		R(test_chmod_touch_truncate);                                             \
		R(test_batches);                                                          \
		R(test_swap_between_decision_and_open);                                   \
		R(test_retry_limit);                                                      \
		R(test_racing_thread);                                                    \
	} while (0)

int
main(void)
{
	setup();
	if (chdir(base) < 0)
		abort();
	ALL_TESTS(RUN);
	if (chdir("/") < 0)
		abort();
	sh("rm -rf %s", base);
	/* Again on fresh fixtures, through the component walk (and its held directories). */
	if (!refuse_openat2()) {
		printf("not ok - walk: cannot refuse openat2 with a seccomp filter: %s\n",
		       strerror(errno));
		tap_failed++;
		return tap_done();
	}
	setup();
	if (chdir(base) < 0)
		abort();
	ALL_TESTS(RUN_WALK);
	RUN_WALK(test_walk_held_dir_moved);
	RUN_WALK(test_walk_held_watched);
	RUN_WALK(test_walk_watch_cap);
	RUN_WALK(test_walk_held_fd_taken);
	sh("rm -rf %s", base);
	return tap_done();
}
