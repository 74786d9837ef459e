/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host_boxd.c — the box-shell daemon's host-program back end (sh->host_run;
 * docs/box-shell.8.md "host programs").
 *
 * The interpreter calls it for a program found on PATH once fs:read (exec)
 * and shell:spawn permitted it. The sandbox is chosen here, by the tables
 * ShellInit gave: the [tool.NAME] whose program is the same canonical file
 * and whose fixed arguments are a prefix of the invocation's arguments (the
 * longest prefix wins), else, for the host python3 when the config has no
 * [tool.python3] (ShellInit.host_python), a supervised sandbox with the
 * agent's grants (SpawnRequest.python), an exec entry holding it or not; else
 * an agent exec entry the program lies under; else status 126 with a message naming the program
 * and the [tool.NAME] or exec line to add. boxd re-checks
 * the choice against its own config: this file names a table, it never
 * defines what the sandbox gets.
 *
 * The request goes to the main process over this process's own host channel
 * (attached through the session's control socket, daemon.h; one per process,
 * so concurrent pipeline stages never read each other's replies) as a
 * SpawnRequest with this process's fds 0-2 (the pipeline's real fds: output
 * streams, a closed reader ends the writer with SIGPIPE), the argv, the
 * cwd and only the variables this invocation assigned; main relays it to
 * boxd. SpawnReply ok=false: its message, status 126. Then SpawnExit: the
 * status (exit code or 128+signal). A broken channel: 125 (box failed).
 * Signals to the tool (Ctrl-C, timeout, hangup) are the main process's
 * business: it asks boxd by spawn id; this process just keeps waiting.
 *
 * Trusts: the main process's replies, validated by the protocol table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon.h"
#include "fdutil.h"
#include "ipc.h"
#include "proto_shell.h"
#include "host.h"
#include "sh.h"

struct shd_host {
	int ctl_fd;
	int fd;
	struct box_ipc_chan *chan;
	pid_t pid; /* who made the channel */
	uint64_t next_id;
};

struct shd_host *
shd_host_new(int ctl_fd)
{
	struct shd_host *h = xmalloc(sizeof(*h));
	*h = (struct shd_host){ .ctl_fd = ctl_fd, .fd = -1, .next_id = 1 };
	return h;
}

/* ---- the tables ------------------------------------------------------------------ */

const Box__ShellTool *
shd_tool_match(const char *program_path, int argc, char *const *argv)
{
	const Box__ShellInit *init = shd_box.init;
	const Box__ShellTool *best = NULL;
	if (!init)
		return NULL;
	for (size_t i = 0; i < init->n_tools; i++) {
		const Box__ShellTool *t = init->tools[i];
		if (strcmp(t->program, program_path) != 0 || t->n_fixed_args > (size_t)(argc - 1))
			continue;
		size_t k = 0;
		while (k < t->n_fixed_args && strcmp(t->fixed_args[k], argv[k + 1]) == 0)
			k++;
		if (k < t->n_fixed_args)
			continue;
		if (!best || t->n_fixed_args > best->n_fixed_args)
			best = t;
	}
	return best;
}

bool
shd_exec_entry_match(const char *program_path)
{
	const Box__ShellInit *init = shd_box.init;
	for (size_t i = 0; init && i < init->n_exec_entries; i++) {
		const char *e = init->exec_entries[i];
		size_t l = strlen(e);
		while (l > 1 && e[l - 1] == '/')
			l--;
		if (strncmp(program_path, e, l) == 0 &&
		    (program_path[l] == '\0' || program_path[l] == '/' || l == 1))
			return true;
	}
	return false;
}

static bool
is_python(const char *name, const char *program_path)
{
	const char *b = strrchr(name, '/');
	b = b ? b + 1 : name;
	const char *pb = strrchr(program_path, '/');
	pb = pb ? pb + 1 : program_path;
	return strcmp(b, "python3") == 0 || strcmp(b, "python") == 0 ||
	       strncmp(pb, "python", 6) == 0;
}

/* The host python3, run supervised with the agent's grants (no [tool.python3]; an exec entry or not)? */
static bool
host_python_match(const char *program_path)
{
	const Box__ShellInit *init = shd_box.init;
	return init && init->host_python && !init->python_tool &&
	       strcmp(program_path, init->host_python) == 0;
}

/* The 126 message for a permitted program no table selects. */
static void
say_no_table(const char *name, const char *program_path)
{
	const char *b = strrchr(program_path, '/');
	b = b ? b + 1 : program_path;
	bi_flush();
	if (is_python(name, program_path) && !shd_box.init->python_tool)
		dprintf(2,
			"box-shell: %s: no [tool.python3] in the box's config, and %s is not the "
			"host python3 (%s), which runs supervised with the agent's grants: add "
			"[tool.python3] with command = \"%s\"\n",
			name, program_path,
			shd_box.init->host_python ? shd_box.init->host_python : "none",
			program_path);
	else
		dprintf(2,
			"box-shell: %s: %s is no box tool: add [tool.%s] with command = \"%s\", or "
			"\"%s\" to [agent.filesystem] exec, to the box's config\n",
			name, program_path, b, program_path, program_path);
}

/* For type and command -V: a host program as box would run it (malloc'd). */
static char *
describe_host(const char *name, const char *path)
{
	char *canon = realpath(path, NULL);
	const char *pp = canon ? canon : path;
	char *argv[2] = { (char *)name, NULL };
	const Box__ShellTool *t = shd_tool_match(pp, 1, argv);
	const Box__ShellTool *with_args = NULL;
	for (size_t i = 0; !t && shd_box.init && i < shd_box.init->n_tools; i++)
		if (strcmp(shd_box.init->tools[i]->program, pp) == 0)
			with_args = shd_box.init->tools[i];
	char *s = NULL;
	int n;
	if (t)
		n = asprintf(&s, "%s is a box tool (tool.%s): %s", name, t->name, path);
	else if (with_args)
		n = asprintf(&s, "%s is a box tool (tool.%s) when run as %s %s...: %s", name,
			     with_args->name, name, with_args->fixed_args[0], path);
	else if (host_python_match(pp))
		n = asprintf(&s, "%s is %s (the host python3, supervised with the agent's grants: "
				 "no [tool.python3])", name, path);
	else if (shd_exec_entry_match(pp))
		n = asprintf(&s, "%s is %s (a host program under an exec entry: the agent's grants)",
			     name, path);
	else
		n = asprintf(&s, "%s is %s, which box does not run (no [tool] or exec entry)", name,
			     path);
	free(canon);
	return n < 0 ? NULL : s;
}

/*
 * For `command -v` and `which`: 1 a host program box runs (a tool, an exec
 * entry), 0 one it would refuse (126).
 */
static int
host_runnable(const char *name, const char *path)
{
	char *canon = realpath(path, NULL);
	const char *pp = canon ? canon : path;
	int ok = shd_exec_entry_match(pp) || host_python_match(pp);
	for (size_t i = 0; !ok && shd_box.init && i < shd_box.init->n_tools; i++)
		ok = strcmp(shd_box.init->tools[i]->program, pp) == 0;
	(void)name;
	free(canon);
	return ok;
}

const struct sh_host_ops shd_host_ops = {
	.commands = sh_own_commands,
	.host_runnable = host_runnable,
	.describe_host = describe_host,
};

/* ---- the channel to the main process ------------------------------------------- */

static void
chan_drop(struct shd_host *h)
{
	box_ipc_chan_freep(&h->chan);
	h->fd = safe_close(h->fd);
}

static int
chan_ready(struct shd_host *h)
{
	if (h->chan && h->pid == getpid())
		return 0;
	chan_drop(h);
	int sv[2];
	if (box_ipc_socketpair(sv, false) < 0)
		return -errno;
	/* Far from the fds scripts redirect (daemon.h), or none (decide_policyd.c's reason). */
	int hi = fd_dup_cloexec(sv[0], SHD_FD_PRIVATE_MIN);
	close(sv[0]);
	if (hi < 0) {
		close(sv[1]);
		return hi;
	}
	sv[0] = hi;
	int r = shd_ctl_send_fd(h->ctl_fd, SHD_CTL_HOST, sv[1]);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	h->fd = sv[0];
	h->pid = getpid();
	/* This process is box-shell on it, the main process plays boxd. */
	h->chan = box_ipc_chan_new(h->fd, &box_proto_shell, BOX_SHELL_ROLE_BOXD);
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_SPAWN_REPLY,
					  BOX__MSG_TYPE__MSG_SPAWN_EXIT };
	if (!h->chan || box_ipc_chan_set_state(h->chan, BOX_SHELL_SERVING) < 0 ||
	    box_ipc_chan_allow(h->chan, types, 2) < 0) {
		chan_drop(h);
		return -ENOMEM;
	}
	return 0;
}

static int
wait_for(struct shd_host *h, uint32_t type, uint64_t id, struct box_ipc_msg *m)
{
	int r;
	do
		r = box_ipc_recv_wait(h->chan, m, -1);
	while (r == -EINTR);
	if (r < 0)
		return r;
	uint64_t got = type == BOX__MSG_TYPE__MSG_SPAWN_REPLY
			       ? ((const Box__SpawnReply *)m->msg)->spawn_id
			       : ((const Box__SpawnExit *)m->msg)->spawn_id;
	if (m->type != type || got != id) {
		box_ipc_msg_done(m);
		return -EBADMSG;
	}
	return 0;
}

int
shd_host_check(const char *name, const char *program_path, int argc, char *const *argv)
{
	if (shd_tool_match(program_path, argc, argv) || shd_exec_entry_match(program_path) ||
	    host_python_match(program_path))
		return 0;
	say_no_table(name, program_path);
	return 126;
}

int
shd_host_run(struct sh_shell *sh, const struct sh_host_request *r)
{
	struct shd_host *h = sh->host_ctx;
	/* the interpreter asked shd_host_check before the decisions; the choice is made here */
	const Box__ShellTool *tool = shd_tool_match(r->program_path, r->argc, r->argv);
	if (!tool && shd_host_check(r->name, r->program_path, r->argc, r->argv) != 0)
		return 126;
	/*
	 * The decisions made in process (its shell:spawn among them) reach box-policyd's log
	 * before the program starts (docs/box-policy.5.md, "Decisions without a round trip").
	 */
	(void)sh_decider_flush(sh->decider);
	int k = chan_ready(h);
	if (k < 0) {
		dprintf(2, "box-shell: %s: cannot reach the box's supervisor: %s\n", r->name,
			strerror(-k));
		return 125;
	}
	/* A closed stdio fd goes as /dev/null (the tool gets three, as any process). */
	int fds[3], nullfd = -1;
	for (int i = 0; i < 3; i++) {
		fds[i] = i;
		if (fcntl(i, F_GETFD) < 0) {
			if (nullfd < 0)
				nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
			fds[i] = nullfd;
		}
	}
	size_t n_env = 0;
	while (r->assigned && r->assigned[n_env])
		n_env++;
	Box__SpawnRequest req = BOX__SPAWN_REQUEST__INIT;
	uint64_t id = h->next_id++;
	req.spawn_id = id;
	req.tool = tool ? tool->name : NULL;
	/*
	 * no table: the host python3, supervised (shd_host_check let it through), even
	 * when an exec entry holds it: with the agent's grants it never runs unsupervised
	 */
	req.has_python = req.python = !tool && host_python_match(r->program_path);
	req.program_path = (char *)r->program_path;
	/* argv[0]: the name the program sees (as typed, or exec -a/-l's); boxd matches the path */
	char *argv0_saved = r->argv[0];
	if (r->argv0)
		r->argv[0] = (char *)r->argv0;
	req.argv = r->argv;
	req.n_argv = (size_t)r->argc;
	req.env = r->clear_env ? NULL : r->assigned;
	req.n_env = r->clear_env ? 0 : n_env;
	req.has_clear_env = r->clear_env;
	req.clear_env = r->clear_env;
	req.cwd = (char *)r->cwd;
	k = fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0
		    ? box_ipc_chan_send(h->chan, BOX__MSG_TYPE__MSG_SPAWN_REQUEST, 0, &req.base, fds,
					3)
		    : -EBADF;
	safe_close(nullfd);
	r->argv[0] = argv0_saved;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (k == 0)
		k = wait_for(h, BOX__MSG_TYPE__MSG_SPAWN_REPLY, id, &m);
	if (k < 0) {
		chan_drop(h);
		dprintf(2, "box-shell: %s: the box's supervisor did not answer: %s\n", r->name,
			strerror(-k));
		return 125;
	}
	const Box__SpawnReply *rep = (const Box__SpawnReply *)m.msg;
	if (!rep->ok) {
		dprintf(2, "box-shell: %s: %s\n", r->name, rep->error ? rep->error : "cannot start");
		box_ipc_msg_done(&m);
		return 126;
	}
	box_ipc_msg_done(&m);
	k = wait_for(h, BOX__MSG_TYPE__MSG_SPAWN_EXIT, id, &m);
	if (k < 0) {
		chan_drop(h);
		dprintf(2, "box-shell: %s: lost the box's supervisor: %s\n", r->name, strerror(-k));
		return 125;
	}
	int st = ((const Box__SpawnExit *)m.msg)->status;
	box_ipc_msg_done(&m);
	return st < 0 ? 125 : st > 255 ? 255 : st;
}

static int
ctl_send(int ctl, const char *data, size_t len, const int *fds, unsigned n_fds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 2)];
	} u;
	if (n_fds < 1 || n_fds > 2)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	struct iovec iov = { (void *)data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * n_fds) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	for (;;) {
		ssize_t n = sendmsg(ctl, &mh, MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : -EIO;
	}
}

int
shd_ctl_send_fd(int ctl, char tag, int fd)
{
	return ctl_send(ctl, &tag, 1, &fd, 1);
}

int
shd_ctl_send_fds(int ctl, char tag, int fd, int fd2)
{
	const int fds[2] = { fd, fd2 };
	return ctl_send(ctl, &tag, 1, fds, 2);
}

int
shd_ctl_send_exit(int ctl, int status, bool said)
{
	const char pkt[3] = { SHD_CTL_EXIT, (char)(status & 255), said ? 1 : 0 };
	return ctl_send(ctl, pkt, 3, &ctl, 1);
}
