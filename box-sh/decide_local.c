/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decide_local.c — box-sh's in-process back end of decide.h: the
 * policy is loaded and validated with libboxpolicy, and every
 * request is decided observe-then-decide (docs/box-policy.5.md) through a temporal
 * monitor held in memory, exactly as `boxctl policy eval` and box-policyd do:
 * the request becomes a history event stamped with the decider's clock
 * (never going backwards), then it is evaluated, so a rule such as "at most
 * 50 file writes a minute" counts the current attempt. Recorded outcomes
 * become response/error events. A policy without temporal terms needs no
 * monitor and keeps no events.
 *
 * Spellings (docs/box-policy.5.md): path, program_path and cwd are given canonical
 * and absolute; under the owner's home they are written "~/rel" ("~" for the
 * home itself). Messages are libboxpolicy's (§5). With decisions_fd >= 0
 * each decision and each recorded outcome is one decisions.jsonl line
 * (docs/boxctl.1.md, source "box-shell", box and id empty: box-sh is no box).
 *
 * Cheap on purpose (a `while [ … ]` loop decides every `[`): the request,
 * decision and event objects are reused, the scratch strings grow once, a
 * command's input object is serialized once for its decision and outcome
 * lines, the log lines go into one buffer written when it holds 64 KiB,
 * when 100 ms passed since the last write, before a fork (so the file keeps
 * the order of events), after a shell:spawn decision (an `exec` may replace
 * the process next), at sh_decider_flush() and at exit. A pipeline stage
 * buffers the same way (`find | xargs wc` decides every file in its
 * stages); every other forked child (a background job anyone may kill -9, a
 * command substitution the shell kills when its output is too large) writes
 * each of its lines at once. No line is lost when a buffering process dies:
 * sh_child_exit()/sh_exit() flush, and a fatal signal at its default
 * disposition gets a handler that writes the buffered whole lines first
 * (SIGPIPE, the command timeout's SIGTERM); where the script traps or
 * ignores SIGTERM (so the timeout's SIGKILL could come next), or under
 * `timeout -s KILL`, lines are written at once (test/shell/decide/logbuf.sh).
 * A child's history is its own copy from the fork on (a subshell's
 * decisions are not seen by the parent's temporal rules: box-sh is the
 * standalone tool; in a box, box-policyd holds one history).
 *
 * Test hook: BOX_TEST_SLOW_EXEC=PROGRAM:MS, read from box-sh's own
 * environment when the decider is made (before the script runs, so a script
 * cannot set it), sleeps MS ms after each shell:exec decision of PROGRAM,
 * its line already logged, before the command runs: it only slows that step
 * (logbuf.sh uses it to land the timeout's SIGTERM between an echo's
 * decision and its write, every time). Malformed, box-sh refuses to start.
 *
 * Strings that are not UTF-8 (file names may hold any byte) are evaluated
 * as the bytes they are; the log line shows each invalid byte as U+FFFD.
 *
 * Trusts: the policy text is the operator's and is validated here; request
 * strings come from the agent's script and are only compared by the engine.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <boxpolicy.h>
#include <boxpolicy_temporal.h>

#include "declog.h"
#include "decide.h"
#include "decide_local.h"

#define LOG_FLUSH_BYTES (64u << 10)
#define LOG_FLUSH_NS (100LL * 1000000LL)

struct sbuf_local {
	char *s;
	size_t len, cap;
};

/* Up to 7 input fields: command program arg1 arg2 arg_count cwd program_path. */
struct fields {
	struct shlog_field f[8];
	size_t n;
};

/* Which request the cached exec fields belong to (pointer identity). */
struct exec_key {
	bool valid;
	const char *program, *cwd, *program_path, *arg0;
	char *const *args;
	size_t n_args;
};

struct sh_decider {
	struct bp_policy *policy;
	struct bp_monitor *mon; /* NULL: no temporal term */
	struct bp_request *req;
	struct bp_decision *dec;
	struct bp_event *ev;
	char *home;
	size_t home_len;
	int log_fd;
	struct shlog log;
	int64_t last_ns;     /* clock without a monitor */
	int64_t last_flush_ns;
	bool unbuffered;     /* a forked child but a pipeline stage: every line at once */
	/* scratch: spelled path, spelled cwd, spelled program_path, the command line */
	struct sbuf_local path, cwd, ppath, command;
	struct fields exec_fields; /* the last shell:exec/spawn request's fields */
	struct exec_key exec_key;
	/* the input object's JSON: the one being logged, the last exec/spawn request's */
	struct shlog input_json, exec_json;
	bool exec_json_valid;
	struct sh_decider *next_live; /* for the exit and fork handlers */
	/* BOX_TEST_SLOW_EXEC=PROGRAM:MS (tests only): each shell:exec decision of
	 * PROGRAM is followed by MS ms of sleep before the command runs */
	char *slow_program;
	long slow_ms;
};

/* Every live decider, for the atexit flush and the fork handler. */
static struct sh_decider *live;
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/*
 * Fatal signals: a signal whose default action ends the process gets a
 * handler that writes the buffered whole lines, then dies of the signal as
 * it would have (SA_RESETHAND: the default action is back). Installed only
 * where the disposition is the default (a trap or an ignored signal is the
 * script's), checked again at the first line after a fork and after each
 * sh_decider_flush() (the `trap` builtin calls it once it changed one).
 *
 * SIGTERM is what a timeout sends before its SIGKILL: while SIGTERM is not
 * this handler (the script traps or ignores it), a process could be killed
 * without writing, so it writes each line at once.
 */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGBUS, SIGSEGV, SIGPIPE, SIGALRM,
	SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS,
};
static bool signals_checked; /* since the last fork or sh_decider_flush() */
static bool term_is_ours;    /* SIGTERM writes the buffer before the process dies */

static void
flush_on_signal(int sig)
{
	int saved = errno;
	for (struct sh_decider *d = live; d; d = d->next_live)
		if (d->log_fd >= 0)
			shlog_write_committed(&d->log, d->log_fd);
	errno = saved;
	(void)raise(sig); /* the default action again (SA_RESETHAND), not blocked (SA_NODEFER) */
}

static void
check_signals(void)
{
	term_is_ours = false;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction cur;
		int s = fatal_signals[i];
		if (sigaction(s, NULL, &cur) < 0)
			continue;
		bool ours = !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == flush_on_signal;
		if (!ours && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) {
			struct sigaction sa = { .sa_handler = flush_on_signal,
						.sa_flags = SA_RESETHAND | SA_NODEFER | SA_RESTART };
			sigemptyset(&sa.sa_mask);
			ours = sigaction(s, &sa, NULL) == 0;
		}
		if (s == SIGTERM)
			term_is_ours = ours;
	}
	signals_checked = true;
}

static void
before_fork(void)
{
	for (struct sh_decider *d = live; d; d = d->next_live)
		(void)sh_decider_flush(d);
}

static void
after_fork_child(void)
{
	/* Nothing inherited is left to write (before_fork did); the child may _exit() any time. */
	for (struct sh_decider *d = live; d; d = d->next_live) {
		d->log.j.len = 0;
		d->log.committed = 0;
		d->unbuffered = true;
	}
	sh_decider_stage_buffered = 0;
	signals_checked = false;
}

static void
flush_at_exit(void)
{
	for (struct sh_decider *d = live; d; d = d->next_live)
		(void)sh_decider_flush(d);
}

static void
install_handlers(void)
{
	(void)pthread_atfork(before_fork, NULL, after_fork_child);
	(void)atexit(flush_at_exit);
}

static int64_t
clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool
sb_reserve(struct sbuf_local *b, size_t n)
{
	if (n + 1 <= b->cap - b->len)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (n + 1 > cap - b->len) {
		if (cap > SIZE_MAX / 4)
			return false;
		cap *= 2;
	}
	char *s = realloc(b->s, cap);
	if (!s)
		return false;
	b->s = s;
	b->cap = cap;
	return true;
}

static bool
sb_add(struct sbuf_local *b, const char *s, size_t n)
{
	if (!sb_reserve(b, n))
		return false;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return true;
}

/* PATH (canonical absolute) with the owner's home written "~" / "~/rel" into B. */
static int
spell(const struct sh_decider *d, const char *path, struct sbuf_local *b)
{
	size_t n = strlen(path);
	b->len = 0;
	if (d->home_len > 0 && n >= d->home_len && memcmp(path, d->home, d->home_len) == 0 &&
	    (path[d->home_len] == '\0' || path[d->home_len] == '/' || d->home_len == 1)) {
		const char *rest = path + d->home_len;
		if (d->home_len == 1) /* home "/" */
			rest = path;
		if (rest[0] == '/' && rest[1] == '\0')
			rest++;
		if (!sb_add(b, "~", 1) || !sb_add(b, rest, strlen(rest)))
			return -ENOMEM;
		return 0;
	}
	return sb_add(b, path, n) ? 0 : -ENOMEM;
}

const char *
sh_decider_home(const struct sh_decider *d)
{
	return d->home;
}

int
sh_decider_forked(struct sh_decider *d)
{
	(void)d; /* the buffer was flushed before the fork (sh_fork) */
	return 0;
}

bool
sh_decider_wants_outcomes(const struct sh_decider *d)
{
	return d && (d->log_fd >= 0 || d->mon);
}

int
sh_decider_flush(struct sh_decider *d)
{
	signals_checked = false; /* a disposition may have changed (trap) */
	if (!d || d->log_fd < 0 || d->log.j.len == 0)
		return 0;
	d->last_flush_ns = clock_ns();
	return shlog_flush(&d->log, d->log_fd);
}

/* After a line was added: write now, or leave it in the buffer. */
static void
maybe_flush(struct sh_decider *d, int64_t now)
{
	if (d->unbuffered && sh_decider_stage_buffered)
		d->unbuffered = false; /* a pipeline stage: buffered as the main process */
	if (!signals_checked)
		check_signals();
	if (d->unbuffered || !term_is_ours || sh_decider_write_through || d->log.j.len >= LOG_FLUSH_BYTES ||
	    now - d->last_flush_ns >= LOG_FLUSH_NS) {
		d->last_flush_ns = now;
		(void)shlog_flush(&d->log, d->log_fd);
	}
}

/* why = "FILE: WHAT" or "FILE:WHAT" (a diagnostic's "line:col: message"). */
static void
say(char *why, size_t why_len, const char *file, const char *sep, const char *what)
{
	if (why && why_len)
		(void)snprintf(why, why_len, "%s%s%s", file, sep, what);
}

/* BOX_TEST_SLOW_EXEC=PROGRAM:MS (see the top): into d->slow_program/slow_ms. */
static int
slow_exec_hook(struct sh_decider *d, char *why, size_t why_len)
{
	const char *v = getenv("BOX_TEST_SLOW_EXEC");
	if (!v || !*v)
		return 0;
	const char *colon = strrchr(v, ':');
	char *end = NULL;
	long ms = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon == v || end == colon + 1 || *end || ms < 1 || ms > 60000) {
		say(why, why_len, "BOX_TEST_SLOW_EXEC", ": ", "not PROGRAM:MS (MS 1 to 60000)");
		return -EINVAL;
	}
	d->slow_program = strndup(v, (size_t)(colon - v));
	if (!d->slow_program) {
		say(why, why_len, "BOX_TEST_SLOW_EXEC", ": ", strerror(ENOMEM));
		return -ENOMEM;
	}
	d->slow_ms = ms;
	return 0;
}

/* The hook's sleep: the whole of it, a caught signal (a trap) does not cut it short. */
static void
slow_exec_sleep(const struct sh_decider *d, const char *program)
{
	if (!d->slow_program || !program || strcmp(program, d->slow_program) != 0)
		return;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += d->slow_ms / 1000;
	until.tv_nsec += (d->slow_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

int
sh_decider_local_new(const char *policy_text, size_t len, const char *policy_path,
		     const char *home, int decisions_fd, struct sh_decider **out, char *why,
		     size_t why_len)
{
	const char *file = policy_path ? policy_path : "policy";
	struct sh_decider *d;
	struct bp_diags *diags = NULL;
	int r;

	*out = NULL;
	if (!home || home[0] != '/')
		home = getenv("HOME");
	if (!home || home[0] != '/') {
		say(why, why_len, file, ": ", "no home directory for '~' spellings (use --home)");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->log_fd = decisions_fd;
	d->last_ns = INT64_MIN;
	d->home = strdup(home);
	if (!d->home) {
		r = -ENOMEM;
		goto fail;
	}
	d->home_len = strlen(d->home);
	while (d->home_len > 1 && d->home[d->home_len - 1] == '/')
		d->home[--d->home_len] = '\0';

	struct bp_load_options lo = { .home = d->home };
	r = bp_policy_load(policy_text ? policy_text : "", policy_text ? len : 0, &lo, &d->policy,
			   &diags);
	if (r == 0 && bp_policy_has_temporal(d->policy))
		r = bp_monitor_new(d->policy, &d->mon, &diags);
	if (r < 0) {
		/* The first error, as `boxctl policy check` prints it. */
		char line[768] = "";
		for (size_t i = 0; diags && i < bp_diags_count(diags); i++) {
			enum bp_severity sev;
			unsigned ln, col;
			const char *msg = bp_diag_message(diags, i, &sev, &ln, &col);
			if (sev == BP_ERROR) {
				(void)snprintf(line, sizeof(line), "%u:%u: %s", ln, col, msg);
				break;
			}
		}
		if (line[0])
			say(why, why_len, file, ":", line);
		else
			say(why, why_len, file, ": ", strerror(-r));
		goto fail;
	}
	bp_diags_free(diags);
	diags = NULL;
	if ((r = bp_request_new(d->policy, &d->req)) < 0 ||
	    (r = bp_decision_new(&d->dec)) < 0 ||
	    (d->mon && (r = bp_event_new(d->policy, &d->ev)) < 0)) {
		say(why, why_len, file, ": ", strerror(-r));
		goto fail;
	}
	if ((r = slow_exec_hook(d, why, why_len)) < 0)
		goto fail;
	d->last_flush_ns = clock_ns();
	pthread_once(&handlers_once, install_handlers);
	d->next_live = live;
	live = d;
	*out = d;
	return 0;
fail:
	bp_diags_free(diags);
	sh_decider_local_free(d);
	return r;
}

void
sh_decider_local_free(struct sh_decider *d)
{
	if (!d)
		return;
	(void)sh_decider_flush(d);
	for (struct sh_decider **p = &live; *p; p = &(*p)->next_live)
		if (*p == d) {
			*p = d->next_live;
			break;
		}
	shlog_done(&d->log);
	shlog_done(&d->input_json);
	shlog_done(&d->exec_json);
	bp_event_free(d->ev);
	bp_monitor_free(d->mon);
	bp_decision_free(d->dec);
	bp_request_free(d->req);
	bp_policy_free(d->policy);
	free(d->path.s);
	free(d->cwd.s);
	free(d->ppath.s);
	free(d->command.s);
	free(d->home);
	free(d->slow_program);
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

/* ---- requests ------------------------------------------------------------- */

static const char *const fs_actions[] = { "fs:read", "fs:write", "fs:delete", "fs:move" };
static const char *const fs_ops[] = {
	"read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec",
	"write_content", "create_dir", "set_permissions", "symlink",
	"remove_file", "remove_dir", "rename",
};

static const size_t fs_op_lens[] = { 12, 13, 9, 9, 10, 4, 13, 10, 15, 7, 11, 10, 6 };

static bool
fs_request_ok(const struct sh_fs_request *r)
{
	return (unsigned)r->action <= SH_FS_MOVE && (unsigned)r->op <= SH_OP_RENAME && r->path &&
	       r->path[0] == '/';
}

/* NAME is a literal: its length is known at compile time. */
#define field_str(fs, nm_, s_, len_)                                                        \
	((fs)->f[(fs)->n++] = (struct shlog_field){ .name = (nm_), .name_len = sizeof(nm_) - 1,  \
						    .str = (s_), .len = (len_) })
#define field_long(fs, nm_, v_)                                                             \
	((fs)->f[(fs)->n++] = (struct shlog_field){ .name = (nm_), .name_len = sizeof(nm_) - 1,  \
						    .num = (v_), .is_long = true })

/* Load d->req (action + fields) from FS. */
static int
set_request(struct bp_request *req, const char *action, const struct fields *fs)
{
	int r = bp_request_set_action(req, action);
	for (size_t i = 0; r >= 0 && i < fs->n; i++) {
		const struct shlog_field *f = &fs->f[i];
		r = f->is_long ? bp_request_set_long(req, f->name, f->num)
			       : bp_request_set_string(req, f->name, f->str, f->len);
	}
	return r;
}

static int
fs_fields(struct sh_decider *d, const struct sh_fs_request *r, struct fields *fs)
{
	int k = spell(d, r->path, &d->path);
	if (k < 0)
		return k;
	fs->n = 0;
	field_str(fs, "path", d->path.s, d->path.len);
	field_str(fs, "operation", fs_ops[r->op], fs_op_lens[r->op]);
	return 0;
}

/* shell:exec / shell:spawn fields; program_path NULL for exec. 1: the
 * outcome's fields are the decision's (kept), 0: built. */
static int
exec_fields(struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
	    struct fields *fs, bool for_record)
{
	if (!r->program || !r->cwd || (r->n_args && !r->args))
		return -EINVAL;
	/*
	 * The outcome of the command just decided: the same request (the same
	 * strings), so the fields built for its decision still stand (the
	 * scratch strings are rebuilt only here).
	 */
	bool reuse = for_record && d->exec_key.valid && d->exec_key.program == r->program && d->exec_key.args == r->args &&
	    d->exec_key.n_args == r->n_args && d->exec_key.cwd == r->cwd &&
	    d->exec_key.program_path == program_path &&
	    (r->n_args == 0 || d->exec_key.arg0 == r->args[0]);
	/* One use: the next request may sit at the same addresses (freed and allocated again). */
	d->exec_key.valid = false;
	if (reuse) {
		*fs = d->exec_fields;
		return 1;
	}
	d->exec_json_valid = false;
	d->command.len = 0;
	if (!sb_add(&d->command, r->program, strlen(r->program)))
		return -ENOMEM;
	for (size_t i = 0; i < r->n_args; i++)
		if (!sb_add(&d->command, " ", 1) ||
		    !sb_add(&d->command, r->args[i], strlen(r->args[i])))
			return -ENOMEM;
	int k = spell(d, r->cwd, &d->cwd);
	if (k < 0)
		return k;
	fs->n = 0;
	field_str(fs, "command", d->command.s, d->command.len);
	field_str(fs, "program", r->program, strlen(r->program));
	if (r->n_args >= 1)
		field_str(fs, "arg1", r->args[0], strlen(r->args[0]));
	if (r->n_args >= 2)
		field_str(fs, "arg2", r->args[1], strlen(r->args[1]));
	field_long(fs, "arg_count", (int64_t)r->n_args);
	field_str(fs, "cwd", d->cwd.s, d->cwd.len);
	if (program_path) {
		if ((k = spell(d, program_path, &d->ppath)) < 0)
			return k;
		field_str(fs, "program_path", d->ppath.s, d->ppath.len);
	}
	d->exec_fields = *fs;
	d->exec_key = (struct exec_key){ .valid = !for_record, .program = r->program, .args = r->args,
					 .n_args = r->n_args, .cwd = r->cwd,
					 .program_path = program_path,
					 .arg0 = r->n_args ? r->args[0] : NULL };
	return 0;
}

static int64_t
stamp(struct sh_decider *d, int64_t now)
{
	if (d->mon)
		return bp_monitor_stamp(d->mon, now);
	int64_t t = d->last_ns != INT64_MIN && now <= d->last_ns ? d->last_ns + 1 : now;
	d->last_ns = t;
	return t;
}

/* Observe, then decide; fill OUT; write the log line. EXEC: the fields are
 * d->exec_fields (their JSON is kept for the outcome line). */
static int
decide(struct sh_decider *d, const char *action, const struct fields *fs, const char *resource,
       bool exec, struct sh_verdict *out)
{
	*out = (struct sh_verdict){ 0 };
	bp_request_reset(d->req);
	int r = set_request(d->req, action, fs);
	if (r == -ENOMEM)
		return r;
	int64_t now = clock_ns();
	int64_t t = stamp(d, now);
	if (d->mon) {
		/* It fills the decision even when it fails (a deny, cause error). */
		(void)bp_monitor_decide(d->mon, d->req, t, d->dec, &t);
	} else {
		r = bp_decide(d->policy, d->req, NULL, d->dec);
		if (r < 0)
			return r; /* no decision: the caller refuses the command */
	}
	bool permit = bp_decision_verdict(d->dec) == BP_PERMIT &&
		      bp_decision_cause(d->dec) == BP_CAUSE_PERMITTED;
	const char *msg = bp_decision_message(d->dec);
	out->permit = permit;
	if (!permit) {
		out->message = strdup(msg ? msg : "policy denied this operation.");
		if (!out->message)
			return -ENOMEM;
	}
	if (d->log_fd >= 0) {
		const char *rules[64];
		size_t nr = bp_decision_rule_count(d->dec), shown = nr < 64 ? nr : 64;
		const char **rv = rules;
		const char **heap = NULL;
		if (nr > 64) {
			heap = malloc(nr * sizeof(*heap));
			if (heap) {
				rv = heap;
				shown = nr;
			}
		}
		for (size_t i = 0; i < shown; i++)
			rv[i] = bp_decision_rule_name(d->dec, i);
		struct shlog *json = exec ? &d->exec_json : &d->input_json;
		if (shlog_fields(json, fs->f, fs->n) == 0) {
			(void)shlog_decision_json(&d->log, t, "", "", action, resource, permit,
						  bp_cause_str(bp_decision_cause(d->dec)), rv,
						  shown, msg, json);
			if (exec)
				d->exec_json_valid = true;
		}
		free(heap);
		maybe_flush(d, now);
	}
	return 0;
}

int
sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out)
{
	struct fields fs;
	*out = (struct sh_verdict){ 0 };
	if (!fs_request_ok(r))
		return -EINVAL;
	int k = fs_fields(d, r, &fs);
	if (k < 0)
		return k;
	return decide(d, fs_actions[r->action], &fs, d->path.s, false, out);
}

int
sh_decide_fs_batch(struct sh_decider *d, const struct sh_fs_request *r, size_t n,
		   struct sh_verdict *out)
{
	if (n > SH_DECIDE_BATCH_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct sh_verdict){ 0 };
	/* In process a batch is its requests one by one, in order (decide.h). */
	for (size_t i = 0; i < n; i++) {
		int k = sh_decide_fs(d, &r[i], &out[i]);
		if (k < 0) {
			for (size_t j = 0; j < i; j++)
				sh_verdict_clear(&out[j]);
			return k;
		}
	}
	return 0;
}

int
sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out)
{
	struct fields fs;
	*out = (struct sh_verdict){ 0 };
	int k = exec_fields(d, r, NULL, &fs, false);
	if (k < 0)
		return k;
	k = decide(d, "shell:exec", &fs, r->program, true, out);
	if (k == 0)
		slow_exec_sleep(d, r->program);
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
	int k = exec_fields(d, r, program_path, &fs, false);
	if (k < 0)
		return k;
	k = decide(d, "shell:spawn", &fs, d->ppath.s, true, out);
	/* A host program starts next, perhaps by an exec that replaces this process. */
	(void)sh_decider_flush(d);
	return k;
}

/* ---- outcomes ------------------------------------------------------------- */

/*
 * An outcome event: observed by the monitor (temporal policies) and logged.
 * OUT_NAME NULL: an error event (inputs only).
 */
static int
record(struct sh_decider *d, const char *action, const struct fields *fs, bool same_exec,
       const char *out_name, const char *out_str, int64_t out_long, bool out_is_long)
{
	int64_t now = clock_ns();
	int64_t t = stamp(d, now);
	int r = 0;
	if (d->mon) {
		bp_event_reset(d->ev);
		bp_event_set_kind(d->ev, out_name ? BP_EVENT_RESPONSE : BP_EVENT_ERROR);
		bp_event_set_time(d->ev, t);
		r = set_request(bp_event_request(d->ev), action, fs);
		if (r >= 0 && out_name)
			r = out_is_long ? bp_event_set_output_long(d->ev, out_name, out_long)
					: bp_event_set_output_string(d->ev, out_name, out_str,
								     strlen(out_str));
		if (r >= 0)
			r = bp_monitor_observe(d->mon, d->ev, &t);
	}
	if (d->log_fd >= 0) {
		struct shlog_field o = { .name = out_name, .str = out_str,
					 .len = out_str ? strlen(out_str) : 0, .num = out_long,
					 .is_long = out_is_long };
		/* the decision's input object when this is its outcome */
		const struct shlog *json = same_exec && d->exec_json_valid ? &d->exec_json : NULL;
		if (!json && shlog_fields(&d->input_json, fs->f, fs->n) == 0)
			json = &d->input_json;
		if (json)
			(void)shlog_outcome_json(&d->log, t, "", "",
						 out_name ? "response" : "error", action, json, &o,
						 out_name ? 1 : 0);
		maybe_flush(d, now);
	}
	return r < 0 ? r : 0;
}

int
sh_record_fs(struct sh_decider *d, const struct sh_fs_request *r, bool failed,
	     enum sh_fs_result result, uint64_t decide_id)
{
	(void)decide_id; /* (no channel: nothing is kept by id) */
	static const char *const results[] = { "completed", "descriptor_issued", "indeterminate" };
	struct fields fs;
	if (!fs_request_ok(r) || (unsigned)result > SH_FS_INDETERMINATE)
		return -EINVAL;
	int k = fs_fields(d, r, &fs);
	if (k < 0)
		return k;
	return record(d, fs_actions[r->action], &fs, false, failed ? NULL : "result",
		      failed ? NULL : results[result], 0, false);
}

int
sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status)
{
	struct fields fs;
	int k = exec_fields(d, r, NULL, &fs, true);
	if (k < 0)
		return k;
	return record(d, "shell:exec", &fs, k == 1, "status", NULL, status, true);
}

int
sh_record_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *program_path,
		int status)
{
	struct fields fs;
	if (!program_path || program_path[0] != '/')
		return -EINVAL;
	int k = exec_fields(d, r, program_path, &fs, true);
	if (k < 0)
		return k;
	return record(d, "shell:spawn", &fs, k == 1, "status", NULL, status, true);
}
