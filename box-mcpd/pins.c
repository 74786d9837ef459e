/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pins.c — the MCP pins file's state and lines (pins.h). Pure: the caller
 * reads and appends the file and gives the time; no logging.
 *
 * Trusts: the file is only written by box-mcpd and boxctl, yet every line
 * is parsed as untrusted: JSON (duplicate keys refused), each field typed
 * and capped, the definition's name equal to the line's tool; anything
 * else is skipped with a warning naming its line. The tables are capped
 * (MCP_PIN_ENTRIES_MAX entries, MCP_PIN_PENDING_MAX refused definitions
 * each), so a huge file costs bounded memory per tool.
 */
#include "box-mcpd/pins.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "text.h" /* box_valid_name */

#define DEF_MAX (64u << 10) /* MCP_TOOL_DEF_MAX */
#define TOOL_MAX 256        /* MCP_TOOL_NAME_MAX */

struct pin_def {
	char *canon;
	size_t len;
	char time[MCP_TIME_MAX];
};

struct pin_entry {
	char *server, *tool;
	bool has_pin, accepted;
	struct pin_def pinned;
	struct pin_def pending[MCP_PIN_PENDING_MAX]; /* oldest first */
	size_t n_pending;
};

struct mcp_pins {
	struct pin_entry **entries;
	size_t n, cap;
	uint32_t *slots; /* index + 1, 0 empty */
	size_t n_slots;
	size_t line_no;  /* lines absorbed so far */
	char *warnings[MCP_PIN_WARNINGS_MAX];
	size_t n_warnings;
};

int
mcp_pins_new(struct mcp_pins **ret)
{
	struct mcp_pins *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*ret = p;
	return 0;
}

static void
def_free(struct pin_def *d)
{
	free(d->canon);
	memset(d, 0, sizeof(*d));
}

void
mcp_pins_clear_warnings(struct mcp_pins *p)
{
	for (size_t i = 0; i < p->n_warnings && i < MCP_PIN_WARNINGS_MAX; i++)
		free(p->warnings[i]);
	p->n_warnings = 0;
}

void
mcp_pins_free(struct mcp_pins *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct pin_entry *e = p->entries[i];
		def_free(&e->pinned);
		for (size_t k = 0; k < e->n_pending; k++)
			def_free(&e->pending[k]);
		free(e->server);
		free(e->tool);
		free(e);
	}
	free(p->entries);
	free(p->slots);
	mcp_pins_clear_warnings(p);
	free(p);
}

size_t
mcp_pins_warning_count(const struct mcp_pins *p)
{
	return p->n_warnings;
}

const char *
mcp_pins_warning(const struct mcp_pins *p, size_t i)
{
	return i < p->n_warnings && i < MCP_PIN_WARNINGS_MAX ? p->warnings[i] : NULL;
}

static void warn(struct mcp_pins *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
warn(struct mcp_pins *p, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	int n = snprintf(text, sizeof(text), "pins line %zu: ", p->line_no);
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	if (p->n_warnings < MCP_PIN_WARNINGS_MAX) {
		p->warnings[p->n_warnings] = strdup(text);
		if (!p->warnings[p->n_warnings])
			return; /* out of memory: the warning is lost, not the state */
	}
	p->n_warnings++;
}

/* ---- the (server, tool) table ---- */

static uint32_t
key_hash(const char *server, const char *tool)
{
	uint32_t h = 2166136261u;
	for (const char *s = server; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	h = (h ^ 0xffu) * 16777619u; /* separator: no byte of a name is 0xff */
	for (const char *s = tool; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct pin_entry *
lookup(const struct mcp_pins *p, const char *server, const char *tool)
{
	if (!p->n_slots)
		return NULL;
	for (size_t h = key_hash(server, tool) % p->n_slots;; h = (h + 1) % p->n_slots) {
		uint32_t s = p->slots[h];
		if (!s)
			return NULL;
		struct pin_entry *e = p->entries[s - 1];
		if (strcmp(e->server, server) == 0 && strcmp(e->tool, tool) == 0)
			return e;
	}
}

static void
slot_put(struct mcp_pins *p, size_t index)
{
	struct pin_entry *e = p->entries[index];
	size_t h = key_hash(e->server, e->tool) % p->n_slots;
	while (p->slots[h])
		h = (h + 1) % p->n_slots;
	p->slots[h] = (uint32_t)index + 1;
}

/* The entry of (SERVER, TOOL), created when absent; NULL with *ERR. */
static struct pin_entry *
entry(struct mcp_pins *p, const char *server, const char *tool, int *err)
{
	struct pin_entry *e = lookup(p, server, tool);
	if (e)
		return e;
	if (p->n >= MCP_PIN_ENTRIES_MAX) {
		*err = -E2BIG;
		return NULL;
	}
	*err = -ENOMEM;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct pin_entry **ne = realloc(p->entries, cap * sizeof(*ne));
		if (!ne)
			return NULL;
		p->entries = ne;
		p->cap = cap;
	}
	/* Keep the table at most half full. */
	if ((p->n + 1) * 2 > p->n_slots) {
		size_t n_slots = p->n_slots ? p->n_slots * 2 : 128;
		uint32_t *ns = calloc(n_slots, sizeof(*ns));
		if (!ns)
			return NULL;
		free(p->slots);
		p->slots = ns;
		p->n_slots = n_slots;
		for (size_t i = 0; i < p->n; i++)
			slot_put(p, i);
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->server = strdup(server);
	e->tool = strdup(tool);
	if (!e->server || !e->tool) {
		free(e->server);
		free(e->tool);
		free(e);
		return NULL;
	}
	p->entries[p->n] = e;
	slot_put(p, p->n);
	p->n++;
	return e;
}

static int
def_set(struct pin_def *d, const char *canon, size_t len, const char *time)
{
	char *c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, canon, len);
	c[len] = 0;
	free(d->canon);
	d->canon = c;
	d->len = len;
	snprintf(d->time, sizeof(d->time), "%s", time);
	return 0;
}

static bool
def_eq(const struct pin_def *d, const char *canon, size_t len)
{
	return d->canon && d->len == len && memcmp(d->canon, canon, len) == 0;
}

/* A pin or accept: the pinned definition; what was refused before is settled. */
static int
apply_pin(struct pin_entry *e, bool accept, const char *canon, size_t len, const char *time)
{
	int r = def_set(&e->pinned, canon, len, time);
	if (r < 0)
		return r;
	e->has_pin = true;
	e->accepted = accept;
	for (size_t k = 0; k < e->n_pending; k++)
		def_free(&e->pending[k]);
	e->n_pending = 0;
	return 0;
}

static ssize_t
pending_find(const struct pin_entry *e, const char *canon, size_t len)
{
	for (size_t k = 0; k < e->n_pending; k++)
		if (def_eq(&e->pending[k], canon, len))
			return (ssize_t)k;
	return -1;
}

/* A change: remembered as the latest refused definition (oldest dropped when full). */
static int
apply_change(struct pin_entry *e, const char *canon, size_t len, const char *time)
{
	struct pin_def d = { 0 };
	ssize_t k = pending_find(e, canon, len);
	int r;

	if (e->has_pin && def_eq(&e->pinned, canon, len))
		return 0; /* nothing refused: it is the pin */
	if (k >= 0) {
		d = e->pending[k];
		memmove(&e->pending[k], &e->pending[k + 1],
			(e->n_pending - (size_t)k - 1) * sizeof(d));
		e->n_pending--;
		snprintf(d.time, sizeof(d.time), "%s", time);
	} else {
		r = def_set(&d, canon, len, time);
		if (r < 0)
			return r;
		if (e->n_pending == MCP_PIN_PENDING_MAX) {
			def_free(&e->pending[0]);
			memmove(&e->pending[0], &e->pending[1], (MCP_PIN_PENDING_MAX - 1) * sizeof(d));
			e->n_pending--;
		}
	}
	e->pending[e->n_pending++] = d;
	return 0;
}

/* ---- lines ---- */

static bool
time_ok(const char *t)
{
	size_t n = strlen(t);
	/* YYYY-MM-DDTHH:MM:SS then an optional fraction, then Z or an offset. */
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	if (n < sizeof(shape) || n >= MCP_TIME_MAX)
		return false;
	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i])
			return false;
	for (size_t i = sizeof(shape) - 1; i < n; i++)
		if (!strchr("0123456789.:+-Z", t[i]))
			return false;
	return true;
}

static bool
tool_ok(const char *t)
{
	size_t n = strlen(t);
	return n > 0 && n <= TOOL_MAX;
}

/* The canonical text of definition object DEF (malloc'd), or NULL. */
static char *
canon_of(const json_t *def, size_t *len)
{
	char *c = json_dumps(def, JSON_SORT_KEYS | JSON_COMPACT);
	if (c)
		*len = strlen(c);
	return c;
}

/* Absorb one line; a problem is a warning, only running out of memory fails. */
static int
absorb(struct mcp_pins *p, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *o;
	int r = 0;

	if (len == 0)
		return 0; /* a blank line: nothing */
	if (len > MCP_PIN_LINE_MAX) {
		warn(p, "longer than %u bytes, skipped", MCP_PIN_LINE_MAX);
		return 0;
	}
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return -ENOMEM;
		warn(p, "invalid JSON (%s), skipped", jerr.text);
		return 0;
	}
	const char *event = json_string_value(json_object_get(o, "event"));
	const char *server = json_string_value(json_object_get(o, "server"));
	const char *tool = json_string_value(json_object_get(o, "tool"));
	const char *time = json_string_value(json_object_get(o, "time"));
	json_t *v = json_object_get(o, "v");
	json_t *def = json_object_get(o, "definition");
	char *canon = NULL;
	size_t clen = 0;

	if (!json_is_object(o))
		warn(p, "not a JSON object, skipped");
	else if (!json_is_integer(v) || json_integer_value(v) != 1)
		warn(p, "v must be 1, skipped");
	else if (!event || (strcmp(event, "pin") && strcmp(event, "change") && strcmp(event, "accept")))
		warn(p, "event must be pin, change or accept, skipped");
	else if (!server || !box_valid_name(server))
		warn(p, "server must be 1-32 of [A-Za-z0-9_-], skipped");
	else if (!tool || !tool_ok(tool))
		warn(p, "tool must be a string of 1-256 bytes, skipped");
	else if (!json_is_object(def) || !json_is_string(json_object_get(def, "name")) ||
		 strcmp(json_string_value(json_object_get(def, "name")), tool) != 0)
		warn(p, "definition must be an object whose name is the tool, skipped");
	else if (!time || !time_ok(time))
		warn(p, "time must be RFC 3339, skipped");
	else if (!(canon = canon_of(def, &clen)))
		r = -ENOMEM;
	else if (clen > DEF_MAX)
		warn(p, "definition over 64 KiB, skipped");
	else {
		struct pin_entry *e = entry(p, server, tool, &r);
		if (!e && r == -E2BIG) {
			warn(p, "more than %u tools pinned, skipped", MCP_PIN_ENTRIES_MAX);
			r = 0;
		} else if (e) {
			r = strcmp(event, "change") == 0 ?
				    apply_change(e, canon, clen, time) :
				    apply_pin(e, strcmp(event, "accept") == 0, canon, clen, time);
		}
	}
	free(canon);
	json_decref(o);
	return r;
}

long
mcp_pins_feed(struct mcp_pins *p, const char *text, size_t len, bool final)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (!nl && !final)
			break;
		p->line_no++;
		int r = absorb(p, text + pos, end - pos);
		if (r < 0) {
			p->line_no--;
			return r;
		}
		pos = nl ? end + 1 : end;
	}
	return (long)pos;
}

char *
mcp_pins_line(const char *event, const char *server, const char *tool, const char *canon,
	      size_t len, const char *now, size_t *line_len)
{
	json_t *def = NULL, *o = NULL;
	char *text = NULL, *out = NULL;

	if (!event || (strcmp(event, "pin") && strcmp(event, "change") && strcmp(event, "accept")) ||
	    !server || !box_valid_name(server) || !tool || !tool_ok(tool) || !now || !time_ok(now) ||
	    !canon || len > DEF_MAX)
		return NULL;
	def = json_loadb(canon, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(def) || !json_is_string(json_object_get(def, "name")) ||
	    strcmp(json_string_value(json_object_get(def, "name")), tool) != 0)
		goto done;
	o = json_object();
	if (!o || json_object_set_new(o, "v", json_integer(1)) < 0 ||
	    json_object_set_new(o, "event", json_string(event)) < 0 ||
	    json_object_set_new(o, "server", json_string(server)) < 0 ||
	    json_object_set_new(o, "tool", json_string(tool)) < 0 ||
	    json_object_set(o, "definition", def) < 0 ||
	    json_object_set_new(o, "time", json_string(now)) < 0)
		goto done;
	/* Definition keys stay sorted: they were loaded from canonical text. */
	text = json_dumps(o, JSON_COMPACT);
	if (!text)
		goto done;
	size_t n = strlen(text);
	out = realloc(text, n + 2);
	if (!out) {
		free(text);
		goto done;
	}
	out[n] = '\n';
	out[n + 1] = 0;
	*line_len = n + 1;
done:
	json_decref(def);
	json_decref(o);
	return out;
}

/* What differs between two canonical definitions. */
static const char *
what_changed(const char *old, size_t old_len, const char *neu, size_t new_len)
{
	json_t *a = json_loadb(old, old_len, 0, NULL);
	json_t *b = json_loadb(neu, new_len, 0, NULL);
	const char *what = "definition";

	if (a && b) {
		json_t *ad = json_object_get(a, "description"), *bd = json_object_get(b, "description");
		json_t *as = json_object_get(a, "inputSchema"), *bs = json_object_get(b, "inputSchema");
		bool desc = !(ad == NULL && bd == NULL) && !(ad && bd && json_equal(ad, bd));
		bool schema = !(as == NULL && bs == NULL) && !(as && bs && json_equal(as, bs));
		if (desc && schema)
			what = "description and inputSchema";
		else if (desc)
			what = "description";
		else if (schema)
			what = "inputSchema";
	}
	json_decref(a);
	json_decref(b);
	return what;
}

static int decide(struct mcp_pins *p, const char *server, const char *tool, const char *canon,
		  size_t len, bool allow_changes, const char *now, struct mcp_pin_verdict *v);

int
mcp_pins_check(struct mcp_pins *p, const char *server, const char *tool, const char *canon,
	       size_t len, bool allow_changes, const char *now, struct mcp_pin_verdict *v)
{
	int r = 0;

	memset(v, 0, sizeof(*v));
	if (!server || !box_valid_name(server) || !tool || !tool_ok(tool) || !canon ||
	    len > DEF_MAX || !now || !time_ok(now))
		return -EINVAL;
	/*
	 * Compare canonical texts only: re-dump what the caller gave (sorted
	 * keys, compact), exactly as a line read back from the file is.
	 */
	json_t *def = json_loadb(canon, len, JSON_REJECT_DUPLICATES, NULL);
	bool ok = json_is_object(def) && json_is_string(json_object_get(def, "name")) &&
		  strcmp(json_string_value(json_object_get(def, "name")), tool) == 0;
	char *own = ok ? canon_of(def, &len) : NULL;
	json_decref(def);
	if (!ok)
		return -EINVAL;
	if (!own)
		return -ENOMEM;
	if (len > DEF_MAX) {
		free(own);
		return -EINVAL;
	}
	r = decide(p, server, tool, own, len, allow_changes, now, v);
	free(own);
	return r;
}

static int
decide(struct mcp_pins *p, const char *server, const char *tool, const char *canon, size_t len,
       bool allow_changes, const char *now, struct mcp_pin_verdict *v)
{
	int r = 0;
	struct pin_entry *e = entry(p, server, tool, &r);
	if (!e)
		return r;
	if (!e->has_pin && e->n_pending == 0) {
		/* First sight: pin it. */
		v->line = mcp_pins_line("pin", server, tool, canon, len, now, &v->line_len);
		if (!v->line)
			return -ENOMEM;
		r = apply_pin(e, false, canon, len, now);
		if (r < 0) {
			free(v->line);
			v->line = NULL;
			return r;
		}
		v->state = MCP_PIN_NEW;
		v->allowed = true;
		return 0;
	}
	if (e->has_pin && def_eq(&e->pinned, canon, len)) {
		v->state = e->accepted ? MCP_PIN_ACCEPTED : MCP_PIN_SAME;
		v->allowed = true;
		return 0;
	}
	v->state = MCP_PIN_CHANGED;
	v->allowed = allow_changes;
	v->what = e->has_pin ? what_changed(e->pinned.canon, e->pinned.len, canon, len) :
			       "definition";
	if (pending_find(e, canon, len) < 0) {
		v->line = mcp_pins_line("change", server, tool, canon, len, now, &v->line_len);
		if (!v->line)
			return -ENOMEM;
	}
	r = apply_change(e, canon, len, now);
	if (r < 0) {
		free(v->line);
		v->line = NULL;
	}
	return r;
}

static int
info_cmp(const void *a, const void *b)
{
	const struct mcp_pin_info *x = a, *y = b;
	int c = strcmp(x->server, y->server);
	return c ? c : strcmp(x->tool, y->tool);
}

int
mcp_pins_list(const struct mcp_pins *p, struct mcp_pin_info **out, size_t *n)
{
	struct mcp_pin_info *l = calloc(p->n ? p->n : 1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		const struct pin_entry *e = p->entries[i];
		l[i].server = e->server;
		l[i].tool = e->tool;
		l[i].accepted = e->has_pin && e->accepted;
		l[i].changed = e->n_pending > 0;
		if (e->has_pin) {
			l[i].pinned = e->pinned.canon;
			l[i].pinned_len = e->pinned.len;
			l[i].pinned_time = e->pinned.time;
		}
		if (e->n_pending) {
			const struct pin_def *d = &e->pending[e->n_pending - 1];
			l[i].pending = d->canon;
			l[i].pending_len = d->len;
			l[i].pending_time = d->time;
		}
	}
	qsort(l, p->n, sizeof(*l), info_cmp);
	*out = l;
	*n = p->n;
	return 0;
}

char *
mcp_time_rfc3339(time_t t, char *buf, size_t size)
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return NULL;
	return buf;
}
