/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decide_policyd.c — the in-box box-shell daemon's back end of decide.h
 *: every request goes to box-policyd over a
 * SOCK_SEQPACKET channel of this process's own (proto/policy.proto, role
 * peer), a batch as one DecideBatchRequest, an outcome as a RecordRequest.
 * box-policyd observes, decides, keeps the one history of the box and
 * writes the decisions.jsonl line (source "box-shell": the channel's, never
 * a field). The engine is not linked here. The channel is the shared
 * client's (libpolicyclient/policy_client.h, blocking: one request at a time
 * per process): it numbers the requests (a DecideBatch of N takes N ids),
 * matches each reply, keeps each channel's permits and sends an outcome as
 * the Record of the oldest permit of its action and input; one with none
 * (its permit was made on another channel, or the bound forgot it) is not
 * sent.
 *
 * One channel per process: a fork (an invocation, a pipeline stage, a
 * subshell) makes a socketpair, keeps one end and hands the other to the
 * daemon's main process over the session's control socket (daemon.h,
 * SHD_CTL_POLICY), which passes it to box-policyd as PolicyChannelAttach.
 * So concurrent processes never read each other's replies. The channel is
 * usable at once (policyd reads it once the attach reached it). A process
 * that finds itself with a channel made before a fork (one that skipped
 * sh_decider_forked; an atfork handler tells, with no getpid() per request)
 * attaches one before its next request.
 *
 * The input fields and their spellings are decide_local.c's, as docs/box-policy.5.md
 * §2 says: fs:* {path, operation}; shell:exec {command, program, arg1?,
 * arg2?, arg_count, cwd}; shell:spawn adds program_path; paths canonical,
 * "~/rel" under the owner's home; shell:spawn of a program a [tool.NAME]
 * matches adds credential_reads, the stores its grants name (ShellInit).
 *
 * A spare's rehearsal has a decider of its own (sh_decider_rehearsal_new),
 * whose channel's far end answers each request with a permit before it is
 * sent: the decider that reaches box-policyd never forges one.
 *
 * Fail closed: a channel that breaks, a reply that does not match, or a
 * channel that cannot be made returns a negative errno; the interpreter
 * then refuses the command (126) or fails the file operation.
 * Trusts: box-policyd's replies, validated by the protocol table; nothing
 * from the script beyond the strings it compares.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <boxpolicy.h>
#include <boxpolicy_proto.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon.h"
#include "decide.h"
#include "fdutil.h"
#include "ipc.h"
#include "policy_client.h"
#include "policy_fields.h"
#include "policy_local.h"
#include "policy_validate.h"
#include "proto_policy.h"

/* fixed arguments a tool table can name (the match looks no further) */
#define SH_SPAWN_MATCH_ARGS 256
#define CRED_MAX 16 /* BOX_SHELL_CREDENTIALS_MAX */

/*
 * fs outcome records held back (see sh_record_fs): at most HOLD_MAX of them,
 * none older than HOLD_NS when the next one comes.
 */
#define HOLD_MAX 128
#define HOLD_NS 1000000LL
/* decisions made in process: sent when the oldest waiting is this old as another comes */
#define SHIP_NS 1000000LL

struct sh_decider {
	/* this process's channel to box-policyd: its ids, replies and permits */
	struct policy_client *pc;
	unsigned long gen;         /* fork_gen when the channel was made */
	/* held fs outcomes, in order: one RecordBatch when they go */
	struct held {
		uint8_t action, op, result;
		bool failed;
		char *path;        /* spelled ("~/..."), owned */
		uint64_t like;     /* the decision's id, when the caller knew it; 0: none */
	} held[HOLD_MAX];
	unsigned n_held;
	int64_t held_since;        /* CLOCK_MONOTONIC of the oldest held */
	int ctl_fd;                /* the session's control socket (attaches; -1: none) */
	char *home;
	size_t home_len;
	/*
	 * A rehearsal's decider only (sh_decider_rehearsal_new): the far end of
	 * its channel, where a permit for each request waits before it is sent.
	 * Never set in a decider that reaches box-policyd; -1 there.
	 */
	int stage;
	/* decisions in process: this decider's request and decision (made at first use) */
	struct policy_local_verdict lv;
	int64_t ship_since; /* CLOCK_MONOTONIC of the oldest decision waiting for its PolicyShip */
	/*
	 * The last shell:exec this process decided in process and permitted: its
	 * permit's id and what it was asked with (program, the arguments, cwd: NUL-
	 * terminated, one after another), so that its outcome, which the interpreter
	 * records with the same request, names that permit without the fields being made
	 * and packed again (exec_fields is a function of these strings: the home and the
	 * tool table are fixed). Valid while last_pc is this process's channel.
	 */
	struct policy_client *last_pc;
	uint64_t last_id;
	size_t last_n_args, last_len, last_cap;
	char *last_req;
	bool local_made; /* the last send_decide was decided in process */
};

/*
 * Decisions without a round trip (docs/box-policy.5.md): the policy box-policyd sent
 * in PolicyLocal, loaded once in main before any fork (every process shares it,
 * read-only), and the actions it said need no history. Such an action is decided
 * here with the same engine and the same request fields, and the decision goes to
 * box-policyd in this channel's next PolicyShip, where it is decided again and
 * logged; a decision it does not agree with ends the channel (a protocol error).
 */
static const char *const local_names[] = { "fs:read",  "fs:write",   "fs:delete",
					   "fs:move",  "shell:exec", "shell:spawn" };
/*
 * Loaded in main before any fork (every process shares it, read-only); the page
 * (box-policyd's, read-only, shared by every process) says when a reload put a new
 * policy in force: this process then asks for it (local_refresh) before it decides
 * anything in process.
 */
static struct policy_local local;
static pthread_once_t local_once = PTHREAD_ONCE_INIT;

static void
local_init(void)
{
	policy_local_init(&local, local_names, sizeof(local_names) / sizeof(local_names[0]));
}

int
shd_local_load(const Box__PolicyLocal *m, int page_fd, char *why, size_t why_len)
{
	(void)pthread_once(&local_once, local_init);
	/*
	 * No page (box-policyd could not seal one): nothing is decided in process, since
	 * nothing would say when the policy changed.
	 */
	if (page_fd < 0)
		return 0;
	int r = policy_local_set(&local, m, why, why_len);
	if (r < 0)
		return r;
	r = policy_local_map(&local, page_fd);
	if (r < 0) {
		policy_local_drop(&local);
		(void)snprintf(why, why_len, "cannot map box-policyd's generation page: %s",
			       strerror(-r));
	}
	return r;
}

/*
 * The page moved (a reload): ask box-policyd on D's channel for the policy in force
 * (policy_client_call ships the decisions made so far first, under the generation
 * they were made with). Anything that fails leaves this process deciding nothing in
 * process: every later decision is asked.
 */
static void chan_drop(struct sh_decider *d);

static void
local_refresh(struct sh_decider *d)
{
	Box__PolicyLocalRequest q = BOX__POLICY_LOCAL_REQUEST__INIT;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	char why[256];

	int r = policy_client_call(d->pc, BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, &q.base, &m);
	if (r < 0) {
		chan_drop(d);
		return;
	}
	if (policy_local_set(&local, (const Box__PolicyLocal *)m.msg, why, sizeof(why)) < 0)
		policy_local_drop(&local); /* local_ok says no from here on */
	box_ipc_msg_done(&m);
	/* The request scratch was made for the policy before. */
	policy_local_verdict_reset(&d->lv);
}

/* ACTION is decided in process (one of PolicyLocal's). */
static bool
local_ok(const char *action)
{
	return policy_local_ok(&local, action);
}

/* One request's input fields (the strings are borrowed or in `own`). */
struct fields {
	struct policy_fields in;
	char *own[4];
	size_t n_own;
	/* credential_reads (shell:spawn of a matched tool): the set, its elements */
	Box__PolicyValueSet creds;
	Box__PolicyValue cred_v[CRED_MAX];
	Box__PolicyValue *cred_p[CRED_MAX];
};

static void
fields_free(struct fields *fs)
{
	for (size_t i = 0; i < fs->n_own; i++)
		free(fs->own[i]);
	fs->n_own = 0;
}

/* PATH (canonical absolute) with the owner's home written "~" / "~/rel"; malloc'd. */
static char *
spell(const struct sh_decider *d, const char *path)
{
	size_t n = strlen(path);
	if (d->home_len > 1 && n >= d->home_len && memcmp(path, d->home, d->home_len) == 0 &&
	    (path[d->home_len] == '\0' || path[d->home_len] == '/')) {
		const char *rest = path + d->home_len;
		if (rest[0] == '/' && rest[1] == '\0')
			rest++;
		size_t l = strlen(rest);
		char *s = malloc(l + 2);
		if (s) {
			s[0] = '~';
			memcpy(s + 1, rest, l + 1);
		}
		return s;
	}
	return strdup(path);
}

static int
own_add(struct fields *fs, char *s)
{
	if (!s)
		return -ENOMEM;
	fs->own[fs->n_own++] = s;
	return 0;
}

static const char *const fs_actions[] = { "fs:read", "fs:write", "fs:delete", "fs:move" };
static const char *const fs_ops[] = {
	"read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec",
	"write_content", "create_dir", "set_permissions", "symlink",
	"remove_file", "remove_dir", "rename",
};

static int
fs_fields(const struct sh_decider *d, const struct sh_fs_request *r, struct fields *fs)
{
	policy_fields_init(&fs->in);
	fs->n_own = 0;
	if ((unsigned)r->action > SH_FS_MOVE || (unsigned)r->op > SH_OP_RENAME || !r->path ||
	    r->path[0] != '/')
		return -EINVAL;
	int k = own_add(fs, spell(d, r->path));
	if (k < 0)
		return k;
	policy_fields_str(&fs->in, "path", fs->own[0]);
	policy_fields_str(&fs->in, "operation", fs_ops[r->op]);
	return 0;
}

/*
 * shell:spawn's credential_reads: the credential stores the matching
 * [tool.NAME]'s grants name (boxd listed them in ShellInit). No matching
 * table (an exec entry, or none): the field is absent.
 */
static void
spawn_credential_reads(struct fields *fs, const struct sh_exec_request *r,
		       const char *program_path)
{
	char *argv[SH_SPAWN_MATCH_ARGS + 1];
	size_t n = r->n_args < SH_SPAWN_MATCH_ARGS ? r->n_args : SH_SPAWN_MATCH_ARGS;
	argv[0] = (char *)r->program;
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = r->args[i];
	const Box__ShellTool *t = shd_tool_match(program_path, (int)n + 1, argv);
	if (!t || t->n_credential_reads == 0)
		return;
	box__policy_value_set__init(&fs->creds);
	size_t k = 0;
	for (; k < t->n_credential_reads && k < CRED_MAX; k++) {
		box__policy_value__init(&fs->cred_v[k]);
		fs->cred_v[k].kind_case = BOX__POLICY_VALUE__KIND_STR;
		fs->cred_v[k].str = t->credential_reads[k];
		fs->cred_p[k] = &fs->cred_v[k];
	}
	fs->creds.elems = fs->cred_p;
	fs->creds.n_elems = k;
	policy_fields_set(&fs->in, "credential_reads", &fs->creds);
}

/* shell:exec fields, plus program_path for shell:spawn (NULL: exec). */
static int
exec_fields(const struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
	    struct fields *fs)
{
	policy_fields_init(&fs->in);
	fs->n_own = 0;
	if (!r->program || !r->cwd || (r->n_args && !r->args))
		return -EINVAL;
	size_t len = strlen(r->program) + 1;
	for (size_t i = 0; i < r->n_args; i++)
		len += strlen(r->args[i]) + 1;
	char *cmd = malloc(len);
	if (own_add(fs, cmd) < 0)
		return -ENOMEM;
	char *p = stpcpy(cmd, r->program);
	for (size_t i = 0; i < r->n_args; i++) {
		*p++ = ' ';
		p = stpcpy(p, r->args[i]);
	}
	int k = own_add(fs, spell(d, r->cwd));
	if (k == 0 && program_path)
		k = own_add(fs, spell(d, program_path));
	if (k < 0) {
		fields_free(fs);
		return k;
	}
	policy_fields_str(&fs->in, "command", cmd);
	policy_fields_str(&fs->in, "program", r->program);
	if (r->n_args >= 1)
		policy_fields_str(&fs->in, "arg1", r->args[0]);
	if (r->n_args >= 2)
		policy_fields_str(&fs->in, "arg2", r->args[1]);
	policy_fields_long(&fs->in, "arg_count", (int64_t)r->n_args);
	policy_fields_str(&fs->in, "cwd", fs->own[1]);
	if (program_path) {
		policy_fields_str(&fs->in, "program_path", fs->own[2]);
		spawn_credential_reads(fs, r, program_path);
	}
	return 0;
}

/* ---- the channel ------------------------------------------------------------- */

/*
 * Which process this is, without a getpid() per request: every fork() runs
 * the atfork child handler, which makes this differ from what the parent's
 * channel was made under. (box-shell forks only through fork(); a channel
 * made before a fork that skipped sh_decider_forked is thus never used.)
 */
static unsigned long fork_gen = 1;
static pthread_once_t fork_gen_once = PTHREAD_ONCE_INIT;

static void
fork_gen_child(void)
{
	fork_gen++;
}

static void
fork_gen_register(void)
{
	if (pthread_atfork(NULL, NULL, fork_gen_child) != 0)
		fork_gen = 0; /* cannot tell: 0 makes chan_ready attach every time */
}

static void
held_clear(struct sh_decider *d)
{
	for (unsigned i = 0; i < d->n_held; i++)
		free(d->held[i].path);
	d->n_held = 0;
}

static void
chan_drop(struct sh_decider *d)
{
	policy_client_free(d->pc);
	d->pc = NULL;
	d->last_pc = NULL; /* (a new channel's client may reuse the address) */
	held_clear(d); /* (a broken channel loses them, as it would have lost them sent) */
}

/*
 * FD (taken) as this process's channel: only Decide replies may come, and PolicyLocal
 * (the answer local_refresh asks for after a reload).
 */
static int
chan_take(struct sh_decider *d, int fd)
{
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					  BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_LOCAL };
	d->gen = fork_gen;
	d->last_pc = NULL;
	return policy_client_new_sync(fd, types, 3, &d->pc);
}

/* A channel of this process's own: one end to the main process, which attaches it. */
static int
chan_attach(struct sh_decider *d)
{
	int sv[2];
	chan_drop(d);
	if (d->ctl_fd < 0)
		return -ENOTCONN; /* (a rehearsal's decider never reaches box-policyd) */
	if (box_ipc_socketpair(sv, false) < 0)
		return -errno;
	/*
	 * Far from the fds scripts redirect (daemon.h), or none: a channel at a
	 * script's fd number could take what a builtin writes to its stdout.
	 */
	int hi = fd_dup_cloexec(sv[0], SHD_FD_PRIVATE_MIN);
	close(sv[0]);
	if (hi < 0) {
		close(sv[1]);
		return hi;
	}
	sv[0] = hi;
	int r = shd_ctl_send_fd(d->ctl_fd, SHD_CTL_POLICY, sv[1]);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	return chan_take(d, sv[0]);
}

static int
chan_ready(struct sh_decider *d)
{
	if (d->pc && d->gen == fork_gen && fork_gen != 0)
		return 0;
	held_clear(d); /* made before a fork: the parent's to send, never this process's */
	return chan_attach(d);
}

static const char *const fs_results[] = { "completed", "descriptor_issued", "indeterminate" };

/*
 * The held outcomes as one RecordBatch (one RecordRequest when alone), in
 * order, before anything else leaves this process; those whose permit this
 * channel does not keep are not sent (policy_client_record). QUEUE (the caller
 * is about to add decisions made in process and flush them: held_queue): in the
 * PolicyShip being filled instead, ahead of those decisions, in the same message.
 */
static void
held_send(struct sh_decider *d, bool queue)
{
	unsigned n = d->n_held;
	if (n == 0)
		return;
	if (!d->pc || d->gen != fork_gen || fork_gen == 0) {
		held_clear(d);
		return;
	}
	struct policy_client_outcome o[HOLD_MAX];
	Box__PolicyField f[HOLD_MAX][3], *in[HOLD_MAX][2], *out[HOLD_MAX][1];
	Box__PolicyValue v[HOLD_MAX][3];
	for (unsigned i = 0; i < n; i++) {
		const struct held *h = &d->held[i];
		static const char *const names[3] = { "path", "operation", "result" };
		const char *vals[3] = { h->path, fs_ops[h->op], fs_results[h->result] };
		for (int k = 0; k < 3; k++) {
			box__policy_field__init(&f[i][k]);
			box__policy_value__init(&v[i][k]);
			f[i][k].name = (char *)names[k];
			f[i][k].value = &v[i][k];
			v[i][k].kind_case = BOX__POLICY_VALUE__KIND_STR;
			v[i][k].str = (char *)vals[k];
		}
		in[i][0] = &f[i][0];
		in[i][1] = &f[i][1];
		out[i][0] = &f[i][2];
		/* Decided with {path, operation}, as fs_fields does; the result only when done. */
		o[i] = (struct policy_client_outcome){ .ok = !h->failed,
						       .like = h->like,
						       .action = fs_actions[h->action],
						       .in = in[i], .n_in = 2,
						       .out = out[i], .n_out = 1 };
	}
	if (queue)
		policy_client_ship_generation(d->pc, local.generation);
	int r = queue ? policy_client_record_queued(d->pc, o, n) : policy_client_record(d->pc, o, n);
	/*
	 * An outcome of an action box-policyd decides (temporal rules may read it) does
	 * not wait behind decisions made in process: all go now, in order (queued ones
	 * leave with the caller's flush, before anything it does with its decisions).
	 */
	bool now = false;
	for (unsigned i = 0; i < n; i++)
		now = now || !local_ok(fs_actions[d->held[i].action]);
	if (r >= 0 && now && !queue)
		r = policy_client_ship_flush(d->pc);
	held_clear(d);
	if (r < 0)
		chan_drop(d);
}

static void
held_release(struct sh_decider *d)
{
	held_send(d, false);
}

/* The held outcomes into the PolicyShip the caller fills next and flushes: held_send. */
static bool
held_queue(struct sh_decider *d)
{
	bool any = d->n_held > 0;
	held_send(d, true);
	return any;
}

/* The held outcomes, then the decisions made in process waiting for their PolicyShip. */
static int
ship_release(struct sh_decider *d)
{
	held_release(d);
	if (!d->pc || d->gen != fork_gen || fork_gen == 0)
		return 0; /* (a copy of the parent's queue: the parent sends it) */
	int r = policy_client_ship_flush(d->pc);
	if (r < 0)
		chan_drop(d);
	return r;
}

/* The decider of this process with decisions made in process (for exit()). */
static struct sh_decider *ship_owner;
static pthread_once_t ship_exit_once = PTHREAD_ONCE_INIT;

static void
ship_at_exit(void)
{
	if (ship_owner)
		(void)ship_release(ship_owner);
}

static void
ship_exit_register(void)
{
	(void)atexit(ship_at_exit);
}

/*
 * Decide REQ in process (local_ok said its action needs no history): the same
 * engine box-policyd runs, on the same fields; the decision joins this channel's
 * next PolicyShip (policy_client_ship_decide keeps its permit for the outcome).
 * FLUSH_DUE NULL: the ship leaves now when this decision must not wait; else
 * *FLUSH_DUE is set for the caller, which sends it after its batch.
 */
static int
local_decide(struct sh_decider *d, const Box__DecideRequest *req, struct sh_verdict *out,
	     bool *flush_due)
{
	int r = policy_local_decide(&local, &d->lv, req);
	if (r < 0)
		return r;
	const Box__DecideReply *claim = &d->lv.claim;
	bool permit = policy_client_permitted(claim);
	policy_client_ship_generation(d->pc, local.generation);
	r = policy_client_ship_decide(d->pc, req, claim);
	if (r < 0) {
		chan_drop(d);
		return r;
	}
	uint64_t id = policy_client_next_id(d->pc) - 1; /* (the one ship_decide took) */
	(void)pthread_once(&ship_exit_once, ship_exit_register);
	ship_owner = d;
	/*
	 * A process that may be killed with no catchable signal first (decide.h) keeps
	 * nothing waiting: its line would never be written. It still waits for no reply.
	 */
	bool may_wait = permit && strcmp(req->action, "shell:exec") == 0;
	/* (the clock only where it is read: a ship's first decision, one that may wait) */
	bool first = policy_client_shipping(d->pc) == 1;
	int64_t now = first || (may_wait && !sh_decider_write_through) ? box_now_ns() : 0;
	if (first)
		d->ship_since = now;
	/*
	 * Only a permitted shell:exec waits (a built-in or own command: its own effects are
	 * decided apart, as fs:*), and none longer than SHIP_NS once another comes: a process
	 * killed outright loses at most those lines. A denial, and a file operation's permit,
	 * leave before the effect they allow, so no kill can take them out of the log
	 * (docs/box-policy.5.md).
	 */
	bool due = !may_wait || sh_decider_write_through || now - d->ship_since >= SHIP_NS;
	/*
	 * A batch's decisions (FLUSH_DUE given) go in one PolicyShip once all are made:
	 * still before the caller acts on any of them.
	 */
	if (flush_due)
		*flush_due = *flush_due || due;
	else if (due && policy_client_ship_flush(d->pc) < 0) {
		chan_drop(d);
		return -EPIPE;
	}
	out->permit = permit && claim->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	out->decide_id = id;
	if (!out->permit && !(out->message = strdup(policy_local_message(&d->lv))))
		return -ENOMEM;
	return 0;
}

/* The decider whose records the output hook sends (one per process). */
static struct sh_decider *held_owner;

static void
release_before_output(void)
{
	if (held_owner)
		held_release(held_owner);
}

/*
 * A rehearsal decider's answer to request ID, ahead of it: what box-policyd
 * says to a permitted one. Only a decider made by sh_decider_rehearsal_new has
 * a stage; its channel reaches nothing else.
 */
static void
rehearsal_permit(struct sh_decider *d, uint64_t id)
{
	static char *rules[] = { "policy_0" };
	Box__DecideReply rep = BOX__DECIDE_REPLY__INIT;
	rep.verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
	rep.cause = BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	rep.rules = rules;
	rep.n_rules = 1;
	rep.message = (char *)"policy policy_0 permits it";
	(void)box_ipc_send(d->stage, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REPLY, id,
			   &rep.base, NULL, 0);
}

/* R as the last shell:exec decided in process, permit ID (nothing kept when out of memory). */
static void
last_exec_keep(struct sh_decider *d, const struct sh_exec_request *r, uint64_t id)
{
	d->last_pc = NULL;
	size_t len = strlen(r->program) + strlen(r->cwd) + 2;
	for (size_t i = 0; i < r->n_args; i++)
		len += strlen(r->args[i]) + 1;
	if (len > d->last_cap) {
		char *b = realloc(d->last_req, len);
		if (!b)
			return;
		d->last_req = b;
		d->last_cap = len;
	}
	char *p = stpcpy(d->last_req, r->program) + 1;
	for (size_t i = 0; i < r->n_args; i++)
		p = stpcpy(p, r->args[i]) + 1;
	p = stpcpy(p, r->cwd) + 1;
	d->last_len = (size_t)(p - d->last_req);
	d->last_n_args = r->n_args;
	d->last_id = id;
	d->last_pc = d->pc;
}

/* R is what the last shell:exec decided in process was asked with. */
static bool
last_exec_is(const struct sh_decider *d, const struct sh_exec_request *r)
{
	if (!d->last_pc || d->last_pc != d->pc || r->n_args != d->last_n_args)
		return false;
	const char *p = d->last_req, *end = d->last_req + d->last_len;
	for (size_t i = 0; i <= r->n_args + 1; i++) {
		const char *s = i == 0 ? r->program : i <= r->n_args ? r->args[i - 1] : r->cwd;
		size_t n = strlen(s) + 1;
		if ((size_t)(end - p) < n || memcmp(p, s, n) != 0)
			return false;
		p += n;
	}
	return p == end;
}

static int
send_decide(struct sh_decider *d, const char *action, const struct fields *fs,
	    struct sh_verdict *out)
{
	*out = (struct sh_verdict){ 0 };
	d->local_made = false;
	int r = chan_ready(d);
	if (r < 0)
		return r;
	if (!d->pc)
		return -EPIPE;
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)action;
	req.input = (Box__PolicyField **)fs->in.p;
	req.n_input = fs->in.n;
	if (d->stage < 0 && policy_local_moved(&local)) {
		held_release(d);
		if (d->pc)
			local_refresh(d);
		if (!d->pc)
			return -EPIPE;
	}
	/*
	 * The outcomes so far come before what this process asks next: ahead of a
	 * decision made in process in its PolicyShip, which then leaves at once (as
	 * they would have), else sent before the Decide.
	 */
	if (d->stage < 0 && local_ok(action)) {
		d->local_made = true;
		bool flush = held_queue(d);
		if (!d->pc)
			return -EPIPE;
		r = local_decide(d, &req, out, &flush);
		if (flush && d->pc && policy_client_ship_flush(d->pc) < 0) {
			chan_drop(d);
			sh_verdict_clear(out);
			r = -EPIPE;
		}
		return r;
	}
	held_release(d);
	if (!d->pc)
		return -EPIPE;
	if (d->stage >= 0)
		rehearsal_permit(d, policy_client_next_id(d->pc));
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	/* (policy_client_call ships the decisions made in process first: the log keeps their order) */
	r = policy_client_call(d->pc, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &req.base, &m);
	if (r < 0) {
		chan_drop(d); /* broken: the next request attaches afresh, or fails too */
		return r;
	}
	/* (A permit is kept by the client: the outcome's Record will name it.) */
	const Box__DecideReply *rep = (const Box__DecideReply *)m.msg;
	out->permit = policy_client_permitted(rep) &&
		      rep->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	if (!out->permit) {
		out->message = strdup(rep->message);
		if (!out->message)
			r = -ENOMEM;
	}
	box_ipc_msg_done(&m);
	return r;
}

static void
send_record(struct sh_decider *d, bool ok, const char *action, const struct fields *in,
	    Box__PolicyField *out)
{
	if (chan_ready(d) < 0)
		return;
	held_release(d); /* the held ones first: in order */
	if (!d->pc)
		return;
	/* The permit it is the outcome of: decided with the same fields (exec_fields). */
	Box__PolicyField *outs[1] = { out };
	struct policy_client_outcome o = { .ok = ok, .action = action, .in = in->in.p,
					   .n_in = in->in.n, .out = outs, .n_out = out ? 1 : 0 };
	int r = policy_client_record(d->pc, &o, 1);
	/* An outcome temporal rules may read reaches box-policyd now, as before. */
	if (r >= 0 && !local_ok(action))
		r = policy_client_ship_flush(d->pc);
	if (r < 0)
		chan_drop(d);
}

/* ---- decide.h ----------------------------------------------------------------- */

int
sh_decider_policyd_new(int fd, int ctl_fd, const char *home, struct sh_decider **out)
{
	(void)pthread_once(&fork_gen_once, fork_gen_register);
	struct sh_decider *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ctl_fd = ctl_fd;
	d->stage = -1;
	d->home = strdup(home && home[0] == '/' ? home : "/");
	if (!d->home) {
		free(d);
		return -ENOMEM;
	}
	d->home_len = strlen(d->home);
	while (d->home_len > 1 && d->home[d->home_len - 1] == '/')
		d->home[--d->home_len] = '\0';
	int r = fd >= 0 ? chan_take(d, fd) : chan_attach(d);
	if (r < 0) {
		sh_decider_policyd_free(d);
		return r;
	}
	*out = d;
	return 0;
}

void
sh_decider_policyd_free(struct sh_decider *d)
{
	if (!d)
		return;
	(void)ship_release(d);
	if (held_owner == d)
		held_owner = NULL;
	if (ship_owner == d)
		ship_owner = NULL;
	chan_drop(d);
	policy_local_verdict_free(&d->lv);
	free(d->last_req);
	safe_close(d->stage);
	free(d->home);
	free(d);
}

void
sh_verdict_clear(struct sh_verdict *v)
{
	if (!v)
		return;
	free(v->message);
	v->message = NULL;
	v->permit = false;
}

const char *
sh_decider_home(const struct sh_decider *d)
{
	return d->home;
}

int
sh_decider_rehearsal_new(const struct sh_decider *real, struct sh_decider **out)
{
	if (real->n_held)
		return -EBUSY; /* their records must go before anything of a rehearsal's */
	int sv[2];
	if (box_ipc_socketpair(sv, false) < 0)
		return -errno;
	struct sh_decider *d = NULL;
	int r = sh_decider_policyd_new(sv[0], -1, real->home, &d); /* (takes sv[0]) */
	if (r < 0) {
		close(sv[1]);
		return r;
	}
	d->stage = sv[1];
	*out = d;
	return 0;
}

bool
sh_decider_wants_outcomes(const struct sh_decider *d)
{
	return d != NULL; /* box-policyd records every outcome */
}

int
sh_decider_flush(struct sh_decider *d)
{
	/* policyd writes the lines: the held outcome records and the decisions made in process go now */
	(void)ship_release(d);
	return 0;
}

int
sh_decider_forked(struct sh_decider *d)
{
	return chan_attach(d);
}

int
sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out)
{
	struct fields fs;
	*out = (struct sh_verdict){ 0 };
	int k = fs_fields(d, r, &fs);
	if (k == 0)
		k = send_decide(d, fs_actions[r->action], &fs, out);
	fields_free(&fs);
	return k;
}

int
sh_decide_fs_batch(struct sh_decider *d, const struct sh_fs_request *r, size_t n,
		   struct sh_verdict *out)
{
	if (n > SH_DECIDE_BATCH_MAX || n > BOX_POLICY_BATCH_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct sh_verdict){ 0 };
	if (n == 0)
		return 0;
	if (n == 1)
		return sh_decide_fs(d, r, out);
	struct fields *fs = calloc(n, sizeof(*fs));
	Box__DecideRequest *reqs = calloc(n, sizeof(*reqs));
	Box__DecideRequest **pr = calloc(n, sizeof(*pr));
	int k = fs && reqs && pr ? 0 : -ENOMEM;
	for (size_t i = 0; k == 0 && i < n; i++) {
		k = fs_fields(d, &r[i], &fs[i]);
		box__decide_request__init(&reqs[i]);
		reqs[i].action = (char *)fs_actions[r[i].action];
		reqs[i].input = fs[i].in.p;
		reqs[i].n_input = fs[i].in.n;
		pr[i] = &reqs[i];
	}
	if (k == 0)
		k = chan_ready(d);
	bool local_all = k == 0 && d->stage < 0;
	for (size_t i = 0; local_all && i < n; i++)
		local_all = local_ok(reqs[i].action);
	bool queued = false;
	if (k == 0) {
		/*
		 * The outcomes so far come before what this process asks next: with decisions
		 * made in process, ahead of them in the same PolicyShip.
		 */
		if (local_all)
			queued = held_queue(d);
		else
			held_release(d);
		if (!d->pc)
			k = -EPIPE;
	}
	local_all = local_all && k == 0;
	if (local_all) {
		/*
		 * Each in process, in order, as a DecideBatch decides them one by one; then
		 * the ship with all of them leaves at once, before the caller acts on any
		 * (one message for the batch, not one per file).
		 */
		bool flush = queued;
		for (size_t i = 0; k == 0 && i < n; i++)
			k = local_decide(d, &reqs[i], &out[i], &flush);
		if (flush && d->pc && policy_client_ship_flush(d->pc) < 0) {
			chan_drop(d);
			k = k < 0 ? k : -EPIPE;
		}
		if (k < 0)
			for (size_t i = 0; i < n; i++)
				sh_verdict_clear(&out[i]);
		for (size_t i = 0; i < n; i++)
			fields_free(&fs[i]);
		free(fs);
		free(reqs);
		free(pr);
		return k;
	}
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (k == 0) {
		/* Its i-th request is named by the batch's id + i (the client takes n ids). */
		Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
		b.requests = pr;
		b.n_requests = n;
		k = policy_client_call(d->pc, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &b.base, &m);
		if (k < 0)
			chan_drop(d);
	}
	if (k == 0) {
		const Box__DecideBatchReply *rep = (const Box__DecideBatchReply *)m.msg;
		if (rep->n_replies != n)
			k = -EBADMSG;
		for (size_t i = 0; k == 0 && i < n; i++) {
			const Box__DecideReply *one = rep->replies[i];
			out[i].permit = policy_client_permitted(one) &&
					one->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
			if (!out[i].permit && !(out[i].message = strdup(one->message)))
				k = -ENOMEM;
		}
		if (k < 0)
			for (size_t i = 0; i < n; i++)
				sh_verdict_clear(&out[i]);
		box_ipc_msg_done(&m);
	}
	for (size_t i = 0; fs && i < n; i++)
		fields_free(&fs[i]);
	free(fs);
	free(reqs);
	free(pr);
	return k;
}

int
sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out)
{
	struct fields fs;
	*out = (struct sh_verdict){ 0 };
	int k = exec_fields(d, r, NULL, &fs);
	if (k == 0)
		k = send_decide(d, "shell:exec", &fs, out);
	fields_free(&fs);
	if (k == 0 && out->permit && d->local_made && d->pc)
		last_exec_keep(d, r, policy_client_next_id(d->pc) - 1);
	return k;
}

int
sh_decide_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
		struct sh_verdict *out)
{
	struct fields fs;
	*out = (struct sh_verdict){ 0 };
	if (!program_path || program_path[0] != '/')
		return -EINVAL;
	int k = exec_fields(d, r, program_path, &fs);
	if (k == 0)
		k = send_decide(d, "shell:spawn", &fs, out);
	fields_free(&fs);
	return k;
}

int
sh_record_fs(struct sh_decider *d, const struct sh_fs_request *r, bool failed,
	     enum sh_fs_result result, uint64_t decide_id)
{
	if ((unsigned)result > SH_FS_INDETERMINATE || (unsigned)r->action > SH_FS_MOVE ||
	    (unsigned)r->op > SH_OP_RENAME || !r->path || r->path[0] != '/')
		return -EINVAL;
	if (chan_ready(d) < 0)
		return 0; /* no channel: nothing can be recorded (the next request fails too) */
	/*
	 * Held, not sent at once (a walk's file costs no message of its own): they
	 * go as one RecordBatch, in order, before this process's next request of
	 * any kind, before it writes output or a message (sh_decide_before_output),
	 * before it forks or exits (sh_decider_flush), before its next shell:exec
	 * or shell:spawn outcome (the command's end), and when HOLD_MAX are held
	 * or the oldest is HOLD_NS old as another comes. Nothing this process does
	 * next, and nothing another one does on its output, is decided before
	 * them.
	 */
	char *path = spell(d, r->path);
	if (!path)
		return -ENOMEM;
	int64_t now = box_now_ns();
	if (d->n_held == 0)
		d->held_since = now;
	d->held[d->n_held++] = (struct held){ (uint8_t)r->action, (uint8_t)r->op,
					      (uint8_t)result, failed, path, decide_id };
	held_owner = d;
	sh_decide_before_output = release_before_output;
	if (d->n_held >= HOLD_MAX || now - d->held_since >= HOLD_NS)
		held_release(d);
	return 0;
}

static int
record_status(struct sh_decider *d, const char *action, const struct sh_exec_request *r,
	      const char *program_path, int status)
{
	Box__PolicyField o = BOX__POLICY_FIELD__INIT;
	Box__PolicyValue ov = BOX__POLICY_VALUE__INIT;
	o.name = (char *)"status";
	o.value = &ov;
	ov.kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	ov.integer = status;
	/*
	 * The outcome of the shell:exec just decided in process (a built-in's, the usual
	 * case): its permit is known, so the fields are not made again (send_record's
	 * order: the held outcomes first, then this one).
	 */
	bool like = !program_path && strcmp(action, "shell:exec") == 0 && chan_ready(d) == 0 &&
		    last_exec_is(d, r);
	d->last_pc = NULL;
	if (like) {
		held_release(d);
		Box__PolicyField *outs[1] = { &o };
		struct policy_client_outcome oc = { .ok = true, .action = action, .out = outs,
						    .n_out = 1 };
		int k = d->pc ? policy_client_record_like(d->pc, d->last_id, &oc) : 0;
		if (k < 0)
			chan_drop(d);
		if (k != 0)
			return 0;
		/* (not kept under that id: an older twin's outcome took it; look by content) */
	}
	struct fields fs;
	int k = exec_fields(d, r, program_path, &fs);
	if (k < 0)
		return k;
	send_record(d, true, action, &fs, &o);
	fields_free(&fs);
	return 0;
}

int
sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status)
{
	return record_status(d, "shell:exec", r, NULL, status);
}

int
sh_record_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
		int status)
{
	if (!program_path || program_path[0] != '/')
		return -EINVAL;
	return record_status(d, "shell:spawn", r, program_path, status);
}
