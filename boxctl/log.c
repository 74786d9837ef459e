/*
 * log.c — `boxctl log NAME|ID [-f] [--json]`: a box's decisions (CLI.md).
 *
 * Reads STATE_DIR/decisions.jsonl.1 then STATE_DIR/decisions.jsonl directly,
 * as the calling user, so it works after the box has ended. STATE_DIR is
 * $XDG_STATE_HOME/box/NAME (else ~/.local/state/box/NAME) for embedded
 * boxes and /var/lib/box/UID/NAME for the service; when both exist, the one
 * written last. An ID (12 lowercase hex digits) names one run: the state
 * dirs of this user are searched for it and only that run's lines are shown.
 *
 * Lines: TIME VERDICT ACTION RESOURCE RULE, TIME as written by policyd
 * (RFC 3339 UTC with milliseconds), RULE the first determining rule and
 * `+N` when N more determined it (`-` for none). --json prints the raw
 * lines. -f follows the file across boxd's rotation (rename to .1, new
 * file) until interrupted.
 * Trusts: nothing in the file — it holds agent-chosen strings: control
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

#include "cleanup.h"
#include "commands.h"
#include "proto/validate.h"

#define LOG_LINE_MAX (1u << 20) /* a longer "line" is not a decision */
#define FOLLOW_POLL_MS 200

struct logview {
	bool json;
	const char *id; /* only this run; NULL: all */
	unsigned bad_lines;
};

static volatile sig_atomic_t stop_follow;

static void
on_sigint(int sig)
{
	stop_follow = 1;
}

/* Print S for a terminal: controls, DEL, C1 and bidi controls escaped. */
static void
put_safe(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\x%02x", c);
			p++;
			continue;
		}
		/* U+0080-U+009F (C2 80-9F), U+061C, U+200E/F, U+202A-202E, U+2066-2069. */
		if (c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(out, "\\u{%x}", p[1]);
			p += 2;
			continue;
		}
		if (c == 0xd8 && p[1] == 0x9c) {
			fputs("\\u{61c}", out);
			p += 2;
			continue;
		}
		if (c == 0xe2 && p[1] == 0x80 &&
		    (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) {
			fprintf(out, "\\u{%x}", 0x2000u + p[2] - 0x80u);
			p += 3;
			continue;
		}
		if (c == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) {
			fprintf(out, "\\u{%x}", 0x2040u + p[2] - 0x80u);
			p += 3;
			continue;
		}
		fputc((int)c, out);
		p++;
	}
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
	if (v->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
		return;
	}
	json_t *o = json_loadb(line, len, 0, &je);
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

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxctl log NAME|ID [-f] [--json]\n");
	return BOXCTL_EXIT_USAGE;
}

int
cmd_log(int argc, char **argv)
{
	struct logview v = { 0 };
	const char *what = NULL;
	bool follow_mode = false;
	char path[PATH_MAX + 32];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
			follow_mode = true;
		else if (strcmp(argv[i], "--json") == 0)
			v.json = true;
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
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
	/* A name first (a name may look like an id); else an id of one run. */
	_cleanup_free_ char *dir = box_valid_name(what) ? find_state_dir(what, NULL) : NULL;
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
	return BOXCTL_EXIT_OK;
}
