/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_parse.c — box.ini as bytes (docs/box.ini.5.md): pre-scan, inih, keys,
 * value syntax, the order of the passes and the error list.
 *
 * Three passes. (1) A pre-scan classifies every line: over-long lines, NUL
 * bytes, section headers (recorded with their lines), keys (column 1, `=`
 * only), continuation lines (indented; one more occurrence of the previous
 * key), and the errors inih would not report or would report without a line.
 * (2) inih (ini_parse_stream, default build options) splits the lines the
 * pre-scan accepted into keys and values; a reader feeds it one line at a
 * time and so knows the line number of every handler call; refused lines are
 * fed as blank lines. (3) Each section is interpreted into struct box_config
 * and checked (config_rules.c), asking the host only through c->host
 * (config_host.c as the caller; config_host_none here, for
 * box_config_parse_buffer). Every refusal is collected.
 *
 * Nothing here touches the file system or the passwd database; it links
 * without config_host.c (test/fuzz/fuzz_config.c). It reads the environment
 * (XDG_RUNTIME_DIR for the runtime base) and the caller's uid.
 * Allocation failure is fatal here (boxctl is a one-shot client, like
 * OpenSSH's xmalloc): the x*() helpers exit with a message.
 * Trusts: nothing in the file.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmdline.h"
#include "config_internal.h"
#include "envnames.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "proto/validate.h"

/* ------------------------------------------------------------------ */
/* allocation                                                          */

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fatalx("out of memory");
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fatalx("out of memory");
	return p;
}

char *
xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		fatalx("out of memory");
	return r;
}

char *
xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);
	if (!r)
		fatalx("out of memory");
	return r;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *r;
	va_start(ap, fmt);
	if (vasprintf(&r, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	return r;
}


/* ------------------------------------------------------------------ */
/* errors                                                              */

void
box_config_errors_clear(struct box_config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++) {
		free(errs->v[i].file);
		free(errs->v[i].section);
		free(errs->v[i].key);
		free(errs->v[i].message);
	}
	free(errs->v);
	errs->v = NULL;
	errs->n = 0;
}

void
box_config_errors_print(FILE *f, const struct box_config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++) {
		const struct box_config_error *e = &errs->v[i];
		fputs("boxctl: ", f);
		if (e->file && e->line)
			fprintf(f, "%s:%u: ", e->file, e->line);
		else if (e->file)
			fprintf(f, "%s: ", e->file);
		if (e->section && e->key)
			fprintf(f, "[%s] %s: ", e->section, e->key);
		else if (e->section)
			fprintf(f, "[%s]: ", e->section);
		fprintf(f, "%s\n", e->message);
	}
}


static bool key_on_long_line(const struct ctx *c, const char *section, const char *key);
void
err_at(struct ctx *c, unsigned line, const char *section, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	/* The line that held the key was refused as over-long: that error says it all. */
	if (section && key && strncmp(fmt, "required key is missing", 23) == 0 &&
	    key_on_long_line(c, section, key))
		return;
	if (c->errs->n >= MAX_ERRORS) {
		c->n_suppressed++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	struct box_config_error *e = GROW(c->errs->v, c->errs->n);
	e->file = c->file ? xstrdup(c->file) : NULL;
	e->line = line;
	e->section = section ? xstrdup(section) : NULL;
	e->key = key ? xstrdup(key) : NULL;
	e->message = msg;
}

/* A printable, quoted copy of user text for messages (freed with the context). */
const char *
q(struct ctx *c, const char *s)
{
	size_t n = strlen(s);
	char *r = xmalloc(4 * n + 3), *o = r;
	*o++ = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch < 0x20 || ch == 0x7f)
			o += sprintf(o, "\\x%02x", ch);
		else if (ch == '"' || ch == '\\') {
			*o++ = '\\';
			*o++ = (char)ch;
		} else
			*o++ = (char)ch;
	}
	*o++ = '"';
	*o = '\0';
	*GROW(c->tmp, c->n_tmp) = r;
	return r;
}

/* `s` as is when printable, else quoted with escapes (text from files, not the user). */
const char *
qs(struct ctx *c, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return q(c, s);
	return s;
}

/* Keep a string alive until the context ends. */
const char *
keep(struct ctx *c, char *s)
{
	*GROW(c->tmp, c->n_tmp) = s;
	return s;
}

bool
is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* inih's find_chars_or_comment: first char of `chars`, or a ';' after a blank. */
static size_t
find_sep(const char *s, size_t len, const char *chars)
{
	bool was_space = false;
	for (size_t i = 0; i < len; i++) {
		if (strchr(chars, s[i]) || (was_space && s[i] == ';'))
			return i;
		was_space = isspace((unsigned char)s[i]);
	}
	return len;
}

static bool
looks_like_key(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && is_blank(s[i]))
		i++;
	if (i == len || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
		return false;
	while (i < len && (isalnum((unsigned char)s[i]) || strchr("_.-", s[i])))
		i++;
	while (i < len && is_blank(s[i]))
		i++;
	return i < len && s[i] == '=';
}

static int
section_find(struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->n_secs; i++)
		if (strcmp(c->secs[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* A refused over-long line `key = …` in column 1 of section `section`: remember its key. */
static void
note_long_key(struct ctx *c, int section, const char *s, size_t sl)
{
	const char *eq = memchr(s, '=', sl);
	if (section < 0 || !eq || isspace((unsigned char)s[0]))
		return;
	size_t kl = (size_t)(eq - s);
	while (kl && isspace((unsigned char)s[kl - 1]))
		kl--;
	if (kl == 0)
		return;
	struct raw_section *rs = &c->secs[section];
	char **k = GROW(rs->long_keys, rs->n_long_keys);
	*k = xstrndup(s, kl);
}

static bool
key_on_long_line(const struct ctx *c, const char *section, const char *key)
{
	for (size_t i = 0; i < c->n_secs; i++) {
		if (strcmp(c->secs[i].name, section) != 0)
			continue;
		for (size_t j = 0; j < c->secs[i].n_long_keys; j++)
			if (strcmp(c->secs[i].long_keys[j], key) == 0)
				return true;
	}
	return false;
}

static void
prescan(struct ctx *c, const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	int section = -1;
	enum { PREV_NONE, PREV_KEY, PREV_ORPHAN } prev = PREV_NONE;
	unsigned lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct line *l = GROW(c->lines, c->n_lines);
		lineno++;
		l->text = p;
		l->len = n;
		l->kind = L_BAD;
		l->section = section;
		p = nl ? nl + 1 : end;

		const char *s = l->text;
		size_t sl = n;
		if (sl && s[sl - 1] == '\r')
			sl--;
		if (sl > BOX_CONFIG_LINE_MAX) {
			err_at(c, lineno, NULL, NULL, "line is %zu bytes long; at most %d are accepted",
			       sl, BOX_CONFIG_LINE_MAX);
			prev = prev == PREV_KEY ? PREV_ORPHAN : prev;
			note_long_key(c, section, s, sl);
			continue;
		}
		if (memchr(s, '\0', sl)) {
			err_at(c, lineno, NULL, NULL, "line contains a NUL byte");
			continue;
		}
		if (lineno == 1 && sl >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
			s += 3;
			sl -= 3;
		}
		size_t i = 0;
		while (i < sl && isspace((unsigned char)s[i]))
			i++;
		if (i == sl || s[i] == ';' || s[i] == '#') {
			l->kind = L_BLANK;
			continue;
		}
		if (i > 0) {
			/* Indented: a continuation of the previous key. */
			if (s[i] == '[') {
				err_at(c, lineno, NULL, NULL, "section headers start in column 1");
			} else if (looks_like_key(s, sl)) {
				err_at(c, lineno, NULL, NULL,
				       "keys start in column 1; an indented line continues the previous key");
			} else if (prev == PREV_KEY) {
				l->kind = L_CONT;
			} else if (prev == PREV_NONE && section >= 0) {
				err_at(c, lineno, NULL, NULL,
				       "an indented line continues the previous key, and there is none; keys start in column 1");
			}
			continue;
		}
		if (s[0] == '[') {
			size_t close = find_sep(s + 1, sl - 1, "]") + 1;
			prev = PREV_NONE;
			if (close >= sl || s[close] != ']') {
				err_at(c, lineno, NULL, NULL, "section header has no closing ]");
				section = -2;
				continue;
			}
			size_t j = close + 1;
			while (j < sl && is_blank(s[j]))
				j++;
			if (j < sl && !(s[j] == ';' && j > close + 1)) {
				err_at(c, lineno, NULL, NULL, "text after the section header");
				section = -2;
				continue;
			}
			_cleanup_free_ char *name = xstrndup(s + 1, close - 1);
			int prior = section_find(c, name);
			if (prior >= 0) {
				err_at(c, lineno, name, NULL, "section appears again (first at line %u)",
				       c->secs[prior].line);
				section = -2;
				continue;
			}
			struct raw_section *rs = GROW(c->secs, c->n_secs);
			memset(rs, 0, sizeof(*rs));
			rs->name = TAKE_PTR(name);
			rs->line = lineno;
			section = (int)(c->n_secs - 1);
			l->kind = L_SECTION;
			l->section = section;
			continue;
		}
		/* A key line in column 1. */
		size_t sep = find_sep(s, sl, "=:");
		prev = PREV_ORPHAN;
		if (section == -1) {
			err_at(c, lineno, NULL, NULL, "a key outside any section; start with a [section] header");
			continue;
		}
		if (sep == sl || s[sep] == ';') {
			err_at(c, lineno, NULL, NULL, "expected key = value");
			continue;
		}
		if (s[sep] == ':') {
			err_at(c, lineno, NULL, NULL, "`:` is not a separator; write key = value");
			continue;
		}
		size_t kl = sep;
		while (kl && isspace((unsigned char)s[kl - 1]))
			kl--;
		if (kl == 0) {
			err_at(c, lineno, NULL, NULL, "a key name is missing before =");
			continue;
		}
		if (section == -2)
			continue; /* after a refused header: reported there */
		l->kind = L_KEY;
		prev = PREV_KEY;
	}
}

static char *
reader(char *str, int num, void *stream)
{
	struct ctx *c = stream;
	if (c->next_line >= c->n_lines)
		return NULL;
	c->cur_line = c->next_line++;
	struct line *l = &c->lines[c->cur_line];
	size_t n = l->len;
	if (n && l->text[n - 1] == '\r')
		n--;
	if (l->kind == L_BLANK || l->kind == L_BAD || num < 2)
		n = 0;
	if (n > (size_t)num - 1) {
		/* Never happens with inih's default line buffer (200 = 199 + NUL). */
		err_at(c, (unsigned)c->cur_line + 1, NULL, NULL, "line too long for the INI parser");
		n = 0;
		l->kind = L_BAD;
	}
	/* inih strips trailing blanks itself: no newline needed. */
	memcpy(str, l->text, n);
	str[n] = '\0';
	return str;
}

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct ctx *c = user;
	struct line *l = &c->lines[c->cur_line];
	unsigned lineno = (unsigned)c->cur_line + 1;

	(void)section;
	if (l->section < 0)
		return 1;
	struct raw_section *rs = &c->secs[l->section];
	if (l->kind == L_KEY) {
		struct raw_key *k = GROW(rs->keys, rs->n);
		memset(k, 0, sizeof(*k));
		k->name = xstrdup(name);
		k->line = lineno;
	} else if (l->kind != L_CONT || rs->n == 0) {
		return 1;
	}
	struct raw_key *k = &rs->keys[rs->n - 1];
	struct raw_value *v = GROW(k->values, k->n);
	v->text = xstrdup(value);
	v->line = lineno;
	if (l->kind == L_CONT) {
		/* Debian's inih keeps " ;comment" on continuation lines; drop it as on key lines. */
		size_t n = find_sep(v->text, strlen(v->text), "");
		while (n && isspace((unsigned char)v->text[n - 1]))
			n--;
		v->text[n] = '\0';
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* key access                                                          */

/* First occurrence of a scalar key; later occurrences and continuation lines are errors. */
struct raw_key *
take_scalar(struct ctx *c, struct raw_section *s, const char *name)
{
	struct raw_key *first = NULL;
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		struct raw_key *k = &s->keys[i];
		if (strcmp(k->name, name) != 0)
			continue;
		k->used = true;
		if (!first) {
			first = k;
			for (size_t j = 1; j < k->n; j++)
				err_at(c, k->values[j].line, s->name, name,
				       "given more than once (first at line %u); an indented line continues the key above",
				       k->line);
		} else {
			err_at(c, k->line, s->name, name, "given more than once (first at line %u)",
			       first->line);
		}
	}
	return first && first->n ? first : NULL;
}

/* `command`: one occurrence whose continuation lines append arguments. */
struct raw_key *
take_command(struct ctx *c, struct raw_section *s)
{
	struct raw_key *first = NULL;
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		struct raw_key *k = &s->keys[i];
		if (strcmp(k->name, "command") != 0)
			continue;
		k->used = true;
		if (!first)
			first = k;
		else
			err_at(c, k->line, s->name, "command",
			       "given more than once (first at line %u); continue it on indented lines",
			       first->line);
	}
	return first && first->n ? first : NULL;
}

/* Mark a list key used; iterate with for_each_value. */
bool
take_list(struct raw_section *s, const char *name)
{
	bool any = false;
	for (size_t i = 0; s && i < s->n; i++)
		if (strcmp(s->keys[i].name, name) == 0) {
			s->keys[i].used = true;
			any = true;
		}
	return any;
}



const char *
val(struct raw_key *k)
{
	return k->values[0].text;
}

unsigned
vline(struct raw_key *k)
{
	return k->values[0].line;
}

struct box_src
src_at(struct ctx *c, unsigned line)
{
	return (struct box_src){ .file = c->cfg->path, .line = line };
}

void
get_bool(struct ctx *c, struct raw_section *s, const char *key, struct box_bool *dst, bool def)
{
	struct raw_key *k = take_scalar(c, s, key);
	dst->value = def;
	if (!k)
		return;
	if (parse_bool(val(k), &dst->value) < 0) {
		err_at(c, vline(k), s->name, key, "%s is not a boolean; accepted: true, false",
		       q(c, val(k)));
		dst->value = def;
		return;
	}
	dst->set = true;
	dst->src = src_at(c, vline(k));
}


void
get_num(struct ctx *c, struct raw_section *s, const char *key, enum num_kind kind, uint64_t max,
	struct box_u64 *dst, uint64_t def)
{
	struct raw_key *k = take_scalar(c, s, key);
	uint64_t v = 0;
	int r = -EINVAL;
	dst->value = def;
	if (!k)
		return;
	switch (kind) {
	case NUM_DURATION:
		r = parse_duration_ms(val(k), &v);
		if (r == 0 && v == 0)
			r = -ERANGE;
		if (r == 0 && v > max)
			r = -ERANGE;
		if (r == -EINVAL)
			err_at(c, vline(k), s->name, key,
			       "%s is not a duration; accepted: an integer with a unit ms, s, m or h (e.g. 30s)",
			       q(c, val(k)));
		else if (r < 0)
			err_at(c, vline(k), s->name, key,
			       "%s is out of range; accepted: 1ms to %llums", q(c, val(k)),
			       (unsigned long long)max);
		break;
	case NUM_SIZE:
		r = parse_size(val(k), &v);
		if (r == 0 && (v == 0 || v > max))
			r = -ERANGE;
		if (r == -EINVAL)
			err_at(c, vline(k), s->name, key,
			       "%s is not a size; accepted: an integer with an optional K, M or G (1K = 1024)",
			       q(c, val(k)));
		else if (r < 0)
			err_at(c, vline(k), s->name, key,
			       "%s is out of range; accepted: 1 to %llu bytes", q(c, val(k)),
			       (unsigned long long)max);
		break;
	case NUM_COUNT:
		r = parse_count(val(k), max, &v);
		if (r < 0)
			err_at(c, vline(k), s->name, key,
			       "%s is not a count; accepted: an integer from 1 to %llu", q(c, val(k)),
			       (unsigned long long)max);
		break;
	case NUM_PORT: {
		uint16_t port;
		r = parse_port(val(k), &port);
		v = port;
		if (r < 0)
			err_at(c, vline(k), s->name, key, "%s is not a port; accepted: 1-65535",
			       q(c, val(k)));
		break;
	}
	default:
		break;
	}
	if (r < 0)
		return;
	dst->value = v;
	dst->set = true;
	dst->src = src_at(c, vline(k));
}

bool
get_enum(struct ctx *c, struct raw_section *s, const char *key, const char *const *names,
	 struct box_enum *dst, int def)
{
	struct raw_key *k = take_scalar(c, s, key);
	dst->value = def;
	if (!k)
		return false;
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], val(k)) == 0) {
			dst->value = i;
			dst->set = true;
			dst->src = src_at(c, vline(k));
			return true;
		}
	_cleanup_free_ char *acc = join_list(names, ", ");
	err_at(c, vline(k), s->name, key, "%s is not accepted; accepted: %s", q(c, val(k)), acc);
	return false;
}

/* ------------------------------------------------------------------ */
/* names                                                               */

bool
valid_name(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' &&
		    !(extra && strchr(extra, *s)))
			return false;
	return true;
}

bool
valid_env_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* sections to groups                                                  */

static struct group *
group_get(struct group **arr, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*arr)[i].name, name) == 0)
			return &(*arr)[i];
	struct group *g = GROW(*arr, *n);
	memset(g, 0, sizeof(*g));
	g->name = xstrdup(name);
	return g;
}

static int
group_cmp(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->name, ((const struct group *)b)->name);
}

static const char *accepted_sections =
	"unknown section; accepted: [box] [agent] [agent.env] [agent.filesystem] [tool.NAME] "
	"[tool.NAME.env] [tool.NAME.filesystem] [tool.NAME.network] [egress.NAME] [mcp.NAME] "
	"[mcp.NAME.env] [mcp.NAME.filesystem] [mcp.NAME.network] [telemetry.NAME] [gateway]";

static void
classify(struct ctx *c)
{
	for (size_t i = 0; i < c->n_secs; i++) {
		struct raw_section *s = &c->secs[i];
		const char *n = s->name;
		if (strcmp(n, "box") == 0)
			c->box = s;
		else if (strcmp(n, "agent") == 0)
			c->agent = s;
		else if (strcmp(n, "agent.env") == 0)
			c->agent_env = s;
		else if (strcmp(n, "agent.filesystem") == 0)
			c->agent_fs = s;
		else if (strcmp(n, "gateway") == 0)
			c->gateway = s;
		else {
			const char *fam = NULL;
			struct group **arr = NULL;
			size_t *cnt = NULL;
			bool subs = true;
			if (strncmp(n, "tool.", 5) == 0) {
				fam = "tool";
				arr = &c->tools;
				cnt = &c->n_tools;
			} else if (strncmp(n, "mcp.", 4) == 0) {
				fam = "mcp";
				arr = &c->mcp;
				cnt = &c->n_mcp;
			} else if (strncmp(n, "egress.", 7) == 0) {
				fam = "egress";
				arr = &c->egress;
				cnt = &c->n_egress;
				subs = false;
			} else if (strncmp(n, "telemetry.", 10) == 0) {
				fam = "telemetry";
				arr = &c->telemetry;
				cnt = &c->n_telemetry;
				subs = false;
			}
			if (!fam) {
				err_at(c, s->line, n, NULL, "%s", accepted_sections);
				continue;
			}
			const char *name = n + strlen(fam) + 1;
			const char *dot = strchr(name, '.');
			_cleanup_free_ char *gname =
				dot ? xstrndup(name, (size_t)(dot - name)) : xstrdup(name);
			if (!valid_name(gname, BOX_NAME_MAX, NULL)) {
				err_at(c, s->line, n, NULL,
				       "%s is not a valid name; accepted: 1-32 characters of A-Za-z0-9_-",
				       q(c, gname));
				continue;
			}
			const char *sub = dot ? dot + 1 : NULL;
			if (sub && (!subs || (strcmp(sub, "env") != 0 && strcmp(sub, "filesystem") != 0 &&
					      strcmp(sub, "network") != 0))) {
				err_at(c, s->line, n, NULL, "%s", accepted_sections);
				continue;
			}
			struct group *g = group_get(arr, cnt, gname);
			if (!sub)
				g->main = s;
			else if (strcmp(sub, "env") == 0)
				g->env = s;
			else if (strcmp(sub, "filesystem") == 0)
				g->fs = s;
			else
				g->net = s;
		}
	}
	struct {
		struct group *arr;
		size_t n;
	} fams[] = { { c->tools, c->n_tools }, { c->mcp, c->n_mcp } };
	for (size_t f = 0; f < ELEMENTSOF(fams); f++)
		for (size_t i = 0; i < fams[f].n; i++) {
			struct group *g = &fams[f].arr[i];
			struct raw_section *subs[] = { g->env, g->fs, g->net };
			if (g->main)
				continue;
			for (size_t j = 0; j < ELEMENTSOF(subs); j++)
				if (subs[j])
					err_at(c, subs[j]->line, subs[j]->name, NULL,
					       "belongs to [%s.%s], which is missing",
					       f == 0 ? "tool" : "mcp", g->name);
		}
	if (c->n_tools)
		qsort(c->tools, c->n_tools, sizeof(*c->tools), group_cmp);
	if (c->n_egress)
		qsort(c->egress, c->n_egress, sizeof(*c->egress), group_cmp);
	if (c->n_mcp)
		qsort(c->mcp, c->n_mcp, sizeof(*c->mcp), group_cmp);
	if (c->n_telemetry)
		qsort(c->telemetry, c->n_telemetry, sizeof(*c->telemetry), group_cmp);
}

/* Drop groups without a main section (reported in classify). */
static void
prune_groups(struct group *arr, size_t *n)
{
	size_t o = 0;
	for (size_t i = 0; i < *n; i++) {
		if (arr[i].main)
			arr[o++] = arr[i];
		else
			free(arr[i].name);
	}
	*n = o;
}

/* ------------------------------------------------------------------ */
/* load                                                                */

static void
interpret(struct ctx *c)
{
	struct box_config *cfg = c->cfg;

	classify(c);
	prune_groups(c->tools, &c->n_tools);
	prune_groups(c->mcp, &c->n_mcp);
	process_owner(c);
	process_box(c);
	own_paths_init(c);
	process_gateway(c);
	section_empty_check(c, c->gateway);

	cfg->egress = xmalloc(c->n_egress * sizeof(*cfg->egress));
	memset(cfg->egress, 0, c->n_egress * sizeof(*cfg->egress));
	for (size_t i = 0; i < c->n_egress; i++, cfg->n_egress++)
		process_egress(c, &c->egress[i], &cfg->egress[i]);

	cfg->telemetry = xmalloc(c->n_telemetry * sizeof(*cfg->telemetry));
	memset(cfg->telemetry, 0, c->n_telemetry * sizeof(*cfg->telemetry));
	for (size_t i = 0; i < c->n_telemetry; i++, cfg->n_telemetry++)
		process_telemetry(c, &c->telemetry[i], &cfg->telemetry[i]);
	if (c->n_telemetry > BOX_TELEMETRY_TARGETS_MAX)
		err_at(c, c->telemetry[BOX_TELEMETRY_TARGETS_MAX].main->line,
		       c->telemetry[BOX_TELEMETRY_TARGETS_MAX].main->name, NULL,
		       "at most %d [telemetry.NAME] sections", BOX_TELEMETRY_TARGETS_MAX);
	for (size_t i = 0, files = 0; i < cfg->n_telemetry; i++)
		if (cfg->telemetry[i].kind.value == BOX_TELEMETRY_FILE &&
		    ++files == BOX_TELEMETRY_FILES_MAX + 1)
			err_at(c, c->telemetry[i].main->line, c->telemetry[i].main->name, NULL,
			       "at most %d telemetry targets of kind = file", BOX_TELEMETRY_FILES_MAX);

	process_agent(c);
	/* snapshot = workspace: the workspace must itself be an agent write grant (docs/snapshot.md). */
	if (cfg->box.snapshot.set && cfg->box.snapshot.value == 1 && cfg->agent.proc.workspace.value &&
	    !c->opts.offline) {
		const struct box_grant_list *wl = &cfg->agent.proc.fs.lists[BOX_FS_WRITE];
		bool found = false;
		for (size_t i = 0; i < wl->n; i++)
			if (wl->v[i].path && strcmp(wl->v[i].path, cfg->agent.proc.workspace.value) == 0)
				found = true;
		if (!found)
			err_at(c, cfg->box.snapshot.src.line, "box", "snapshot",
			       "the workspace %s must be a `write` entry of [agent.filesystem] itself",
			       cfg->agent.proc.workspace.value);
	}
	if (cfg->box.snapshot_max.set && !(cfg->box.snapshot.set && cfg->box.snapshot.value == 1))
		err_at(c, cfg->box.snapshot_max.src.line, "box", "snapshot_max",
		       "needs snapshot = workspace");
	cfg->tools = xmalloc(c->n_tools * sizeof(*cfg->tools));
	memset(cfg->tools, 0, c->n_tools * sizeof(*cfg->tools));
	for (size_t i = 0; i < c->n_tools; i++, cfg->n_tools++)
		process_tool(c, &c->tools[i], &cfg->tools[i]);
	cfg->mcp = xmalloc(c->n_mcp * sizeof(*cfg->mcp));
	memset(cfg->mcp, 0, c->n_mcp * sizeof(*cfg->mcp));
	for (size_t i = 0; i < c->n_mcp; i++, cfg->n_mcp++)
		process_mcp(c, &c->mcp[i], &cfg->mcp[i]);

	/* Files masked in every view, and those a write grant must not hold in a subdirectory. */
	struct masked_file *files = NULL;
	size_t n_files = 0;
	static const char masked[] = "masked in every sandbox view";
	if (cfg->abs_path)
		*GROW(files, n_files) = (struct masked_file){ cfg->abs_path, "box.ini",
							      "shown read-only in every sandbox view" };
	if (cfg->box.policy.path)
		*GROW(files, n_files) = (struct masked_file){
			cfg->box.policy.path, "the policy file",
			cfg->box.show_policy.value ? "shown read-only in every sandbox view "
						     "([box] show_policy = true)" :
						     masked
		};
	for (size_t i = 0; i < cfg->n_egress; i++)
		if (cfg->egress[i].secret.path && cfg->egress[i].secret.ref)
			*GROW(files, n_files) = (struct masked_file){
				cfg->egress[i].secret.path,
				keep(c, xasprintf("the secret of [%s]", c->egress[i].main->name)), masked
			};
	for (size_t i = 0; i < cfg->n_mcp; i++)
		if (cfg->mcp[i].secret.path && cfg->mcp[i].secret.ref)
			*GROW(files, n_files) = (struct masked_file){
				cfg->mcp[i].secret.path,
				keep(c, xasprintf("the secret of [%s]", c->mcp[i].main->name)), masked
			};
	for (size_t i = 0; i < cfg->n_telemetry; i++)
		if (cfg->telemetry[i].secret.path && cfg->telemetry[i].secret.ref)
			*GROW(files, n_files) = (struct masked_file){
				cfg->telemetry[i].secret.path,
				keep(c, xasprintf("the secret of [%s]", c->telemetry[i].main->name)),
				masked
			};

	if (c->agent_fs)
		fs_cross_check(c, c->agent_fs->name, &cfg->agent.proc.fs, files, n_files);
	for (size_t i = 0; i < cfg->n_tools; i++) {
		if (c->tools[i].fs) {
			fs_cross_check(c, c->tools[i].fs->name, &cfg->tools[i].proc.fs, files, n_files);
			agent_deny_check(c, c->tools[i].fs->name, &cfg->tools[i].proc.fs);
		}
		landlock_check(c, &cfg->tools[i].proc,
			       c->tools[i].net ? c->tools[i].net->name : c->tools[i].main->name);
	}
	for (size_t i = 0; i < cfg->n_mcp; i++) {
		if (c->mcp[i].fs) {
			fs_cross_check(c, c->mcp[i].fs->name, &cfg->mcp[i].proc.fs, files, n_files);
			agent_deny_check(c, c->mcp[i].fs->name, &cfg->mcp[i].proc.fs);
		}
		if (cfg->mcp[i].type.value == BOX_MCP_STDIO)
			landlock_check(c, &cfg->mcp[i].proc,
				       c->mcp[i].net ? c->mcp[i].net->name : c->mcp[i].main->name);
	}
	free(files);
	egress_cross_check(c);
	mcp_cross_check(c);
	if (!c->opts.offline) {
		limits_check(c);
		/* the state dir as box-recheck uses it (a service boxd makes its default one) */
		const struct box_str *sd = &cfg->box.state_dir;
		if (sd->value && cfg->agent.user.name && (sd->src.line || !cfg->service))
			c->host->state_dir_check(c, sd->value,
						 sd->src.line ? sd->src.line : cfg->box.src.line,
						 &cfg->agent.user);
	}
}

struct err_order {
	unsigned line;
	size_t idx;
};

static int
err_order_cmp(const void *a, const void *b)
{
	const struct err_order *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Stable sort of the errors this load added, by line. */
static void
sort_errors(struct box_config_errors *errs, size_t from)
{
	size_t n = errs->n - from;
	if (n < 2)
		return;
	struct err_order *o = xmalloc(n * sizeof(*o));
	struct box_config_error *tmp = xmalloc(n * sizeof(*tmp));
	for (size_t i = 0; i < n; i++)
		o[i] = (struct err_order){ errs->v[from + i].line, i };
	qsort(o, n, sizeof(*o), err_order_cmp);
	for (size_t i = 0; i < n; i++)
		tmp[i] = errs->v[from + o[i].idx];
	memcpy(errs->v + from, tmp, n * sizeof(*tmp));
	free(tmp);
	free(o);
}

static void
ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->n_secs; i++) {
		struct raw_section *s = &c->secs[i];
		for (size_t j = 0; j < s->n; j++) {
			for (size_t k = 0; k < s->keys[j].n; k++)
				free(s->keys[j].values[k].text);
			free(s->keys[j].values);
			free(s->keys[j].name);
		}
		free(s->keys);
		for (size_t j = 0; j < s->n_long_keys; j++)
			free(s->long_keys[j]);
		free(s->long_keys);
		free(s->name);
	}
	free(c->secs);
	free(c->lines);
	struct group *gs[] = { c->tools, c->egress, c->mcp, c->telemetry };
	size_t ns[] = { c->n_tools, c->n_egress, c->n_mcp, c->n_telemetry };
	for (size_t g = 0; g < ELEMENTSOF(gs); g++) {
		for (size_t i = 0; i < ns[g]; i++)
			free(gs[g][i].name);
		free(gs[g]);
	}
	for (size_t i = 0; i < c->n_tmp; i++)
		free(c->tmp[i]);
	free(c->tmp);
	free(c->caller_home);
}

int
config_load(struct ctx *c, const char *data, size_t len, struct box_config **ret)
{
	size_t first_err = c->first_err;
	struct box_config *cfg = c->cfg;

	cfg->caller_uid = c->caller;
	cfg->service = c->opts.service;
	if (c->opts.service)
		cfg->runtime_base = xstrdup("/run/box");
	else {
		const char *x = getenv("XDG_RUNTIME_DIR");
		if (x && x[0] == '/' && path_is_clean_absolute(x))
			cfg->runtime_base = xasprintf("%s/box", x);
		else if (c->caller == 0)
			cfg->runtime_base = xstrdup("/run/box");
		else
			cfg->runtime_base = xasprintf("/tmp/box-%u", (unsigned)c->caller);
	}
	c->landlock_abi = c->opts.landlock_abi ? (c->opts.landlock_abi < 0 ? 0 : c->opts.landlock_abi) :
						 c->opts.offline ? 6 : c->host->landlock_abi();

	if (data) {
		prescan(c, data, len);
		int r = ini_parse_stream(reader, c, handler, c);
		if (r > 0 && (size_t)r <= c->n_lines && c->lines[r - 1].kind != L_BAD)
			err_at(c, (unsigned)r, NULL, NULL, "the INI parser refused this line");
		else if (r < 0)
			err_at(c, 0, NULL, NULL, "the INI parser failed (%d)", r);
		interpret(c);
	}
	if (c->n_suppressed) {
		struct box_config_error *e = GROW(c->errs->v, c->errs->n);
		memset(e, 0, sizeof(*e));
		e->file = c->file ? xstrdup(c->file) : NULL;
		e->line = UINT_MAX;
		e->message = xasprintf("%zu more errors not shown", c->n_suppressed);
	}
	sort_errors(c->errs, first_err);
	if (c->n_suppressed)
		c->errs->v[c->errs->n - 1].line = 0;
	ctx_free(c);
	if (c->errs->n > first_err) {
		box_config_free(cfg);
		*ret = NULL;
		return -EINVAL;
	}
	*ret = cfg;
	return 0;
}

void
config_ctx_init(struct ctx *c, const char *name, const struct box_config_options *opts,
		const struct config_host *host, struct box_config_errors *errs)
{
	memset(c, 0, sizeof(*c));
	if (opts)
		c->opts = *opts;
	c->host = host;
	c->errs = errs;
	c->first_err = errs->n;
	c->cfg = xmalloc(sizeof(*c->cfg));
	memset(c->cfg, 0, sizeof(*c->cfg));
	c->cfg->path = xstrdup(name);
	c->file = c->cfg->path;
	c->caller = getuid();
	box_walk_budget_init(&c->walk, BOX_WALK_ENTRIES_MAX, BOX_WALK_TIME_MS);
}


/* ------------------------------------------------------------------ */
/* no host                                                             */

static const struct passwd *
fixture_by_uid(struct ctx *c, uid_t uid)
{
	return c->owner_fixture && c->owner_fixture->pw_uid == uid ? c->owner_fixture : NULL;
}

static const struct passwd *
fixture_by_name(struct ctx *c, const char *name)
{
	return c->owner_fixture && strcmp(c->owner_fixture->pw_name, name) == 0 ? c->owner_fixture :
										     NULL;
}

static char *
root_dir(void)
{
	return xstrdup("/");
}

/* Offline only: the rules never reach the members left NULL (they check offline first). */
const struct config_host config_host_none = {
	.user_by_uid = fixture_by_uid,
	.user_by_name = fixture_by_name,
	.cwd = root_dir,
};

int
box_config_parse_buffer(const char *name, const char *data, size_t len,
			const struct box_config_options *opts, const struct passwd *owner,
			struct box_config **ret, struct box_config_errors *errs)
{
	struct ctx c;
	config_ctx_init(&c, name, opts, &config_host_none, errs);
	c.opts.offline = true;
	c.owner_fixture = owner;
	c.caller = owner->pw_uid;
	if (len > BOX_CONFIG_FILE_MAX) {
		err_at(&c, 0, NULL, NULL, "is larger than %lu bytes", BOX_CONFIG_FILE_MAX);
		return config_load(&c, NULL, 0, ret);
	}
	return config_load(&c, data ? data : "", len, ret);
}

/* ------------------------------------------------------------------ */
/* free                                                                */

static void
strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
process_free(struct box_process *p)
{
	cmdline_free(p->command.argv);
	free(p->command.written0);
	free(p->command.program);
	strv_free(p->command.interpreters, p->command.n_interpreters);
	free(p->workspace.value);
	for (size_t i = 0; i < p->env.n; i++) {
		free(p->env.v[i].name);
		free(p->env.v[i].value);
	}
	free(p->env.v);
	for (int k = 0; k < BOX_FS_KIND_COUNT; k++) {
		for (size_t i = 0; i < p->fs.lists[k].n; i++) {
			free(p->fs.lists[k].v[i].path);
			free(p->fs.lists[k].v[i].spelling);
		}
		free(p->fs.lists[k].v);
	}
}

static void
secret_free(struct box_secret *s)
{
	if (s->value) {
		explicit_bzero(s->value, s->len);
		free(s->value);
	}
	free(s->ref);
	free(s->path);
}

static void
dest_free(struct box_destination *d)
{
	free(d->host);
	free(d->path_prefix);
	free(d->spelling);
}

static void
file_free(struct box_file *f)
{
	free(f->path);
	free(f->data);
}

void
box_config_free(struct box_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->path);
	free(cfg->abs_path);
	free(cfg->runtime_base);
	free(cfg->box.name.value);
	file_free(&cfg->box.policy);
	free(cfg->box.policy_written);
	free(cfg->box.state_dir.value);
	process_free(&cfg->agent.proc);
	free(cfg->agent.user.name);
	free(cfg->agent.user.home);
	for (size_t i = 0; i < cfg->n_tools; i++) {
		free(cfg->tools[i].name);
		process_free(&cfg->tools[i].proc);
	}
	free(cfg->tools);
	for (size_t i = 0; i < cfg->n_egress; i++) {
		struct box_egress *e = &cfg->egress[i];
		free(e->name);
		for (size_t j = 0; j < e->n_dest; j++)
			dest_free(&e->dest[j]);
		free(e->dest);
		secret_free(&e->secret);
		free(e->variable.value);
		free(e->header.value);
		free(e->prefix.value);
		free(e->param.value);
		free(e->placeholder_prefix.value);
		for (size_t j = 0; j < e->n_sandboxes; j++)
			free(e->sandboxes[j]);
		free(e->sandboxes);
	}
	free(cfg->egress);
	for (size_t i = 0; i < cfg->n_mcp; i++) {
		struct box_mcp *m = &cfg->mcp[i];
		free(m->name);
		free(m->ns);
		process_free(&m->proc);
		free(m->alias.value);
		free(m->url.value);
		dest_free(&m->url_dest);
		secret_free(&m->secret);
		free(m->header.value);
		free(m->prefix.value);
	}
	free(cfg->mcp);
	for (size_t i = 0; i < cfg->n_telemetry; i++) {
		struct box_telemetry *t = &cfg->telemetry[i];
		free(t->name);
		free(t->destination.value);
		dest_free(&t->url_dest);
		secret_free(&t->secret);
		free(t->header.value);
		free(t->prefix.value);
	}
	free(cfg->telemetry);
	file_free(&cfg->gateway.upstream_ca);
	free(cfg->gateway.resolver.value);
	file_free(&cfg->gateway.hosts_file);
	for (size_t i = 0; i < cfg->gateway.n_passthrough; i++)
		dest_free(&cfg->gateway.passthrough[i]);
	free(cfg->gateway.passthrough);
	free(cfg);
}

