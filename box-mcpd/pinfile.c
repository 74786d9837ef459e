/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pinfile.c — box-mcpd's I/O on the pins file (STATE/mcp/pins.jsonl) that
 * boxd opened and passed in McpInit (docs/design.md: a daemon never opens
 * state itself; the seccomp filter has no open). pins.c (pure) keeps the
 * state; this file reads what was appended since the last read (boxctl mcp
 * accept while the box runs) with pread from its own offset, and appends
 * pin and change lines (O_APPEND: one write, one line).
 * Trusts: the fd is a regular file of ours opened O_RDWR|O_APPEND (main.c
 * checked); its text is parsed by pins.c as untrusted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mcpd.h"
#include "pins.h"

static off_t pins_off; /* bytes of the file fed to pins.c (complete lines and the rest kept) */

static void
warnings_flush(void)
{
	size_t n = mcp_pins_warning_count(M.pins);
	for (size_t i = 0; i < n && i < MCP_PIN_WARNINGS_MAX; i++)
		log_warn("%s", mcp_pins_warning(M.pins, i));
	if (n > MCP_PIN_WARNINGS_MAX)
		log_warn("pins file: %zu more warnings", n - MCP_PIN_WARNINGS_MAX);
	mcp_pins_clear_warnings(M.pins);
}

int
mcpd_pins_reread(void)
{
	struct stat st;
	if (fstat(M.pins_fd, &st) < 0)
		return -errno;
	if (st.st_size < pins_off)
		return -ESPIPE; /* truncated under us: nobody may do that */
	while (st.st_size > pins_off) {
		size_t want = (size_t)(st.st_size - pins_off);
		if (want > (1u << 20))
			want = 1u << 20;
		char *buf = realloc(M.pins_rest, M.pins_rest_len + want);
		if (!buf)
			return -ENOMEM;
		M.pins_rest = buf;
		ssize_t n = pread(M.pins_fd, buf + M.pins_rest_len, want, pins_off);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		if (n == 0)
			break;
		pins_off += n;
		M.pins_rest_len += (size_t)n;
		long used = mcp_pins_feed(M.pins, M.pins_rest, M.pins_rest_len, false);
		if (used < 0)
			return (int)used;
		/* A line longer than pins.c's cap is malformed: it skipped it, so never keep > cap. */
		M.pins_rest_len -= (size_t)used;
		memmove(M.pins_rest, M.pins_rest + used, M.pins_rest_len);
	}
	warnings_flush();
	return 0;
}

int
mcpd_pins_check(const struct mcpd_server *srv, const struct mcp_tool *t,
		struct mcp_pin_verdict *v)
{
	char now[MCP_TIME_MAX];
	if (!mcp_time_rfc3339(time(NULL), now, sizeof(now)))
		return -EINVAL;
	int r = mcp_pins_check(M.pins, srv->cfg->name, t->name, t->canon, t->canon_len,
			       srv->cfg->allow_tool_changes, now, v);
	if (r < 0)
		return r;
	if (v->line) {
		struct stat st;
		bool caught_up = M.pins_rest_len == 0 && fstat(M.pins_fd, &st) == 0 &&
				 st.st_size == pins_off;
		ssize_t n = write(M.pins_fd, v->line, v->line_len);
		if (n != (ssize_t)v->line_len)
			log_err_errno(n < 0 ? -errno : -EIO,
				      "Cannot append to the pins file (%s of server %s)", t->name,
				      srv->cfg->name);
		else if (caught_up)
			pins_off += n; /* our own line: already in pins.c's state */
		free(v->line);
		v->line = NULL;
	}
	return 0;
}
