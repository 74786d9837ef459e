/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-shell, the in-box shell daemon (docs/design.md
 * §2, §5; docs/box-shell.8.md "daemon").
 *
 *   box-shell  (started by boxd through the trampoline: fd 3 = boxd's control
 *              channel, 4 = its box-policyd channel, 5 = the listening shell.sock;
 *              common/daemon_fds.h)
 *
 * main() is the start-up, one named step a line: arguments -> the fds
 * checked -> the ids it runs as, capabilities and no_new_privs dropped
 * (common/privdrop.c) -> ShellInit from boxd (blocking, validated by the
 * table) -> what needs files, before the filter (the owner's name, the
 * event loop, the signals, RLIMIT_NOFILE) -> its seccomp allow-list
 * (daemon_seccomp.c: no execve, ever) -> ShellReady -> the loop.
 *
 * The loop (this file): a connection on fd 5, the door, is one session
 * (box_proto_session, the alias in role alias). While a spare waits — the
 * next invocation child, forked ahead by the zygote (zygote.c) — the spare
 * answers the door itself (invocation.c) and hands main the connection once
 * it has the ShellOpen (SHD_CTL_TAKEN, daemon.h); main does not watch the
 * door then. Otherwise main accepts, and on ShellOpen (+ the alias's fds
 * 0-2) forks one invocation child in its own process group (invocation.c)
 * with those fds as 0-2 and the session's control socket (daemon.h); the
 * child and every process it forks attach their own box-policyd channels
 * and host channels through it. The main process
 * relays: PolicyChannelAttach to policyd; SpawnRequest to boxd under an id
 * of its own, SpawnReply/SpawnExit back to the asking process; ShellSignal
 * to the invocation's process group and, as SpawnSignal, to the session's
 * running tools. The alias hanging up: SIGHUP, SIGKILL 2 s later. [box]
 * command_timeout: SIGTERM, SIGKILL 2 s later, status 124. The child
 * saying it exits (SHD_CTL_EXIT), or reaped (by main, or by the zygote,
 * which reports it): ShellExit (status, 128+signal), which a child that
 * took its session at the door sends itself. What cannot be served
 * (too many sessions, an unreachable cwd, fork failing): ShellDenied.
 * ShellAttach from boxd (`boxctl shell`): a pty of box-shell's own devpts
 * and its holder (attach.c), whose connection main serves as one more
 * session, a person's: its processes' channels are attached with
 * PolicyChannelAttach.person; the master and the end pipe go back to boxd
 * in ShellAttached.
 * boxd closing fd 3 ends box-shell (exit 0), box-policyd's fd 4 hanging up
 * too (exit 1): a box-shell without policy must not serve; the zygote
 * dying too (exit 1): no session's end could be told; every session's
 * processes are killed first (their aliases see the connection close
 * without ShellExit: 125).
 * Environment: only the test hooks BOX_TEST_SHELL_SPARE_DELAY_MS and
 * BOX_TEST_SHELL_OPEN_ENTRIES_DELAY_MS (each only slows a step; boxd passes
 * BOX_TEST_SHELL_* through, docs/box-shell.8.md).
 * Trusts: boxd for ShellInit and the fds (fd kinds re-checked); nothing from
 * an alias or a session process beyond what the tables validated; a spare's
 * SHD_CTL_KNOCK and SHD_CTL_TAKEN only on its own socket, from its pid (the
 * kernel's SCM_CREDENTIALS), before it is a session's; boxd's
 * spawn replies must name a spawn in flight (else a protocol error, fatal).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "cleanup.h"
#include "daemon.h"
#include "daemon_start.h"
#include "fdutil.h"
#include "host.h"
#include "ipc.h"
#include "ipc_event.h"
#include "log.h"
#include "parse.h"
#include "privdrop.h"
#include "proto_policy.h"
#include "proto_shell.h"
#include "sh.h"
#include "testhook.h"

#define SHD_INIT_TIMEOUT_MS 30000

struct session;

/* A session process's channel to main for host programs. */
struct hostchan {
	struct hostchan *next;
	struct session *s; /* NULL once the session is gone */
	struct box_ipc_event *ev;
};

struct spawn {
	struct spawn *next;
	uint64_t id;       /* on the boxd channel */
	uint64_t local_id; /* on the host channel */
	struct hostchan *hc; /* NULL: the asking process is gone */
	struct session *s;   /* NULL once the session is gone */
	bool started;        /* an ok SpawnReply came */
	int pending_sig;     /* asked before the reply came: sent once it does */
};

struct session {
	struct session *next;
	unsigned id;
	struct box_ipc_event *conn; /* NULL once the alias hung up or got its status */
	int ctl;                    /* main's end of the control socket */
	struct event *ctl_ev;
	bool ctl_done;              /* every process of the session closed it */
	int err_fd;                 /* a dup of the alias's stderr, for the timeout message */
	pid_t pid;                  /* the invocation child (= its process group); 0: none */
	bool reaped;
	bool timed_out;
	bool killing;               /* SIGKILL follows when the timer fires */
	bool door;                  /* taken at the door: the child says ShellExit itself */
	bool exited;                /* its exit word (or its end) came */
	bool hangup_pending;        /* the alias hung up: SIGHUP when the timer fires */
	struct event *timer;        /* ShellOpen wait, command timeout, kill grace */
	unsigned n_hosts;
	bool person;                /* `boxctl shell`: its channels are attached as a person's */
};

struct shd_box shd_box;

static struct {
	struct event_base *base;
	struct box_ipc_event *boxd, *policyd;
	struct event *accept_ev, *sigchld_ev, *stop_ev[2];
	struct session *sessions;
	size_t n_sessions;
	unsigned next_session;
	struct hostchan *hosts;
	struct spawn *spawns;
	size_t n_spawns;
	uint64_t next_spawn;
	Box__ShellInit *init;
	int exit_code;
	bool exiting; /* shd_exit was called: its code stands */
	/*
	 * The spare: the next session's invocation child, forked ahead while
	 * box-shell is idle (signals reset, its box-policyd channel attached,
	 * rehearsed), waiting at the door (daemon.h).
	 */
	pid_t spare_pid; /* 0: none, or not known yet (its first packet tells) */
	int spare_ctl;   /* main's end of its control socket; -1: no spare */
	struct event *spare_ev;
	/*
	 * BOX_TEST_SHELL_SPARE_DELAY_MS (a test hook that only slows a step, at
	 * most 10 s): main reads the spare's control socket that much later, so
	 * a spare can take a session, run it and end first (spare_drain).
	 */
	unsigned spare_delay_ms;
	unsigned ready_delay_ms; /* BOX_TEST_SHELL_READY_DELAY_MS: a slow start (test hook) */
	struct event *spare_delay_ev;
	/* The zygote (zygote.c): forks the spares, reports their ends. */
	pid_t zyg_pid;
	int zyg_fd;
	struct event *zyg_ev;
} M = { .next_spawn = 1, .spare_ctl = -1, .zyg_fd = -1 };

/* ---- the end ------------------------------------------------------------------ */

static void
kill_group(struct session *s, int sig)
{
	if (s->pid > 0 && !s->reaped)
		(void)kill(-s->pid, sig);
}

/* Every session's processes killed, then out of the loop. */
static void
shd_exit(int code)
{
	/*
	 * The first reason stands: a stop (SIGTERM, exit 0) kills the zygote, and its end,
	 * read in the same turn of the loop, must not turn that stop into a failure.
	 */
	if (M.exiting)
		return;
	M.exiting = true;
	for (struct session *s = M.sessions; s; s = s->next)
		kill_group(s, SIGKILL);
	if (M.spare_pid > 0)
		(void)kill(M.spare_pid, SIGKILL);
	if (M.zyg_pid > 0)
		(void)kill(M.zyg_pid, SIGKILL);
	M.exit_code = code;
	event_base_loopexit(M.base, NULL);
}

/* ---- spawns ------------------------------------------------------------------- */

static void
spawn_signal_boxd(struct spawn *sp, int sig)
{
	if (!sp->started) {
		/* The tool may be running already (its output came first): after the reply. */
		if (sp->pending_sig != SIGKILL)
			sp->pending_sig = sig;
		return;
	}
	if (!M.boxd)
		return;
	Box__SpawnSignal m = BOX__SPAWN_SIGNAL__INIT;
	m.spawn_id = sp->id;
	m.signal = sig;
	int r = box_ipc_event_send(M.boxd, BOX__MSG_TYPE__MSG_SPAWN_SIGNAL, 0, &m.base, NULL, 0);
	if (r < 0) {
		log_err_errno(r, "Cannot send SpawnSignal to boxd");
		shd_exit(1);
	}
}

static void
session_signal_spawns(struct session *s, int sig)
{
	for (struct spawn *sp = M.spawns; sp; sp = sp->next)
		if (sp->s == s)
			spawn_signal_boxd(sp, sig);
}

static void
spawn_remove(struct spawn *sp)
{
	for (struct spawn **pp = &M.spawns; *pp; pp = &(*pp)->next)
		if (*pp == sp) {
			*pp = sp->next;
			M.n_spawns--;
			free(sp);
			return;
		}
}

static struct spawn *
spawn_find(uint64_t id)
{
	for (struct spawn *sp = M.spawns; sp; sp = sp->next)
		if (sp->id == id)
			return sp;
	return NULL;
}

static void
host_reply_fail(struct hostchan *hc, uint64_t local_id, const char *why)
{
	Box__SpawnReply rep = BOX__SPAWN_REPLY__INIT;
	rep.spawn_id = local_id;
	rep.ok = false;
	rep.error = (char *)why;
	(void)box_ipc_event_send(hc->ev, BOX__MSG_TYPE__MSG_SPAWN_REPLY, 0, &rep.base, NULL, 0);
}

static void hostchan_free(struct hostchan *hc);

/* A process asks for a host program: relayed to boxd under a spawn id of ours. */
static void
host_spawn_request(struct hostchan *hc, struct box_ipc_msg *m)
{
	Box__SpawnRequest *req = (Box__SpawnRequest *)m->msg;
	uint64_t local = req->spawn_id;
	for (struct spawn *sp = M.spawns; sp; sp = sp->next)
		if (sp->hc == hc && sp->local_id == local) {
			log_err("A session process reused spawn id %llu", (unsigned long long)local);
			hostchan_free(hc);
			return;
		}
	if (M.n_spawns >= SHD_SPAWNS_MAX) {
		char why[128];
		(void)snprintf(why, sizeof(why), "too many host programs running in the box (max %u)",
			       SHD_SPAWNS_MAX);
		host_reply_fail(hc, local, why);
		return;
	}
	struct spawn *sp = calloc(1, sizeof(*sp));
	if (!sp) {
		host_reply_fail(hc, local, "out of memory");
		return;
	}
	sp->id = M.next_spawn++;
	sp->local_id = local;
	sp->hc = hc;
	sp->s = hc->s;
	req->spawn_id = sp->id;
	int r = box_ipc_event_send(M.boxd, BOX__MSG_TYPE__MSG_SPAWN_REQUEST, 0, &req->base, m->fds,
				   m->n_fds);
	if (r < 0) {
		free(sp);
		log_err_errno(r, "Cannot send SpawnRequest to boxd");
		shd_exit(1);
		return;
	}
	sp->next = M.spawns;
	M.spawns = sp;
	M.n_spawns++;
}

static void
host_spawn_signal(struct hostchan *hc, const Box__SpawnSignal *m)
{
	for (struct spawn *sp = M.spawns; sp; sp = sp->next)
		if (sp->hc == hc && sp->local_id == m->spawn_id) {
			spawn_signal_boxd(sp, m->signal);
			return;
		}
	/* Not (or no longer) running: the exit may be on its way. Nothing to do. */
}

static void
on_host_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct hostchan *hc = userdata;
	(void)e;
	if (m->type == BOX__MSG_TYPE__MSG_SPAWN_REQUEST)
		host_spawn_request(hc, m);
	else if (m->type == BOX__MSG_TYPE__MSG_SPAWN_SIGNAL)
		host_spawn_signal(hc, (const Box__SpawnSignal *)m->msg);
	else
		hostchan_free(hc); /* the allow list refused it already */
}

/* The process is gone (or misbehaved): its running tools are killed. */
static void
hostchan_free(struct hostchan *hc)
{
	for (struct spawn *sp = M.spawns, *next; sp; sp = next) {
		next = sp->next;
		if (sp->hc != hc)
			continue;
		sp->hc = NULL;
		spawn_signal_boxd(sp, SIGKILL);
	}
	for (struct hostchan **pp = &M.hosts; *pp; pp = &(*pp)->next)
		if (*pp == hc) {
			*pp = hc->next;
			break;
		}
	if (hc->s)
		hc->s->n_hosts--;
	box_ipc_event_free(hc->ev);
	free(hc);
}

static void
on_host_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	if (error != -ECONNRESET)
		log_warn_errno(error, "A session process's host channel failed");
	hostchan_free(userdata);
}

static void
host_attach(struct session *s, int fd)
{
	if (s->n_hosts >= SHD_HOSTS_PER_SESSION) {
		log_warn("session %u: more than %u processes ran host programs at once; refused",
			 s->id, SHD_HOSTS_PER_SESSION);
		close(fd);
		return;
	}
	struct hostchan *hc = calloc(1, sizeof(*hc));
	if (!hc) {
		close(fd);
		return;
	}
	hc->s = s;
	hc->ev = box_ipc_event_new(M.base, fd, &box_proto_shell, BOX_SHELL_ROLE_SHELL, on_host_msg,
				   on_host_close, hc);
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_SPAWN_REQUEST,
					  BOX__MSG_TYPE__MSG_SPAWN_SIGNAL };
	if (!hc->ev) {
		close(fd);
		free(hc);
		return;
	}
	if (box_ipc_chan_set_state(box_ipc_event_chan(hc->ev), BOX_SHELL_SERVING) < 0 ||
	    box_ipc_chan_allow(box_ipc_event_chan(hc->ev), types, 2) < 0) {
		box_ipc_event_free(hc->ev);
		free(hc);
		return;
	}
	hc->next = M.hosts;
	M.hosts = hc;
	s->n_hosts++;
}

/* ---- boxd --------------------------------------------------------------------- */

static void
boxd_spawn_reply(struct box_ipc_msg *m)
{
	Box__SpawnReply *rep = (Box__SpawnReply *)m->msg;
	struct spawn *sp = spawn_find(rep->spawn_id);
	if (!sp || sp->started) {
		log_err("boxd answered spawn %llu, which is not waiting for a reply",
			(unsigned long long)rep->spawn_id);
		shd_exit(1);
		return;
	}
	if (rep->ok)
		sp->started = true;
	if (rep->ok && sp->pending_sig)
		spawn_signal_boxd(sp, sp->pending_sig);
	if (sp->hc) {
		rep->spawn_id = sp->local_id;
		if (box_ipc_event_send(sp->hc->ev, BOX__MSG_TYPE__MSG_SPAWN_REPLY, 0, &rep->base,
				       NULL, 0) < 0) {
			struct hostchan *hc = sp->hc;
			if (!rep->ok)
				spawn_remove(sp);
			hostchan_free(hc);
			return;
		}
	} else if (rep->ok) {
		spawn_signal_boxd(sp, SIGKILL); /* nobody waits for it any more */
	}
	if (!rep->ok)
		spawn_remove(sp);
}

static void
boxd_spawn_exit(struct box_ipc_msg *m)
{
	Box__SpawnExit *ex = (Box__SpawnExit *)m->msg;
	struct spawn *sp = spawn_find(ex->spawn_id);
	if (!sp || !sp->started) {
		log_err("boxd reported the exit of spawn %llu, which is not running",
			(unsigned long long)ex->spawn_id);
		shd_exit(1);
		return;
	}
	if (sp->hc) {
		ex->spawn_id = sp->local_id;
		struct hostchan *hc = sp->hc;
		int r = box_ipc_event_send(hc->ev, BOX__MSG_TYPE__MSG_SPAWN_EXIT, 0, &ex->base, NULL,
					   0);
		spawn_remove(sp);
		if (r < 0)
			hostchan_free(hc);
		return;
	}
	spawn_remove(sp);
}

static void shell_attach(const Box__ShellAttach *a);

static void
on_boxd_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	switch (m->type) {
	case BOX__MSG_TYPE__MSG_SHELL_ATTACH: shell_attach((const Box__ShellAttach *)m->msg); return;
	case BOX__MSG_TYPE__MSG_SPAWN_REPLY: boxd_spawn_reply(m); return;
	case BOX__MSG_TYPE__MSG_SPAWN_EXIT: boxd_spawn_exit(m); return;
	default:
		log_err("boxd sent %s", box_ipc_type_name(&box_proto_shell, m->type));
		shd_exit(1);
	}
}

static void
on_boxd_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	M.boxd = box_ipc_event_free(M.boxd);
	if (error == -ECONNRESET) {
		log_info("boxd closed its channel: exiting");
		shd_exit(0);
		return;
	}
	log_err_errno(error, "The boxd channel failed: exiting");
	shd_exit(1);
}

static void
on_policyd_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	log_err("box-policyd sent %s on the attach channel",
		box_ipc_type_name(&box_proto_policy, m->type));
	shd_exit(1);
}

static void
on_policyd_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	M.policyd = box_ipc_event_free(M.policyd);
	if (error == -ECONNRESET)
		log_err("box-policyd closed its channel: exiting (no shell without policy)");
	else
		log_err_errno(error, "The box-policyd channel failed: exiting");
	shd_exit(1);
}

/* ---- sessions ----------------------------------------------------------------- */

/*
 * No room for one more session. The spare holds a place from the moment it
 * is asked for: it answers the door without asking main, and main learns of
 * the session it took (SHD_CTL_TAKEN) only later, so a place counted only
 * then would let the spare run a shell past the cap (its command already
 * run when main says no). Sessions plus the spare never pass the cap; with
 * the last place the spare's, main refuses what it accepts itself.
 */
static bool
sessions_full(void)
{
	return M.n_sessions + (M.spare_ctl >= 0 ? 1 : 0) >= SHD_SESSIONS_MAX;
}

static void spare_make(void);

static void
session_free(struct session *s)
{
	for (struct session **pp = &M.sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			M.n_sessions--;
			spare_make(); /* (one held back while the sessions were at the cap) */
			break;
		}
	for (struct hostchan *hc = M.hosts; hc; hc = hc->next)
		if (hc->s == s)
			hc->s = NULL;
	for (struct spawn *sp = M.spawns; sp; sp = sp->next)
		if (sp->s == s)
			sp->s = NULL;
	box_ipc_event_free(s->conn);
	if (s->ctl_ev)
		event_free(s->ctl_ev);
	if (s->timer)
		event_free(s->timer);
	safe_close(s->ctl);
	safe_close(s->err_fd);
	free(s);
}

/*
 * Read and drop what the alias sent and nobody will read (closing its fds):
 * a unix socket closed with unread data resets its peer, whose next read
 * then fails before it reaches our last message.
 */
static void
conn_drain(int fd)
{
	for (int i = 0; i < 64; i++) {
		char buf[256];
		union {
			struct cmsghdr h;
			char c[CMSG_SPACE(sizeof(int) * BOX_IPC_MAX_FDS)];
		} u;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.c,
				     .msg_controllen = sizeof(u.c) };
		if (recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC) <= 0)
			return;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
					int f;
					memcpy(&f, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
					close(f);
				}
	}
}

/* The last word to the alias: ShellExit or ShellDenied, then the connection closes. */
static void
session_say(struct session *s, uint32_t type, const ProtobufCMessage *msg)
{
	if (!s->conn)
		return;
	int r = box_ipc_chan_send(box_ipc_event_chan(s->conn), type, 0, msg, NULL, 0);
	if (r < 0 && r != -EPIPE)
		log_warn_errno(r, "session %u: cannot answer the alias", s->id);
	conn_drain(box_ipc_event_fd(s->conn));
	s->conn = box_ipc_event_free(s->conn);
}

/* A ShellDenied text made one line: control characters become spaces. */
static void
denied_text(char *why)
{
	for (char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

static void
session_deny(struct session *s, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	denied_text(why);
	Box__ShellDenied d = BOX__SHELL_DENIED__INIT;
	d.message = why;
	session_say(s, BOX__MSG_TYPE__MSG_SHELL_DENIED, &d.base);
}

/* daemon.h */
void
shd_conn_deny(int fd, char *why)
{
	denied_text(why);
	Box__ShellDenied d = BOX__SHELL_DENIED__INIT;
	d.message = why;
	conn_drain(fd); /* its ShellOpen (and fds), when queued still */
	(void)box_ipc_send(fd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_DENIED, 0, &d.base,
			   NULL, 0);
	conn_drain(fd);
}

/*
 * Free it once the alias has its answer (or is gone), the child is reaped
 * and no process of the session holds its control socket any more (a
 * background job may outlive the invocation, as in bash).
 */
static void
session_maybe_free(struct session *s)
{
	if (!s->conn && (s->pid == 0 || (s->reaped && s->ctl_done)))
		session_free(s);
}

static void
timer_arm(struct session *s, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	if (s->timer)
		(void)evtimer_add(s->timer, &tv);
}

/* [box] command_timeout, from now (the validator caps it at 366 days: no overflow in a timeval). */
static void
command_timer_arm(struct session *s)
{
	if (M.init->has_command_timeout_ms && M.init->command_timeout_ms > 0)
		timer_arm(s, M.init->command_timeout_ms);
}

/* The alias is gone while the command runs: SIGHUP to everything it runs, SIGKILL 2 s later. */
static void
session_hangup(struct session *s)
{
	kill_group(s, SIGHUP);
	session_signal_spawns(s, SIGHUP);
	s->killing = true;
	evtimer_del(s->timer);
	timer_arm(s, SHD_KILL_GRACE_MS);
}

static void
on_session_timer(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	(void)fd;
	(void)what;
	if (s->pid == 0) {
		/* No ShellOpen in time. */
		log_warn("session %u: no ShellOpen within %u ms; closed", s->id,
			 SHD_OPEN_TIMEOUT_MS);
		session_deny(s, "box-shell: no ShellOpen within %u ms", SHD_OPEN_TIMEOUT_MS);
		session_maybe_free(s);
		return;
	}
	if (s->reaped)
		return;
	if (s->hangup_pending) {
		s->hangup_pending = false;
		if (!s->exited)
			session_hangup(s);
		return;
	}
	if (s->killing) {
		kill_group(s, SIGKILL);
		session_signal_spawns(s, SIGKILL);
		return;
	}
	/* [box] command_timeout: SIGTERM now, SIGKILL in 2 s. */
	s->timed_out = true;
	s->killing = true;
	if (s->err_fd >= 0) {
		char msg[128];
		uint64_t t = M.init->command_timeout_ms;
		int n = t % 1000 ? snprintf(msg, sizeof(msg),
					    "box-shell: command timed out after %llu ms\n",
					    (unsigned long long)t)
				 : snprintf(msg, sizeof(msg),
					    "box-shell: command timed out after %llu s\n",
					    (unsigned long long)(t / 1000));
		if (n > 0)
			(void)!write(s->err_fd, msg, (size_t)n);
	}
	/* Before the signal: the child must leave ShellExit (124) to main. */
	if (s->ctl >= 0)
		(void)send(s->ctl, (const char[]){ SHD_CTL_TIMED_OUT }, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	kill_group(s, SIGTERM);
	session_signal_spawns(s, SIGTERM);
	timer_arm(s, SHD_KILL_GRACE_MS);
}

/* One packet from a control socket (daemon.h). */
struct ctl_pkt {
	char tag;
	int fd;       /* SHD_CTL_POLICY, SHD_CTL_HOST: the channel; SHD_CTL_KNOCK,
		       * SHD_CTL_TAKEN: the connection; -1 for SHD_CTL_EXIT */
	int fd2;      /* SHD_CTL_TAKEN: the alias's stderr; else -1 */
	int status;   /* SHD_CTL_EXIT */
	bool said;    /* SHD_CTL_EXIT: the child sends ShellExit itself */
	pid_t sender; /* SCM_CREDENTIALS (main's end has SO_PASSCRED), or 0 */
};

/*
 * 1 and *p for a good packet; 0 nothing now; -1 every process closed it;
 * -2 a bad packet (its fds closed). Good: the tag with its length (1, or 3
 * for SHD_CTL_EXIT) and exactly one fd, a SOCK_SEQPACKET socket (for
 * SHD_CTL_EXIT it only proves the packet came from box-shell's code: a
 * script's write to the socket carries none; it is closed here), or for
 * SHD_CTL_TAKEN two, the first such a socket (the second is the alias's
 * stderr: any kind of file). Which tags a socket may carry is the caller's
 * to check.
 */
static int
ctl_recv(int fd, struct ctl_pkt *p)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4) + CMSG_SPACE(sizeof(struct ucred))];
	} u;
	char data[3] = { 0, 0, 0 };
	struct iovec iov = { data, sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	*p = (struct ctl_pkt){ .fd = -1, .fd2 = -1 };
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	int fds[4], nfd = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS)
			for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && nfd < 4;
			     k++)
				memcpy(&fds[nfd++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
		else if (c->cmsg_type == SCM_CREDENTIALS &&
			 c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			p->sender = cr.pid;
		}
	}
	p->tag = n >= 1 ? data[0] : 0;
	int type = 0;
	socklen_t tl = sizeof(type);
	bool exit_pkt = p->tag == SHD_CTL_EXIT;
	bool taken = p->tag == SHD_CTL_TAKEN;
	bool ok = n == (exit_pkt ? 3 : 1) && nfd == (taken ? 2 : 1) &&
		  (!exit_pkt || (unsigned char)data[2] <= 1) &&
		  !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
		  (p->tag == SHD_CTL_POLICY || p->tag == SHD_CTL_HOST || exit_pkt ||
		   p->tag == SHD_CTL_KNOCK || taken) &&
		  getsockopt(fds[0], SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
		  type == SOCK_SEQPACKET;
	if (ok && !exit_pkt) {
		p->fd = fds[0];
		p->fd2 = taken ? fds[1] : -1;
		return 1;
	}
	for (int k = 0; k < nfd; k++)
		close(fds[k]);
	if (ok) {
		p->status = (unsigned char)data[1];
		p->said = data[2] == 1;
		return 1;
	}
	return n <= 0 ? -1 : -2;
}

/* Main's end of a control socket: the sender's pid on every packet (SHD_CTL_EXIT's check). */
static void
ctl_passcred(int fd)
{
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
}

/*
 * A process's own box-policyd channel: passed on (PolicyChannelAttach), as a
 * person's for a person's session (`boxctl shell`). False: fatal.
 */
static bool
policy_attach(int fd, bool person)
{
	Box__PolicyChannelAttach a = BOX__POLICY_CHANNEL_ATTACH__INIT;
	a.has_person = person;
	a.person = person;
	int r = M.policyd ? box_ipc_event_send(M.policyd, BOX__MSG_TYPE__MSG_POLICY_CHANNEL_ATTACH,
					       0, &a.base, &fd, 1)
			  : -EPIPE;
	close(fd);
	if (r < 0) {
		log_err_errno(r, "Cannot attach a channel to box-policyd");
		shd_exit(1);
		return false;
	}
	return true;
}

static void session_exited(struct session *s, int status, bool said);

static void
on_ctl(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	(void)what;
	for (int i = 0; i < 32; i++) {
		struct ctl_pkt p;
		int r = ctl_recv(fd, &p);
		if (r == 0)
			return;
		if (r > 0 && (p.tag == SHD_CTL_KNOCK || p.tag == SHD_CTL_TAKEN)) {
			/* A spare's words, from a session: box-shell's own bug. */
			safe_close(p.fd);
			safe_close(p.fd2);
			r = -2;
		}
		if (r < 0) {
			/* -1: every process of the session closed it. */
			if (r == -2) {
				log_err("session %u: a bad packet on its control socket; killed",
					s->id);
				kill_group(s, SIGKILL);
			}
			event_del(s->ctl_ev);
			s->ctl_done = true;
			session_maybe_free(s);
			return;
		}
		if (p.tag == SHD_CTL_EXIT) {
			/* Only the invocation child itself says so (its subshells never do). */
			if (p.sender == s->pid && s->pid > 0)
				session_exited(s, p.status, p.said);
		} else if (p.tag == SHD_CTL_HOST) {
			host_attach(s, p.fd);
		} else if (!policy_attach(p.fd, s->person)) {
			return;
		}
	}
}

static int
open_dir_fd(const char *path)
{
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/*
 * The child's first steps, in a process forked from main (a spare ahead of
 * time, or a child for this session): its own process group; the control
 * socket CTL at SHD_FD_PRIVATE_MIN and above (far from 3-9, which scripts
 * redirect: `exec 3>log`); nothing else of main's above fd 2 but ALSO_KEEP
 * (0-2 are the alias's, or replaced by them next); main's signal handlers back to the
 * defaults (main_signals: every other signal is at its default already,
 * loop_prepare saw to that) and no signal blocked. Returns the control
 * socket's fd, or exits 125.
 */
int
shd_child_begin(int ctl, int also_keep)
{
	(void)setpgid(0, 0);
	/* At exactly SHD_FD_PRIVATE_MIN (what was there is the parent's, closed below anyway). */
	int at = SHD_FD_PRIVATE_MIN;
	int keep[2] = { ctl == at ? ctl : dup3(ctl, at, O_CLOEXEC), also_keep };
	if (keep[0] < 0 || also_keep == at)
		_exit(125);
	(void)fd_close_all_except(3, keep, also_keep >= 0 ? 2 : 1);
	for (size_t i = 0; i < ELEMENTSOF(shd_main_signals); i++)
		signal(shd_main_signals[i], SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return keep[0];
}

/* Main answers the door itself (ON) or leaves it to the spare waiting there. */
static void
door_watch(bool on)
{
	if (!M.accept_ev)
		return;
	if (on)
		(void)event_add(M.accept_ev, NULL);
	else
		(void)event_del(M.accept_ev);
}

static void
spare_drop(void)
{
	if (M.spare_ev)
		event_free(M.spare_ev);
	M.spare_ev = NULL;
	M.spare_ctl = safe_close(M.spare_ctl);
	M.spare_pid = 0;
	door_watch(true);
}

static struct session *session_new(int c);

/*
 * The spare took a connection at the door (SHD_CTL_TAKEN): CONN, whose
 * ShellOpen it read, and ERR_FD, the alias's stderr. The spare becomes
 * that session's invocation child, its control socket the session's, and
 * main answers the door until the next spare waits there.
 */
static void
spare_took(int conn, int err_fd)
{
	pid_t pid = M.spare_pid;
	int ctl = M.spare_ctl;
	struct event *ev = M.spare_ev;
	M.spare_ev = NULL;
	M.spare_ctl = -1;
	M.spare_pid = 0;
	door_watch(true);

	struct session *s = session_new(conn); /* (its place was held: only no memory fails) */
	if (s && box_ipc_chan_set_state(box_ipc_event_chan(s->conn), BOX_SESSION_RUNNING) < 0) {
		s->conn = box_ipc_event_free(s->conn);
		session_maybe_free(s);
		s = NULL;
	}
	if (!s) {
		(void)kill(-pid, SIGKILL);
		(void)kill(pid, SIGKILL);
		event_free(ev);
		close(ctl);
		close(err_fd);
		return;
	}
	evtimer_del(s->timer);
	s->door = true;
	s->err_fd = fd_dup_cloexec(err_fd, 3);
	close(err_fd);
	s->pid = pid;
	s->ctl = ctl;
	event_del(ev);
	if (event_assign(ev, M.base, s->ctl, EV_READ | EV_PERSIST, on_ctl, s) == 0 &&
	    event_add(ev, NULL) == 0) {
		s->ctl_ev = ev;
	} else {
		event_free(ev);
		log_err("session %u: cannot watch its control socket", s->id);
		kill_group(s, SIGKILL);
	}
	command_timer_arm(s);
}


/*
 * The spare's control socket before a session takes it: its channel attach
 * (whose SCM_CREDENTIALS say the spare's pid), nothing else.
 */
static void
spare_ctl_read(int fd, int max)
{
	for (int i = 0; i < max; i++) {
		struct ctl_pkt p;
		int r = ctl_recv(fd, &p);
		if (r == 0)
			return;
		if (r > 0 && p.tag == SHD_CTL_POLICY && p.sender > 0 &&
		    (M.spare_pid == 0 || M.spare_pid == p.sender)) {
			if (M.spare_pid == 0)
				door_watch(false); /* it answers the door from now on */
			M.spare_pid = p.sender;
			if (!policy_attach(p.fd, false))
				return;
			continue;
		}
		if (r > 0 && p.tag == SHD_CTL_KNOCK && p.sender > 0 && p.sender == M.spare_pid) {
			(void)session_new(p.fd);
			continue;
		}
		if (r > 0 && p.tag == SHD_CTL_TAKEN && p.sender > 0 && p.sender == M.spare_pid) {
			spare_took(p.fd, p.fd2);
			return; /* what comes next on the socket is the session's (on_ctl) */
		}
		safe_close(p.fd);
		safe_close(p.fd2);
		/* It died, or said what a process with no session cannot: gone. */
		log_warn("The spare session process %s; replaced", r == -1 ? "exited"
							      : "sent a bad packet");
		/* One that had started is replaced now; one the zygote could not fork, at the
		 * next session's end (no loop of failing forks). */
		bool started = M.spare_pid > 0;
		if (started)
			(void)kill(M.spare_pid, SIGKILL);
		spare_drop();
		if (started)
			spare_make();
		return;
	}
}

static void
on_spare_delayed(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	struct event *ev = M.spare_ev;
	if (M.spare_ctl >= 0)
		spare_ctl_read(M.spare_ctl, 4);
	if (ev && M.spare_ev == ev)
		(void)event_add(ev, NULL);
}

static void
on_spare_ctl(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	(void)arg;
	if (M.spare_delay_ms && M.spare_delay_ev && M.spare_ev) {
		struct timeval tv = { (time_t)(M.spare_delay_ms / 1000),
				      (suseconds_t)(M.spare_delay_ms % 1000) * 1000 };
		(void)event_del(M.spare_ev);
		(void)evtimer_add(M.spare_delay_ev, &tv);
		return;
	}
	spare_ctl_read(fd, 4);
}

/*
 * Everything the spare said before it ended, read now: a spare that took a
 * session may live out the whole session (take, run, exit) before main
 * reads its control socket, and the zygote's report of its end, on another
 * socket, may be read first. Read before that report is matched, its pid
 * becomes a session's (TAKEN) or stays the spare's, as it was when it ended
 * -- never an unknown pid whose session then waits for a reap that came.
 */
static void
spare_drain(void)
{
	if (M.spare_ctl >= 0)
		spare_ctl_read(M.spare_ctl, 256);
}

/*
 * A spare (when there is none): the next ShellOpen goes to it, so a session
 * starts with no fork, no signal reset and no channel attach of its own.
 * The zygote forks it (main's pages stay its own: no fork write-protects
 * them); with no zygote, main does. Asked for while box-shell is idle (after
 * a session ended, at start-up).
 */
static void
spare_make(void)
{
	int sv[2];
	if (M.spare_ctl >= 0 || !M.policyd || M.exiting || M.n_sessions >= SHD_SESSIONS_MAX ||
	    box_ipc_socketpair(sv, false) < 0)
		return;
	ctl_passcred(sv[0]);
	if (M.zyg_fd >= 0) {
		int r = shd_ctl_send_fd(M.zyg_fd, SHD_ZYG_FORK, sv[1]);
		close(sv[1]);
		if (r < 0) {
			close(sv[0]);
			log_err_errno(r, "Cannot reach the zygote");
			shd_exit(1);
			return;
		}
	} else {
		pid_t pid = fork();
		if (pid < 0) {
			close(sv[0]);
			close(sv[1]);
			return;
		}
		if (pid == 0)
			shd_spare_run(shd_child_begin(sv[1], DAEMON_FD_LISTEN));
		close(sv[1]);
		(void)setpgid(pid, pid);
		M.spare_pid = pid;
	}
	M.spare_ctl = sv[0];
	M.spare_ev = event_new(M.base, M.spare_ctl, EV_READ | EV_PERSIST, on_spare_ctl, NULL);
	if (!M.spare_ev || event_add(M.spare_ev, NULL) < 0) {
		if (M.spare_pid > 0)
			(void)kill(M.spare_pid, SIGKILL);
		spare_drop();
	}
}

/*
 * ShellOpen on a connection main accepted (no spare was at the door, or
 * its ShellOpen was slow to come): an invocation child forked with the
 * alias's fds as 0-2. The spare stays at the door: it is never handed a
 * session, so it cannot be both at once.
 */
static void
session_open(struct session *s, struct box_ipc_msg *m)
{
	const Box__ShellOpen *so = (const Box__ShellOpen *)m->msg;
	int sv[2];

	evtimer_del(s->timer);
	_cleanup_close_ int cwd_fd = open_dir_fd(so->cwd);
	if (cwd_fd < 0) {
		session_deny(s, "box-shell: cannot enter %s: %s", so->cwd, strerror(errno));
		session_maybe_free(s);
		return;
	}
	s->err_fd = fcntl(m->fds[2], F_DUPFD_CLOEXEC, 3);
	if (box_ipc_socketpair(sv, false) < 0) {
		session_deny(s, "box-shell: cannot serve: %s", strerror(errno));
		session_maybe_free(s);
		return;
	}
	s->ctl = sv[0];
	ctl_passcred(s->ctl); /* before the child can send its exit word */
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[1]);
		session_deny(s, "box-shell: cannot fork: %s", strerror(errno));
		session_maybe_free(s);
		return;
	}
	if (pid == 0) {
		/* The child: nothing of main's but what it needs; the alias's fds 0-2. */
		/* (above SHD_FD_PRIVATE_MIN: that is the control socket's, in every child) */
		int keep = fd_dup_cloexec(cwd_fd, SHD_FD_PRIVATE_MIN + 1);
		int src[3] = { m->fds[0], m->fds[1], m->fds[2] };
		int dst[3] = { 0, 1, 2 };
		if (keep < 0 || fd_move_to(src, dst, 3) < 0)
			_exit(125);
		int ctl = shd_child_begin(sv[1], keep);
		struct shd_invocation inv = { .open = so, .ctl_fd = ctl, .cwd_fd = keep,
						.root_fd = -1 };
		shd_invocation_run(&inv);
	}
	close(sv[1]);
	(void)setpgid(pid, pid);
	s->pid = pid;
	s->ctl_ev = event_new(M.base, s->ctl, EV_READ | EV_PERSIST, on_ctl, s);
	if (!s->ctl_ev || event_add(s->ctl_ev, NULL) < 0) {
		log_err("session %u: cannot watch its control socket", s->id);
		kill_group(s, SIGKILL);
	}
	command_timer_arm(s);
}

static void
on_session_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct session *s = userdata;
	(void)e;
	if (m->type == BOX__MSG_TYPE__MSG_SHELL_OPEN) {
		session_open(s, m);
		return;
	}
	if (m->type == BOX__MSG_TYPE__MSG_SHELL_SIGNAL) {
		int sig = ((const Box__ShellSignal *)m->msg)->signal;
		kill_group(s, sig);
		session_signal_spawns(s, sig);
	}
}

/*
 * The child's exit word waits unread on the control socket: the alias that
 * just hung up did so after its ShellExit (a session taken at the door,
 * whose child tells it first), not while the command ran.
 */
static bool
exit_word_queued(const struct session *s)
{
	char pkt[3];
	return s->ctl >= 0 && recv(s->ctl, pkt, sizeof(pkt), MSG_PEEK | MSG_DONTWAIT) == 3 &&
	       pkt[0] == SHD_CTL_EXIT;
}

/* The alias went away (or sent garbage): everything it runs gets SIGHUP, then SIGKILL. */
static void
on_session_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct session *s = userdata;
	(void)e;
	if (error != -ECONNRESET && error != -EPROTO)
		log_warn_errno(error, "session %u: protocol error from the alias; closed", s->id);
	s->conn = box_ipc_event_free(s->conn);
	if (s->pid > 0 && !s->reaped && !s->exited && !exit_word_queued(s)) {
		if (s->door) {
			/* Its ShellExit may have come just before its exit word: wait for that. */
			s->hangup_pending = true;
			evtimer_del(s->timer);
			timer_arm(s, SHD_HANGUP_WAIT_MS);
		} else {
			session_hangup(s);
		}
	}
	session_maybe_free(s);
}

/*
 * A session for connection C (accepted by main, or by the spare): its
 * connection watched, the ShellOpen awaited. NULL: refused (too many
 * sessions: ShellDenied) or no memory; C is closed then.
 */
static struct session *
session_new(int c)
{
	if (sessions_full()) {
		char why[96];
		(void)snprintf(why, sizeof(why), "box-shell: too many shells running at once (max %u)",
			       SHD_SESSIONS_MAX);
		shd_conn_deny(c, why);
		close(c);
		return NULL;
	}
	struct session *s = calloc(1, sizeof(*s));
	if (!s) {
		close(c);
		return NULL;
	}
	s->id = ++M.next_session;
	s->ctl = s->err_fd = -1;
	s->conn = box_ipc_event_new(M.base, c, &box_proto_session, BOX_SESSION_ROLE_ALIAS,
				    on_session_msg, on_session_close, s);
	s->timer = evtimer_new(M.base, on_session_timer, s);
	if (!s->conn || !s->timer) {
		if (!s->conn)
			close(c);
		box_ipc_event_free(s->conn);
		if (s->timer)
			event_free(s->timer);
		free(s);
		return NULL;
	}
	s->next = M.sessions;
	M.sessions = s;
	M.n_sessions++;
	timer_arm(s, SHD_OPEN_TIMEOUT_MS);
	return s;
}

static void
on_accept(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	(void)arg;
	for (int i = 0; i < 64; i++) {
		int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EMFILE || errno == ENFILE)
				log_warn_errno(-errno, "Cannot accept a session");
			return;
		}
		(void)session_new(c);
	}
}

/* ShellAttached: OK with the pty master and the end pipe's read end, else why not. */
static void
attach_answer(uint64_t id, const int fds[2], const char *fmt, ...)
{
	Box__ShellAttached rep = BOX__SHELL_ATTACHED__INIT;
	char why[256];
	rep.attach_id = id;
	rep.ok = fds != NULL;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		(void)vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		denied_text(why);
		rep.error = why;
	}
	int r = M.boxd ? box_ipc_event_send(M.boxd, BOX__MSG_TYPE__MSG_SHELL_ATTACHED, 0, &rep.base,
					    fds, fds ? 2 : 0)
		       : -EPIPE;
	if (r < 0)
		log_warn_errno(r, "Cannot answer boxd's ShellAttach");
}

/*
 * `boxctl shell` (ShellAttach from boxd): a pty of box-shell's own devpts,
 * its holder forked (attach.c), and a session for the holder's connection,
 * its processes' channels a person's. The master and the end pipe's read
 * end go back to boxd, which hands them to boxctl; box-shell keeps neither.
 */
static void
shell_attach(const Box__ShellAttach *a)
{
	if (sessions_full()) {
		attach_answer(a->attach_id, NULL, "too many shells running at once (max %u)",
			      SHD_SESSIONS_MAX);
		return;
	}
	_cleanup_close_ int master = -1, slave = -1, end_r = -1, end_w = -1, conn = -1,
			    theirs = -1;
	int r = shd_pty_open(a->has_rows ? a->rows : 0, a->has_cols ? a->cols : 0, &master,
			     &slave);
	if (r < 0) {
		log_warn_errno(r, "boxctl shell: cannot open a pty in box-shell's /dev/pts: %m");
		attach_answer(a->attach_id, NULL, "cannot open a pty in the box: %s", strerror(-r));
		return;
	}
	int end[2], sv[2];
	if (pipe2(end, O_CLOEXEC) < 0) {
		attach_answer(a->attach_id, NULL, "cannot serve: pipe: %s", strerror(errno));
		return;
	}
	end_r = end[0];
	end_w = end[1];
	if (box_ipc_socketpair(sv, false) < 0) {
		attach_answer(a->attach_id, NULL, "cannot serve: socketpair: %s", strerror(errno));
		return;
	}
	conn = sv[0];
	theirs = sv[1];
	pid_t pid = fork();
	if (pid < 0) {
		attach_answer(a->attach_id, NULL, "cannot fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		shd_holder_run(theirs, slave, end_w, a);
	(void)fcntl(conn, F_SETFL, fcntl(conn, F_GETFL) | O_NONBLOCK);
	struct session *s = session_new(TAKE_FD(conn)); /* (too many: ShellDenied to the holder) */
	if (!s) {
		(void)kill(pid, SIGKILL);
		attach_answer(a->attach_id, NULL, "cannot serve a session now");
		return;
	}
	s->person = true;
	log_info("session %u: a person's shell (boxctl shell), its terminal's holder pid %d", s->id,
		 (int)pid);
	int fds[2] = { master, end_r };
	attach_answer(a->attach_id, fds, NULL);
}

/*
 * The invocation child is exiting (SHD_CTL_EXIT) or was reaped: ShellExit,
 * once, with its status (124 after a timeout), then the next session's
 * spare is forked while the alias exits and its caller goes on. SAID: the
 * child tells the alias itself (a session taken at the door): main only
 * lets go of the connection.
 */
static void
session_exited(struct session *s, int status, bool said)
{
	s->exited = true;
	if (s->hangup_pending) {
		s->hangup_pending = false; /* the alias hung up after its ShellExit */
		evtimer_del(s->timer);
	}
	if (!s->conn && !said) {
		spare_make(); /* (the alias hung up, or was told: one is there already) */
		return;
	}
	/* No more messages for the alias's stderr: a reader waiting for its EOF gets it. */
	s->err_fd = safe_close(s->err_fd);
	if (said) {
		if (s->conn) {
			conn_drain(box_ipc_event_fd(s->conn));
			s->conn = box_ipc_event_free(s->conn);
		}
	} else {
		if (s->timed_out)
			status = 124;
		Box__ShellExit ex = BOX__SHELL_EXIT__INIT;
		ex.status = status & 255;
		session_say(s, BOX__MSG_TYPE__MSG_SHELL_EXIT, &ex.base);
	}
	spare_make();
}

/* PID (main's child, or the zygote's) ended with wait status ST. */
static void
child_ended(pid_t pid, int st)
{
	spare_drain();
	if (pid == M.spare_pid) {
		log_warn("The spare session process died (status %d); replaced", st);
		spare_drop();
		spare_make();
		return;
	}
	struct session *s = M.sessions;
	while (s && s->pid != pid)
		s = s->next;
	if (!s)
		return; /* an orphan of a session, reparented to us */
	s->reaped = true;
	evtimer_del(s->timer);
	session_exited(s, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), false);
	session_maybe_free(s);
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0)
			break;
		if (pid == M.zyg_pid) {
			/* Its children's ends can no longer be told: no shell without it. */
			log_err("The zygote exited (status %d): exiting", st);
			M.zyg_pid = 0;
			shd_exit(1);
			return;
		}
		child_ended(pid, st);
	}
}

/* The zygote's reports: a spare, or the session it became, was reaped. */
static void
on_zygote(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	(void)arg;
	for (int i = 0; i < 64; i++) {
		char pkt[1 + 2 * sizeof(int32_t) + 1];
		ssize_t n = recv(fd, pkt, sizeof(pkt), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n != 1 + 2 * sizeof(int32_t) || pkt[0] != SHD_ZYG_EXITED) {
			log_err("The zygote's channel %s: exiting", n == 0 ? "closed" : "failed");
			shd_exit(1);
			return;
		}
		int32_t v[2];
		memcpy(v, pkt + 1, sizeof(v));
		child_ended((pid_t)v[0], (int)v[1]);
	}
}

/*
 * The zygote, forked once before any session (zygote.c): from now on the
 * spares are its children, and main's own pages are never write-protected
 * by a fork again. Without it (fork failed) main forks them itself.
 */
static void
zygote_start(void)
{
	int sv[2];
	if (box_ipc_socketpair(sv, false) < 0) {
		log_warn_errno(-errno, "No zygote (socketpair); main forks the spares");
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_warn_errno(-errno, "No zygote (fork); main forks the spares");
		close(sv[0]);
		close(sv[1]);
		return;
	}
	if (pid == 0)
		shd_zygote_run(shd_child_begin(sv[1], DAEMON_FD_LISTEN));
	close(sv[1]);
	M.zyg_pid = pid;
	M.zyg_fd = sv[0];
	M.zyg_ev = event_new(M.base, M.zyg_fd, EV_READ | EV_PERSIST, on_zygote, NULL);
	if (!M.zyg_ev || event_add(M.zyg_ev, NULL) < 0)
		fatalx("Cannot watch the zygote");
}

static void
on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	log_info("Signal %d: exiting", (int)sig);
	shd_exit(0);
}

/* ---- start-up ----------------------------------------------------------------- */

/* A refusal to start: ShellReady ok=false with the reason, then exit 1. */
static noreturn void
start_fail(struct box_ipc_chan *chan, uint64_t rid, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	log_err("Refusing to start: %s", why);
	Box__ShellReady rep = BOX__SHELL_READY__INIT;
	rep.ok = false;
	rep.error = why;
	int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_SHELL_READY, rid, &rep.base, NULL, 0);
	if (r < 0)
		log_err_errno(r, "Cannot send ShellReady");
	exit(1);
}

/* Step 1: fd 3 boxd's channel, fd 4 box-policyd's, fd 5 the listening shell.sock. */
static void
channels_check(void)
{
	static const struct daemon_fd_want want[] = {
		{ DAEMON_FD_BOXD, DAEMON_FD_CHANNEL, "boxd's SOCK_SEQPACKET channel" },
		{ DAEMON_FD_POLICYD, DAEMON_FD_CHANNEL, "box-policyd's SOCK_SEQPACKET channel" },
		{ DAEMON_FD_LISTEN, DAEMON_FD_LISTENER, "the listening SOCK_SEQPACKET shell.sock" },
	};
	size_t bad = 0;
	int r = daemon_fds_take(want, sizeof(want) / sizeof(want[0]), NULL, &bad);
	if (r < 0)
		fatal(r, "fd %d is not %s (started by boxd)", want[bad].fd, want[bad].what);
}

/* Step 2: the ids it runs as (boxd chose them), then no capabilities, no_new_privs. */
static void
privileges_lock_down(void)
{
	const char *failed = NULL;
	int r = daemon_lock_down(getuid(), getgid(), &failed);
	if (r < 0)
		fatal(r, "Cannot lock down privileges (%s)", failed ? failed : "?");
}

/* Step 3: ShellInit, the first message. Returns false if boxd gave up first. */
static bool
init_receive(struct box_ipc_chan *chan, struct box_ipc_msg *m)
{
	int r = daemon_init_receive(chan, m, SHD_INIT_TIMEOUT_MS);
	if (r == 0)
		return false;
	if (r < 0)
		fatal(r, "No valid ShellInit from boxd");
	M.init = (Box__ShellInit *)m->msg;
	m->msg = NULL; /* lives as long as the process */
	shd_box.init = M.init;
	return true;
}

/* Step 4: everything that reads a file or needs a call the filter refuses. */
/* Test hook NAME from box-shell's own environment: ms up to 10 s, 0 when unset; anything
 * else refuses the start. */
static unsigned
test_hook_ms(struct box_ipc_chan *chan, uint64_t rid, const char *name)
{
	uint64_t ms;
	if (box_test_ms(name, 10000, &ms) < 0)
		start_fail(chan, rid, "%s=%s: not a number of ms up to 10000", name, getenv(name));
	return (unsigned)ms;
}

static void
loop_prepare(struct box_ipc_chan *chan, uint64_t rid)
{
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name)
		shd_box.user = strdup(pw->pw_name);
	tzset();
	shd_prefault_scan();
	/* A session costs the main process about 4 fds: the soft limit up to the hard one. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/*
	 * Every disposition main was started with back to the default but
	 * SIGPIPE's (ignored, step 1): a session's child then resets only
	 * main's own (shd_main_signals) to start with every signal at its default.
	 */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGPIPE)
			(void)signal(sig, SIG_DFL);
	M.base = event_base_new();
	if (!M.base)
		start_fail(chan, rid, "cannot create the event loop");
	M.sigchld_ev = evsignal_new(M.base, SIGCHLD, on_sigchld, NULL);
	if (!M.sigchld_ev || evsignal_add(M.sigchld_ev, NULL) < 0)
		start_fail(chan, rid, "cannot watch SIGCHLD");
	M.spare_delay_ms = test_hook_ms(chan, rid, "BOX_TEST_SHELL_SPARE_DELAY_MS");
	M.ready_delay_ms = test_hook_ms(chan, rid, "BOX_TEST_SHELL_READY_DELAY_MS");
	if (M.spare_delay_ms) {
		M.spare_delay_ev = evtimer_new(M.base, on_spare_delayed, NULL);
		if (!M.spare_delay_ev)
			start_fail(chan, rid, "cannot create a timer");
	}
	sh_fs_test_open_entries_delay_ms =
	    test_hook_ms(chan, rid, "BOX_TEST_SHELL_OPEN_ENTRIES_DELAY_MS");
	static const int sigs[2] = { SIGTERM, SIGINT };
	for (int i = 0; i < 2; i++) {
		M.stop_ev[i] = evsignal_new(M.base, sigs[i], on_stop_signal, NULL);
		if (!M.stop_ev[i] || evsignal_add(M.stop_ev[i], NULL) < 0)
			start_fail(chan, rid, "cannot watch signal %d", sigs[i]);
	}
}

/* Step 5: from here on only the allow-list (no execve, no new namespaces). */
static void
seccomp_enter(struct box_ipc_chan *chan, uint64_t rid)
{
	int r = shd_seccomp();
	if (r < 0)
		start_fail(chan, rid, "cannot install the seccomp filter: %s", strerror(-r));
}

/* Step 6: ShellReady. */
static void
ready_send(struct box_ipc_chan *chan, uint64_t rid)
{
	Box__ShellReady rep = BOX__SHELL_READY__INIT;
	rep.ok = true;
	int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_SHELL_READY, rid, &rep.base, NULL, 0);
	if (r < 0)
		fatal(r, "Cannot send ShellReady");
	log_info("box '%s' (%s): serving (%zu tools, %zu exec entries)", M.init->box_name,
		 M.init->box_id, M.init->n_tools, M.init->n_exec_entries);
}

/*
 * Step 5b: what box-policyd lets box-shell decide in process (PolicyLocal: the
 * policy, its generation, the actions that need no history), asked on fd 4 before
 * it is watched and before anything forks, so that every process has it loaded
 * (docs/box-policy.5.md, "Decisions without a round trip"). No answer, or a policy
 * that does not load: box-shell does not start (no shell without policy).
 */
static void
local_fetch(struct box_ipc_chan *chan, uint64_t rid)
{
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_POLICY_LOCAL };
	struct box_ipc_chan *c =
	    box_ipc_chan_new(DAEMON_FD_POLICYD, &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	Box__PolicyLocalRequest q = BOX__POLICY_LOCAL_REQUEST__INIT;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	char why[512] = "";
	int r = c ? box_ipc_chan_set_state(c, BOX_POLICY_READY) : -ENOMEM;
	if (r == 0)
		r = box_ipc_chan_allow(c, types, 1);
	if (r == 0)
		r = box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, 1, &q.base, NULL, 0);
	while (r == 0 && (r = box_ipc_recv_wait(c, &m, -1)) == -EINTR)
		r = 0;
	if (r == 0)
		r = -ECONNRESET;
	if (r > 0)
		r = m.type == BOX__MSG_TYPE__MSG_POLICY_LOCAL && m.request_id == 1
			    ? shd_local_load((const Box__PolicyLocal *)m.msg,
					     m.n_fds == 1 ? m.fds[0] : -1, why, sizeof(why))
			    : -EBADMSG;
	if (r < 0 && !why[0])
		(void)snprintf(why, sizeof(why), "no policy from box-policyd: %s", strerror(-r));
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c); /* (fd 4 stays: the loop watches it next) */
	if (r < 0)
		start_fail(chan, rid, "%s", why);
}

/* Step 7: the channels and the listener on the loop. */
static void
channels_watch(void)
{
	M.boxd = box_ipc_event_new(M.base, DAEMON_FD_BOXD, &box_proto_shell, BOX_SHELL_ROLE_BOXD,
				   on_boxd_msg, on_boxd_close, NULL);
	if (!M.boxd || box_ipc_chan_set_state(box_ipc_event_chan(M.boxd), BOX_SHELL_SERVING) < 0)
		fatal(-errno, "Cannot watch the boxd channel");
	/* fd 4 carries only attaches up; anything that comes down is a protocol error. */
	M.policyd = box_ipc_event_new(M.base, DAEMON_FD_POLICYD, &box_proto_policy,
				      BOX_POLICY_ROLE_POLICYD, on_policyd_msg, on_policyd_close,
				      NULL);
	if (!M.policyd ||
	    box_ipc_chan_set_state(box_ipc_event_chan(M.policyd), BOX_POLICY_READY) < 0 ||
	    box_ipc_chan_allow(box_ipc_event_chan(M.policyd), NULL, 0) < 0)
		fatal(-errno, "Cannot watch the box-policyd channel");
	if (fd_set_nonblock(DAEMON_FD_LISTEN, true) < 0)
		fatal(-errno, "Cannot make shell.sock non-blocking");
	M.accept_ev = event_new(M.base, DAEMON_FD_LISTEN, EV_READ | EV_PERSIST, on_accept, NULL);
	if (!M.accept_ev || event_add(M.accept_ev, NULL) < 0)
		fatalx("Cannot watch shell.sock");
	zygote_start();
	spare_make(); /* the first session's child */
}

int
main(int argc, char **argv)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;

	log_init("box-shell", 1);
	sh_host_set(&shd_host_ops); /* every session and spare forks from here */
	if (log_daemon_args(argc, argv) < 0) {
		fprintf(stderr, "usage: box-shell [-n|-q]  (started by boxd, fds 3-5)\n");
		return 2;
	}
	channels_check();
	privileges_lock_down();
	struct box_ipc_chan *chan =
	    box_ipc_chan_new(DAEMON_FD_BOXD, &box_proto_shell, BOX_SHELL_ROLE_BOXD);
	if (!chan)
		fatal(-ENOMEM, "Cannot allocate the boxd channel");
	if (!init_receive(chan, &m))
		return 0; /* boxd gave up before we started */
	loop_prepare(chan, m.request_id);
	local_fetch(chan, m.request_id);
	if (M.ready_delay_ms)
		box_sleep_ms(M.ready_delay_ms); /* a start this much slower: it only slows a step */
	seccomp_enter(chan, m.request_id);
	ready_send(chan, m.request_id);
	box_ipc_chan_free(chan);
	box_ipc_msg_done(&m);
	channels_watch();
	if (event_base_dispatch(M.base) < 0) /* step 8 */
		fatalx("The event loop failed");
	/* What is left is killed; the aliases in flight see the connection close: 125. */
	for (struct session *s = M.sessions; s; s = s->next)
		kill_group(s, SIGKILL);
	if (M.spare_pid > 0)
		(void)kill(M.spare_pid, SIGKILL);
	if (M.zyg_pid > 0)
		(void)kill(M.zyg_pid, SIGKILL);
	return M.exit_code;
}
