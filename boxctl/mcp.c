/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp.c — `boxctl mcp pins BOX` and `boxctl mcp accept BOX SERVER [TOOL]`
 * (docs/boxctl.1.md; the pins file's format in proto/mcp.proto, its rules in
 * box-mcpd/pins.h, whose pure module this links).
 *
 * The pins file STATE/mcp/pins.jsonl of a running box comes from the boxd
 * that runs it (McpPinsRequest to the service, then this user's embedded
 * boxds: an fd opened through the state dir boxd holds, read-only, or
 * O_WRONLY|O_APPEND for accept); a box no boxd runs is read from its state
 * dir as the caller (found as `boxctl log` finds it). An embedded box's
 * pins are its owner's; a service box's are box-mcpd's daemon user's (then
 * only root reads them while no boxd runs the box).
 *
 *   pins    one line per (server, tool), tab-separated, after a header:
 *           SERVER TOOL STATE TIME — STATE `pinned` (its pin line),
 *           `accepted` (an accept line set it) or `changed` (a definition
 *           differing from the pin was seen and is refused); TIME that of
 *           the pin/accept line, for `changed` of the refused definition.
 *   accept  for TOOL, or every changed tool of SERVER: prints the pinned
 *           and the new definition, appends one accept line of the new one
 *           (one write(2) each: O_APPEND keeps it whole beside box-mcpd's
 *           own lines). Nothing to accept: a message, exit 1.
 * A running box's box-mcpd re-reads the file before it refuses a changed
 * tool, so an accept takes effect on the next call.
 * Exit: 0; 1 no such box / no pins file / nothing to accept / I/O error;
 * 2 usage.
 * Trusts: boxd's fd only as a regular file; the file's text is parsed as
 * untrusted (pins.c skips malformed lines with a warning, shown here).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "box-mcpd/pins.h"
#include "boxlog.h"
#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "fdutil.h"
#include "proto/validate.h"
#include "termsafe.h"

#define PINS_READ_MAX (256u << 20) /* as box-mcpd: the file only grows */

struct pins_files {
	int rfd, wfd;            /* read; append (accept only), -1 when not asked */
	char path[4200];         /* for messages */
	char name[64];           /* the box, as the user named it */
};

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxctl mcp pins BOX\n"
		   "       boxctl mcp accept BOX SERVER [TOOL]\n");
	return BOXCTL_EXIT_USAGE;
}

/* 1: boxd at PATH runs BOX and gave the fd; 0: it does not (or cannot say); <0: refused. */
static int
pins_from_boxd(const char *path, const char *box, bool accept, int *ret, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	Box__McpPinsRequest req = BOX__MCP_PINS_REQUEST__INIT;
	req.box = (char *)box;
	req.has_accept = 1;
	req.accept = accept;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	char *ignored = NULL;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_MCP_PINS_REQUEST, &req.base,
			    BOX__MSG_TYPE__MSG_MCP_PINS_REPLY, &m, &ignored, 5000);
	free(ignored);
	if (r < 0)
		return 0; /* not there, or a boxd too old to know the request */
	const Box__McpPinsReply *rep = (const Box__McpPinsReply *)m.msg;
	if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND) {
		box_ipc_msg_done(&m);
		return 0;
	}
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		*err = strdup(rep->error ? rep->error : "boxd refused to give the pins file");
		box_ipc_msg_done(&m);
		return -EPERM;
	}
	int pfd = TAKE_FD(m.fds[0]);
	box_ipc_msg_done(&m);
	struct stat st;
	if (pfd < 0 || fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		safe_close(pfd);
		*err = strdup("boxd passed something that is not the pins file");
		return -EPROTO;
	}
	*ret = pfd;
	return 1;
}

/* The service, then this user's embedded boxds. */
static int
pins_running(const char *box, bool accept, int *ret, char **err)
{
	int r = pins_from_boxd(client_service_path(), box, accept, ret, err);
	if (r != 0)
		return r;
	char **socks = NULL;
	if (client_embedded_sockets(&socks) < 0)
		return 0;
	for (size_t i = 0; socks[i]; i++) {
		if (r == 0)
			r = pins_from_boxd(socks[i], box, accept, ret, err);
		free(socks[i]);
	}
	free(socks);
	return r;
}

static int
pins_open(const char *box, bool accept, struct pins_files *f)
{
	_cleanup_free_ char *err = NULL;

	*f = (struct pins_files){ .rfd = -1, .wfd = -1 };
	snprintf(f->name, sizeof(f->name), "%s", box);
	int r = pins_running(box, false, &f->rfd, &err);
	if (r > 0 && accept && (r = pins_running(box, true, &f->wfd, &err)) == 0)
		r = -ESRCH; /* it went away between the two requests */
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", box,
			err ? err : r == -ESRCH ? "the box ended meanwhile" : strerror(-r));
		f->rfd = safe_close(f->rfd);
		return r;
	}
	if (r > 0) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", f->rfd);
		ssize_t n = readlink(link, f->path, sizeof(f->path) - 1);
		f->path[n > 0 ? n : 0] = '\0';
		if (n <= 0)
			snprintf(f->path, sizeof(f->path), "the pins file of %s", box);
		return 0;
	}
	/* No boxd runs it: its state dir, read (and appended) as the caller. */
	_cleanup_free_ char *dir = boxlog_state_dir(box);
	if (!dir) {
		fprintf(stderr, "boxctl: error: no box %s runs here and no state dir of yours holds "
				"it\n", box);
		return -ENOENT;
	}
	snprintf(f->path, sizeof(f->path), "%s/mcp/pins.jsonl", dir);
	f->rfd = open(f->path, (accept ? O_RDWR | O_APPEND : O_RDONLY) | O_CLOEXEC | O_NOCTTY |
				       O_NOFOLLOW);
	struct stat st;
	if (f->rfd < 0 || fstat(f->rfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = f->rfd < 0 ? errno : EINVAL;
		f->rfd = safe_close(f->rfd);
		if (e == ENOENT)
			fprintf(stderr, "boxctl: error: box %s has no MCP pins (%s does not exist: "
					"no stdio [mcp] server has run)\n", box, f->path);
		else if (e == EACCES)
			fprintf(stderr, "boxctl: error: %s: %s (a service box's pins are box-mcpd's "
					"daemon user's: ask while the box runs, or as root)\n",
				f->path, strerror(e));
		else
			fprintf(stderr, "boxctl: error: %s: %s\n", f->path,
				e == EINVAL ? "not a regular file" : strerror(e));
		return -e;
	}
	if (accept && (f->wfd = fd_dup_cloexec(f->rfd, 3)) < 0) {
		int e = -f->wfd;
		f->wfd = -1;
		f->rfd = safe_close(f->rfd);
		fprintf(stderr, "boxctl: error: dup: %s\n", strerror(e));
		return -e;
	}
	return 0;
}

static void
pins_files_close(struct pins_files *f)
{
	f->rfd = safe_close(f->rfd);
	f->wfd = safe_close(f->wfd);
}

/* The whole file into P (warnings printed). 0, or 1 after a message. */
static int
pins_read(struct pins_files *f, struct mcp_pins **ret)
{
	struct mcp_pins *p = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	if (mcp_pins_new(&p) < 0)
		goto oom;
	for (;;) {
		if (len + 65536 > cap) {
			if (cap >= PINS_READ_MAX) {
				fprintf(stderr, "boxctl: error: %s is over %u MiB\n", f->path,
					PINS_READ_MAX >> 20);
				mcp_pins_free(p);
				return 1;
			}
			cap = cap ? cap * 2 : 65536 * 2;
			char *nb = realloc(buf, cap);
			if (!nb)
				goto oom;
			buf = nb;
		}
		ssize_t n = pread(f->rfd, buf + len, cap - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "boxctl: error: reading %s: %s\n", f->path, strerror(errno));
			mcp_pins_free(p);
			return 1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	long used = mcp_pins_feed(p, buf ? buf : "", len, true);
	if (used < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", f->path, strerror((int)-used));
		mcp_pins_free(p);
		return 1;
	}
	size_t nw = mcp_pins_warning_count(p);
	for (size_t i = 0; i < nw && i < MCP_PIN_WARNINGS_MAX; i++)
		fprintf(stderr, "boxctl: warning: %s: %s\n", f->path, mcp_pins_warning(p, i));
	if (nw > MCP_PIN_WARNINGS_MAX)
		fprintf(stderr, "boxctl: warning: %s: %zu more malformed lines\n", f->path,
			nw - MCP_PIN_WARNINGS_MAX);
	*ret = p;
	return 0;
oom:
	mcp_pins_free(p);
	fprintf(stderr, "boxctl: error: out of memory\n");
	return 1;
}

static int
cmd_pins(const char *box)
{
	struct pins_files f;
	struct mcp_pins *p = NULL;
	struct mcp_pin_info *v = NULL;
	size_t n = 0;

	if (pins_open(box, false, &f) < 0)
		return BOXCTL_EXIT_FAILURE;
	int rc = pins_read(&f, &p);
	pins_files_close(&f);
	if (rc)
		return BOXCTL_EXIT_FAILURE;
	if (mcp_pins_list(p, &v, &n) < 0) {
		mcp_pins_free(p);
		fprintf(stderr, "boxctl: error: out of memory\n");
		return BOXCTL_EXIT_FAILURE;
	}
	if (n == 0) {
		fprintf(stderr, "boxctl: box %s has no pinned MCP tools yet (%s holds none)\n", box,
			f.path);
	} else {
		printf("SERVER\tTOOL\tSTATE\tTIME\n");
		for (size_t i = 0; i < n; i++) {
			const char *state = v[i].changed ? "changed" :
					    v[i].accepted ? "accepted" : "pinned";
			const char *when = v[i].changed && v[i].pending_time ? v[i].pending_time :
					   v[i].pinned_time ? v[i].pinned_time : "-";
			put_safe(stdout, v[i].server);
			putchar('\t');
			put_safe(stdout, v[i].tool);
			printf("\t%s\t", state);
			put_safe(stdout, when);
			putchar('\n');
		}
	}
	free(v);
	mcp_pins_free(p);
	return fflush(stdout) == 0 ? BOXCTL_EXIT_OK : BOXCTL_EXIT_FAILURE;
}

/* A canonical definition, indented for reading (terminal-safe). */
static void
show_definition(const char *label, const char *time_text, const char *canon, size_t len)
{
	printf("  %s (%s):\n", label, time_text ? time_text : "time unknown");
	if (!canon) {
		printf("    (none: its pin line is missing)\n");
		return;
	}
	json_error_t e;
	json_t *j = json_loadb(canon, len, 0, &e);
	char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	const char *all = text ? text : canon;
	size_t total = text ? strlen(text) : len;
	for (size_t at = 0; at < total;) {
		const char *nl = memchr(all + at, '\n', total - at);
		size_t l = nl ? (size_t)(nl - (all + at)) : total - at;
		fputs("    ", stdout);
		put_safe_n(stdout, all + at, l);
		putchar('\n');
		at += l + 1;
	}
	free(text);
	json_decref(j);
}

/* What differs: the same words box-mcpd's refusal uses. */
static const char *
what_changed(const char *a, size_t al, const char *b, size_t bl)
{
	json_error_t e;
	json_t *x = a ? json_loadb(a, al, 0, &e) : NULL, *y = json_loadb(b, bl, 0, &e);
	const char *what = "definition";
	if (x && y) {
		bool d = !json_equal(json_object_get(x, "description"),
				     json_object_get(y, "description"));
		bool s = !json_equal(json_object_get(x, "inputSchema"),
				     json_object_get(y, "inputSchema"));
		what = d && s ? "description and inputSchema" : d ? "description" :
		       s      ? "inputSchema" : "definition";
	}
	json_decref(x);
	json_decref(y);
	return what;
}

static int
cmd_accept(const char *box, const char *server, const char *tool)
{
	struct pins_files f;
	struct mcp_pins *p = NULL;
	struct mcp_pin_info *v = NULL;
	size_t n = 0;
	int rc = BOXCTL_EXIT_FAILURE;

	if (!box_valid_name(server)) {
		fprintf(stderr, "boxctl: error: %s is not an [mcp.NAME] name\n", server);
		return BOXCTL_EXIT_USAGE;
	}
	if (pins_open(box, true, &f) < 0)
		return BOXCTL_EXIT_FAILURE;
	if (pins_read(&f, &p) || mcp_pins_list(p, &v, &n) < 0)
		goto out;
	char now[MCP_TIME_MAX];
	if (!mcp_time_rfc3339(time(NULL), now, sizeof(now))) {
		fprintf(stderr, "boxctl: error: cannot tell the time\n");
		goto out;
	}
	size_t accepted = 0, known = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].server, server) != 0 || (tool && strcmp(v[i].tool, tool) != 0))
			continue;
		known++;
		if (!v[i].changed || !v[i].pending)
			continue;
		printf("[mcp.%s] tool ", server);
		put_safe(stdout, v[i].tool);
		printf(": %s changed\n",
		       what_changed(v[i].pinned, v[i].pinned_len, v[i].pending, v[i].pending_len));
		show_definition("pinned", v[i].pinned_time, v[i].pinned, v[i].pinned_len);
		show_definition("new", v[i].pending_time, v[i].pending, v[i].pending_len);
		size_t ll = 0;
		_cleanup_free_ char *line = mcp_pins_line("accept", v[i].server, v[i].tool,
							  v[i].pending, v[i].pending_len, now, &ll);
		if (!line) {
			fprintf(stderr, "boxctl: error: cannot make an accept line\n");
			goto out;
		}
		int r = fd_write_full(f.wfd, line, ll);
		if (r < 0) {
			fprintf(stderr, "boxctl: error: appending to %s: %s\n", f.path, strerror(-r));
			goto out;
		}
		printf("accepted: [mcp.%s] tool ", server);
		put_safe(stdout, v[i].tool);
		printf(" (the new definition is its pin now)\n");
		accepted++;
	}
	if (accepted) {
		rc = BOXCTL_EXIT_OK;
	} else if (tool && !known) {
		fprintf(stderr, "boxctl: nothing to accept: [mcp.%s] has no pinned tool ", server);
		put_safe(stderr, tool);
		fprintf(stderr, " in %s\n", f.path);
	} else if (tool) {
		fprintf(stderr, "boxctl: nothing to accept: [mcp.%s] tool ", server);
		put_safe(stderr, tool);
		fprintf(stderr, " has not changed since its pin\n");
	} else if (!known) {
		fprintf(stderr, "boxctl: nothing to accept: [mcp.%s] has no pinned tools in %s\n",
			server, f.path);
	} else {
		fprintf(stderr, "boxctl: nothing to accept: no tool of [mcp.%s] has changed since "
				"its pin\n", server);
	}
out:
	if (fflush(stdout) != 0)
		rc = BOXCTL_EXIT_FAILURE;
	free(v);
	mcp_pins_free(p);
	pins_files_close(&f);
	return rc;
}

int
cmd_mcp(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		(void)usage(stdout);
		return BOXCTL_EXIT_OK;
	}
	if (argc == 3 && strcmp(argv[1], "pins") == 0)
		return cmd_pins(argv[2]);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "accept") == 0)
		return cmd_accept(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	return usage(stderr);
}
