/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxlog.h — finding a box's decision log the way `boxctl log` does
 * (log.c), for `boxctl policy replay`: a running box's boxd hands over the
 * files; an ended box's are read from its state dir (found by name, by run
 * ID, or through ./box.ini for a box with its own [box] state_dir).
 * Trusts: as log.c (boxd's fds only as regular files; nothing in the files).
 */
#ifndef BOXCTL_BOXLOG_H
#define BOXCTL_BOXLOG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct boxlog_files {
	int fd[2];              /* [0] decisions.jsonl.1, [1] decisions.jsonl; -1: absent */
	char path[2][PATH_MAX]; /* what to call them in messages */
	char run_id[16];        /* WHAT was a run ID: only that run's lines count */
	bool running;           /* a boxd runs the box (it handed the files over) */
};

/*
 * Open the decision logs of box NAME|ID (WHAT) read-only. 0; -ENOENT when no
 * boxd runs it and no state dir of this user holds its log; other negative
 * errno with *err (malloc'd) when a boxd refused.
 */
int boxlog_open(const char *what, struct boxlog_files *ret, char **err);
void boxlog_close(struct boxlog_files *f);
/* `boxctl log --verify WHAT` (log_verify.c): a BOXCTL_EXIT_* code. */
int log_verify(const char *what);
/*
 * The state dir (malloc'd) of box NAME|ID that no boxd runs, found as
 * boxlog_open finds it (by name, through ./box.ini, by run ID); NULL: none.
 */
char *boxlog_state_dir(const char *what);

/*
 * `--since T`: an RFC 3339 time, or a duration back from NOW_NS: NUMBER UNIT
 * pairs, UNIT one of ms s m h d ("10m", "1h30m"). 0, or -EINVAL / -ERANGE.
 */
int log_parse_since(const char *text, int64_t now_ns, int64_t *ret);

#endif
