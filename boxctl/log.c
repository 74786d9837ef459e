/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c — `boxctl log NAME|ID [-f] [--json] [--verdict V] [--action A] [--since T]
 * [--source D]`: a box's decisions (docs/boxctl.1.md); `--verify` checks the
 * log's chain instead (log_verify.c); `--kernel` shows STATE/kernel.jsonl, the
 * sandboxes' kernel refusals (show_kernel).
 *
 * A running box first: the boxd that runs it (the service at $BOX_SOCKET,
 * else /run/box/boxd.sock, then this user's embedded boxds) answers a
 * LogRequest with decisions.jsonl and decisions.jsonl.1 opened read-only, so
 * a box with its own [box] state_dir is found by name. A box that no boxd
 * runs (it has ended) is read from its files directly, as the calling user:
 * STATE_DIR/decisions.jsonl.1 then STATE_DIR/decisions.jsonl, STATE_DIR
 * being $XDG_STATE_HOME/box/NAME (else ~/.local/state/box/NAME) for
 * embedded boxes and /var/lib/box/UID/NAME for the service; when both
 * exist, the one written last; else, for a box with its own [box]
 * state_dir, ./box.ini when it describes a box of that name (the file `run`
 * and `check` read without -c). An ID (12 lowercase hex digits) names one
 * run: only that run's lines are shown (for an ended box, the state dirs of
 * this user are searched for it).
 *
 * Filters (all that are given must match): --verdict permit|deny, --action
 * A (exact, or a prefix when A ends in '*'), --since T (RFC 3339, or a
 * duration back from now: 10m, 1h30m; judged on time_ns, else `time`),
 * --source D. Outcome lines ("record") are not decisions: the text view
 * skips them without a warning, --json shows them unless --verdict asks.
 * boxlog_open() (boxlog.h) hands the same files to `policy replay`.
 *
 * Lines: TIME VERDICT ACTION RESOURCE RULE, TIME as written by policyd
 * (RFC 3339 UTC with milliseconds), RULE the first determining rule and
 * `+N` when N more determined it (`-` for none). --json prints the raw
 * lines. -f follows the file across boxd's rotation (rename to .1, new
 * file) until interrupted; for a running box it asks boxd again every second
 * and moves to the new file once the old one is read to its end.
 * Trusts: boxd's reply only after box_ipc_decode() validated it, and its fds
 * only as regular files. Nothing in the file — it holds agent-chosen strings: control
 * characters and bidi overrides are escaped before they reach a terminal,
 * and lines that are not decisions are skipped with a warning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "boxlog.h"
#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "config.h"
#include "policy_history.h"
#include "proto/validate.h"
#include "termsafe.h"

#define LOG_LINE_MAX (1u << 20) /* a longer "line" is not a decision */
#define FOLLOW_POLL_MS 200
#define FOLLOW_ASK_EVERY 5 /* polls between two LogRequests while following a running box */

struct logview {
	bool json;
	const char *id; /* only this run; NULL: all */
	unsigned bad_lines;
	unsigned shown;  /* decisions printed: none, and `log` says so */
	/* Filters (all that are set must match); outcome lines have no verdict. */
	const char *verdict; /* "permit" or "deny" */
	const char *action;  /* exact, or a prefix when it ends in '*' ("fs:*") */
	const char *source;  /* box-shell box-gateway box-mcpd supervisor */
	bool have_since;
	int64_t since_ns;    /* lines at or after this time */
};

static bool
filtering(const struct logview *v)
{
	return v->verdict || v->action || v->source || v->have_since;
}

/* The line's time: time_ns, else `time` (older lines); false when it has neither. */
static bool
line_time(json_t *o, int64_t *ret)
{
	json_t *ns = json_object_get(o, "time_ns");
	if (json_is_integer(ns)) {
		*ret = (int64_t)json_integer_value(ns);
		return true;
	}
	const char *t = json_string_value(json_object_get(o, "time"));
	return t && ph_rfc3339_to_ns(t, ret) == 0;
}

/* Whether line O passes the filters (a line the filters cannot judge does not). */
static bool
line_matches(const struct logview *v, json_t *o)
{
	if (v->verdict) {
		const char *x = json_string_value(json_object_get(o, "verdict"));
		if (!x || strcmp(x, v->verdict) != 0)
			return false;
	}
	if (v->action) {
		const char *x = json_string_value(json_object_get(o, "action"));
		size_t n = strlen(v->action);
		bool prefix = n > 0 && v->action[n - 1] == '*';
		if (!x || (prefix ? strncmp(x, v->action, n - 1) != 0 : strcmp(x, v->action) != 0))
			return false;
	}
	if (v->source) {
		const char *x = json_string_value(json_object_get(o, "source"));
		if (!x || strcmp(x, v->source) != 0)
			return false;
	}
	if (v->have_since) {
		int64_t t;
		if (!line_time(o, &t) || t < v->since_ns)
			return false;
	}
	return true;
}

static volatile sig_atomic_t stop_follow;

static void
on_sigint(int sig)
{
	stop_follow = 1;
}

/* One line of the file (without its newline). */
static void
show_line(struct logview *v, const char *line, size_t len)
{
	json_error_t je;

	if (len == 0)
		return;
	if (v->id) {
		char needle[64];
		(void)snprintf(needle, sizeof(needle), "\"id\":\"%s\"", v->id);
		if (!memmem(line, len, needle, strlen(needle)))
			return;
	}
	if (v->json && !filtering(v)) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
		v->shown++;
		return;
	}
	json_t *o = json_loadb(line, len, 0, &je);
	if (json_is_object(o) && (json_object_get(o, "record") || json_object_get(o, "seal"))) {
		/*
		 * An outcome line or a run's seal line (docs/boxctl.1.md): not a decision;
		 * --json shows it unless filtered out.
		 */
		if (v->json && line_matches(v, o)) {
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
			v->shown++;
		}
		json_decref(o);
		return;
	}
	if (json_is_object(o) && json_object_get(o, "control")) {
		/*
		 * A control line (a policy reload, docs/boxctl.1.md): shown unless a filter on
		 * decisions' fields (verdict, action, source) is given; --since applies.
		 */
		int64_t ct;
		if (v->verdict || v->action || v->source ||
		    (v->have_since && (!line_time(o, &ct) || ct < v->since_ns))) {
			json_decref(o);
			return;
		}
		if (v->json) {
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
		} else {
			const char *ctime_ = json_string_value(json_object_get(o, "time"));
			const char *what = json_string_value(json_object_get(o, "control"));
			const char *err = json_string_value(json_object_get(o, "error"));
			json_t *gen = json_object_get(o, "generation");
			put_safe(stdout, ctime_ ? ctime_ : "-");
			fputc(' ', stdout);
			put_safe(stdout, what ? what : "control");
			printf(" generation %lld %s", (long long)json_integer_value(gen),
			       json_is_true(json_object_get(o, "ok")) ? "in force" : "refused");
			if (err) {
				fputs(": ", stdout);
				put_safe(stdout, err);
			}
			fputc('\n', stdout);
		}
		v->shown++;
		json_decref(o);
		return;
	}
	const char *t = json_string_value(json_object_get(o, "time"));
	const char *verdict = json_string_value(json_object_get(o, "verdict"));
	const char *action = json_string_value(json_object_get(o, "action"));
	const char *res = json_string_value(json_object_get(o, "resource"));
	json_t *rules = json_object_get(o, "rules");
	if (!t || !verdict || !action || !res || !json_is_array(rules)) {
		if (v->bad_lines++ == 0)
			fprintf(stderr, "boxctl: warning: skipping lines that are not decisions\n");
		json_decref(o);
		return;
	}
	if (!line_matches(v, o)) {
		json_decref(o);
		return;
	}
	if (v->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
		v->shown++;
		json_decref(o);
		return;
	}
	put_safe(stdout, t);
	fputc(' ', stdout);
	put_safe(stdout, verdict);
	fputc(' ', stdout);
	put_safe(stdout, action);
	fputc(' ', stdout);
	put_safe(stdout, res[0] ? res : "-");
	fputc(' ', stdout);
	size_t n = json_array_size(rules);
	const char *first = n ? json_string_value(json_array_get(rules, 0)) : NULL;
	put_safe(stdout, first ? first : "-");
	if (n > 1)
		printf("+%zu", n - 1);
	fputc('\n', stdout);
	v->shown++;
	json_decref(o);
}

/*
 * Read FD from its current offset to the end, showing whole lines; a last
 * line without its newline stays in *pend (follow mode waits for the rest).
 */
static int
drain(struct logview *v, int fd, char **pend, size_t *pend_len)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		size_t start = 0;
		for (size_t i = 0; i < (size_t)n; i++) {
			if (buf[i] != '\n')
				continue;
			if (*pend_len) {
				char *p = realloc(*pend, *pend_len + (i - start) + 1);
				if (!p)
					return -ENOMEM;
				memcpy(p + *pend_len, buf + start, i - start);
				*pend = p;
				show_line(v, p, *pend_len + (i - start));
				*pend_len = 0;
			} else {
				show_line(v, buf + start, i - start);
			}
			start = i + 1;
		}
		size_t rest = (size_t)n - start;
		if (rest) {
			if (*pend_len + rest > LOG_LINE_MAX) {
				*pend_len = 0; /* not a decision line; drop it */
				continue;
			}
			char *p = realloc(*pend, *pend_len + rest + 1);
			if (!p)
				return -ENOMEM;
			memcpy(p + *pend_len, buf + start, rest);
			*pend = p;
			*pend_len += rest;
		}
	}
	fflush(stdout);
	return 0;
}

static int
show_file(struct logview *v, const char *path, bool must_exist)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *pend = NULL;
	size_t pend_len = 0;

	if (fd < 0)
		return errno == ENOENT && !must_exist ? 0 : -errno;
	int r = drain(v, fd, &pend, &pend_len);
	if (r == 0 && pend_len)
		show_line(v, pend, pend_len); /* a last line without newline */
	return r;
}

/* Follow PATH: keep reading as it grows; reopen when boxd rotated it. */
static int
follow(struct logview *v, const char *path)
{
	_cleanup_free_ char *pend = NULL;
	size_t pend_len = 0;
	struct stat st, now;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	int r;

	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	if (fd >= 0 && fstat(fd, &st) < 0) {
		close(fd);
		fd = -1;
	}
	while (!stop_follow) {
		if (fd >= 0 && (r = drain(v, fd, &pend, &pend_len)) < 0) {
			close(fd);
			return r;
		}
		struct timespec ts = { 0, FOLLOW_POLL_MS * 1000000L };
		(void)nanosleep(&ts, NULL);
		/* Rotated (a new file under the name) or truncated: start the new one. */
		if (stat(path, &now) == 0 &&
		    (fd < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
			if (fd >= 0) {
				(void)drain(v, fd, &pend, &pend_len);
				close(fd);
			}
			pend_len = 0;
			fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
			if (fd >= 0 && fstat(fd, &st) < 0) {
				close(fd);
				fd = -1;
			}
		} else if (fd >= 0 && fstat(fd, &now) == 0 && now.st_size < lseek(fd, 0, SEEK_CUR)) {
			(void)lseek(fd, 0, SEEK_SET);
			pend_len = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* ---- a running box: its boxd hands the files over -------------------------------- */

struct boxd_log {
	int current, previous; /* read-only fds, -1 when absent */
	char id[BOX_ID_LEN + 1];
};

static void
boxd_log_clear(struct boxd_log *l)
{
	l->current = safe_close(l->current);
	l->previous = safe_close(l->previous);
}

/*
 * Ask the boxd at PATH for BOX's logs. 1: it runs the box (*ret filled);
 * 0: it does not (or there is no boxd there, or it is too old to serve
 * LogRequest); negative: it refused, with *err.
 */
static int
log_from_boxd(const char *path, const char *box, struct boxd_log *ret, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	Box__LogRequest req = BOX__LOG_REQUEST__INIT;
	req.box = (char *)box;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	char *ignored = NULL;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_LOG_REQUEST, &req.base,
			    BOX__MSG_TYPE__MSG_LOG_REPLY, &m, &ignored, 5000);
	free(ignored);
	if (r < 0)
		return 0;
	const Box__LogReply *rep = (const Box__LogReply *)m.msg;
	if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND) {
		box_ipc_msg_done(&m);
		return 0;
	}
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		*err = strdup(rep->error ? rep->error : "boxd refused to show it");
		box_ipc_msg_done(&m);
		return -EPERM;
	}
	*ret = (struct boxd_log){ .current = -1, .previous = -1 };
	(void)snprintf(ret->id, sizeof(ret->id), "%s", rep->box_id);
	if (rep->has_current)
		ret->current = TAKE_FD(m.fds[0]);
	if (rep->has_previous)
		ret->previous = TAKE_FD(m.fds[1]);
	box_ipc_msg_done(&m);
	for (int i = 0; i < 2; i++) {
		struct stat st;
		int f = i ? ret->previous : ret->current;
		if (f >= 0 && (fstat(f, &st) < 0 || !S_ISREG(st.st_mode))) {
			boxd_log_clear(ret);
			*err = strdup("boxd passed something that is not a log file");
			return -EPROTO;
		}
	}
	return 1;
}

/* The service first, then this user's embedded boxds; *from: which one answered. */
static int
find_running(const char *box, struct boxd_log *ret, char **from, char **err)
{
	int r = log_from_boxd(client_service_path(), box, ret, err);
	if (r != 0) {
		*from = r > 0 ? strdup(client_service_path()) : NULL;
		return r;
	}
	char **socks = NULL;
	if (client_embedded_sockets(&socks) < 0)
		return 0;
	for (size_t i = 0; socks[i]; i++) {
		if (r == 0) {
			r = log_from_boxd(socks[i], box, ret, err);
			if (r > 0)
				*from = TAKE_PTR(socks[i]);
		}
		free(socks[i]);
	}
	free(socks);
	return r;
}

static bool
same_file(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Follow a running box's log through the fd its boxd gave: read as it grows;
 * every FOLLOW_ASK_EVERY polls ask that boxd again (by ID), and when the
 * current file is another one (rotated), finish the old one and go on with
 * the new. Once the box has ended the last file is still followed.
 */
static int
follow_fd(struct logview *v, const char *sock, struct boxd_log *l)
{
	_cleanup_free_ char *pend = NULL;
	size_t pend_len = 0;
	int r;

	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	for (unsigned polls = 0; !stop_follow; polls++) {
		if (l->current >= 0 && (r = drain(v, l->current, &pend, &pend_len)) < 0)
			return r;
		struct timespec ts = { 0, FOLLOW_POLL_MS * 1000000L };
		(void)nanosleep(&ts, NULL);
		struct stat now;
		if (l->current >= 0 && fstat(l->current, &now) == 0 &&
		    now.st_size < lseek(l->current, 0, SEEK_CUR)) {
			(void)lseek(l->current, 0, SEEK_SET); /* truncated */
			pend_len = 0;
		}
		if (polls % FOLLOW_ASK_EVERY != FOLLOW_ASK_EVERY - 1)
			continue;
		struct boxd_log fresh;
		char *err = NULL;
		if (log_from_boxd(sock, l->id, &fresh, &err) <= 0) {
			free(err);
			continue;
		}
		if (fresh.current >= 0 && (l->current < 0 || !same_file(fresh.current, l->current))) {
			if (l->current >= 0)
				(void)drain(v, l->current, &pend, &pend_len);
			pend_len = 0;
			safe_close(l->current);
			l->current = TAKE_FD(fresh.current);
		}
		boxd_log_clear(&fresh);
	}
	return 0;
}

static int
show_fd(struct logview *v, int fd)
{
	_cleanup_free_ char *pend = NULL;
	size_t pend_len = 0;
	int r = drain(v, fd, &pend, &pend_len);
	if (r == 0 && pend_len)
		show_line(v, pend, pend_len); /* a last line without newline */
	return r;
}

/* ---- finding the state dir ------------------------------------------------------ */

/* ROOT/box-ish directory name, or NULL (allocated). */
static char *
join(const char *a, const char *b)
{
	char *p = NULL;
	return asprintf(&p, "%s%s", a, b) < 0 ? NULL : p;
}

/* The roots that hold this user's state dirs (allocated, NULL-terminated). */
static void
state_roots(char *roots[3])
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw = getpwuid(getuid());
	char uid[32];

	roots[0] = roots[1] = roots[2] = NULL;
	if (xdg && xdg[0] == '/')
		roots[0] = join(xdg, "/box");
	else if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		roots[0] = join(pw->pw_dir, "/.local/state/box");
	else if (home && home[0] == '/')
		roots[0] = join(home, "/.local/state/box");
	(void)snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	roots[roots[0] ? 1 : 0] = join("/var/lib/box/", uid);
}

static time_t
log_mtime(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", dir);
	if (stat(path, &st) == 0)
		return st.st_mtime;
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl.1", dir);
	if (stat(path, &st) == 0)
		return st.st_mtime;
	return (time_t)-1;
}

/* Does FILE hold a line of run ID? */
static bool
file_has_id(const char *file, const char *id)
{
	char needle[64], buf[65536 + 64];
	size_t keep = 0;
	ssize_t n;
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return false;
	(void)snprintf(needle, sizeof(needle), "\"id\":\"%s\"", id);
	size_t nl = strlen(needle);
	while ((n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t have = keep + (size_t)n;
		if (memmem(buf, have, needle, nl))
			return true;
		keep = have < nl ? have : nl - 1;
		memmove(buf, buf + have - keep, keep);
	}
	return false;
}

/* The state dir of box NAME (allocated) or of the box that ran ID. */
static char *
find_state_dir(const char *name, const char *id)
{
	char *roots[3];
	char *best = NULL;
	time_t best_t = (time_t)-1;

	state_roots(roots);
	for (int i = 0; roots[i]; i++) {
		if (name) {
			char *dir = NULL;
			if (asprintf(&dir, "%s/%s", roots[i], name) < 0)
				continue;
			time_t t = log_mtime(dir);
			if (t != (time_t)-1 && (!best || t > best_t)) {
				free(best);
				best = dir;
				best_t = t;
			} else {
				free(dir);
			}
			continue;
		}
		DIR *d = opendir(roots[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char dir[PATH_MAX], file[PATH_MAX + 32];
			if (!box_valid_name(de->d_name))
				continue;
			(void)snprintf(dir, sizeof(dir), "%s/%s", roots[i], de->d_name);
			bool hit = false;
			for (int k = 0; k < 2 && !hit; k++) {
				(void)snprintf(file, sizeof(file), "%s/decisions.jsonl%s", dir,
					       k ? ".1" : "");
				hit = file_has_id(file, id);
			}
			time_t t = hit ? log_mtime(dir) : (time_t)-1;
			if (hit && (!best || t > best_t)) {
				free(best);
				best = strdup(dir);
				best_t = t;
			}
		}
		if (d)
			closedir(d);
	}
	for (int i = 0; i < 3; i++)
		free(roots[i]);
	return best;
}

/*
 * An ended box with its own [box] state_dir: ./box.ini, when it describes box
 * NAME, says where (read offline: syntax and paths only, nothing started).
 */
static char *
state_dir_from_ini(const char *name)
{
	struct box_config_options opts = { .offline = true };
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	char *dir = NULL;

	if (access("box.ini", R_OK) != 0)
		return NULL;
	int r = box_config_load("box.ini", &opts, &cfg, &errs);
	box_config_errors_clear(&errs);
	if (r == 0 && cfg->box.name.value && strcmp(cfg->box.name.value, name) == 0 &&
	    cfg->box.state_dir.value && log_mtime(cfg->box.state_dir.value) != (time_t)-1)
		dir = strdup(cfg->box.state_dir.value);
	box_config_free(cfg);
	return dir;
}

/*
 * Nothing was printed: say so on stderr (exit 0 — an empty log is no
 * error), naming the file when it is known, so silence is never ambiguous.
 */
static void
say_no_decisions(const struct logview *v, const char *what, const char *file)
{
	struct stat st;
	const char *state = !file ? NULL : stat(file, &st) < 0 ? "does not exist" :
					  st.st_size == 0 ? "is empty" : NULL;
	if (v->shown)
		return;
	if (filtering(v) && !(file && state)) {
		fprintf(stderr, "boxctl: no decision of %s %s matches the filters\n",
			v->id ? "run" : "box", what);
		return;
	}
	fprintf(stderr, "boxctl: %s %s has no decisions yet", v->id ? "run" : "box", what);
	if (file && state)
		fprintf(stderr, " (%s %s)", file, state);
	else if (v->bad_lines)
		fprintf(stderr, " (%u line%s that are not decisions)", v->bad_lines,
			v->bad_lines == 1 ? "" : "s");
	fputc('\n', stderr);
}

/* The fd's path (for messages); FALLBACK when /proc cannot tell. */
static void
fd_path(int fd, const char *fallback, char *buf, size_t len)
{
	char link[64];
	(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, len - 1);
	if (n <= 0) {
		(void)snprintf(buf, len, "%s", fallback);
		return;
	}
	buf[n] = '\0';
}

int
boxlog_open(const char *what, struct boxlog_files *ret, char **err)
{
	*ret = (struct boxlog_files){ .fd = { -1, -1 } };
	*err = NULL;
	struct boxd_log running = { .current = -1, .previous = -1 };
	_cleanup_free_ char *from = NULL;
	int found = find_running(what, &running, &from, err);
	if (found < 0)
		return found;
	if (found > 0) {
		ret->running = true;
		if (strcmp(running.id, what) == 0)
			(void)snprintf(ret->run_id, sizeof(ret->run_id), "%s", running.id);
		ret->fd[0] = TAKE_FD(running.previous);
		ret->fd[1] = TAKE_FD(running.current);
		for (int i = 0; i < 2; i++)
			if (ret->fd[i] >= 0)
				fd_path(ret->fd[i], i ? "decisions.jsonl" : "decisions.jsonl.1",
					ret->path[i], sizeof(ret->path[i]));
		return 0;
	}
	_cleanup_free_ char *dir = box_valid_name(what) ? find_state_dir(what, NULL) : NULL;
	if (!dir && box_valid_name(what))
		dir = state_dir_from_ini(what);
	if (!dir && box_valid_box_id(what)) {
		dir = find_state_dir(NULL, what);
		(void)snprintf(ret->run_id, sizeof(ret->run_id), "%s", what);
	}
	if (!dir)
		return -ENOENT;
	for (int i = 0; i < 2; i++) {
		(void)snprintf(ret->path[i], sizeof(ret->path[i]), "%s/decisions.jsonl%s", dir,
			       i ? "" : ".1");
		ret->fd[i] = open(ret->path[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (ret->fd[i] < 0 && errno != ENOENT) {
			int r = -errno;
			if (asprintf(err, "%s: %s", ret->path[i], strerror(-r)) < 0)
				*err = NULL;
			boxlog_close(ret);
			return r;
		}
	}
	return 0;
}

char *
boxlog_state_dir(const char *what)
{
	char *dir = box_valid_name(what) ? find_state_dir(what, NULL) : NULL;
	if (!dir && box_valid_name(what))
		dir = state_dir_from_ini(what);
	if (!dir && box_valid_box_id(what))
		dir = find_state_dir(NULL, what);
	return dir;
}

void
boxlog_close(struct boxlog_files *f)
{
	f->fd[0] = safe_close(f->fd[0]);
	f->fd[1] = safe_close(f->fd[1]);
}

/*
 * `log --kernel`: STATE/kernel.jsonl (boxd's, the sandboxes' kernel refusals:
 * docs/boxctl.1.md), read as the calling user. One line a report:
 * TIME SANDBOX SYSCALL ERRNO COUNT, COUNT "1 (first)" for the first of its
 * kind, else the calls refused in its last 10 s window; --json the raw lines.
 * Lines that are not reports are skipped with a warning.
 */
static int
show_kernel(const struct logview *v, const char *dir)
{
	char path[PATH_MAX + 32];
	(void)snprintf(path, sizeof(path), "%s/kernel.jsonl", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned shown = 0, bad = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if ((size_t)n > LOG_LINE_MAX) {
			bad++;
			continue;
		}
		json_t *o = json_loadb(line, (size_t)n, 0, NULL);
		const char *sys = o ? json_string_value(json_object_get(o, "syscall")) : NULL;
		if (!o || !sys || !json_is_integer(json_object_get(o, "count"))) {
			bad++;
			json_decref(o);
			continue;
		}
		int64_t t;
		const char *id = json_string_value(json_object_get(o, "id"));
		if ((v->id && (!id || strcmp(id, v->id) != 0)) ||
		    (v->have_since && (!line_time(o, &t) || t < v->since_ns))) {
			json_decref(o);
			continue;
		}
		shown++;
		if (v->json) {
			fwrite(line, 1, (size_t)n, stdout);
			json_decref(o);
			continue;
		}
		const char *sb = json_string_value(json_object_get(o, "sandbox"));
		const char *en = json_string_value(json_object_get(o, "errno"));
		const char *tm = json_string_value(json_object_get(o, "time"));
		put_safe(stdout, tm ? tm : "-");
		fputc(' ', stdout);
		put_safe(stdout, sb ? sb : "-");
		fputc(' ', stdout);
		put_safe(stdout, sys);
		fputc(' ', stdout);
		put_safe(stdout, en ? en : "-");
		printf(" %lld%s\n", (long long)json_integer_value(json_object_get(o, "count")),
		       json_is_true(json_object_get(o, "first")) ? " (first)" : "");
		json_decref(o);
	}
	if (bad)
		fprintf(stderr, "boxctl: warning: %u lines of %s are not kernel refusal reports\n",
			bad, path);
	if (!shown && !v->json)
		fprintf(stderr, "boxctl: no kernel refusals in %s\n", path);
	return 0;
}

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxctl log NAME|ID [-f] [--json] [--verdict permit|deny] [--action A] "
		   "[--since T] [--source D]\n"
		   "       boxctl log --kernel NAME|ID [--json] [--since T]\n"
		   "       boxctl log --verify NAME|ID\n");
	return BOXCTL_EXIT_USAGE;
}

/*
 * --since T: an RFC 3339 time, or a duration back from now: one or more
 * NUMBER UNIT pairs, UNIT one of ms s m h d ("10m", "1h30m"). -EINVAL.
 */
int
log_parse_since(const char *text, int64_t now_ns, int64_t *ret)
{
	int64_t t;
	if (ph_rfc3339_to_ns(text, &t) == 0) {
		*ret = t;
		return 0;
	}
	const char *p = text;
	int64_t total = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		int64_t n = 0;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (n > INT64_MAX / 10 - 9)
				return -ERANGE;
			n = n * 10 + (*p - '0');
		}
		int64_t unit;
		if (strncmp(p, "ms", 2) == 0) {
			unit = 1000000LL;
			p += 2;
		} else if (*p == 's' || *p == 'm' || *p == 'h' || *p == 'd') {
			unit = *p == 's' ? 1000000000LL : *p == 'm' ? 60000000000LL
			     : *p == 'h' ? 3600000000000LL : 86400000000000LL;
			p++;
		} else {
			return -EINVAL;
		}
		if (n > (INT64_MAX - total) / unit)
			return -ERANGE;
		total += n * unit;
	}
	*ret = now_ns - total;
	return 0;
}

static bool
valid_source(const char *s)
{
	static const char *const sources[] = { "box-shell", "box-gateway", "box-mcpd",
					       "supervisor" };
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (strcmp(s, sources[i]) == 0)
			return true;
	return false;
}

int
cmd_log(int argc, char **argv)
{
	struct logview v = { 0 };
	const char *what = NULL;
	bool follow_mode = false, verify = false, kernel = false;
	char path[PATH_MAX + 32];

	for (int i = 1; i < argc; i++) {
		bool has_arg = i + 1 < argc;
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
			follow_mode = true;
		else if (strcmp(argv[i], "--verify") == 0)
			verify = true;
		else if (strcmp(argv[i], "--kernel") == 0)
			kernel = true;
		else if (strcmp(argv[i], "--json") == 0)
			v.json = true;
		else if (strcmp(argv[i], "--verdict") == 0 && has_arg) {
			v.verdict = argv[++i];
			if (strcmp(v.verdict, "permit") != 0 && strcmp(v.verdict, "deny") != 0) {
				fprintf(stderr, "boxctl: error: --verdict: expected permit or deny, "
						"got '%s'\n", v.verdict);
				return BOXCTL_EXIT_USAGE;
			}
		} else if (strcmp(argv[i], "--action") == 0 && has_arg) {
			v.action = argv[++i];
			if (!v.action[0]) {
				fprintf(stderr, "boxctl: error: --action: expected an action such as "
						"fs:read, or a prefix such as 'fs:*'\n");
				return BOXCTL_EXIT_USAGE;
			}
		} else if (strcmp(argv[i], "--source") == 0 && has_arg) {
			v.source = argv[++i];
			if (!valid_source(v.source)) {
				fprintf(stderr, "boxctl: error: --source: expected box-shell, "
						"box-gateway, box-mcpd or supervisor, got '%s'\n",
					v.source);
				return BOXCTL_EXIT_USAGE;
			}
		} else if (strcmp(argv[i], "--since") == 0 && has_arg) {
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			const char *t = argv[++i];
			if (log_parse_since(t, (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec,
					    &v.since_ns) < 0) {
				fprintf(stderr, "boxctl: error: --since: expected an RFC 3339 time "
						"(2026-12-01T10:00:00Z) or a duration such as 10m, "
						"2h or 1h30m, got '%s'\n", t);
				return BOXCTL_EXIT_USAGE;
			}
			v.have_since = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			(void)usage(stdout);
			return BOXCTL_EXIT_OK;
		} else if (argv[i][0] == '-' || what)
			return usage(stderr);
		else
			what = argv[i];
	}
	if (!what)
		return usage(stderr);
	if (!box_valid_name(what) && !box_valid_box_id(what)) {
		fprintf(stderr, "boxctl: error: '%s' is neither a box name nor a box id\n", what);
		return BOXCTL_EXIT_USAGE;
	}
	if (verify && (follow_mode || v.json || filtering(&v))) {
		fprintf(stderr, "boxctl: error: --verify takes no -f, --json or filter\n");
		return BOXCTL_EXIT_USAGE;
	}
	if (verify)
		return log_verify(what);
	if (kernel && (follow_mode || v.verdict || v.action || v.source)) {
		fprintf(stderr, "boxctl: error: --kernel takes no -f, --verdict, --action or --source\n");
		return BOXCTL_EXIT_USAGE;
	}
	if (kernel) {
		_cleanup_free_ char *kdir = boxlog_state_dir(what);
		if (!kdir) {
			fprintf(stderr, "boxctl: error: no box '%s' (no state dir of this user "
					"holds it)\n", what);
			return BOXCTL_EXIT_FAILURE;
		}
		_cleanup_free_ char *byname = box_valid_name(what) ? find_state_dir(what, NULL) :
									     NULL;
		if (!byname && box_valid_box_id(what))
			v.id = what; /* one run's lines */
		int r = show_kernel(&v, kdir);
		fflush(stdout);
		if (r < 0) {
			fprintf(stderr, "boxctl: error: log --kernel %s: %s\n", what, strerror(-r));
			return BOXCTL_EXIT_FAILURE;
		}
		return BOXCTL_EXIT_OK;
	}
	/* A running box: its boxd opens the files (wherever its state dir is). */
	struct boxd_log running = { .current = -1, .previous = -1 };
	_cleanup_free_ char *from = NULL;
	char *err = NULL;
	int found = find_running(what, &running, &from, &err);
	if (found < 0) {
		fprintf(stderr, "boxctl: error: log %s: %s\n", what, err ? err : strerror(-found));
		free(err);
		return BOXCTL_EXIT_FAILURE;
	}
	if (found > 0) {
		/* Asked by ID: that run's lines only (as for an ended box). */
		if (strcmp(running.id, what) == 0)
			v.id = running.id;
		int r = running.previous >= 0 ? show_fd(&v, running.previous) : 0;
		if (r == 0 && follow_mode)
			r = follow_fd(&v, from, &running);
		else if (r == 0 && running.current >= 0)
			r = show_fd(&v, running.current);
		fflush(stdout);
		boxd_log_clear(&running);
		if (r < 0) {
			fprintf(stderr, "boxctl: error: log %s: %s\n", what, strerror(-r));
			return BOXCTL_EXIT_FAILURE;
		}
		if (!follow_mode)
			say_no_decisions(&v, what, NULL);
		return BOXCTL_EXIT_OK;
	}

	/* A name first (a name may look like an id); else an id of one run. */
	_cleanup_free_ char *dir = box_valid_name(what) ? find_state_dir(what, NULL) : NULL;
	if (!dir && box_valid_name(what))
		dir = state_dir_from_ini(what);
	if (!dir && box_valid_box_id(what)) {
		dir = find_state_dir(NULL, what);
		v.id = what;
	}
	if (!dir) {
		fprintf(stderr, "boxctl: error: no decisions of a box '%s' (no state dir of this user "
				"holds them)\n",
			what);
		return BOXCTL_EXIT_FAILURE;
	}
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl.1", dir);
	int r = show_file(&v, path, false);
	if (r == 0) {
		/* Following prints the current file from its start, then what comes. */
		(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", dir);
		r = follow_mode ? follow(&v, path) : show_file(&v, path, false);
	}
	fflush(stdout);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	if (!follow_mode)
		say_no_decisions(&v, what, path);
	return BOXCTL_EXIT_OK;
}
