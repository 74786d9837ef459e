/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pins.h — the MCP pins file (STATE/mcp/pins.jsonl; format in
 * proto/mcp.proto's header): rug-pull protection. Holds, per (server, tool),
 * the pinned definition (the last pin or accept line) and the definitions
 * seen and refused since (change lines); decides a definition the broker
 * sees; produces the lines to append. Pure: the caller reads and appends the
 * file (box-mcpd the fd boxd passed, boxctl the file boxd or the state dir
 * gives it) and passes the current time as RFC 3339 text. No daemon
 * dependency: boxctl links this too.
 *
 * Line: {"v":1,"event":"pin"|"change"|"accept","server":S,"tool":T,
 *        "definition":{"name":T,...},"time":"YYYY-MM-DDTHH:MM:SSZ"}\n
 * Definitions are compared as canonical text (toolschema.h: sorted keys,
 * compact), never hashed.
 *
 * Trusts: the file is written by box-mcpd and boxctl only (boxd opened it,
 * owned by mcpd's uid), but it is still parsed as untrusted text: a
 * malformed line (bad JSON or UTF-8, a missing or wrong field, over
 * MCP_PIN_LINE_MAX) is skipped with a warning naming its line number, and
 * every table is capped.
 */
#ifndef BOX_MCPD_PINS_H
#define BOX_MCPD_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define MCP_PIN_LINE_MAX (512u << 10) /* a longer line is malformed */
#define MCP_PIN_ENTRIES_MAX 65536     /* (server, tool) pairs; beyond: -E2BIG */
#define MCP_PIN_PENDING_MAX 16        /* distinct refused definitions kept per tool */
#define MCP_PIN_WARNINGS_MAX 64       /* warning texts kept (more are counted) */
#define MCP_TIME_MAX 32               /* "YYYY-MM-DDTHH:MM:SSZ" + NUL, with room */

struct mcp_pins;

int mcp_pins_new(struct mcp_pins **ret);
void mcp_pins_free(struct mcp_pins *p);

/*
 * Absorb TEXT[0..LEN): the file's contents at load, then whatever was
 * appended since (boxctl's accepts). Only complete lines ('\n'-terminated)
 * are taken unless FINAL (then a last unterminated line is taken too).
 * Returns the bytes consumed (the caller keeps the rest and passes it again
 * with what follows), or -ENOMEM. Blank lines are skipped; a malformed line,
 * or one that would exceed MCP_PIN_ENTRIES_MAX, is skipped with a warning.
 * Line numbers of warnings count across calls. A writer appending after a
 * last unterminated line must write a '\n' first.
 */
long mcp_pins_feed(struct mcp_pins *p, const char *text, size_t len, bool final);

/* Warnings so far ("pins line 12: event must be pin, change or accept"). */
size_t mcp_pins_warning_count(const struct mcp_pins *p); /* including those not kept */
const char *mcp_pins_warning(const struct mcp_pins *p, size_t i); /* i < min(count, MAX) */
void mcp_pins_clear_warnings(struct mcp_pins *p);

enum mcp_pin_state {
	MCP_PIN_NEW,      /* first time seen: v->line is the pin line to append */
	MCP_PIN_SAME,     /* equals its pinned definition (pinned by a pin line) */
	MCP_PIN_ACCEPTED, /* equals its pinned definition, which an accept line set */
	MCP_PIN_CHANGED,  /* differs from its pin: refused unless allow_changes */
};

struct mcp_pin_verdict {
	enum mcp_pin_state state;
	bool allowed;      /* NEW, SAME, ACCEPTED; CHANGED only with allow_changes */
	/*
	 * The line to append (malloc'd, '\n'-terminated, free() it), or NULL:
	 * NEW: its pin line; CHANGED: a change line the first time this new
	 * definition is seen (once per distinct definition), else NULL.
	 */
	char *line;
	size_t line_len;
	/*
	 * CHANGED: "description", "inputSchema", "description and inputSchema",
	 * or "definition" (no readable pin: only change lines) (static).
	 */
	const char *what;
};

/*
 * Decide definition CANON[0..LEN) (toolschema.h's canonical text) of TOOL
 * of SERVER at time NOW (RFC 3339 UTC text). The state is updated as if the
 * returned line were appended (the caller appends it). CANON is compared
 * re-canonicalized (sorted keys, compact), as lines read back are. Returns
 * 0, or -EINVAL (CANON is not a JSON object of at most 64 KiB whose "name"
 * is TOOL, a bad server name or time), -E2BIG (MCP_PIN_ENTRIES_MAX
 * reached), -ENOMEM.
 */
int mcp_pins_check(struct mcp_pins *p, const char *server, const char *tool, const char *canon,
		   size_t len, bool allow_changes, const char *now, struct mcp_pin_verdict *v);

/*
 * A line of EVENT ("pin", "change" or "accept") for (SERVER, TOOL) with
 * definition CANON[0..LEN) at NOW: malloc'd, '\n'-terminated, *LINE_LEN its
 * length; NULL on a bad argument or out of memory. boxctl mcp accept writes
 * an accept line of the pending definition (mcp_pin_info.pending).
 */
char *mcp_pins_line(const char *event, const char *server, const char *tool, const char *canon,
		    size_t len, const char *now, size_t *line_len);

/* One (server, tool) for `boxctl mcp pins` / `accept`; borrowed from P. */
struct mcp_pin_info {
	const char *server, *tool;
	bool changed;             /* a definition differing from the pin was seen since */
	bool accepted;            /* the pinned definition came from an accept line */
	const char *pinned;       /* canonical pinned definition (NUL-terminated) */
	size_t pinned_len;
	const char *pinned_time;  /* time of the pin / accept line */
	const char *pending;      /* changed: the latest refused definition, else NULL */
	size_t pending_len;
	const char *pending_time;
};

/*
 * Every (server, tool) sorted by server then tool, in a malloc'd array
 * (free() it; its strings live until P changes). Returns 0 or -ENOMEM.
 * A tool with only change lines (its pin line lost) shows changed with no
 * pinned definition (pinned NULL).
 */
int mcp_pins_list(const struct mcp_pins *p, struct mcp_pin_info **out, size_t *n);

/* T as "YYYY-MM-DDTHH:MM:SSZ" into BUF (>= MCP_TIME_MAX). Returns BUF, or NULL. */
char *mcp_time_rfc3339(time_t t, char *buf, size_t size);

#endif
