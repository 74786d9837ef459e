/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decide.h — how the shell asks for decisions (docs/box-policy.5.md).
 *
 * One interface, two back ends: box-sh (standalone) decides in
 * process with libboxpolicy (temporal rules included) and may write each
 * decision as a decisions.jsonl line; the in-box box-shell daemon
 * asks box-policyd over its channel, except for the actions box-policyd
 * said need no history: those it decides in process with the same engine
 * and ships to box-policyd, which decides them again (docs/box-policy.5.md).
 * The interpreter and the commands see only this header.
 *
 * Deciding is observe-then-decide: each request becomes a history event
 * before it is evaluated, in the order asked. A batch is decided exactly as
 * if its requests were asked one by one (box-policyd's DecideBatch, types
 * 38-41). Outcomes (sh_record_*) are recorded after the effect.
 *
 * Trusts: the back end. Returns negative errno; nothing here prints (the
 * caller prints `box-shell: <command>: <message>`, or the policy message
 * next to a failed file operation).
 */
#ifndef BOX_SHELL_DECIDE_H
#define BOX_SHELL_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sh_decider;

enum sh_fs_action { SH_FS_READ, SH_FS_WRITE, SH_FS_DELETE, SH_FS_MOVE };

/* The operation enums of docs/box-policy.5.md, by action. */
enum sh_fs_op {
	/* fs:read */
	SH_OP_READ_CONTENT, SH_OP_READ_METADATA, SH_OP_ENUMERATE, SH_OP_READ_LINK,
	SH_OP_CHANGE_DIR, SH_OP_EXEC,
	/* fs:write */
	SH_OP_WRITE_CONTENT, SH_OP_CREATE_DIR, SH_OP_SET_PERMISSIONS, SH_OP_SYMLINK,
	/* fs:delete */
	SH_OP_REMOVE_FILE, SH_OP_REMOVE_DIR,
	/* fs:move */
	SH_OP_RENAME,
};

enum sh_fs_result { SH_FS_COMPLETED, SH_FS_DESCRIPTOR_ISSUED, SH_FS_INDETERMINATE };

struct sh_verdict {
	bool permit;
	char *message;       /* malloc'd decision message (deny), or NULL */
	/* the decision's id on the decider's channel, where it keeps the permit for the
	 * outcome (0: none known); sh_record_fs names it back */
	uint64_t decide_id;
};
void sh_verdict_clear(struct sh_verdict *v);

/* One fs request: `path` is canonical and absolute (the decider spells it
 * with "~/" under the owner's home, docs/box-policy.5.md). */
struct sh_fs_request {
	enum sh_fs_action action;
	enum sh_fs_op op;
	const char *path;
};

/* A simple command (shell:exec): program = what the first word resolved to;
 * args = the expanded arguments after it; cwd canonical absolute. */
struct sh_exec_request {
	const char *program;
	char *const *args;
	size_t n_args;
	const char *cwd;
};

int sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out);
/* shell:spawn (docs/box-policy.5.md): before a host program starts, the shell:exec
 * fields plus program_path, the canonical path of the binary (box-sh runs it
 * as a plain child process; the caller raises fs:read exec on program_path
 * first). Added by shcore; implemented by decide_local.c (shdecide). */
int sh_decide_spawn(struct sh_decider *d, const struct sh_exec_request *r,
		    const char *program_path, struct sh_verdict *out);
int sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out);
/* Up to SH_DECIDE_BATCH_MAX requests, verdicts in order (out[n]). */
#define SH_DECIDE_BATCH_MAX 256
int sh_decide_fs_batch(struct sh_decider *d, const struct sh_fs_request *r, size_t n,
		       struct sh_verdict *out);

/* Outcomes: exit status (128+signal; 126 if it could not start) / fs result
 * (failed = the operation definitely failed: an error event). */
int sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status);
/* The outcome of a permitted shell:spawn (same fields as its decision). */
int sh_record_spawn(struct sh_decider *d, const struct sh_exec_request *r,
		    const char *program_path, int status);
/* DECIDE_ID: the verdict's decide_id when the caller kept it (the outcome then names that
 * permit without the decider packing the request again to find it), else 0. */
int sh_record_fs(struct sh_decider *d, const struct sh_fs_request *r, bool failed,
		 enum sh_fs_result result, uint64_t decide_id);

/* Whether outcomes are kept (a decisions log, a monitor): a permitted host
 * program must then be waited for, its status recorded. d may be NULL. */
bool sh_decider_wants_outcomes(const struct sh_decider *d);

/* Write out what the back end buffered (box-sh's decisions.jsonl lines; the
 * daemon's held fs outcome records): call it in a forked child before
 * _exit() or exec (exit() and the free functions flush by themselves), and
 * before a fork (a child must not send its parent's). */
int sh_decider_flush(struct sh_decider *d);
/*
 * Called before the process writes anything to a descriptor it did not open
 * after a decision (command output, builtin output, messages): the daemon's
 * back end sends the fs outcome records it holds first, so that nothing
 * another process does on what it reads is decided before them. NULL: the
 * back end holds nothing (box-sh).
 */
extern void (*sh_decide_before_output)(void);

/* In a child just forked (sh_fork): the back end makes what the child
 * needs of its own (the box-shell daemon: a policyd channel of its own, so
 * concurrent pipeline stages never read each other's replies). box-sh:
 * nothing. */
int sh_decider_forked(struct sh_decider *d);

/*
 * Hints for a back end that buffers what it writes (box-sh's decisions.jsonl
 * lines), set by the interpreter in a child it just forked (host.c holds
 * them). stage_buffered: set by a pipeline stage: its lines are buffered as
 * the main process's are, where any other forked child writes each line at
 * once; the back end clears it on every fork, so it holds for the stage's
 * own process only. write_through: set in a process that may be killed with
 * no catchable signal first (the child of `timeout -s KILL`): no process of
 * its tree buffers lines.
 */
extern int sh_decider_stage_buffered;
extern int sh_decider_write_through;

/* The owner's home (for "~" spellings and tilde expansion). */
const char *sh_decider_home(const struct sh_decider *d);

#endif
