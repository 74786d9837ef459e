/* SPDX-License-Identifier: Apache-2.0 */
/*
 * box-sandbox-run — plays boxd's part for tests and the spawn benchmark:
 * builds a plan from simple flags, prepares what boxd prepares (runtime dir
 * with tmp/var_tmp/shm/home, mode-0000 masks, the pids/memory cgroup), hands
 * the plan to box-trampoline on fd 3, reads fd 4, and exits with the
 * workload's status (1 with the message on a setup failure).
 *
 *   box-sandbox-run [--read P] [--write P] [--read-file P] [--write-file P]
 *       [--exec P] [--deny P] [--workspace P] [--env NAME=VALUE] [--tool]
 *       [--no-contain-egress] [--gateway-port N] [--pty] [--nofile N]
 *       [--nproc N] [--pids-max N] [--memory-max BYTES] [--user NAME]
 *       [--no-require-landlock] [--no-require-seccomp] [--shell-alias FILE]
 *       [--run-box-bin DIR] [--ca-pem FILE] [--leak-fd N] [--raw-plan FILE]
 *       [--trampoline PATH] [--dump-plan FILE] [--shell] [--workload-bin PATH]
 *       [--pass-fd FD]... [--pass-fds N] [--runtime-dir DIR] [--no-validate]
 *       [--no-exec-system] -- ARGV...
 *
 * --shell builds a box-shell plan (SANDBOX_SHELL: the agent's runtime dirs);
 * each --pass-fd FD becomes the trampoline's fd 5, 6, ... (plan.pass_fds =
 * their count, or N with --pass-fds); --runtime-dir uses (and keeps) an
 * existing BASE/ID so that two sandboxes share tmp/var_tmp/dev_shm/home;
 * --no-validate sends the plan unchecked, for the trampoline to refuse;
 * --no-exec-system: plan.exec_system = false (Landlock EXECUTE only on the
 * --exec entries, as boxd plans an agent without [agent] exec_system).
 *
 * Only BOX_TEST_ABSENT and BOX_TEST_LANDLOCK_ABI pass to the trampoline's
 * environment. Test code: it trusts its command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdnoreturn.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plan_validate.h"

#define MAX_LIST 256
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static pid_t child_pid = -1;

#ifdef __SANITIZE_ADDRESS__
/*
 * A one-shot test tool that ends through die() or exec with its plan's views and strings
 * still held: what is left at its exit is not a leak worth a report (the daemons keep theirs).
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

static void
forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static noreturn void
die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static noreturn void
die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("box-sandbox-run: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static char *
xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		die("out of memory");
	return r;
}

static char *
xjoin(const char *a, const char *b)
{
	char *r;
	if (asprintf(&r, "%s/%s", a, b) < 0)
		die("out of memory");
	return r;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

static void
rm_rf(const char *path)
{
	/* Directories of mode 0000 (masks) must be made writable to descend. */
	chmod(path, 0700);
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char *p = xjoin(dir, name);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("%s: %s", p, strerror(errno));
	close(fd);
	free(p);
}

/* What /sys/fs/cgroup offers here: a v1 hierarchy directory for `ctrl`, or NULL. */
static const char *
cgroup_v1_root(const char *ctrl)
{
	static char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "/sys/fs/cgroup/%s", ctrl);
	char *tasks = xjoin(buf, "cgroup.procs");
	bool ok = access(tasks, F_OK) == 0;
	free(tasks);
	return ok ? buf : NULL;
}

static char *
cgroup_make(const char *ctrl, const char *file, unsigned long long value, const char *id)
{
	const char *root = cgroup_v1_root(ctrl);
	if (!root)
		return NULL;
	char *box = xjoin(root, "box");
	mkdir(box, 0755);
	char *dir = xjoin(box, id);
	free(box);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("%s: %s", dir, strerror(errno));
	char v[32];
	snprintf(v, sizeof(v), "%llu", value);
	write_file(dir, file, v);
	return dir;
}

static void
cgroup_remove(const char *dir)
{
	for (int i = 0; i < 200; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "box-sandbox-run: cannot remove cgroup %s: %s\n", dir, strerror(errno));
}

static int
send_plan(int sock, const uint8_t *buf, size_t len)
{
	ssize_t n = send(sock, buf, len, MSG_NOSIGNAL);
	return n == (ssize_t)len ? 0 : -1;
}

/* Relay bytes between our stdin/stdout and the pty master until it closes. */
static void
pty_relay(int master)
{
	bool in_open = true;
	for (;;) {
		struct pollfd p[2] = {{.fd = master, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
		int n = poll(p, in_open ? 2 : 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		char buf[4096];
		if (p[0].revents) {
			ssize_t r = read(master, buf, sizeof(buf));
			if (r <= 0)
				return;
			if (write(1, buf, (size_t)r) < 0)
				return;
		}
		if (in_open && p[1].revents) {
			ssize_t r = read(0, buf, sizeof(buf));
			if (r <= 0)
				in_open = false;
			else if (write(master, buf, (size_t)r) < 0)
				return;
		}
	}
}

/* Read fd 4 until EOF; returns true when a setup error arrived. */
static bool
read_status(int sock)
{
	bool failed = false;
	for (;;) {
		uint8_t buf[BOX_PLAN_BYTES_MAX];
		union {
			char c[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr a;
		} u;
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.c,
				    .msg_controllen = sizeof(u.c)};
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return failed;
		int fd = -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(&fd, CMSG_DATA(c), sizeof(int));
		Box__TrampolineStatus *s = NULL;
		char why[256];
		if (box_status_decode(buf, (size_t)n, &s, why, sizeof(why)) < 0) {
			fprintf(stderr, "box-sandbox-run: bad status message: %s\n", why);
			failed = true;
			if (fd >= 0)
				close(fd);
			continue;
		}
		switch (s->msg_case) {
		case BOX__TRAMPOLINE_STATUS__MSG_LISTENER:
			if (fd < 0)
				fprintf(stderr, "box-sandbox-run: listener message without an fd\n");
			else if (getenv("BOX_SANDBOX_RUN_VERBOSE"))
				fprintf(stderr, "box-sandbox-run: listener for 127.0.0.1:%u\n",
					s->listener->port);
			if (fd >= 0)
				close(fd); /* no gateway yet: boxd closes it */
			break;
		case BOX__TRAMPOLINE_STATUS__MSG_PTY:
			if (fd >= 0) {
				pty_relay(fd);
				close(fd);
			}
			break;
		case BOX__TRAMPOLINE_STATUS__MSG_ERROR:
			if (strcmp(s->error->step, "exec") == 0)
				fprintf(stderr, "box-sandbox-run: cannot execute: %s\n", s->error->reason);
			else
				fprintf(stderr, "box-sandbox-run: sandbox setup failed at %s: %s\n",
					s->error->step, s->error->reason);
			failed = true;
			if (fd >= 0)
				close(fd);
			break;
		case BOX__TRAMPOLINE_STATUS__MSG__NOT_SET:
		default:
			break;
		}
		box__trampoline_status__free_unpacked(s, NULL);
	}
}

struct opts {
	Box__ViewEntry *view[MAX_LIST];
	size_t n_view;
	char *deny_paths[MAX_LIST];
	size_t n_deny;
	char *env[MAX_LIST];
	size_t n_env;
	const char *workspace, *user, *shell_alias, *run_box_bin, *ca_pem, *raw_plan, *trampoline, *dump_plan;
	const char *workload_bin, *runtime_dir;
	bool tool, no_egress, pty, no_ll, no_sc, shell, no_validate, no_exec_system;
	long gateway_port, nofile, nproc, pids_max, leak_fd, n_pass_plan;
	int pass_fd[8];
	size_t n_pass;
	unsigned long long memory_max;
};

static void
add_view(struct opts *o, const char *path, Box__ViewKind kind)
{
	if (o->n_view >= MAX_LIST)
		die("too many entries");
	Box__ViewEntry *e = calloc(1, sizeof(*e));
	if (!e)
		die("out of memory");
	box__view_entry__init(e);
	e->path = xstrdup(path);
	e->kind = kind;
	o->view[o->n_view++] = e;
}

static long
num(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		die("bad number '%s'", s);
	return v;
}

int
main(int argc, char **argv)
{
	struct opts o = {.gateway_port = -1, .nofile = -1, .nproc = -1, .pids_max = -1,
			 .leak_fd = -1, .n_pass_plan = -1};
	enum {
		O_READ = 256, O_WRITE, O_READ_FILE, O_WRITE_FILE, O_EXEC, O_DENY, O_WS, O_ENV,
		O_TOOL, O_NOEGRESS, O_GW, O_PTY, O_NOFILE, O_NPROC, O_PIDS, O_MEM, O_USER, O_NOLL,
		O_NOSC, O_ALIAS, O_RBB, O_CA, O_LEAK, O_RAW, O_TRAMP, O_DUMP, O_SHELL, O_WBIN,
		O_PASSFD, O_PASSFDS, O_RTDIR, O_NOVAL, O_NOEXECSYS,
	};
	static const struct option lo[] = {
		{"read", 1, 0, O_READ},		   {"write", 1, 0, O_WRITE},
		{"read-file", 1, 0, O_READ_FILE},  {"write-file", 1, 0, O_WRITE_FILE},
		{"exec", 1, 0, O_EXEC},		   {"deny", 1, 0, O_DENY},
		{"workspace", 1, 0, O_WS},	   {"env", 1, 0, O_ENV},
		{"tool", 0, 0, O_TOOL},		   {"no-contain-egress", 0, 0, O_NOEGRESS},
		{"gateway-port", 1, 0, O_GW},	   {"pty", 0, 0, O_PTY},
		{"nofile", 1, 0, O_NOFILE},	   {"nproc", 1, 0, O_NPROC},
		{"pids-max", 1, 0, O_PIDS},	   {"memory-max", 1, 0, O_MEM},
		{"user", 1, 0, O_USER},		   {"no-require-landlock", 0, 0, O_NOLL},
		{"no-require-seccomp", 0, 0, O_NOSC}, {"shell-alias", 1, 0, O_ALIAS},
		{"run-box-bin", 1, 0, O_RBB},	   {"ca-pem", 1, 0, O_CA},
		{"leak-fd", 1, 0, O_LEAK},	   {"raw-plan", 1, 0, O_RAW},
		{"trampoline", 1, 0, O_TRAMP},	   {"dump-plan", 1, 0, O_DUMP},
		{"shell", 0, 0, O_SHELL},	   {"workload-bin", 1, 0, O_WBIN},
		{"pass-fd", 1, 0, O_PASSFD},	   {"pass-fds", 1, 0, O_PASSFDS},
		{"runtime-dir", 1, 0, O_RTDIR},	   {"no-validate", 0, 0, O_NOVAL},
		{"no-exec-system", 0, 0, O_NOEXECSYS},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (c) {
		case O_READ: add_view(&o, optarg, BOX__VIEW_KIND__VIEW_READ); break;
		case O_WRITE: add_view(&o, optarg, BOX__VIEW_KIND__VIEW_WRITE); break;
		case O_READ_FILE: add_view(&o, optarg, BOX__VIEW_KIND__VIEW_READ_FILE); break;
		case O_WRITE_FILE: add_view(&o, optarg, BOX__VIEW_KIND__VIEW_WRITE_FILE); break;
		case O_EXEC: add_view(&o, optarg, BOX__VIEW_KIND__VIEW_EXEC); break;
		case O_DENY:
			add_view(&o, optarg, BOX__VIEW_KIND__VIEW_DENY);
			break;
		case O_WS: o.workspace = optarg; break;
		case O_ENV:
			if (o.n_env >= MAX_LIST)
				die("too many variables");
			o.env[o.n_env++] = optarg;
			break;
		case O_TOOL: o.tool = true; break;
		case O_NOEGRESS: o.no_egress = true; break;
		case O_GW: o.gateway_port = num(optarg); break;
		case O_PTY: o.pty = true; break;
		case O_NOFILE: o.nofile = num(optarg); break;
		case O_NPROC: o.nproc = num(optarg); break;
		case O_PIDS: o.pids_max = num(optarg); break;
		case O_MEM: o.memory_max = (unsigned long long)num(optarg); break;
		case O_USER: o.user = optarg; break;
		case O_NOLL: o.no_ll = true; break;
		case O_NOSC: o.no_sc = true; break;
		case O_ALIAS: o.shell_alias = optarg; break;
		case O_RBB: o.run_box_bin = optarg; break;
		case O_CA: o.ca_pem = optarg; break;
		case O_LEAK: o.leak_fd = num(optarg); break;
		case O_RAW: o.raw_plan = optarg; break;
		case O_TRAMP: o.trampoline = optarg; break;
		case O_DUMP: o.dump_plan = optarg; break;
		case O_SHELL: o.shell = true; break;
		case O_WBIN: o.workload_bin = optarg; break;
		case O_PASSFD:
			if (o.n_pass >= ELEMENTSOF(o.pass_fd))
				die("too many --pass-fd");
			o.pass_fd[o.n_pass++] = (int)num(optarg);
			break;
		case O_PASSFDS: o.n_pass_plan = num(optarg); break;
		case O_RTDIR: o.runtime_dir = optarg; break;
		case O_NOVAL: o.no_validate = true; break;
		case O_NOEXECSYS: o.no_exec_system = true; break;
		default: die("usage: see the comment at the top of box-sandbox-run.c");
		}
	}
	if (optind >= argc)
		die("no command after --");

	/* The owner: the caller, or --user (root only). */
	struct passwd *pw = o.user ? getpwnam(o.user) : getpwuid(geteuid());
	if (!pw)
		die("no passwd entry for %s", o.user ? o.user : "the caller");
	if (o.user && geteuid() != 0)
		die("--user needs root");
	uid_t uid = pw->pw_uid;
	gid_t gid = pw->pw_gid;
	char *home = xstrdup(pw->pw_dir);
	char *name = xstrdup(pw->pw_name);
	gid_t groups[BOX_PLAN_GROUPS_MAX];
	int ngroups = BOX_PLAN_GROUPS_MAX;
	if (getgrouplist(name, gid, groups, &ngroups) < 0)
		ngroups = 0;

	/* Runtime dir BASE/ID with the box-managed directories, owned by the owner. */
	/* BOX_SANDBOX_RUN_BASE (default /tmp): where runtime dirs go, so tests can clean up. */
	const char *rtbase = getenv("BOX_SANDBOX_RUN_BASE") ? getenv("BOX_SANDBOX_RUN_BASE") : "/tmp";
	char *rtdir;
	if (o.runtime_dir) {
		rtdir = xstrdup(o.runtime_dir); /* shared with another sandbox, kept */
		if (mkdir(rtdir, 0700) < 0 && errno != EEXIST)
			die("%s: %s", rtdir, strerror(errno));
	} else {
		if (asprintf(&rtdir, "%s/box-sandbox-run.XXXXXX", rtbase) < 0)
			die("out of memory");
		if (!mkdtemp(rtdir))
			die("mkdtemp: %s", strerror(errno));
	}
	const char *id = rtdir + strlen(rtdir) - 6;
	char *sub[4] = {xjoin(rtdir, "tmp"), xjoin(rtdir, "var_tmp"), xjoin(rtdir, "dev_shm"),
			xjoin(rtdir, "home")};
	for (int i = 0; i < 4; i++)
		if (mkdir(sub[i], 0700) < 0 && !(o.runtime_dir && errno == EEXIST))
			die("%s: %s", sub[i], strerror(errno));
	char *maskdir = xjoin(rtdir, "masks.XXXXXX");
	if (!mkdtemp(maskdir) || chmod(maskdir, 0711) < 0)
		die("%s: %s", maskdir, strerror(errno));
	for (size_t i = 0; i < o.n_view; i++) {
		Box__ViewEntry *e = o.view[i];
		if (e->kind != BOX__VIEW_KIND__VIEW_DENY)
			continue;
		struct stat st;
		if (lstat(e->path, &st) < 0)
			die("deny %s: %s", e->path, strerror(errno));
		char mname[32];
		snprintf(mname, sizeof(mname), "m%zu", i);
		e->mask = xjoin(maskdir, mname);
		if (S_ISDIR(st.st_mode) ? mkdir(e->mask, 0) < 0
					: close(open(e->mask, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0)) < 0)
			die("mask %s: %s", e->mask, strerror(errno));
		chmod(e->mask, 0);
	}
	if (geteuid() == 0 && uid != 0) {
		if (chown(rtdir, uid, gid) < 0)
			die("chown: %s", strerror(errno));
		for (int i = 0; i < 4; i++)
			if (chown(sub[i], uid, gid) < 0)
				die("chown: %s", strerror(errno));
	}

	/* The plan. */
	Box__Plan plan = BOX__PLAN__INIT;
	Box__Owner owner = BOX__OWNER__INIT;
	Box__RuntimeDirs rt = BOX__RUNTIME_DIRS__INIT;
	Box__Limits lim = BOX__LIMITS__INIT;
	uint32_t g32[BOX_PLAN_GROUPS_MAX];
	for (int i = 0; i < ngroups; i++)
		g32[i] = groups[i];
	owner.uid = uid;
	owner.gid = gid;
	owner.groups = g32;
	owner.n_groups = (size_t)ngroups;
	owner.name = name;
	owner.home = home;
	plan.kind = o.tool ? BOX__SANDBOX_KIND__SANDBOX_TOOL
		  : o.shell ? BOX__SANDBOX_KIND__SANDBOX_SHELL
			    : BOX__SANDBOX_KIND__SANDBOX_AGENT;
	plan.workload_bin = (char *)o.workload_bin;
	long n_pass_plan = o.n_pass_plan >= 0 ? o.n_pass_plan : (long)o.n_pass;
	if (n_pass_plan) {
		plan.has_pass_fds = 1;
		plan.pass_fds = (uint32_t)n_pass_plan;
	}
	plan.owner = &owner;
	plan.contain_egress = !o.no_egress;
	if (o.gateway_port >= 0) {
		plan.has_gateway_port = 1;
		plan.gateway_port = (uint32_t)o.gateway_port;
	}
	plan.view = o.view;
	plan.n_view = o.n_view;
	rt.dir = rtdir;
	if (!o.tool) {
		rt.tmp = sub[0];
		rt.var_tmp = sub[1];
		rt.dev_shm = sub[2];
		bool home_granted = false;
		for (size_t i = 0; i < o.n_view; i++) {
			size_t l = strlen(o.view[i]->path);
			if (o.view[i]->kind != BOX__VIEW_KIND__VIEW_DENY &&
			    strncmp(home, o.view[i]->path, l) == 0 && (home[l] == '/' || home[l] == 0))
				home_granted = true;
		}
		if (!home_granted && strcmp(home, "/") != 0)
			rt.home = sub[3];
	}
	rt.shell_alias = (char *)o.shell_alias;
	rt.run_box_bin = (char *)o.run_box_bin;
	rt.ca_pem = (char *)o.ca_pem;
	plan.runtime = &rt;
	char cwd[PATH_MAX];
	if (!o.workspace && !getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));
	plan.workspace = (char *)(o.workspace ? o.workspace : cwd);
	plan.argv = argv + optind;
	plan.n_argv = (size_t)(argc - optind);

	/* Environment: what --env gives, HOME and PATH unless given. */
	char *envv[MAX_LIST + 2];
	size_t ne = 0;
	bool have_home = false, have_path = false;
	for (size_t i = 0; i < o.n_env; i++) {
		if (strncmp(o.env[i], "HOME=", 5) == 0)
			have_home = true;
		if (strncmp(o.env[i], "PATH=", 5) == 0)
			have_path = true;
		envv[ne++] = o.env[i];
	}
	char *home_env = NULL;
	if (!have_home) {
		if (asprintf(&home_env, "HOME=%s", home) < 0)
			die("out of memory");
		envv[ne++] = home_env;
	}
	if (!have_path)
		envv[ne++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	plan.env = envv;
	plan.n_env = ne;

	/* Limits, with the mechanism boxd would pick (docs/sandbox.md). */
	char *cg[2];
	size_t ncg = 0;
	if (o.nofile >= 0) {
		lim.has_nofile = 1;
		lim.nofile = (uint64_t)o.nofile;
	}
	if (o.nproc >= 0) {
		lim.has_nproc = 1;
		lim.nproc = (uint64_t)o.nproc;
	}
	if (o.pids_max >= 0) {
		lim.has_pids_max = 1;
		lim.pids_max = (uint64_t)o.pids_max;
		char *d = geteuid() == 0 ? cgroup_make("pids", "pids.max", (unsigned long long)o.pids_max, id)
					 : NULL;
		if (d)
			cg[ncg++] = d;
		else if (uid != 0 && !lim.has_nproc) {
			lim.has_nproc = 1;
			lim.nproc = (uint64_t)o.pids_max;
		} else if (uid == 0 || geteuid() == 0)
			die("pids_max: no mechanism on this host");
	}
	if (o.memory_max) {
		lim.has_memory_max = 1;
		lim.memory_max = o.memory_max;
		char *d = geteuid() == 0 ? cgroup_make("memory", "memory.limit_in_bytes", o.memory_max, id)
					 : NULL;
		if (!d)
			die("memory_max: no mechanism on this host");
		cg[ncg++] = d;
	}
	lim.cgroups = cg;
	lim.n_cgroups = ncg;
	if (lim.has_nofile || lim.has_nproc || lim.has_pids_max || lim.has_memory_max)
		plan.limits = &lim;
	plan.require_landlock = !o.no_ll;
	plan.require_seccomp = !o.no_sc;
	if (o.no_exec_system) {
		plan.has_exec_system = 1;
		plan.exec_system = false;
	}
	plan.has_pty_fds = o.pty;
	plan.pty_fds = o.pty ? 7 : 0; /* fds 0-2 all get the slave */

	uint8_t *buf;
	size_t len;
	if (o.raw_plan) {
		int fd = open(o.raw_plan, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("%s: %s", o.raw_plan, strerror(errno));
		buf = malloc(BOX_PLAN_BYTES_MAX * 2);
		ssize_t n = buf ? read(fd, buf, BOX_PLAN_BYTES_MAX * 2) : -1;
		if (n < 0)
			die("%s: %s", o.raw_plan, strerror(errno));
		len = (size_t)n;
		close(fd);
	} else {
		char why[256];
		if (!o.no_validate && box_plan_validate(&plan, why, sizeof(why)) < 0)
			die("the plan is invalid: %s", why);
		len = box__plan__get_packed_size(&plan);
		buf = malloc(len);
		if (!buf)
			die("out of memory");
		box__plan__pack(&plan, buf);
	}
	if (o.dump_plan) {
		int fd = open(o.dump_plan, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
			die("%s: %s", o.dump_plan, strerror(errno));
		close(fd);
		free(buf);
		for (size_t i = 0; i < ncg; i++)
			cgroup_remove(cg[i]);
		printf("%s\n", rtdir); /* kept: a replay of the plan needs it */
		return 0;
	}

	int psock[2], ssock[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, psock) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ssock) < 0)
		die("socketpair: %s", strerror(errno));
	int sndbuf = BOX_PLAN_BYTES_MAX * 4;
	setsockopt(psock[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));

	char *tpath;
	if (o.trampoline)
		tpath = xstrdup(o.trampoline);
	else if (getenv("BOX_BIN"))
		tpath = xjoin(getenv("BOX_BIN"), "box-trampoline");
	else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			die("readlink: %s", strerror(errno));
		self[n] = 0;
		*strrchr(self, '/') = 0;
		tpath = xjoin(self, "box-trampoline");
	}

	struct sigaction sa = {.sa_handler = forward};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	child_pid = fork();
	if (child_pid < 0)
		die("fork: %s", strerror(errno));
	if (child_pid == 0) {
		/* The fds to pass go out of the way first: they may sit on 3, 4, 5... */
		int high[ELEMENTSOF(o.pass_fd)];
		for (size_t i = 0; i < o.n_pass; i++)
			if ((high[i] = fcntl(o.pass_fd[i], F_DUPFD_CLOEXEC, 100)) < 0)
				_exit(2);
		if (dup2(psock[1], 3) < 0 || dup2(ssock[1], 4) < 0)
			_exit(2);
		for (size_t i = 0; i < o.n_pass; i++)
			if (dup2(high[i], 5 + (int)i) < 0)
				_exit(2);
		if (o.leak_fd >= 0) {
			int fd = open("/dev/null", O_RDONLY); /* leaked on purpose: no CLOEXEC */
			if (fd < 0 || dup2(fd, (int)o.leak_fd) < 0)
				_exit(2);
		}
		char *tenv[3];
		size_t n = 0;
		static char a[256], l[64];
		if (getenv("BOX_TEST_ABSENT")) {
			snprintf(a, sizeof(a), "BOX_TEST_ABSENT=%s", getenv("BOX_TEST_ABSENT"));
			tenv[n++] = a;
		}
		if (getenv("BOX_TEST_LANDLOCK_ABI")) {
			snprintf(l, sizeof(l), "BOX_TEST_LANDLOCK_ABI=%s", getenv("BOX_TEST_LANDLOCK_ABI"));
			tenv[n++] = l;
		}
		tenv[n] = NULL;
		char *targv[] = {"box-trampoline", NULL};
		execve(tpath, targv, tenv);
		fprintf(stderr, "box-sandbox-run: %s: %s\n", tpath, strerror(errno));
		_exit(2);
	}
	close(psock[1]);
	close(ssock[1]);
	/* As boxd does: the passed fds are the sandbox's alone now. */
	for (size_t i = 0; i < o.n_pass; i++)
		close(o.pass_fd[i]);
	if (send_plan(psock[0], buf, len) < 0)
		fprintf(stderr, "box-sandbox-run: sending the plan: %s\n", strerror(errno));
	close(psock[0]);
	free(buf);
	bool failed = read_status(ssock[0]);
	close(ssock[0]);

	int status, code;
	while (waitpid(child_pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (failed && code == 0)
		code = 1;

	for (size_t i = 0; i < ncg; i++) {
		cgroup_remove(cg[i]);
		free(cg[i]);
	}
	if (o.runtime_dir)
		rm_rf(maskdir);
	else
		rm_rf(rtdir);
	for (size_t i = 0; i < o.n_view; i++) {
		free(o.view[i]->path);
		free(o.view[i]->mask);
		free(o.view[i]);
	}
	for (int i = 0; i < 4; i++)
		free(sub[i]);
	free(maskdir);
	free(tpath);
	free(home);
	free(name);
	free(home_env);
	free(rtdir);
	return code;
}
