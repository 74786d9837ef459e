/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sh_host_stub.c — every host operation box-shell's interpreter reaches, for
 * fuzz_sh_interp.c: no real file, no host program, no daemon.
 *
 * The interpreter (parse, expand, arith, pattern, vars, builtins, exec,
 * redir, wrappers) reaches its host in three ways, all answered here and
 * only here:
 *  - the decision back end (decide.h, linked in by each program: box-sh's
 *    decide_local.c, the daemon's decide_policyd.c): here every shell:exec
 *    is permitted (builtins, functions' commands), every host program is
 *    refused at its fs:read exec, every shell:spawn refused, so the
 *    interpreter never starts one (fuzz_sh_interp.c aborts on an execve);
 *  - the file operations (fsops.h, libshell/fsops.c in the programs): here
 *    a flat in-memory file system of memfds, plus /dev/null and the
 *    process's own streams (/dev/stdin, /dev/fd/N…, spelled exactly as
 *    fsops.c accepts them); directories exist only as "/", FUZZ_HOME,
 *    FUZZ_CWD, their parents and the parents of a file; enumerate and
 *    change_dir are refused;
 *  - the host-operations table (libshell/host.h): none is installed, so
 *    no own commands and no host program filter (as a test program).
 *
 * Caps: FUZZ_FS_FILES files, FUZZ_FS_BYTES bytes in all at the time a
 * file is opened for writing (a single write may pass it; the memfds are
 * freed by fuzz_host_reset after each input).
 * Trusts: nothing in the paths (the fuzz input's).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libshell/decide.h"
#include "libshell/fsops.h"
#include "sh_host_stub.h"

#define FUZZ_FS_FILES 16
#define FUZZ_FS_BYTES (1 << 20)

struct sh_decider {
	int unused;
};

static struct sh_decider fuzz_decider;

struct sh_decider *
fuzz_host_decider(void)
{
	return &fuzz_decider;
}

/* ---- decisions ---- */

void
sh_verdict_clear(struct sh_verdict *v)
{
	free(v->message);
	v->message = NULL;
}

static int
refuse(struct sh_verdict *out, const char *why)
{
	*out = (struct sh_verdict){.permit = false, .message = strdup(why)};
	return out->message ? 0 : -ENOMEM;
}

int
sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out)
{
	(void)d;
	(void)r;
	*out = (struct sh_verdict){.permit = true};
	return 0;
}

int
sh_decide_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
		struct sh_verdict *out)
{
	(void)d;
	(void)r;
	(void)program_path;
	return refuse(out, "host programs are not run under the fuzzer");
}

int
sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out)
{
	(void)d;
	if (r->op == SH_OP_EXEC)
		return refuse(out, "host programs are not run under the fuzzer");
	*out = (struct sh_verdict){.permit = true};
	return 0;
}

int
sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status)
{
	(void)d;
	(void)r;
	(void)status;
	return 0;
}

int
sh_record_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
		int status)
{
	(void)d;
	(void)r;
	(void)program_path;
	(void)status;
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
	(void)d;
	return 0;
}

int
sh_decider_forked(struct sh_decider *d)
{
	(void)d;
	return 0;
}

const char *
sh_decider_home(const struct sh_decider *d)
{
	(void)d;
	return FUZZ_HOME;
}

/* ---- the in-memory file system ---- */

struct mem_file {
	char *path; /* canonical */
	int fd;     /* memfd: the file itself; opens reopen it through /proc */
};

static struct mem_file files[FUZZ_FS_FILES];
static size_t nfiles;

void
fuzz_host_reset(void)
{
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].path);
		close(files[i].fd);
	}
	nfiles = 0;
}

/* P made absolute against CWD and normalized lexically ("." "..", "//"): the
 * memory file system has no links. */
static int
canon(const char *cwd, const char *p, char **out)
{
	if (!*p)
		return -ENOENT;
	size_t cl = *p == '/' ? 0 : strlen(cwd);
	size_t n = cl + 1 + strlen(p) + 1;
	if (n > PATH_MAX)
		return -ENAMETOOLONG;
	char *buf = malloc(n), *o = malloc(n);
	if (!buf || !o) {
		free(buf);
		free(o);
		return -ENOMEM;
	}
	snprintf(buf, n, "%s/%s", *p == '/' ? "" : cwd, p);
	size_t ol = 0;
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (ol > 0 && o[--ol] != '/')
				;
			continue;
		}
		o[ol++] = '/';
		size_t l = strlen(c);
		memcpy(o + ol, c, l);
		ol += l;
	}
	if (ol == 0)
		o[ol++] = '/';
	o[ol] = 0;
	free(buf);
	*out = o;
	return 0;
}

static struct mem_file *
find_file(const char *path)
{
	for (size_t i = 0; i < nfiles; i++)
		if (strcmp(files[i].path, path) == 0)
			return &files[i];
	return NULL;
}

/* "/", the shell's home and working directory and their parents, and
 * every parent of a file are directories. */
static bool
is_dir(const char *path)
{
	static const char *const fixed[] = {"/", "/fuzz", FUZZ_HOME, FUZZ_CWD};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strcmp(path, fixed[i]) == 0)
			return true;
	size_t l = strlen(path);
	for (size_t i = 0; i < nfiles; i++)
		if (strncmp(files[i].path, path, l) == 0 && files[i].path[l] == '/')
			return true;
	return false;
}

static size_t
bytes_used(void)
{
	size_t sum = 0;
	struct stat st;
	for (size_t i = 0; i < nfiles; i++)
		if (fstat(files[i].fd, &st) == 0)
			sum += (size_t)st.st_size;
	return sum;
}

/* The process's own streams, exactly as fsops.c spells them. */
static int
own_stream(const char *p)
{
	static const char *const names[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
	for (int i = 0; i < 3; i++)
		if (strcmp(p, names[i]) == 0)
			return i;
	const char *num = NULL;
	if (strncmp(p, "/dev/fd/", 8) == 0)
		num = p + 8;
	else if (strncmp(p, "/proc/self/fd/", 14) == 0)
		num = p + 14;
	if (!num || !*num)
		return -1;
	char *e;
	long v = strtol(num, &e, 10);
	return *e || v < 0 || v > INT_MAX ? -1 : (int)v;
}

int
sh_fs_canon(const struct sh_fs *fs, const char *p, bool entry, char **out)
{
	(void)entry;
	return canon(fs->cwd ? fs->cwd : "/", p, out);
}

int
sh_fs_open(struct sh_fs *fs, const char *path, int flags, mode_t mode)
{
	(void)mode;
	int own = own_stream(path);
	if (own >= 0) {
		int fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	if (strcmp(path, "/dev/null") == 0) {
		int fd = open("/dev/null", (flags & O_ACCMODE) | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	char *c;
	int r = sh_fs_canon(fs, path, false, &c);
	if (r < 0)
		return r;
	bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
	struct mem_file *f = find_file(c);
	if (!f && is_dir(c))
		r = writes ? -EISDIR : -EACCES;
	else if (f && (flags & O_CREAT) && (flags & O_EXCL))
		r = -EEXIST;
	else if (!f && !(flags & O_CREAT))
		r = -ENOENT;
	else if (writes && bytes_used() >= FUZZ_FS_BYTES)
		r = -EFBIG;
	else if (!f && nfiles >= FUZZ_FS_FILES)
		r = -ENOSPC;
	if (r < 0) {
		free(c);
		return r;
	}
	if (!f) {
		int m = memfd_create("fuzz", MFD_CLOEXEC);
		if (m < 0) {
			free(c);
			return -errno;
		}
		f = &files[nfiles++];
		*f = (struct mem_file){.path = c, .fd = m};
		c = NULL;
	}
	free(c);
	/* a description of its own (offset, O_APPEND) on the same memory */
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
	int fd = open(proc, (flags & (O_ACCMODE | O_APPEND | O_TRUNC)) | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

DIR *
sh_fs_opendir(struct sh_fs *fs, const char *path)
{
	(void)fs;
	(void)path;
	errno = EACCES;
	return NULL;
}

int
sh_fs_stat(struct sh_fs *fs, const char *path, struct stat *st, bool follow)
{
	(void)follow;
	int own = own_stream(path);
	if (own >= 0)
		return fstat(own, st) < 0 ? -errno : 0;
	if (strcmp(path, "/dev/null") == 0)
		return stat("/dev/null", st) < 0 ? -errno : 0;
	char *c;
	int r = sh_fs_canon(fs, path, !follow, &c);
	if (r < 0)
		return r;
	struct mem_file *f = find_file(c);
	if (f)
		r = fstat(f->fd, st) < 0 ? -errno : 0;
	else if (is_dir(c))
		*st = (struct stat){.st_mode = S_IFDIR | 0755, .st_nlink = 2};
	else
		r = -ENOENT;
	free(c);
	return r;
}

int
sh_fs_chdir_check(struct sh_fs *fs, const char *path, char **out)
{
	(void)fs;
	(void)path;
	(void)out;
	return -EACCES; /* the interpreter would chdir(2) the fuzzer's own process */
}

void
sh_fs_batch_forget(void)
{
}
