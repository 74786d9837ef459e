/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_history.h — `boxctl policy eval --history F` (docs/box-policy.5.md): replay
 * lines in the eval input format into a temporal monitor before the input,
 * printing nothing, and the pieces the eval loop needs for temporal
 * policies: exact `at` times, request and outcome lines.
 *
 * Wiring (boxctl/policy_cmd.c): when bp_policy_has_temporal(policy), make a
 * monitor (bp_monitor_new) and a struct ph_state with ph_init(); replay F
 * with ph_replay_file(); then for each input line use ph_line() with
 * `decide` non-NULL — request lines are decided through
 * bp_monitor_decide at the line's time (observe, then decide) and the
 * decision lands in *decide; outcome lines are observed.
 * Times are kept as integer nanoseconds parsed from the decimal text (a
 * double loses ~240 ns at today's epoch, which breaks "exactly W old is
 * inside" at the window edge).
 * Trusts: nothing in the files; errors name the line.
 */
#ifndef BOXCTL_POLICY_HISTORY_H
#define BOXCTL_POLICY_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <boxpolicy.h>
#include <boxpolicy_temporal.h>

struct ph_state {
	struct bp_monitor *mon; /* borrowed */
	struct bp_request *req; /* bound to the monitor's policy */
	struct bp_event *ev;
	int64_t last_ns;
	bool have_last;
	unsigned errors; /* lines refused while replaying */
	const char *line; /* the line being parsed (for the exact text of "at") */
};

int ph_init(struct ph_state *st, struct bp_monitor *mon);
void ph_done(struct ph_state *st);

/*
 * `at` (seconds since the epoch as a JSON number, fractions allowed, or an
 * RFC 3339 string; NULL: now) into nanoseconds. It must not go backwards
 * from the last accepted line (ph_line records it). -EINVAL with *err set.
 */
int ph_parse_at(struct ph_state *st, json_t *at, int64_t *ret_ns, const char **err);
/* Exact decimal seconds / RFC 3339 text into ns since the epoch (exported for tests). */
int ph_seconds_to_ns(const char *text, int64_t *ret_ns);
int ph_rfc3339_to_ns(const char *text, int64_t *ret_ns);

/*
 * One line (a NUL-terminated JSON object): a request line is observed and,
 * when DECIDE is not NULL, decided into it (then returns 1); an outcome
 * line ({"record":"response"|"error",…,"output":{…}}) is observed (returns
 * 0). Schema lines return -ENOTSUP (the caller reloads its policy and
 * rebuilds its monitor). -EINVAL with ERR filled for a malformed line.
 */
int ph_line(struct ph_state *st, const char *line, struct bp_decision *decide, char *err,
	    size_t err_len);

/*
 * Replay every line of PATH ("-" for stdin) without output; a malformed
 * line is reported on stderr as "boxctl: PATH:LINE: …" and skipped.
 * Returns the number of lines replayed, or negative errno when PATH
 * cannot be read. (`boxctl policy eval` replays --history through its own
 * loop over ph_line so that schema lines in the history work and a refused
 * line stops the run; this is the simple form for tests and tools.)
 */
long ph_replay_file(struct ph_state *st, const char *path);

#endif
