/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell.c — boxd's side of box-shell, the per-box shell daemon (docs/design.md,
 * docs/box-shell.8.md; proto/shell.proto), and the tool sandboxes it asks for.
 *
 * Every box has one, started after box-gateway is ready and before the
 * agent: through box-trampoline with a SANDBOX_SHELL plan made from the
 * agent's (plan_shell: the agent's view, Landlock rights and shared
 * tmp/var_tmp/dev_shm/HOME dirs; no /run/box, no gateway; argv and
 * workload_bin = box-shell, found beside boxd, else BOX_LIBEXECDIR, never
 * through the environment) with stdin and stdout /dev/null, stderr as
 * box-gateway's (boxd's; agent.log for a detached embedded box; /dev/null
 * for an attached embedded one unless BOXD_DEBUG) — its entry in
 * daemon_table (daemon.c) — and three fds passed through (the workload's 3,
 * 4, 5; common/daemon_fds.h): our end of the control socketpair
 * (proto_shell, we are `boxd`), box-shell's box-policyd channel (the other
 * end of policyd's POLICYD_FD_SHELL) and RUNTIME/shell.sock listening
 * (runtime.c bound it while BASE/ID was boxd's; the agent reaches it at
 * /run/box/shell.sock). Then ShellInit: the box, the owner's home, the
 * agent's workspace and PATH (without /run/box/bin), [box] command_timeout, every
 * [tool.NAME] with its canonical program as box-recheck resolved it as the
 * owner and its fixed arguments, the agent's exec entries, whether a
 * [tool.python3] exists. ShellReady arrives as an event: ok = false refuses
 * the box with box-shell's message; the trampoline's SetupError, box-shell's
 * exit or BOXD_SHELL_READY_TIMEOUT_MS without an answer fail the start.
 * While the box runs, losing box-shell (its channel, its trampoline's exit)
 * stops the box: "box-shell exited (...)" in RunExit (fail closed: every
 * alias in flight gets 125). The channel, the ready wait, the loss and the
 * exit wait are daemon.c's generic lifecycle (b->shell); this file adds the
 * trampoline's status fd (a SetupError explains a start that failed).
 * SpawnRequest (+3 fds: the host program's stdin, stdout, stderr; the
 * sandbox's life from spawn to reap is workload.c's, shared with box-mcpd's
 * servers): re-checked
 * against boxd's own config (toolmatch.c) — box-shell names a table, it
 * never defines the sandbox; at most BOXD_SPAWNS_MAX live per box; a tool
 * plan (plan_tool: the table's grants, or the agent's for an exec entry,
 * private tmp, the composed environment, the workspace rule) started
 * through the trampoline with those fds as its stdio. Its listener (a
 * contained tool) goes to the gateway tagged "tool.NAME" ("agent" for an
 * exec entry: it has the agent's grants). SpawnReply ok once the trampoline's
 * fd 4 ends (the program exec'd), ok = false with the trampoline's
 * SetupError or boxd's refusal (box-shell prints it, status 126); SpawnExit
 * with the outer trampoline's status (the workload's, 128+N for a signal)
 * when reaped. SpawnSignal: SIGINT SIGTERM SIGHUP go to the outer
 * trampoline (it forwards them to PID 1, which forwards them to the
 * program), SIGKILL kills the outer trampoline (PID 1 follows, and with it
 * the tool's PID namespace), any other to the program itself, found as PID
 * 1's child and signalled through a pidfd (child.c's child_signal_program).
 * When the box ends every tool is
 * SIGKILLed and box-shell's channel closed (it exits); the end goes on once
 * its trampoline is reaped, or after BOXD_SHELL_EXIT_WAIT_MS with a SIGKILL.
 * `boxctl shell` (client.c checked the caller is the owner or root):
 * ShellAttach under an id of boxd's, at most BOXD_ATTACHES_MAX in flight per
 * box; ShellAttached naming one passes to that client as AttachReply, its fds
 * only when they are a pty master (5:2) and a pipe; the client gone, they
 * are closed; the box ending answers each request in flight.
 * Trusts: nothing box-shell sends beyond box_ipc_decode()'s validation and
 * the re-check here; the trampolines' status messages after
 * box_status_decode().
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "plan_validate.h"
#include "proto_shell.h"

/* The host python3 the python aliases run supervised without a [tool.python3] (docs/sandbox.md). */
#define HOST_PYTHON "/usr/bin/python3"

/* One host program box-shell asked for (SpawnRequest), until its trampoline is reaped. */
struct tool_spawn {
	struct workload w;        /* id: box-shell's spawn id; gateway_tag "tool.NAME", "agent" */
	struct tool_spawn *next;
	char *sandbox;            /* "tool.NAME" or "exec" (SpawnReply) */
};

/* The box's box-shell (b->shell), its tools and the `boxctl shell` requests in flight. */
struct shell {
	struct box_daemon dm;     /* its lifecycle (daemon.c); its process: its outer trampoline */
	struct status_watch status; /* that trampoline's fd 4, until EOF */
	struct tool_spawn *spawns;
	unsigned n_spawns;
	struct shell_attach *attaches; /* `boxctl shell` requests box-shell has not answered */
	unsigned n_attaches;
	uint64_t next_attach_id;
};

int
shell_new(struct box *b)
{
	struct shell *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	status_watch_init(&sh->status);
	b->shell = sh;
	return 0;
}

/* ------------------------------------------------------------------ */
/* while the box runs: losing box-shell is daemon.c's (daemon_lost)     */

/* ---- box-shell's trampoline: fd 4 ---------------------------------- */

static void
shell_status_close(struct box *b)
{
	status_watch_close(&b->shell->status);
}

/*
 * What box-shell's trampoline says: nothing but EOF (box-shell exec'd) or a
 * SetupError is expected (no listener, no pty). Each returns true when the
 * start failed here (daemon_ready: the box may be gone with it).
 */
static bool
on_shell_status_end(void *arg, int error, const char *why)
{
	struct box *b = arg;
	if (error < 0 && b->shell->dm.starting) {
		daemon_ready(&b->shell->dm, error, "box-shell's trampoline sent a bad status message: %s",
			     why);
		return true;
	}
	return false;
}

static bool
on_shell_status(void *arg, const Box__TrampolineStatus *s, int *fd)
{
	struct box *b = arg;
	if (s->msg_case == BOX__TRAMPOLINE_STATUS__MSG_ERROR) {
		shell_status_close(b);
		if (!b->shell->dm.starting)
			return false;
		if (strcmp(s->error->step, "exec") == 0)
			daemon_ready(&b->shell->dm, -EIO, "cannot execute box-shell: %s",
				     s->error->reason);
		else
			daemon_ready(&b->shell->dm, -EIO,
				     "sandbox setup failed at %s: %s (box-shell's sandbox)",
				     s->error->step, s->error->reason);
		return true;
	}
	if (!b->shell->dm.starting)
		return false;
	shell_status_close(b);
	daemon_ready(&b->shell->dm, -EPROTO, "box-shell's trampoline sent an unexpected %s",
		     s->msg_case == BOX__TRAMPOLINE_STATUS__MSG_LISTENER ? "listener" : "pty");
	return true;
}

/* box-shell went away while starting: its trampoline may have said why (a setup error). */
static bool
shell_start_failed(struct box_daemon *dm)
{
	return status_watch_drain(&dm->b->shell->status);
}

/* ---- the tool spawns ------------------------------------------------ */

static void
spawn_free(struct tool_spawn *t)
{
	if (!t)
		return;
	workload_release(&t->w);
	free(t->sandbox);
	free(t);
}

static void
spawn_unlink(struct box *b, struct tool_spawn *t)
{
	for (struct tool_spawn **pp = &b->shell->spawns; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			b->shell->n_spawns--;
			return;
		}
}

static struct tool_spawn *
spawn_find(struct box *b, uint64_t id)
{
	for (struct tool_spawn *t = b->shell->spawns; t; t = t->next)
		if (t->w.id == id)
			return t;
	return NULL;
}

static void
send_reply(struct box *b, uint64_t id, bool ok, const char *sandbox, const char *error)
{
	Box__SpawnReply m = BOX__SPAWN_REPLY__INIT;
	char msg[BOX_SHELL_MESSAGE_MAX];

	m.spawn_id = id;
	m.ok = ok;
	if (ok)
		m.sandbox = (char *)sandbox;
	else {
		/* One line, within the protocol's cap. */
		snprintf(msg, sizeof(msg), "%s", error && *error ? error : "cannot start the tool");
		for (char *c = msg; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		m.error = msg;
	}
	if (!b->shell->dm.ev)
		return;
	int r = daemon_send(&b->shell->dm, BOX__MSG_TYPE__MSG_SPAWN_REPLY, &m.base, NULL, 0);
	if (r < 0)
		log_warn_errno(r, "box %s (%s): cannot send SpawnReply to box-shell", b->name, b->id);
}

/* The tool's start: SpawnReply (box-shell prints a refusal and answers 126). */
static void
on_tool_started(struct workload *w, bool ok, const char *error)
{
	struct tool_spawn *t = WORKLOAD_OF(w, struct tool_spawn);
	send_reply(w->b, w->id, ok, t->sandbox, error);
}

/* The tool ended after it started: SpawnExit with its status. */
static void
on_tool_exited(struct workload *w, int status)
{
	struct box *b = w->b;

	if (!b->shell->dm.ev)
		return;
	Box__SpawnExit x = BOX__SPAWN_EXIT__INIT;
	x.spawn_id = w->id;
	x.status = status;
	int r = daemon_send(&b->shell->dm, BOX__MSG_TYPE__MSG_SPAWN_EXIT, &x.base, NULL, 0);
	if (r < 0)
		log_warn_errno(r, "box %s (%s): cannot send SpawnExit", b->name, b->id);
}

static void spawn_gone(struct workload *w);

static const struct workload_ops tool_ops = {
	.what = "tool",
	.kind = CHILD_TOOL,
	.started = on_tool_started,
	.exited = on_tool_exited,
	.gone = spawn_gone,
};

/* A refusal before anything started: SpawnReply ok = false (box-shell: 126). */
static void
spawn_refuse(struct box *b, uint64_t id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void
spawn_refuse(struct box *b, uint64_t id, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_notice("box %s (%s): spawn %llu refused: %s", b->name, b->id, (unsigned long long)id,
		   msg);
	send_reply(b, id, false, NULL, msg);
}

static void
spawn_request(struct box *b, const Box__SpawnRequest *rq, const int fds[3])
{
	char msg[1024];
	int idx;
	_cleanup_free_ char *err = NULL;
	Box__Plan *plan = NULL;

	if (b->state != BOX_RUNNING && b->state != BOX_STARTING && b->state != BOX_DAEMONS)
		return spawn_refuse(b, rq->spawn_id, "the box is stopping");
	if (spawn_find(b, rq->spawn_id))
		return spawn_refuse(b, rq->spawn_id, "spawn id %llu is in use",
				    (unsigned long long)rq->spawn_id);
	if (b->shell->n_spawns >= BOXD_SPAWNS_MAX)
		return spawn_refuse(b, rq->spawn_id, "too many tools running in this box (at most %u)",
				    BOXD_SPAWNS_MAX);
	/*
	 * The host python3 with the agent's grants runs only supervised
	 * (SpawnRequest.python, python_match): never as an exec entry's program,
	 * whatever entry holds it (docs/sandbox.md, "The python aliases").
	 */
	if (!rq->python && !rq->tool && b->host_python_file &&
	    strcmp(rq->program_path, b->host_python_file) == 0)
		return spawn_refuse(b, rq->spawn_id,
				    "boxd refuses the spawn: %s is the host python3, which runs with "
				    "the agent's grants only supervised (%s)",
				    rq->program_path,
				    b->host_python ? "as the python aliases run it" :
						     "the box's [tool.python3] runs another program: "
						     "run python there");
	idx = -1;
	if (rq->python ? python_match(b->spec, b->tool_prog, b->host_python, rq->program_path, msg,
				      sizeof(msg)) < 0 :
			 tool_match(b->spec, b->tool_prog, rq->tool, rq->program_path, rq->argv,
				    rq->n_argv, &idx, msg, sizeof(msg)) < 0)
		return spawn_refuse(b, rq->spawn_id, "boxd refuses the spawn: %s", msg);
	if (plan_tool(b->d, b, idx, rq, &plan, &err) < 0)
		return spawn_refuse(b, rq->spawn_id, "%s", err ? err : "cannot plan the tool");

	struct tool_spawn *t = calloc(1, sizeof(*t));
	if (!t) {
		plan_free(plan);
		return spawn_refuse(b, rq->spawn_id, "out of memory");
	}
	const char *name = idx >= 0 ? b->spec->tools[idx]->name : NULL;
	if (name ? asprintf(&t->sandbox, "tool.%s", name) < 0 :
		   !(t->sandbox = strdup(rq->python ? "python" : "exec")))
		t->sandbox = NULL;
	/* An exec entry's program (the host python3's) has the agent's grants: the agent's listener. */
	workload_init(&t->w, &tool_ops, b, rq->spawn_id,
		      name ? strdup(t->sandbox ? t->sandbox : "") : strdup("agent"));
	if (!t->sandbox || !t->w.gateway_tag) {
		plan_free(plan);
		spawn_free(t);
		return spawn_refuse(b, rq->spawn_id, "out of memory");
	}
	int r = workload_start(&t->w, plan, fds);
	plan_free(plan);
	if (r < 0) {
		spawn_free(t);
		return spawn_refuse(b, rq->spawn_id, "cannot start box-trampoline: %s", strerror(-r));
	}
	t->next = b->shell->spawns;
	b->shell->spawns = t;
	b->shell->n_spawns++;
	log_debug("box %s (%s): spawn %llu %s (%s) pid %d", b->name, b->id,
		  (unsigned long long)t->w.id, rq->program_path, t->sandbox, (int)t->w.child.pid);
}

static void
spawn_signal(struct box *b, const Box__SpawnSignal *m)
{
	struct tool_spawn *t = spawn_find(b, m->spawn_id);

	if (!t || !child_running(&t->w.child))
		return; /* ended already: its SpawnExit is on the way */
	int sig = m->signal;
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGKILL) {
		workload_kill(&t->w, sig);
		return;
	}
	int r = child_signal_program(&t->w.child, sig);
	if (r < 0)
		log_debug_errno(r, "box %s (%s): signal %d to spawn %llu", b->name, b->id, sig,
				(unsigned long long)t->w.id);
}

/* A tool's trampoline was reaped (SpawnExit or the late refusal sent): it goes. */
static void
spawn_gone(struct workload *w)
{
	struct tool_spawn *t = WORKLOAD_OF(w, struct tool_spawn);

	spawn_unlink(w->b, t);
	spawn_free(t);
}

/* Every tool: SIGKILL (PID 1 goes, and the kernel takes its namespace), forgotten. */
static void
spawns_kill_all(struct box *b)
{
	while (b->shell->spawns) {
		struct tool_spawn *t = b->shell->spawns;
		workload_stop(&t->w);
		spawn_unlink(b, t);
		spawn_free(t);
	}
}

/* ---- `boxctl shell` -------------------------------------------------- */

/* One AttachRequest box-shell has not answered yet. */
struct shell_attach {
	struct shell_attach *next;
	uint64_t id;       /* ShellAttach.attach_id */
	struct client *c;  /* NULL once the client is gone */
	uint64_t rid;      /* the client's request id */
};

static void
attach_reply(struct box *b, struct client *c, uint64_t rid, const int fds[2], const char *fmt,
	     ...) __attribute__((format(printf, 5, 6)));
static void
attach_reply(struct box *b, struct client *c, uint64_t rid, const int fds[2], const char *fmt,
	     ...)
{
	Box__AttachReply rep = BOX__ATTACH_REPLY__INIT;
	char why[512];
	if (!c)
		return;
	rep.status = fds ? BOX__REPLY_STATUS__REPLY_OK : BOX__REPLY_STATUS__REPLY_FAILED;
	rep.box_id = b->id;
	rep.name = b->name;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		(void)vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		rep.error = why;
	}
	(void)client_send(c, BOX__MSG_TYPE__MSG_ATTACH_REPLY, rid, &rep.base, fds, fds ? 2 : 0);
}

void
shell_attach(struct box *b, struct client *c, uint64_t rid, const Box__AttachRequest *m)
{
	if (b->state != BOX_RUNNING || !b->shell->dm.ev) {
		attach_reply(b, c, rid, NULL, "box %s has no box shell serving now (%s)", b->name,
			     b->state < BOX_RUNNING ? "it is still starting" : "it is stopping");
		return;
	}
	if (b->shell->n_attaches >= BOXD_ATTACHES_MAX) {
		attach_reply(b, c, rid, NULL, "box %s: %u shells are being opened already; try again",
			     b->name, BOXD_ATTACHES_MAX);
		return;
	}
	struct shell_attach *a = calloc(1, sizeof(*a));
	if (!a) {
		attach_reply(b, c, rid, NULL, "out of memory");
		return;
	}
	a->id = ++b->shell->next_attach_id;
	a->c = c;
	a->rid = rid;
	Box__ShellAttach sa = BOX__SHELL_ATTACH__INIT;
	sa.attach_id = a->id;
	sa.has_rows = m->has_rows;
	sa.rows = m->rows;
	sa.has_cols = m->has_cols;
	sa.cols = m->cols;
	sa.term = m->term;
	/* the person's session starts from the agent's environment ([agent.env] and all) */
	if (plan_agent_env(b, &sa.env, &sa.n_env) < 0) {
		free(a);
		attach_reply(b, c, rid, NULL, "out of memory");
		return;
	}
	int r = daemon_send(&b->shell->dm, BOX__MSG_TYPE__MSG_SHELL_ATTACH, &sa.base, NULL, 0);
	plan_env_free(sa.env, sa.n_env);
	if (r < 0) {
		free(a);
		attach_reply(b, c, rid, NULL, "cannot reach box %s's box-shell: %s", b->name,
			     strerror(-r));
		return;
	}
	a->next = b->shell->attaches;
	b->shell->attaches = a;
	b->shell->n_attaches++;
	log_info("box %s (%s): a person's shell for uid %u (boxctl shell)", b->name, b->id,
		 (unsigned)c->cred.uid);
}

/*
 * A pty master of a devpts (the ptmx node's device, 5:2) and a pipe: what
 * box-shell must have sent. Anything else is not passed on to the client.
 */
static bool
attach_fds_ok(const int fds[2])
{
	struct stat st[2];
	return fstat(fds[0], &st[0]) == 0 && S_ISCHR(st[0].st_mode) &&
	       major(st[0].st_rdev) == 5 && minor(st[0].st_rdev) == 2 &&
	       fstat(fds[1], &st[1]) == 0 && S_ISFIFO(st[1].st_mode);
}

/* ShellAttached: passed on to the client that asked (its fds closed with the message after). */
static void
shell_attached(struct box *b, const Box__ShellAttached *m, const int *fds)
{
	struct shell_attach **pp = &b->shell->attaches;
	while (*pp && (*pp)->id != m->attach_id)
		pp = &(*pp)->next;
	struct shell_attach *a = *pp;
	if (!a) {
		/* Not asked for: box-shell's bug. Its fds close with the message. */
		log_warn("box %s (%s): box-shell answered ShellAttach %llu, which was not asked",
			 b->name, b->id, (unsigned long long)m->attach_id);
		return;
	}
	*pp = a->next;
	b->shell->n_attaches--;
	if (!m->ok)
		attach_reply(b, a->c, a->rid, NULL, "box %s: %s", b->name, m->error);
	else if (!attach_fds_ok(fds))
		attach_reply(b, a->c, a->rid, NULL, "box %s: box-shell sent no terminal", b->name);
	else
		attach_reply(b, a->c, a->rid, fds, NULL);
	free(a);
}

/* The box ends: every request in flight is answered. */
static void
attaches_fail_all(struct box *b)
{
	while (b->shell->attaches) {
		struct shell_attach *a = b->shell->attaches;
		b->shell->attaches = a->next;
		attach_reply(b, a->c, a->rid, NULL, "box %s stopped", b->name);
		free(a);
	}
	b->shell->n_attaches = 0;
}

void
shell_attach_client_gone(struct boxd *d, struct client *c)
{
	for (struct box *b = d->boxes; b; b = b->next)
		for (struct shell_attach *a = b->shell ? b->shell->attaches : NULL; a; a = a->next)
			if (a->c == c)
				a->c = NULL;
}

/* ---- the control channel ------------------------------------------- */

static void
on_shell_msg(struct box_daemon *dm, struct box_ipc_msg *m)
{
	struct box *b = dm->b;

	switch (m->type) {
	case BOX__MSG_TYPE__MSG_SHELL_READY: {
		const Box__ShellReady *rep = (const Box__ShellReady *)m->msg;
		if (rep->ok)
			daemon_ready(dm, 0, NULL);
		else
			daemon_ready(dm, -EPERM, "box-shell cannot serve the box: %s",
				     rep->error && *rep->error ? rep->error : "(no reason given)");
		break;
	}
	case BOX__MSG_TYPE__MSG_SPAWN_REQUEST:
		/* Exactly 3 fds (the table's check); ours until the trampoline has them. */
		spawn_request(b, (const Box__SpawnRequest *)m->msg, m->fds);
		break;
	case BOX__MSG_TYPE__MSG_SPAWN_SIGNAL:
		spawn_signal(b, (const Box__SpawnSignal *)m->msg);
		break;
	case BOX__MSG_TYPE__MSG_SHELL_ATTACHED:
		/* 2 fds when ok (the table's check); closed with the message once sent on. */
		shell_attached(b, (const Box__ShellAttached *)m->msg, m->fds);
		break;
	default:
		break;
	}
}

static const struct box_daemon_ops shell_ops = {
	.id = DAEMON_SHELL,
	.on_msg = on_shell_msg,
	.ready = box_shell_ready,
	.finished = box_shell_finished,
	.start_failed = shell_start_failed,
};

/* ------------------------------------------------------------------ */
/* start                                                               */

/* spec->tools[i] -> its canonical program from box-recheck ("tool.NAME PATH"); all or an error. */
static int
tool_programs(struct box *b, char **err)
{
	const Box__BoxSpec *s = b->spec;

	free(b->tool_prog);
	b->tool_prog = calloc(s->n_tools ? s->n_tools : 1, sizeof(char *));
	if (!b->tool_prog)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_tools; i++) {
		for (size_t k = 0; k < b->rc.n_tools; k++)
			if (strcmp(b->rc.tool_names[k], s->tools[i]->name) == 0)
				b->tool_prog[i] = b->rc.tool_programs[k];
		if (!b->tool_prog[i]) {
			seterr(err, "box-recheck did not resolve [tool.%s]'s program",
			       s->tools[i]->name);
			return -EPROTO;
		}
	}
	b->tool_plans = calloc(s->n_tools ? s->n_tools : 1, sizeof(*b->tool_plans));
	return b->tool_plans ? 0 : -ENOMEM;
}

static void
init_free(Box__ShellInit *in)
{
	for (size_t i = 0; i < in->n_tools; i++) {
		for (size_t j = 0; j < in->tools[i]->n_credential_reads; j++)
			free(in->tools[i]->credential_reads[j]);
		free(in->tools[i]->credential_reads);
		free(in->tools[i]);
	}
	free(in->tools);
	free(in->exec_entries);
}

/*
 * shell:spawn's credential_reads for a tool: the owner's credential stores
 * its grants name ("~/.aws" for a grant of ~/.aws or a file inside it), each
 * once. A store inside a broader grant is masked (docs/box.ini.5.md), so it is not
 * read and not listed.
 */
static int
tool_credential_reads(const struct box *b, const Box__CfgFilesystem *fs, Box__ShellTool *t)
{
	if (!fs)
		return 0;
	Box__CfgPath **lists[] = { fs->read, fs->write, fs->read_file, fs->write_file };
	size_t ns[] = { fs->n_read, fs->n_write, fs->n_read_file, fs->n_write_file };
	for (size_t l = 0; l < ELEMENTSOF(lists); l++)
		for (size_t i = 0; i < ns[l]; i++) {
			const char *store = plan_credential_store_of(b, lists[l][i]->path);
			if (!store)
				continue;
			char *spelled = NULL;
			if (asprintf(&spelled, "~/%s", store) < 0)
				return -ENOMEM;
			bool dup = false;
			for (size_t j = 0; j < t->n_credential_reads && !dup; j++)
				dup = strcmp(t->credential_reads[j], spelled) == 0;
			if (dup || t->n_credential_reads >= BOX_SHELL_CREDENTIALS_MAX) {
				free(spelled);
				continue;
			}
			char **nv = realloc(t->credential_reads,
					    (t->n_credential_reads + 1) * sizeof(*nv));
			if (!nv) {
				free(spelled);
				return -ENOMEM;
			}
			t->credential_reads = nv;
			t->credential_reads[t->n_credential_reads++] = spelled;
		}
	return 0;
}

static int
send_init(struct box *b, char **err)
{
	const Box__BoxSpec *s = b->spec;
	const Box__CfgFilesystem *fs = s->agent->filesystem;
	Box__ShellInit in = BOX__SHELL_INIT__INIT;
	int r = -ENOMEM;

	in.box_name = b->name;
	in.box_id = b->id;
	in.home = b->owner.home;
	in.workspace = b->rc.workspace;
	in.path = (char *)plan_agent_path(b);
	if (s->box->command_timeout_ms) {
		in.has_command_timeout_ms = 1;
		in.command_timeout_ms = s->box->command_timeout_ms->value;
	}
	in.tools = calloc(s->n_tools ? s->n_tools : 1, sizeof(*in.tools));
	in.exec_entries = calloc(fs && fs->n_exec ? fs->n_exec : 1, sizeof(char *));
	if (!in.tools || !in.exec_entries)
		goto out;
	for (size_t i = 0; i < s->n_tools; i++) {
		Box__ShellTool *t = calloc(1, sizeof(*t));
		if (!t)
			goto out;
		box__shell_tool__init(t);
		in.tools[in.n_tools++] = t;
		t->name = s->tools[i]->name;
		t->program = b->tool_prog[i];
		t->fixed_args = s->tools[i]->command->argv + 1;
		t->n_fixed_args = s->tools[i]->command->n_argv - 1;
		if (strcmp(t->name, "python3") == 0)
			in.has_python_tool = in.python_tool = 1;
		if ((r = tool_credential_reads(b, s->tools[i]->filesystem, t)) < 0)
			goto out;
		r = -ENOMEM;
	}
	for (size_t i = 0; fs && i < fs->n_exec; i++)
		in.exec_entries[in.n_exec_entries++] = fs->exec[i]->path;
	/* No [tool.python3]: the python aliases run the host python3 supervised (SpawnRequest.python) */
	free(b->host_python);
	b->host_python = in.python_tool ? NULL : realpath(HOST_PYTHON, NULL);
	in.host_python = b->host_python;
	/* whatever the tables: never run unsupervised with the agent's grants (spawn_request) */
	free(b->host_python_file);
	b->host_python_file = realpath(HOST_PYTHON, NULL);
	daemon_init_delay();
	r = daemon_send(&b->shell->dm, BOX__MSG_TYPE__MSG_SHELL_INIT, &in.base, NULL, 0);
	if (r < 0)
		seterr(err, "cannot send ShellInit to box-shell: %s", strerror(-r));
out:
	if (r == -ENOMEM)
		seterr(err, "out of memory");
	init_free(&in);
	return r;
}

/* box-shell's SANDBOX_SHELL plan, from the agent's (daemon_spawn asks for it). */
static int
shell_plan(const struct box *b, const char *exe, const char *level_arg, Box__Plan **ret,
	   char **err)
{
	_cleanup_free_ char *perr = NULL;
	int r = plan_shell(b, b->agent_plan, exe, level_arg, ret, &perr);
	if (r < 0)
		seterr(err, "%s", perr ? perr : "cannot plan box-shell's sandbox");
	return r;
}

int
shell_start(struct boxd *d, struct box *b, char **err)
{
	struct daemon_spawn_args args = { .fds = { -1, -1, -1, -1, -1, -1, -1 },
					  .plan = shell_plan };
	_cleanup_close_ int policyd_fd = policyd_take_peer(b, DAEMON_SHELL);
	pid_t pid = 0;
	int ctl = -1;
	int r;

	*err = NULL;
	daemon_init(&b->shell->dm, &shell_ops, b);
	if (b->shell_listen_fd < 0 || policyd_fd < 0 || !b->agent_plan) {
		seterr(err, "box-shell's socket or policyd channel is not open");
		return -EBADF;
	}
	if ((r = tool_programs(b, err)) < 0) {
		seterr(err, "out of memory");
		return r;
	}
	args.fds[DAEMON_FD_POLICYD] = policyd_fd;
	args.fds[DAEMON_FD_LISTEN] = b->shell_listen_fd;
	int sfd = -1;
	r = daemon_spawn(d, b, DAEMON_SHELL, &args, &pid, &ctl, &sfd, err);
	/* The listener and policyd's channel are box-shell's now (or nobody's). */
	b->shell_listen_fd = safe_close(b->shell_listen_fd);
	policyd_fd = safe_close(policyd_fd);
	if (r < 0)
		return r;
	daemon_track(&b->shell->dm, pid); /* killed by the teardown even if watching fails below */
	if (status_watch_start(&b->shell->status, d->base, sfd, on_shell_status,
			       on_shell_status_end, b) < 0) {
		close(ctl);
		seterr(err, "cannot watch box-shell's trampoline");
		return -ENOMEM;
	}
	/* Its channel and ready timer: daemon.c's lifecycle from here on. */
	if ((r = daemon_watch(&b->shell->dm, pid, ctl, err)) < 0)
		return r;
	r = send_init(b, err);
	log_debug("box %s (%s): box-shell's trampoline pid %d", b->name, b->id, (int)pid);
	return r;
}

/* ------------------------------------------------------------------ */
/* the end                                                             */

/* Its trampoline's status fd and the fds it has not taken go with the channel. */
static void
fds_close(struct box *b)
{
	shell_status_close(b);
	b->shell_listen_fd = safe_close(b->shell_listen_fd);
	safe_close(policyd_take_peer(b, DAEMON_SHELL));
}

bool
shell_finish(struct box *b)
{
	if (!b->shell)
		return false;
	attaches_fail_all(b);
	spawns_kill_all(b);
	fds_close(b);
	return b->shell->dm.ops && daemon_finish(&b->shell->dm);
}

void
shell_free(struct box *b)
{
	if (b->shell) {
		attaches_fail_all(b);
		spawns_kill_all(b);
		fds_close(b);
		daemon_stop(&b->shell->dm);
		free(b->shell);
		b->shell = NULL;
	}
	b->shell_listen_fd = safe_close(b->shell_listen_fd);
	for (size_t i = 0; b->tool_plans && i < b->spec->n_tools; i++)
		plan_free(b->tool_plans[i]);
	free(b->tool_plans);
	b->tool_plans = NULL;
	plan_free(b->exec_plan);
	b->exec_plan = NULL;
	plan_free(b->python_plan);
	b->python_plan = NULL;
	free(b->host_python);
	b->host_python = NULL;
	free(b->host_python_file);
	b->host_python_file = NULL;
	free(b->tool_prog);
	b->tool_prog = NULL;
}
