/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_recheck.c — the real box-recheck binary (BOX_BIN/box-recheck) on
 * hand-built RecheckRequests for a temporary tree, its replies read as boxd
 * reads them (the recheck table, then boxd/recheck_parse.c).
 *
 * Each case runs the helper as boxd does (fd 3 = a SOCK_SEQPACKET, an empty
 * environment) with the current user as the owner, and compares the whole
 * answer: status, every problem (line, section, key, message), every record
 * "KIND PATH" in order, the number of fds and what they are (fstat: the
 * state dir is the owner's 0700 directory, lock a regular file,
 * policy/ an O_PATH directory, decisions.jsonl and agent.log O_APPEND, each
 * the very file of the tree). Bad channels (garbage, a reply instead of a
 * request, no request, fd 3 not a socket) make it exit non-zero without a
 * reply; a second request queued behind the first is never read (one reply,
 * exit 0). As root, the owner boxtest too: the state dir becomes boxtest's and
 * a grant boxtest cannot read is refused.
 * boxd's parser is also given crafted replies box-recheck does not send (bad
 * records, caps, fds that do not fit).
 * BOX_RECHECK_WRITE_CORPUS=DIR writes every reply received (and crafted), packed again as
 * box-recheck sent it, as a seed of test/fuzz/fuzz_recheck_reply.c.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd/boxd.h"
#include "cleanup.h"
#include "elfinterp.h"
#include "boxd/recheck_parse.h"
#include "ipc.h"
#include "proto/proto_recheck.h"
#include "tap.h"

static char root[64];
static char sh_canon[PATH_MAX];
static unsigned corpus_seq;
static char env_canon[PATH_MAX];
static char loader_canon[PATH_MAX]; /* the ELF loader of the host's programs, box's own too */
static const char *helper_extra_env; /* one more BOX_TEST_* hook for the next run, or NULL */

/* ------------------------------------------------------------------ */
/* the tree                                                            */

static const char *
P(const char *rel)
{
	static char bufs[16][512];
	static unsigned k;
	char *b = bufs[k++ % 16];
	snprintf(b, 512, "%s%s", root, rel);
	return b;
}

static void
must(int r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "test_recheck: %s: %s\n", what, strerror(errno));
		exit(2);
	}
}

static void
write_file(const char *rel, const char *text, mode_t mode)
{
	int fd = open(P(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	must(fd, rel);
	must((int)write(fd, text, strlen(text)), rel);
	close(fd);
	must(chmod(P(rel), mode), rel);
}

static void
make_socket(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(fd, "socket");
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	must(bind(fd, (struct sockaddr *)&a, sizeof(a)), path);
	close(fd);
}

/*
 * ROOT/ (0755)  bin/agent (#!/bin/sh)  bin/plain (no #!)  ro/ ro/sub/  ro-file
 *   link -> ro   ws/ ws/.ssh/ ws/real-aws/ ws/.aws -> real-aws
 *   hl/secret hl/secret2 (one file, two names)  dd/ (a directory to deny)
 *   sock/ (a socket agent.sock)  boxd.sock (outside every grant)
 */
static void
tree_make(void)
{
	snprintf(root, sizeof(root), "/tmp/box-J1-recheck-XXXXXX");
	if (!mkdtemp(root))
		must(-1, "mkdtemp");
	must(chmod(root, 0755), "chmod root");
	const char *dirs[] = { "/bin", "/ro", "/ro/sub", "/ws", "/ws/.ssh", "/ws/real-aws", "/hl",
			       "/dd", "/sock" };
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		must(mkdir(P(dirs[i]), 0755), dirs[i]);
	write_file("/bin/agent", "#!/bin/sh\nexit 0\n", 0755);
	write_file("/bin/plain", "\x7f" "ELF not really\n", 0755);
	write_file("/bin/via-env", "#!/usr/bin/env sh\nexit 0\n", 0755);
	write_file("/ws/.netrc", "machine x\n", 0600);
	must(mkdir(P("/many"), 0755), "mkdir many");
	for (int i = 0; i < 22; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "/many/s%02d.sock", i);
		make_socket(P(rel));
	}
	must(mkdir(P("/slow"), 0755), "mkdir slow");
	for (int i = 0; i < 100; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "/slow/f%02d", i);
		write_file(rel, "x\n", 0644);
	}
	write_file("/ro-file", "data\n", 0644);
	write_file("/hl/secret", "s\n", 0600);
	must(link(P("/hl/secret"), P("/hl/secret2")), "link");
	must(symlink(P("/ro"), P("/link")), "symlink");
	must(symlink("real-aws", P("/ws/.aws")), "symlink aws");
	make_socket(P("/sock/agent.sock"));
	make_socket(P("/boxd.sock"));
	if (!realpath("/bin/sh", sh_canon) || !realpath("/usr/bin/env", env_canon))
		must(-1, "realpath /bin/sh, /usr/bin/env");
	/* This test is built as box-recheck is: its PT_INTERP is the loader box-recheck reports. */
	char interp[PATH_MAX];
	int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (self < 0 || elf_interp_fd(self, interp, sizeof(interp)) < 0 ||
	    !realpath(interp, loader_canon))
		must(-1, "the ELF loader of /proc/self/exe");
	close(self);
}

static void
tree_remove(void)
{
	char cmd[128];
	if (!root[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "test_recheck: cannot remove %s\n", root);
}

/* ------------------------------------------------------------------ */
/* the request                                                         */

/* A request under construction; every string points into static storage or P(). */
struct req {
	Box__CfgBox box;
	Box__CfgStr name;
	Box__CfgAgent agent;
	Box__CfgArgv cmd;
	char *argv[2];
	Box__CfgPath ws;
	Box__CfgFilesystem fs;
	Box__CfgPath paths[6][4];
	Box__CfgPath *lists[6][4];
	Box__Caller caller;
	Box__RecheckOwner owner;
	char owner_name[64];
	Box__RecheckRequest q;
	char *cands[4];
	char *socks[2];
	char state[256];
	char ws_path[256];
	char cmd_path[256];
};

enum { L_READ, L_WRITE, L_READ_FILE, L_WRITE_FILE, L_EXEC, L_DENY };

static void
req_init(struct req *r, const char *state_rel, uid_t uid, gid_t gid, const char *owner)
{
	memset(r, 0, sizeof(*r));
	box__cfg_box__init(&r->box);
	box__cfg_str__init(&r->name);
	r->name.value = (char *)"j1-recheck";
	r->name.line = 2;
	r->box.line = 1;
	r->box.name = &r->name;
	box__cfg_agent__init(&r->agent);
	r->agent.line = 3;
	box__cfg_argv__init(&r->cmd);
	snprintf(r->cmd_path, sizeof(r->cmd_path), "%s", P("/bin/agent"));
	r->argv[0] = r->cmd_path;
	r->cmd.argv = r->argv;
	r->cmd.n_argv = 1;
	r->cmd.line = 4;
	r->agent.command = &r->cmd;
	box__cfg_path__init(&r->ws);
	snprintf(r->ws_path, sizeof(r->ws_path), "%s", P("/ws"));
	r->ws.path = r->ws_path;
	r->ws.line = 5;
	r->agent.workspace = &r->ws;
	box__cfg_filesystem__init(&r->fs);
	r->fs.line = 6;
	r->agent.filesystem = &r->fs;
	box__caller__init(&r->caller);
	r->caller.cwd = r->ws_path;
	box__recheck_owner__init(&r->owner);
	r->owner.uid = uid;
	r->owner.gid = gid;
	snprintf(r->owner_name, sizeof(r->owner_name), "%s", owner);
	r->owner.name = r->owner_name;
	box__recheck_request__init(&r->q);
	r->q.box = &r->box;
	r->q.agent = &r->agent;
	r->q.caller = &r->caller;
	r->q.owner = &r->owner;
	snprintf(r->state, sizeof(r->state), "%s", P(state_rel));
	r->q.state_dir = r->state;
}

/* Add `path` (strdup'd for the life of the test: a few bytes) to list `l` at `line`. */
static void
req_add(struct req *r, int l, const char *path, uint32_t line)
{
	Box__CfgPath ***lists[] = { &r->fs.read, &r->fs.write, &r->fs.read_file,
				    &r->fs.write_file, &r->fs.exec, &r->fs.deny };
	size_t *ns[] = { &r->fs.n_read, &r->fs.n_write, &r->fs.n_read_file, &r->fs.n_write_file,
			 &r->fs.n_exec, &r->fs.n_deny };
	size_t n = *ns[l];
	Box__CfgPath *e = &r->paths[l][n];

	box__cfg_path__init(e);
	e->path = strdup(path);
	e->line = line;
	r->lists[l][n] = e;
	*lists[l] = r->lists[l];
	*ns[l] = n + 1;
}

static void
req_free_paths(struct req *r)
{
	for (int l = 0; l < 6; l++)
		for (int i = 0; i < 4; i++)
			free(r->paths[l][i].path);
}

/* ------------------------------------------------------------------ */
/* running the helper                                                  */

struct answer {
	int exit_status;          /* of the helper: WEXITSTATUS, or 128+signal */
	bool replied;
	int recv_status;          /* of the first receive: 1 (a message) or -errno */
	struct box_ipc_msg m;     /* the RecheckReply, validated */
	const Box__RecheckReply *rep;
	char err[4096];           /* its stderr */
};

static const char *
helper_path(void)
{
	static char p[PATH_MAX];
	const char *bin = getenv("BOX_BIN");
	snprintf(p, sizeof(p), "%s/box-recheck", bin && *bin ? bin : "build/bin");
	return p;
}

/* The reply as box-recheck sent it (re-packed: the same bytes), a fuzz seed. */
static int
write_seed(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	const char *dir = userdata;
	char path[PATH_MAX];
	uint8_t head = (uint8_t)(n_fds | (n_fds == 6 ? 8 : 0));
	snprintf(path, sizeof(path), "%s/reply-%02u", dir, corpus_seq++);
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fwrite(&head, 1, 1, f);
	fwrite(pkt, 1, len, f);
	fclose(f);
	return 0;
}

static void
record_seed(const struct answer *a)
{
	const char *dir = getenv("BOX_RECHECK_WRITE_CORPUS");
	if (!dir || !a->replied)
		return;
	(void)box_ipc_pack(&box_proto_recheck, BOX__MSG_TYPE__MSG_RECHECK_REPLY, 0, a->m.msg,
			   a->m.fds, a->m.n_fds, write_seed, (void *)dir);
}

/*
 * Run box-recheck with `fd3` as its fd 3 (our end `mine`, or -1), after
 * `send` wrote what it wants into `mine`; read its reply (if any) and wait.
 */
static void
run_helper(struct answer *a, int fd3, int mine, int (*send)(int fd, void *arg), void *arg)
{
	char errpath[] = "/tmp/box-J1-recheck-err-XXXXXX";
	int errfd = mkostemp(errpath, O_CLOEXEC);
	char *envp[] = { (char *)"ASAN_OPTIONS=detect_leaks=0", (char *)helper_extra_env, NULL };
	char *argv[] = { (char *)"box-recheck", NULL };
	int status;

	memset(a, 0, sizeof(*a));
	a->m = (struct box_ipc_msg)BOX_IPC_MSG_INIT;
	must(errfd, "mkostemp");
	unlink(errpath);
	if (mine >= 0 && send && send(mine, arg) < 0)
		must(-1, "sending to box-recheck");
	pid_t pid = fork();
	must(pid, "fork");
	if (pid == 0) {
		/* fd 3 last, from above the range dup2 writes to (dup2 clears CLOEXEC) */
		int chan = fd3 >= 0 ? fcntl(fd3, F_DUPFD_CLOEXEC, 10) : -1;
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if ((fd3 >= 0 && chan < 0) || devnull < 0 || dup2(devnull, 0) < 0 ||
		    dup2(devnull, 1) < 0 || dup2(errfd, 2) < 0 ||
		    (chan >= 0 ? dup2(chan, 3) : (close(3), 0)) < 0)
			_exit(120);
		execve(helper_path(), argv, envp);
		_exit(121);
	}
	if (fd3 >= 0)
		close(fd3);
	if (mine >= 0) {
		struct box_ipc_chan *c =
			box_ipc_chan_new(mine, &box_proto_recheck, BOX_RECHECK_ROLE_RECHECK);
		uint32_t allowed = BOX__MSG_TYPE__MSG_RECHECK_REPLY;
		if (!c || box_ipc_chan_set_state(c, BOX_RECHECK_CHECKING) < 0 ||
		    box_ipc_chan_allow(c, &allowed, 1) < 0)
			must(-1, "channel");
		int r = box_ipc_recv_wait(c, &a->m, 30000);
		a->recv_status = r;
		if (r == 1) {
			a->replied = true;
			a->rep = (const Box__RecheckReply *)a->m.msg;
			/* one exchange: nothing after the reply but the end of the channel */
			struct box_ipc_msg more = BOX_IPC_MSG_INIT;
			int r2 = box_ipc_recv_wait(c, &more, 30000);
			CHECK(r2 == -ECONNRESET || r2 == -EPROTO);
			box_ipc_msg_done(&more);
		}
		box_ipc_chan_free(c);
		close(mine);
	}
	must(waitpid(pid, &status, 0), "waitpid");
	a->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	ssize_t n = pread(errfd, a->err, sizeof(a->err) - 1, 0);
	a->err[n > 0 ? n : 0] = '\0';
	close(errfd);
	if (a->exit_status != 0 && a->err[0])
		printf("# box-recheck said: %s", a->err);
	record_seed(a);
}

static int
send_request(int fd, void *arg)
{
	const struct req *r = arg;
	return box_ipc_send(fd, &box_proto_recheck, BOX__MSG_TYPE__MSG_RECHECK_REQUEST, 1,
			    &r->q.base, NULL, 0);
}

static void
ask(struct answer *a, struct req *r)
{
	int sv[2];
	must(box_ipc_socketpair(sv, false), "socketpair");
	run_helper(a, sv[1], sv[0], send_request, r);
}

static void
answer_done(struct answer *a)
{
	box_ipc_msg_done(&a->m);
}

/* ------------------------------------------------------------------ */
/* comparing answers                                                   */

/* The records, exactly and in order; the list ends with NULL. */
static void
check_records(const struct answer *a, ...)
{
	va_list ap;
	size_t i = 0;
	const char *want;

	if (!a->rep)
		return;
	va_start(ap, a);
	while ((want = va_arg(ap, const char *))) {
		if (i >= a->rep->n_disclosure) {
			printf("#   record %zu missing: \"%s\"\n", i, want);
			tap_failed_checks++;
		} else if (strcmp(a->rep->disclosure[i], want) != 0) {
			printf("#   record %zu is \"%s\", expected \"%s\"\n", i,
			       a->rep->disclosure[i], want);
			tap_failed_checks++;
		}
		i++;
	}
	va_end(ap);
	for (; i < a->rep->n_disclosure; i++) {
		printf("#   unexpected record %zu: \"%s\"\n", i, a->rep->disclosure[i]);
		tap_failed_checks++;
	}
}

static const char *
rec(const char *kind, const char *path)
{
	static char bufs[16][600];
	static unsigned k;
	char *b = bufs[k++ % 16];
	snprintf(b, 600, "%s %s", kind, path);
	return b;
}

/* The one problem of a refusal: line, section, key, message. */
static void
check_refused(const struct answer *a, uint32_t line, const char *section, const char *key,
	      const char *message)
{
	CHECK_INT(a->exit_status, 0);
	CHECK(a->replied);
	if (!a->rep)
		return;
	CHECK_INT(a->rep->status, BOX__REPLY_STATUS__REPLY_REFUSED);
	CHECK_INT(a->rep->n_fds, 0);
	CHECK_INT(a->m.n_fds, 0);
	CHECK_INT(a->rep->n_problems, 1);
	if (a->rep->n_problems < 1)
		return;
	const Box__Problem *p = a->rep->problems[0];
	CHECK_INT(p->has_line ? p->line : 0, line);
	CHECK_STR(p->section, section);
	CHECK_STR(key ? p->key : (p->key ? p->key : "(none)"), key ? key : "(none)");
	CHECK_STR(p->message, message);
}

static void
check_same_file(int fd, const char *path, mode_t type)
{
	struct stat a, b;
	CHECK(fd >= 0 && fstat(fd, &a) == 0);
	CHECK(lstat(path, &b) == 0);
	CHECK(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	CHECK((a.st_mode & S_IFMT) == type);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

/* An OK answer with its state files: what each fd is, and boxd's parse of it all. */
static void
check_state_fds(const struct answer *a, const struct req *r, uid_t owner, bool detach)
{
	char p[600];
	unsigned want = detach ? 6 : 5;

	CHECK_INT(a->exit_status, 0);
	CHECK(a->replied);
	if (!a->rep)
		return;
	CHECK_INT(a->rep->status, BOX__REPLY_STATUS__REPLY_OK);
	CHECK_INT(a->rep->n_problems, 0);
	for (size_t i = 0; i < a->rep->n_problems; i++)
		printf("#   problem: %s\n", a->rep->problems[i]->message);
	CHECK_INT(a->rep->n_fds, want);
	CHECK_INT(a->m.n_fds, want);
	if (a->m.n_fds != want)
		return;
	struct stat st;
	check_same_file(a->m.fds[0], r->state, S_IFDIR);
	CHECK(fstat(a->m.fds[0], &st) == 0 && st.st_uid == owner && (st.st_mode & 0777) == 0700);
	snprintf(p, sizeof(p), "%s/lock", r->state);
	check_same_file(a->m.fds[1], p, S_IFREG);
	CHECK((fcntl(a->m.fds[1], F_GETFL) & O_ACCMODE) == O_RDWR);
	snprintf(p, sizeof(p), "%s/policy", r->state);
	check_same_file(a->m.fds[2], p, S_IFDIR);
	CHECK(fcntl(a->m.fds[2], F_GETFL) & O_PATH);
	CHECK(fstat(a->m.fds[2], &st) == 0 && st.st_uid == owner && (st.st_mode & 0777) == 0700);
	snprintf(p, sizeof(p), "%s/decisions.jsonl", r->state);
	check_same_file(a->m.fds[3], p, S_IFREG);
	int fl = fcntl(a->m.fds[3], F_GETFL);
	CHECK((fl & O_APPEND) && (fl & O_ACCMODE) == O_WRONLY);
	CHECK(fstat(a->m.fds[3], &st) == 0 && st.st_uid == owner && (st.st_mode & 0777) == 0600);
	/* ca.pem: the owner's, write-only, not truncated (a second run must not empty it). */
	snprintf(p, sizeof(p), "%s/ca.pem", r->state);
	check_same_file(a->m.fds[4], p, S_IFREG);
	fl = fcntl(a->m.fds[4], F_GETFL);
	CHECK((fl & O_ACCMODE) == O_WRONLY && !(fl & O_APPEND));
	CHECK(fstat(a->m.fds[4], &st) == 0 && st.st_uid == owner);
	if (detach) {
		snprintf(p, sizeof(p), "%s/agent.log", r->state);
		check_same_file(a->m.fds[5], p, S_IFREG);
		fl = fcntl(a->m.fds[5], F_GETFL);
		CHECK((fl & O_APPEND) && (fl & O_ACCMODE) == O_WRONLY);
	}
}

/* boxd's parse of an answer (recheck_parse.c) into `res`; its return value. */
static int
parse(struct answer *a, bool detach, struct recheck_result *res)
{
	memset(res, 0, sizeof(*res));
	res->state_dirfd = res->lock_fd = res->log_fd = res->policy_dirfd = res->decisions_fd = -1;
	res->ca_fd = -1;
	if (!a->rep)
		return -ENODATA;
	return recheck_parse_reply(res, a->rep, &a->m, detach);
}

/* ------------------------------------------------------------------ */
/* cases                                                               */

static void
good_request(struct req *r, const char *state_rel, bool detach)
{
	struct passwd *pw = getpwuid(getuid());
	req_init(r, state_rel, getuid(), getgid(), pw ? pw->pw_name : "me");
	r->q.detach = detach;
	req_add(r, L_READ, P("/ro"), 7);
	req_add(r, L_WRITE, P("/ws"), 8);
	req_add(r, L_READ_FILE, P("/ro-file"), 9);
	req_add(r, L_EXEC, P("/bin"), 10);
	req_add(r, L_DENY, P("/dd"), 11);
	/* box's own dirs / credential stores: .ssh exists in the grant, .aws behind a symlink */
	r->cands[0] = (char *)P("/ws/.ssh");
	r->cands[1] = (char *)P("/ws/.aws");
	r->cands[2] = (char *)P("/ws/.gnupg"); /* absent: no mask */
	r->q.mask_candidates = r->cands;
	r->q.n_mask_candidates = 3;
	r->socks[0] = (char *)P("/boxd.sock");
	r->q.boxd_sockets = r->socks;
	r->q.n_boxd_sockets = 1;
}

static void
test_good_grant(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;

	good_request(&r, "/state-good", false);
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	check_records(&a, rec("denydir", P("/dd")), rec("workspace", P("/ws")),
		      rec("argv0", P("/bin/agent")), rec("program", P("/bin/agent")),
		      rec("interp", sh_canon), rec("loader", loader_canon), rec("maskdir", P("/ws/.ssh")),
		      rec("maskdir", P("/ws/real-aws")), rec("maskvia", P("/ws/.aws")), NULL);
	/* boxd's parse: the same answer in struct recheck_result, the fds moved into it */
	CHECK_INT(parse(&a, false, &res), 0);
	CHECK_STR(res.argv0, P("/bin/agent"));
	CHECK_STR(res.program, P("/bin/agent"));
	CHECK_STR(res.workspace, P("/ws"));
	CHECK_INT(res.n_interpreters, 1);
	CHECK_INT(res.n_deny_dirs, 1);
	CHECK_INT(res.n_masks, 2);
	if (res.n_masks == 2) {
		CHECK(res.mask_is_dir[0] && res.mask_is_dir[1]);
		CHECK(res.mask_via[0] == NULL);
		CHECK_STR(res.mask_via[1], P("/ws/.aws"));
	}
	CHECK_INT(res.n_sockets, 0); /* ROOT/sock is not granted: not scanned */
	CHECK(res.state_dirfd >= 0 && res.lock_fd >= 0 && res.policy_dirfd >= 0 &&
	      res.decisions_fd >= 0 && res.ca_fd >= 0 && res.log_fd == -1);
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);
}

static void
test_good_detach(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;

	good_request(&r, "/state-detach/nested", true);
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), true);
	CHECK_INT(parse(&a, true, &res), 0);
	CHECK(res.log_fd >= 0);
	recheck_result_clear(&res);
	answer_done(&a);
	/* boxd refuses a detach answer with 4 fds: the same helper asked without detach */
	req_free_paths(&r);
	good_request(&r, "/state-detach/nested", false);
	ask(&a, &r);
	CHECK_INT(parse(&a, true, &res), -EPROTO);
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);
}

static void
test_missing_grant(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;
	char msg[600];

	good_request(&r, "/state-missing", false);
	req_add(&r, L_READ, P("/nope"), 12);
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s does not exist", P("/nope"));
	check_refused(&a, 12, "agent.filesystem", "read", msg);
	/* boxd takes the refusal: problems, no fds; the state dir is not even made */
	CHECK_INT(parse(&a, false, &res), 0);
	CHECK_INT(res.n_problems, 1);
	CHECK(res.state_dirfd == -1 && res.decisions_fd == -1);
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);
}

static void
test_symlinked_grant(void)
{
	struct req r;
	struct answer a;
	char msg[600];

	good_request(&r, "/state-symlink", false);
	req_add(&r, L_READ, P("/link"), 13);
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s is a symbolic link", P("/link"));
	check_refused(&a, 13, "agent.filesystem", "read", msg);
	answer_done(&a);
	req_free_paths(&r);
}

static void
test_noncanonical_grant(void)
{
	struct req r;
	struct answer a;
	char msg[600];

	good_request(&r, "/state-canon", false);
	req_add(&r, L_WRITE, P("/link/sub"), 14);
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s is not canonical (it is %s)", P("/link/sub"),
		 P("/ro/sub"));
	check_refused(&a, 14, "agent.filesystem", "write", msg);
	answer_done(&a);
	req_free_paths(&r);
}

static void
test_deny_hardlink(void)
{
	struct req r;
	struct answer a;
	char msg[600];

	/* a file with two names, denied by one name */
	good_request(&r, "/state-hl1", false);
	req_add(&r, L_READ, P("/hl"), 15);
	req_add(&r, L_DENY, P("/hl/secret"), 16);
	ask(&a, &r);
	snprintf(msg, sizeof(msg),
		 "%s has 2 hard links: a deny mask hides one name, not the others",
		 P("/hl/secret"));
	check_refused(&a, 16, "agent.filesystem", "deny", msg);
	answer_done(&a);
	req_free_paths(&r);

	/* ... and under a denied directory */
	good_request(&r, "/state-hl2", false);
	req_add(&r, L_DENY, P("/hl"), 17);
	ask(&a, &r);
	snprintf(msg, sizeof(msg),
		 "%s holds %s, which has 2 hard links: a deny mask hides one name, not the others",
		 P("/hl"), P("/hl/secret"));
	check_refused(&a, 17, "agent.filesystem", "deny", msg);
	answer_done(&a);
	req_free_paths(&r);
}

static void
test_socket_in_grant(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;
	char msg[800];

	good_request(&r, "/state-sock", false);
	req_add(&r, L_READ, P("/sock"), 18);
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	check_records(&a, rec("denydir", P("/dd")), rec("workspace", P("/ws")),
		      rec("argv0", P("/bin/agent")), rec("program", P("/bin/agent")),
		      rec("interp", sh_canon), rec("loader", loader_canon), rec("maskdir", P("/ws/.ssh")),
		      rec("maskdir", P("/ws/real-aws")), rec("maskvia", P("/ws/.aws")),
		      rec("socket", P("/sock/agent.sock")), NULL);
	CHECK_INT(parse(&a, false, &res), 0);
	CHECK_INT(res.n_sockets, 1);
	if (res.n_sockets == 1)
		CHECK_STR(res.sockets[0], P("/sock/agent.sock"));
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);

	/* another name of boxd's socket inside a grant is refused */
	must(link(P("/boxd.sock"), P("/sock/boxd-again.sock")), "link boxd.sock");
	good_request(&r, "/state-sock2", false);
	req_add(&r, L_READ, P("/sock"), 19);
	ask(&a, &r);
	snprintf(msg, sizeof(msg),
		 "%s is a hard link of boxd's socket %s: the box could drive boxd; remove it or name something beside it",
		 P("/sock/boxd-again.sock"), P("/boxd.sock"));
	check_refused(&a, 19, "agent.filesystem", "read", msg);
	answer_done(&a);
	req_free_paths(&r);
	unlink(P("/sock/boxd-again.sock"));
}

static void
test_program(void)
{
	struct req r;
	struct answer a;
	char msg[600];
	const char *owner;

	good_request(&r, "/state-prog1", false);
	owner = r.owner_name;
	snprintf(r.cmd_path, sizeof(r.cmd_path), "%s", P("/bin/missing"));
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s does not exist for the box owner (%s)", P("/bin/missing"),
		 owner);
	check_refused(&a, 4, "agent", "command", msg);
	answer_done(&a);

	/* a bare name on the default PATH (never the caller's) */
	snprintf(r.cmd_path, sizeof(r.cmd_path), "j1-no-such-agent");
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "j1-no-such-agent is not found on PATH as the box owner (%s)",
		 owner);
	check_refused(&a, 4, "agent", "command", msg);
	answer_done(&a);

	/* not executable */
	snprintf(r.cmd_path, sizeof(r.cmd_path), "%s", P("/ro-file"));
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s is not an executable file for the box owner (%s)",
		 P("/ro-file"), owner);
	check_refused(&a, 4, "agent", "command", msg);
	answer_done(&a);

	/* a program without #!: no interpreter record */
	snprintf(r.cmd_path, sizeof(r.cmd_path), "%s", P("/bin/plain"));
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	check_records(&a, rec("denydir", P("/dd")), rec("workspace", P("/ws")),
		      rec("argv0", P("/bin/plain")), rec("program", P("/bin/plain")),
		      rec("loader", loader_canon), rec("maskdir", P("/ws/.ssh")),
		      rec("maskdir", P("/ws/real-aws")),
		      rec("maskvia", P("/ws/.aws")), NULL);
	answer_done(&a);
	req_free_paths(&r);
}

/*
 * A stdio [mcp.NAME]: its program resolved as the owner ("mcp.NAME PATH",
 * canonical, after the agent's records), or refused naming its command.
 */
static void
test_mcp_program(void)
{
	struct req r;
	struct answer a;
	char msg[600];
	Box__CfgMcp m = BOX__CFG_MCP__INIT;
	Box__CfgMcp *list[1] = { &m };
	Box__CfgArgv cmd = BOX__CFG_ARGV__INIT;
	char prog[256], *argv[2] = { prog, NULL };

	good_request(&r, "/state-mcp1", false);
	snprintf(r.cmd_path, sizeof(r.cmd_path), "%s", P("/bin/plain"));
	m.name = (char *)"srv";
	m.line = 9;
	m.type = BOX__MCP_TYPE__MCP_TYPE_STDIO;
	snprintf(prog, sizeof(prog), "%s", P("/bin/plain"));
	cmd.argv = argv;
	cmd.n_argv = 1;
	cmd.line = 11;
	m.command = &cmd;
	r.q.mcp = list;
	r.q.n_mcp = 1;
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	check_records(&a, rec("denydir", P("/dd")), rec("workspace", P("/ws")),
		      rec("argv0", P("/bin/plain")), rec("program", P("/bin/plain")),
		      rec("loader", loader_canon), rec("mcp.srv", P("/bin/plain")),
		      rec("maskdir", P("/ws/.ssh")),
		      rec("maskdir", P("/ws/real-aws")), rec("maskvia", P("/ws/.aws")), NULL);
	answer_done(&a);

	snprintf(prog, sizeof(prog), "%s", P("/ro-file"));
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s is not an executable file for the box owner (%s)",
		 P("/ro-file"), r.owner_name);
	check_refused(&a, 11, "mcp.srv", "command", msg);
	answer_done(&a);
	req_free_paths(&r);
}

/* #!/usr/bin/env NAME: env and NAME (found on the default PATH) are both interpreters */
static void
test_env_interpreter(void)
{
	struct req r;
	struct answer a;
	char sh_found[PATH_MAX];

	/* sh on the default PATH /usr/local/bin:/usr/bin:/bin, canonical */
	if (!realpath(access("/usr/local/bin/sh", X_OK) == 0 ? "/usr/local/bin/sh" : "/usr/bin/sh",
		      sh_found))
		snprintf(sh_found, sizeof(sh_found), "%s", sh_canon);
	good_request(&r, "/state-env", false);
	snprintf(r.cmd_path, sizeof(r.cmd_path), "%s", P("/bin/via-env"));
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	check_records(&a, rec("denydir", P("/dd")), rec("workspace", P("/ws")),
		      rec("argv0", P("/bin/via-env")), rec("program", P("/bin/via-env")),
		      rec("interp", env_canon), rec("loader", loader_canon), rec("interp", sh_found),
		      rec("maskdir", P("/ws/.ssh")), rec("maskdir", P("/ws/real-aws")),
		      rec("maskvia", P("/ws/.aws")), NULL);
	answer_done(&a);
	req_free_paths(&r);
}

/* A credential file inside a grant: maskfile; boxd keeps it as a file mask. */
static void
test_mask_file(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;

	good_request(&r, "/state-maskfile", false);
	r.cands[0] = (char *)P("/ws/.netrc");
	r.q.n_mask_candidates = 1;
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	check_records(&a, rec("denydir", P("/dd")), rec("workspace", P("/ws")),
		      rec("argv0", P("/bin/agent")), rec("program", P("/bin/agent")),
		      rec("interp", sh_canon), rec("loader", loader_canon),
		      rec("maskfile", P("/ws/.netrc")), NULL);
	CHECK_INT(parse(&a, false, &res), 0);
	CHECK_INT(res.n_masks, 1);
	if (res.n_masks == 1)
		CHECK(!res.mask_is_dir[0] && !res.mask_via[0]);
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);
}

/* More sockets than a reply names: RECHECK_SOCKETS_SHOWN of them and "sockets /TOTAL". */
static void
test_many_sockets(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;
	size_t named = 0;

	good_request(&r, "/state-many", false);
	req_add(&r, L_READ, P("/many"), 20);
	ask(&a, &r);
	check_state_fds(&a, &r, getuid(), false);
	for (size_t i = 0; a.rep && i < a.rep->n_disclosure; i++)
		if (strncmp(a.rep->disclosure[i], "socket ", 7) == 0) {
			CHECK(strncmp(a.rep->disclosure[i] + 7, P("/many/s"), strlen(P("/many/s"))) == 0);
			named++;
		}
	CHECK_INT(named, RECHECK_SOCKETS_SHOWN);
	CHECK(a.rep && a.rep->n_disclosure > 0 &&
	      strcmp(a.rep->disclosure[a.rep->n_disclosure - 1], "sockets /22") == 0);
	CHECK_INT(parse(&a, false, &res), 0);
	CHECK_INT(res.n_sockets, RECHECK_SOCKETS_SHOWN);
	CHECK_INT(res.sockets_total, 22);
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);
}

/*
 * The walks' time bound (BOX_WALK_TIME_MS, the clock read every 64 entries):
 * BOX_TEST_SCAN_DELAY_MS slows each file, 64 of them take > 2 s: "scancut /time".
 */
static void
test_scan_cut(void)
{
	struct req r;
	struct answer a;
	struct recheck_result res;

	good_request(&r, "/state-cut", false);
	req_add(&r, L_READ, P("/slow"), 21);
	helper_extra_env = "BOX_TEST_SCAN_DELAY_MS=45";
	ask(&a, &r);
	helper_extra_env = NULL;
	check_state_fds(&a, &r, getuid(), false);
	CHECK(a.rep && a.rep->n_disclosure > 0 &&
	      strcmp(a.rep->disclosure[a.rep->n_disclosure - 1], "scancut /time") == 0);
	CHECK_INT(parse(&a, false, &res), 0);
	CHECK_STR(res.scan_cut, "time");
	recheck_result_clear(&res);
	answer_done(&a);
	req_free_paths(&r);
}

/* ---- bad channels: exit non-zero, no reply ---- */

static int
send_garbage(int fd, void *arg)
{
	static const char junk[] = "\x08\x01\x12\x04junk-not-an-envelope";
	return send(fd, junk, sizeof(junk), 0) < 0 ? -errno : 0;
}

static int
send_reply_instead(int fd, void *arg)
{
	Box__RecheckReply rep = BOX__RECHECK_REPLY__INIT;
	rep.status = BOX__REPLY_STATUS__REPLY_OK;
	return box_ipc_send(fd, &box_proto_recheck, BOX__MSG_TYPE__MSG_RECHECK_REPLY, 1, &rep.base,
			    NULL, 0);
}

static int
send_nothing(int fd, void *arg)
{
	return shutdown(fd, SHUT_WR) < 0 ? -errno : 0;
}

static void
check_no_reply(const struct answer *a)
{
	CHECK(!a->replied);
	CHECK(a->exit_status != 0);
}

static void
test_bad_channel(void)
{
	struct answer a;
	int sv[2];

	must(box_ipc_socketpair(sv, false), "socketpair");
	run_helper(&a, sv[1], sv[0], send_garbage, NULL);
	check_no_reply(&a);
	CHECK(strstr(a.err, "reading the RecheckRequest: Bad message") != NULL);
	answer_done(&a);

	/* the wrong type (the helper's own reply): refused by the table before decoding */
	must(box_ipc_socketpair(sv, false), "socketpair");
	run_helper(&a, sv[1], sv[0], send_reply_instead, NULL);
	check_no_reply(&a);
	CHECK(strstr(a.err, "reading the RecheckRequest: Operation not permitted") != NULL);
	answer_done(&a);

	must(box_ipc_socketpair(sv, false), "socketpair");
	run_helper(&a, sv[1], sv[0], send_nothing, NULL);
	check_no_reply(&a);
	answer_done(&a);

	/* fd 3 a pipe, not boxd's SOCK_SEQPACKET */
	int pfd[2];
	must(pipe2(pfd, O_CLOEXEC), "pipe");
	run_helper(&a, pfd[0], -1, NULL, NULL);
	close(pfd[1]);
	CHECK(a.exit_status != 0);
	CHECK(strstr(a.err, "fd 3 is not a SOCK_SEQPACKET socket") != NULL);
	answer_done(&a);

	/* no fd 3 at all */
	run_helper(&a, -1, -1, NULL, NULL);
	CHECK(a.exit_status != 0);
	answer_done(&a);
}

/*
 * Two requests queued: one exchange only. The helper reads the first, answers
 * it and exits 0 without reading (or acting on) the second; nothing follows
 * its reply. The kernel reports the unread request to us as ECONNRESET, which
 * may overtake the queued reply (AF_UNIX checks the socket error first), so
 * the reply itself is checked only when it arrived.
 */
static int
send_two(int fd, void *arg)
{
	int r = send_request(fd, arg);
	return r < 0 ? r : send_request(fd, arg);
}

static void
test_second_request(void)
{
	struct req r;
	struct answer a;
	int sv[2];

	good_request(&r, "/state-two", false);
	must(box_ipc_socketpair(sv, false), "socketpair");
	run_helper(&a, sv[1], sv[0], send_two, &r);
	CHECK_INT(a.exit_status, 0);
	CHECK(a.recv_status == 1 || a.recv_status == -ECONNRESET);
	if (a.replied) /* run_helper checked that nothing follows it */
		check_state_fds(&a, &r, getuid(), false);
	answer_done(&a);
	req_free_paths(&r);
}

/* ---- boxd's parser on replies box-recheck does not send ---- */

/*
 * boxd's parse of a crafted reply (`recs`, NULL-ended; `n_fds` /dev/null
 * fds; one problem when `refused`). Also written as a fuzz seed.
 */
static int
parse_crafted(const char *const *recs, unsigned n_fds, bool refused, bool detach,
	      struct recheck_result *res)
{
	Box__RecheckReply rep = BOX__RECHECK_REPLY__INIT;
	struct answer a;
	Box__Problem *prob = NULL;
	size_t n = 0;

	while (recs[n])
		n++;
	memset(&a, 0, sizeof(a));
	a.m = (struct box_ipc_msg)BOX_IPC_MSG_INIT;
	rep.status = refused ? BOX__REPLY_STATUS__REPLY_REFUSED : BOX__REPLY_STATUS__REPLY_OK;
	rep.disclosure = (char **)recs;
	rep.n_disclosure = n;
	rep.n_fds = n_fds;
	if (refused) {
		prob = problem_new(7, "agent.filesystem", "read", "crafted refusal");
		rep.problems = &prob;
		rep.n_problems = 1;
	}
	for (unsigned i = 0; i < n_fds; i++)
		a.m.fds[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
	a.m.n_fds = n_fds;
	a.m.msg = &rep.base;
	a.rep = &rep;
	a.replied = true;
	record_seed(&a);
	int r = parse(&a, detach, res);
	for (unsigned i = 0; i < n_fds; i++)
		if (a.m.fds[i] >= 0)
			close(a.m.fds[i]);
	problem_free(prob);
	return r;
}

static void
test_parse_crafted(void)
{
	struct recheck_result res;
	const char *ok[] = { "argv0 /usr/bin/a", "program /usr/bin/a", "workspace /w", NULL };
	char many_socks[RECHECK_SOCKETS_SHOWN + 5][32];
	char many_masks[RECHECK_MASKS_MAX + 5][32];
	const char *v[RECHECK_MASKS_MAX + 10];
	size_t k;

#define EXPECT(want, n_fds, refused, detach, ...)                                      \
	do {                                                                           \
		const char *recs_[] = { __VA_ARGS__, NULL };                           \
		CHECK_INT(parse_crafted(recs_, n_fds, refused, detach, &res), want);   \
		recheck_result_clear(&res);                                            \
	} while (0)

	/* the minimum boxd starts with, and its fds */
	CHECK_INT(parse_crafted(ok, 5, false, false, &res), 0);
	CHECK(res.state_dirfd >= 0 && res.decisions_fd >= 0 && res.ca_fd >= 0 && res.log_fd == -1);
	recheck_result_clear(&res);
	CHECK_INT(parse_crafted(ok, 6, false, true, &res), 0);
	CHECK(res.log_fd >= 0 && res.ca_fd >= 0);
	recheck_result_clear(&res);
	/* fds that do not fit: none without problems, 5 for a detach, 6 without, the old 4 */
	CHECK_INT(parse_crafted(ok, 0, false, false, &res), -EPROTO);
	recheck_result_clear(&res);
	CHECK_INT(parse_crafted(ok, 5, false, true, &res), -EPROTO);
	recheck_result_clear(&res);
	CHECK_INT(parse_crafted(ok, 6, false, false, &res), -EPROTO);
	recheck_result_clear(&res);
	CHECK_INT(parse_crafted(ok, 4, false, false, &res), -EPROTO);
	recheck_result_clear(&res);
	/* a refusal: no fds, the records kept for the message */
	CHECK_INT(parse_crafted(ok, 0, true, false, &res), 0);
	CHECK(res.n_problems == 1 && res.state_dirfd == -1);
	recheck_result_clear(&res);
	/* no program, workspace or argv0 in an OK reply */
	EXPECT(-EPROTO, 5, false, false, "argv0 /a", "workspace /w");
	EXPECT(-EPROTO, 5, false, false, "program /a", "workspace /w");
	EXPECT(-EPROTO, 5, false, false, "argv0 /a", "program /a");
	/* bad records */
	EXPECT(-EBADMSG, 0, true, false, "argv0 /a", "argv0 /b");
	EXPECT(-EBADMSG, 0, true, false, "program relative");
	EXPECT(-EBADMSG, 0, true, false, "workspace /w/../x");
	EXPECT(-EBADMSG, 0, true, false, "interp /bin/*");
	EXPECT(-EBADMSG, 0, true, false, "argv0");
	EXPECT(-EBADMSG, 0, true, false, "socketx /a");
	EXPECT(-EBADMSG, 0, true, false, "maskvia /a");
	EXPECT(-EBADMSG, 0, true, false, "maskdir /a", "maskvia /b", "maskvia /c");
	/* a loader outside the system runtime (the view binds nothing else for it), twice */
	EXPECT(-EBADMSG, 0, true, false, "loader /home/me/ld.so");
	EXPECT(-EBADMSG, 0, true, false, "loader /usr/lib/ld.so", "loader /usr/lib/ld.so");
	EXPECT(0, 5, false, false, "argv0 /usr/bin/a", "program /usr/bin/a", "workspace /w",
	       "loader /usr/lib/ld.so", "loader /lib/other-ld.so");
	EXPECT(-EBADMSG, 0, true, false, "sockets /0");
	EXPECT(-EBADMSG, 0, true, false, "sockets /x");
	EXPECT(-EBADMSG, 0, true, false, "scancut /never");
	EXPECT(-EBADMSG, 0, true, false, "scancut /time", "scancut /entries");
	EXPECT(0, 0, true, false, "scancut /entries", "sockets /99", "denydir /d", "interp /i");
	/* caps: RECHECK_SOCKETS_SHOWN sockets, RECHECK_MASKS_MAX masks */
	for (k = 0; k < RECHECK_SOCKETS_SHOWN + 1; k++) {
		snprintf(many_socks[k], sizeof(many_socks[k]), "socket /s%zu", k);
		v[k] = many_socks[k];
	}
	v[RECHECK_SOCKETS_SHOWN] = NULL;
	CHECK_INT(parse_crafted(v, 0, true, false, &res), 0);
	CHECK_INT(res.n_sockets, RECHECK_SOCKETS_SHOWN);
	recheck_result_clear(&res);
	v[RECHECK_SOCKETS_SHOWN] = many_socks[RECHECK_SOCKETS_SHOWN];
	v[RECHECK_SOCKETS_SHOWN + 1] = NULL;
	CHECK_INT(parse_crafted(v, 0, true, false, &res), -EBADMSG);
	recheck_result_clear(&res);
	for (k = 0; k < RECHECK_MASKS_MAX + 1; k++) {
		snprintf(many_masks[k], sizeof(many_masks[k]), "%s /m%zu",
			 k % 2 ? "maskfile" : "maskdir", k);
		v[k] = many_masks[k];
	}
	v[RECHECK_MASKS_MAX] = NULL;
	CHECK_INT(parse_crafted(v, 0, true, false, &res), 0);
	CHECK_INT(res.n_masks, RECHECK_MASKS_MAX);
	CHECK(res.n_masks == RECHECK_MASKS_MAX && res.mask_is_dir[0] && !res.mask_is_dir[1]);
	recheck_result_clear(&res);
	v[RECHECK_MASKS_MAX] = many_masks[RECHECK_MASKS_MAX];
	v[RECHECK_MASKS_MAX + 1] = NULL;
	CHECK_INT(parse_crafted(v, 0, true, false, &res), -EBADMSG);
	recheck_result_clear(&res);
#undef EXPECT
}

/* ---- as boxtest (root only) ---- */

static void
test_as_boxtest(void)
{
	struct passwd *pw = getpwnam("boxtest");
	struct req r;
	struct answer a;
	char msg[600];

	if (getuid() != 0) {
		SKIP("not root: cannot run box-recheck for another owner");
		return;
	}
	if (!pw) {
		SKIP("no boxtest user");
		return;
	}
	/* boxtest's own corner of the tree, and a root-only directory */
	must(mkdir(P("/bt"), 0755), "mkdir bt");
	must(chown(P("/bt"), pw->pw_uid, pw->pw_gid), "chown bt");
	must(mkdir(P("/private"), 0700), "mkdir private");

	req_init(&r, "/bt/state", pw->pw_uid, pw->pw_gid, "boxtest");
	req_add(&r, L_READ, P("/ro"), 7);
	snprintf(r.ws_path, sizeof(r.ws_path), "%s", P("/bt"));
	ask(&a, &r);
	check_state_fds(&a, &r, pw->pw_uid, false);
	check_records(&a, rec("workspace", P("/bt")), rec("argv0", P("/bin/agent")),
		      rec("program", P("/bin/agent")), rec("interp", sh_canon),
		      rec("loader", loader_canon), NULL);
	answer_done(&a);

	/* what boxtest cannot read is refused, though root (boxd) could */
	req_add(&r, L_READ, P("/private"), 8);
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "the box owner (boxtest) cannot read %s: Permission denied",
		 P("/private"));
	check_refused(&a, 8, "agent.filesystem", "read", msg);
	answer_done(&a);
	req_free_paths(&r);

	/* a state dir that is not the owner's (root's, for owner boxtest) */
	must(mkdir(P("/state-root"), 0700), "mkdir state-root");
	req_init(&r, "/state-root", pw->pw_uid, pw->pw_gid, "boxtest");
	snprintf(r.ws_path, sizeof(r.ws_path), "%s", P("/bt"));
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "cannot open %s: Permission denied", P("/state-root"));
	check_refused(&a, 1, "box", "state_dir", msg);
	answer_done(&a);

	/* root as the owner, a state dir of boxtest's: not the owner's */
	req_init(&r, "/bt/state", 0, 0, "root");
	ask(&a, &r);
	snprintf(msg, sizeof(msg), "%s is owned by uid %u, not by the box owner (root)",
		 P("/bt/state"), (unsigned)pw->pw_uid);
	check_refused(&a, 1, "box", "state_dir", msg);
	answer_done(&a);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (access(helper_path(), X_OK) < 0) {
		printf("not ok - test_recheck: %s: %s (set BOX_BIN)\n", helper_path(),
		       strerror(errno));
		return 1;
	}
	tree_make();
	RUN(test_good_grant);
	RUN(test_good_detach);
	RUN(test_missing_grant);
	RUN(test_symlinked_grant);
	RUN(test_noncanonical_grant);
	RUN(test_deny_hardlink);
	RUN(test_socket_in_grant);
	RUN(test_program);
	RUN(test_env_interpreter);
	RUN(test_mcp_program);
	RUN(test_mask_file);
	RUN(test_many_sockets);
	RUN(test_scan_cut);
	RUN(test_bad_channel);
	RUN(test_second_request);
	RUN(test_parse_crafted);
	RUN(test_as_boxtest);
	tree_remove();
	return tap_done();
}
