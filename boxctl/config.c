/*
 * config.c — load box.ini (spec/CONFIG.md): pre-scan, inih, validation, host checks.
 *
 * Three passes. (1) A pre-scan classifies every line: over-long lines, NUL
 * bytes, section headers (recorded with their lines), keys (column 1, `=`
 * only), continuation lines (indented; one more occurrence of the previous
 * key), and the errors inih would not report or would report without a line.
 * (2) inih (ini_parse_stream, default build options) splits the lines the
 * pre-scan accepted into keys and values; a reader feeds it one line at a
 * time and so knows the line number of every handler call; refused lines are
 * fed as blank lines. (3) Each section is interpreted into struct box_config
 * and checked: values, paths as the caller sees them (boxctl runs as the
 * caller), secrets, and the cross-section rules. Every refusal is collected.
 *
 * Allocation failure is fatal here (boxctl is a one-shot client, like
 * OpenSSH's xmalloc): the x*() helpers exit with a message.
 * Trusts: nothing in the file; the caller's identity (getuid), the passwd
 * database and boxctl's environment.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmdline.h"
#include "config.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "treewalk.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#define LANDLOCK_CREATE_RULESET_VERSION_FLAG (1U << 0)

#define MAX_ERRORS 500
#define SHEBANG_MAX 256
#define SHEBANG_DEPTH 4
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* ------------------------------------------------------------------ */
/* allocation                                                          */

static void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fatalx("out of memory");
	return p;
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fatalx("out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		fatalx("out of memory");
	return r;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);
	if (!r)
		fatalx("out of memory");
	return r;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *
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

#define GROW(arr, n) ((arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr))), &(arr)[(n)++])

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

/* ------------------------------------------------------------------ */
/* the raw file: pre-scan + inih                                        */

enum line_kind {
	L_BLANK,      /* blank or comment */
	L_SECTION,
	L_KEY,
	L_CONT,
	L_BAD,        /* refused (reported) or skipped: fed to inih as blank */
};

struct line {
	const char *text;     /* not NUL-terminated */
	size_t len;
	enum line_kind kind;
	int section;          /* raw section index; -1 before any, -2 ignored */
};

struct raw_value {
	char *text;
	unsigned line;
};

struct raw_key {
	char *name;
	unsigned line;
	struct raw_value *values; /* values[0] from the key line, then continuations */
	size_t n;
	bool used;
};

struct raw_section {
	char *name;
	unsigned line;
	struct raw_key *keys;
	size_t n;
	char **long_keys;     /* keys on lines refused as over-long: not also "missing" */
	size_t n_long_keys;
};

enum sec_kind {
	SK_BOX,
	SK_AGENT,
	SK_AGENT_ENV,
	SK_AGENT_FS,
	SK_TOOL,
	SK_TOOL_ENV,
	SK_TOOL_FS,
	SK_TOOL_NET,
	SK_EGRESS,
	SK_MCP,
	SK_MCP_ENV,
	SK_MCP_FS,
	SK_MCP_NET,
	SK_GATEWAY,
	SK_UNKNOWN,
};

/* A named family: [tool.X] with its sub-sections, [egress.X], [mcp.X]. */
struct group {
	char *name;
	struct raw_section *main, *env, *fs, *net;
};

struct ctx {
	struct box_config *cfg;
	struct box_config_errors *errs;
	struct box_config_options opts;
	const char *file;
	size_t n_suppressed;
	size_t first_err;     /* errs->n when this load started */

	struct line *lines;
	size_t n_lines, next_line, cur_line;
	struct raw_section *secs;
	size_t n_secs;

	struct raw_section *box, *agent, *agent_env, *agent_fs, *gateway;
	struct group *tools, *egress, *mcp;
	size_t n_tools, n_egress, n_mcp;

	uid_t caller;
	char *caller_home;
	const char *home;     /* the owner's home, for ~ */
	int landlock_abi;
	char **tmp;           /* strings made for messages */
	size_t n_tmp;
	struct box_walk_budget walk; /* the deny hard-link walk's bound, per load */
	/* box's own directories and the sockets' places (own_paths_init) */
	struct own_path {
		const char *path;
		const char *what;
	} own[6], sockets[6];
	size_t n_own, n_sockets;
};

static void err_at(struct ctx *c, unsigned line, const char *section, const char *key,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static bool key_on_long_line(const struct ctx *c, const char *section, const char *key);
static void
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
static const char *
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
static const char *
qs(struct ctx *c, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return q(c, s);
	return s;
}

/* Keep a string alive until the context ends. */
static const char *
keep(struct ctx *c, char *s)
{
	*GROW(c->tmp, c->n_tmp) = s;
	return s;
}

static bool
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
static struct raw_key *
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
static struct raw_key *
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
static bool
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

/* Every value of every occurrence of a list key (index loops: keys may be NULL). */
#define for_each_value(s, keyname, k, v)                                                     \
	for (size_t k##_i = 0; k##_i < (s)->n; k##_i++)                                      \
		for (struct raw_key *k = &(s)->keys[k##_i]; k; k = NULL)                     \
			if (strcmp(k->name, (keyname)) == 0)                       \
				for (size_t v##_j = 0; v##_j < k->n; v##_j++)                 \
					for (struct raw_value *v = &k->values[v##_j]; v;      \
					     v = NULL)

static const char *const box_keys[] = { "name", "policy", "state_dir", "require", "timeout",
					"history_sync", "command_timeout", NULL };
static const char *const agent_keys[] = { "command", "workspace", "user", "memory_max",
					  "pids_max", "nofile", "nproc", NULL };
static const char *const tool_keys[] = { "command", "workspace", "nofile", "nproc", "supervise",
					 NULL };
static const char *const egress_keys[] = { "destinations", "secret", "variable", "placement",
					   "header", "prefix", "param", "inject",
					   "placeholder_prefix", NULL };
static const char *const mcp_keys[] = { "type", "command", "alias", "allow_tool_changes",
					"max_frame", "url", "secret", "placement", "header",
					"prefix", NULL };
static const char *const gateway_keys[] = { "port", "connect_timeout", "idle_timeout",
					    "max_connections", "max_request_body", "upstream_ca",
					    "resolver", "hosts_file", "allow_host_loopback", NULL };
static const char *const agent_fs_keys[] = { "read", "write", "read_file", "write_file", "exec",
					     "deny", NULL };
static const char *const fs_keys[] = { "read", "write", "read_file", "write_file", "deny", NULL };
static const char *const net_keys[] = { "contain_egress", NULL };

static const struct {
	const char *title;
	const char *const *keys;
} key_homes[] = {
	{ "[box]", box_keys },
	{ "[agent]", agent_keys },
	{ "[tool.NAME]", tool_keys },
	{ "[egress.NAME]", egress_keys },
	{ "[mcp.NAME]", mcp_keys },
	{ "[gateway]", gateway_keys },
	{ "[agent.filesystem]", agent_fs_keys },
	{ "[tool.NAME.network]", net_keys },
};

static bool
in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static char *
join_list(const char *const *list, const char *sep)
{
	size_t n = 1;
	for (const char *const *l = list; *l; l++)
		n += strlen(*l) + strlen(sep);
	char *r = xmalloc(n);
	r[0] = '\0';
	for (const char *const *l = list; *l; l++) {
		if (l != list)
			strcat(r, sep);
		strcat(r, *l);
	}
	return r;
}

/* Every key not taken is an error that says what the section accepts. */
static void
report_unknown(struct ctx *c, struct raw_section *s, const char *const *accepted, const char *hint)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct raw_key *k = &s->keys[i];
		if (k->used)
			continue;
		k->used = true;
		if (hint) {
			err_at(c, k->line, s->name, k->name, "%s", hint);
			continue;
		}
		_cleanup_free_ char *acc = join_list(accepted, " ");
		_cleanup_free_ char *homes = NULL;
		for (size_t h = 0; h < ELEMENTSOF(key_homes); h++) {
			if (key_homes[h].keys == accepted || !in_list(key_homes[h].keys, k->name))
				continue;
			char *n = xasprintf("%s%s%s", homes ? homes : "", homes ? ", " : "",
					    key_homes[h].title);
			free(homes);
			homes = n;
		}
		if (homes)
			err_at(c, k->line, s->name, k->name,
			       "not accepted in this section (it belongs in %s); accepted here: %s", homes,
			       acc);
		else
			err_at(c, k->line, s->name, k->name, "unknown key; accepted: %s", acc);
	}
}

static const char *
val(struct raw_key *k)
{
	return k->values[0].text;
}

static unsigned
vline(struct raw_key *k)
{
	return k->values[0].line;
}

static struct box_src
src_at(struct ctx *c, unsigned line)
{
	return (struct box_src){ .file = c->cfg->path, .line = line };
}

static void
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

enum num_kind { NUM_DURATION, NUM_SIZE, NUM_COUNT, NUM_PORT };

static void
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

static bool
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

static bool
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

static bool
valid_env_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static const char *const reserved_env[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy",
	"ALL_PROXY", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE", "GIT_SSL_CAINFO",
	"NODE_USE_ENV_PROXY", "PWD", "USER", "NODE_OPTIONS", "BASH_ENV", "ENV", "PERL5LIB",
	"PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "LOCPATH", NULL,
};

static bool
env_reserved(const char *name)
{
	return in_list(reserved_env, name) || strncmp(name, "LD_", 3) == 0 ||
	       strncmp(name, "PYTHON", 6) == 0 || strncmp(name, "BOX_", 4) == 0;
}

/* ------------------------------------------------------------------ */
/* files and paths as the caller                                       */

/*
 * Read a regular file as the caller: no FIFO can block us (O_NONBLOCK), no
 * device is read. `secret`: the last component must not be a symlink and
 * the file must be the caller's and 0600 or stricter. *why is a message.
 */
static int
read_user_file(struct ctx *c, const char *path, size_t max, bool secret, char **data, size_t *len,
	       const char **why)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (secret ? O_NOFOLLOW : 0);
	_cleanup_close_ int fd = open(path, flags);
	struct stat st;

	if (fd < 0) {
		int e = errno;
		*why = e == ELOOP && secret ? "is a symbolic link; name the file itself" :
					      keep(c, xasprintf("cannot be opened: %s", strerror(e)));
		return -e;
	}
	if (fstat(fd, &st) < 0) {
		*why = keep(c, xasprintf("cannot be checked: %s", strerror(errno)));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "is not a regular file";
		return -EINVAL;
	}
	if (secret && st.st_uid != c->caller) {
		*why = keep(c, xasprintf("is owned by uid %u; a secret file must be yours",
					 (unsigned)st.st_uid));
		return -EPERM;
	}
	if (secret && (st.st_mode & 077)) {
		*why = keep(c, xasprintf("has mode %04o; a secret file must be 0600 or stricter",
					 (unsigned)(st.st_mode & 07777)));
		return -EPERM;
	}
	if ((size_t)st.st_size > max) {
		*why = keep(c, xasprintf("is larger than %zu bytes", max));
		return -EFBIG;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				*why = keep(c, xasprintf("is larger than %zu bytes", max));
				return -EFBIG;
			}
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			*why = keep(c, xasprintf("cannot be read: %s", strerror(e)));
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		*why = keep(c, xasprintf("is larger than %zu bytes", max));
		return -EFBIG;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

/*
 * Check a path as written (CONFIG.md spelling rules) and expand ~ against
 * the owner's home. `relative_base`: a relative spelling is joined to it
 * (the policy), else refused. Returns the absolute path or NULL (reported).
 */
static char *
path_from_spelling(struct ctx *c, unsigned line, const char *section, const char *key,
		   const char *sp, const char *relative_base)
{
	if (!*sp) {
		err_at(c, line, section, key, "empty path");
		return NULL;
	}
	for (const char *p = sp; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			err_at(c, line, section, key, "%s contains a control character", q(c, sp));
			return NULL;
		}
	if (path_has_glob(sp)) {
		err_at(c, line, section, key,
		       "%s contains a glob character (* ? [ ]); name one path", q(c, sp));
		return NULL;
	}
	if (sp[0] == '~' && sp[1] != '\0' && sp[1] != '/') {
		err_at(c, line, section, key,
		       "%s: ~user is not accepted; write ~ or ~/… for the box owner's home", q(c, sp));
		return NULL;
	}
	if (sp[0] != '/' && sp[0] != '~' && !relative_base) {
		err_at(c, line, section, key, "%s is not absolute; write /… or ~/…", q(c, sp));
		return NULL;
	}
	/* `..` components */
	for (const char *p = sp; (p = strstr(p, "..")); p += 2)
		if ((p == sp || p[-1] == '/') && (p[2] == '\0' || p[2] == '/')) {
			err_at(c, line, section, key, "%s has a .. component; name the path it means",
			       q(c, sp));
			return NULL;
		}
	size_t n = strlen(sp);
	if (n > 1 && sp[n - 1] == '/') {
		err_at(c, line, section, key, "%s ends with /; write it without", q(c, sp));
		return NULL;
	}
	char *abs = NULL;
	if (sp[0] == '~') {
		if (!c->home) {
			err_at(c, line, section, key, "%s: the box owner has no home to expand ~ to",
			       q(c, sp));
			return NULL;
		}
		if (path_expand_home(sp, c->home, &abs) < 0)
			fatalx("out of memory");
	} else if (sp[0] != '/') {
		abs = path_join(relative_base, sp);
		if (!abs)
			fatalx("out of memory");
	} else
		abs = xstrdup(sp);
	if (strlen(abs) >= BOX_PATH_MAX) {
		err_at(c, line, section, key, "%s is longer than %d bytes", q(c, sp), BOX_PATH_MAX - 1);
		free(abs);
		return NULL;
	}
	return abs;
}

/* A canonical path shown as the user wrote it: in ~ form when they used ~. */
static const char *
shown(struct ctx *c, const char *canon, const char *spelling)
{
	char *r;
	if (spelling[0] == '~' && c->home) {
		if (path_to_home_form(canon, c->home, &r) < 0)
			fatalx("out of memory");
	} else
		r = xstrdup(canon);
	return keep(c, r);
}

static const char *const system_roots[] = { "/", "/etc", "/usr", "/proc", "/sys", "/dev",
					    "/run", "/var", "/boot", "/root", "/home", NULL };
static const char *const credential_stores[] = { ".ssh", ".aws", ".gnupg", ".netrc", ".docker",
						 ".kube", ".config/gcloud", NULL };

static const char *const fs_names[BOX_FS_KIND_COUNT] = { "read", "write", "read_file",
							 "write_file", "exec", "deny" };

static void
own_add(struct own_path *v, size_t *n, size_t cap, char *path, const char *what)
{
	if (!path || *n >= cap || !path_is_clean_absolute(path)) {
		free(path);
		return;
	}
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].path, path) == 0) {
			free(path);
			return;
		}
	v[(*n)++] = (struct own_path){ path, what };
}

/*
 * CONFIG.md [agent.filesystem]: box's own directories — any box's default
 * state dir (the owner's state base, /var/lib/box), the runtime base, this
 * box's state_dir — may not be granted or lie under a grant (inside one they
 * are masked, boxd/plan.c); and no grant may contain a socket that drives
 * boxd or the user's session: the service socket, /run/box, /run/user/UID,
 * $XDG_RUNTIME_DIR (which is /run/user/UID where a session manager set it)
 * and the runtime base itself, which holds every embedded boxd's socket
 * (BASE/ID/boxd.sock; so `read = /tmp` is refused where BASE is /tmp/box-UID,
 * not masked: the plan validator refuses any view entry reaching it too).
 */
static void
own_paths_init(struct ctx *c)
{
	struct box_config *cfg = c->cfg;
	const char *xdg_state = getenv("XDG_STATE_HOME");
	const char *xdg_run = getenv("XDG_RUNTIME_DIR");
	const char *sock = getenv("BOX_SOCKET");
	bool self = cfg->agent.user.uid == c->caller;

	if (cfg->box.state_dir.value)
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xstrdup(cfg->box.state_dir.value),
			"this box's state dir");
	if (self && xdg_state && xdg_state[0] == '/')
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xasprintf("%s/box", xdg_state),
			"box's state dirs");
	if (c->home)
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own),
			path_join(c->home, ".local/state/box"), "box's state dirs");
	own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xstrdup("/var/lib/box"),
		"box's state dirs");
	if (cfg->runtime_base)
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xstrdup(cfg->runtime_base),
			"the box runtime base");

	own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets),
		xstrdup(sock && sock[0] == '/' ? sock : "/run/box/boxd.sock"),
		"boxd's service socket");
	own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets), xstrdup("/run/box"),
		"boxd's runtime dir");
	own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets),
		xasprintf("/run/user/%u", (unsigned)cfg->agent.user.uid),
		"the user's runtime dir: session bus, ssh-agent, systemd");
	if (self && xdg_run && xdg_run[0] == '/')
		own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets), xstrdup(xdg_run),
			"the user's runtime dir: session bus, ssh-agent, systemd");
	if (cfg->runtime_base)
		own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets),
			xstrdup(cfg->runtime_base), "the box runtime base: embedded boxd sockets");
	for (size_t i = 0; i < c->n_own; i++)
		keep(c, (char *)c->own[i].path);
	for (size_t i = 0; i < c->n_sockets; i++)
		keep(c, (char *)c->sockets[i].path);
}

/* A grant inside one of box's own directories, or around a socket's place: refused. */
static bool
own_paths_check(struct ctx *c, unsigned line, const char *secname, const char *key,
		const char *path, const char *spelling)
{
	for (size_t i = 0; i < c->n_own; i++)
		if (path_is_under(path, c->own[i].path)) {
			err_at(c, line, secname, key,
			       "%s %s %s %s; a box's state and runtime dirs are never granted (inside a broader grant they are masked)",
			       q(c, spelling),
			       strcmp(path, c->own[i].path) == 0 ? "is" : "lies inside",
			       c->own[i].what, c->own[i].path);
			return false;
		}
	for (size_t i = 0; i < c->n_sockets; i++)
		if (path_is_under(c->sockets[i].path, path)) {
			err_at(c, line, secname, key,
			       "%s %s %s (%s): the box could connect to its sockets and act outside its sandbox; name something beside it",
			       q(c, spelling), strcmp(path, c->sockets[i].path) == 0 ? "is" : "contains",
			       c->sockets[i].path, c->sockets[i].what);
			return false;
		}
	return true;
}

/*
 * CONFIG.md: a deny mask hides a path, not an inode, so a denied file with
 * another name (st_nlink > 1), or a denied directory holding one, is refused.
 * A directory is walked within the load's bound (BOX_WALK_*): what lies
 * beyond a cut walk is not checked here (box-recheck walks it again).
 */
struct link_find {
	char path[BOX_PATH_MAX];
	nlink_t nlink;
};

static int
link_visit(void *user, const char *path, const struct stat *st)
{
	struct link_find *f = user;
	if (st->st_nlink <= 1)
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->nlink = st->st_nlink;
	return -ECANCELED;
}

static bool
deny_links_ok(struct ctx *c, struct raw_section *s, struct raw_value *v, const char *abs,
	      const struct stat *st)
{
	if (!S_ISDIR(st->st_mode)) {
		if (st->st_nlink <= 1)
			return true;
		err_at(c, v->line, s->name, "deny",
		       "%s has %lu hard links: a deny mask hides one name, not the others",
		       q(c, v->text), (unsigned long)st->st_nlink);
		return false;
	}
	struct link_find f = { .nlink = 0 };
	if (box_walk_tree(abs, &c->walk, NULL, link_visit, &f) != -ECANCELED)
		return true;
	err_at(c, v->line, s->name, "deny",
	       "%s holds %s, which has %lu hard links: a deny mask hides one name, not the others",
	       q(c, v->text), shown(c, f.path, v->text), (unsigned long)f.nlink);
	return false;
}

/* Check one grant; on success append it to the list. */
static void
grant_add(struct ctx *c, struct raw_section *s, enum box_fs_kind kind, struct raw_value *v,
	  struct box_filesystem *fs)
{
	const char *key = fs_names[kind];
	_cleanup_free_ char *abs = path_from_spelling(c, v->line, s->name, key, v->text, NULL);
	_cleanup_free_ char *canon = NULL;
	struct stat st = { 0 };
	bool store = false;

	if (!abs)
		return;
	if (in_list(system_roots, abs)) {
		/* Name the directory too when ~ spelled it (`~` is /root for root). */
		bool tilde = strcmp(v->text, abs) != 0;
		err_at(c, v->line, s->name, key,
		       "%s%s%s%s is a system root, refused as a whole; name something inside it "
		       "instead",
		       q(c, v->text), tilde ? " (" : "", tilde ? abs : "", tilde ? ")" : "");
		return;
	}
	for (size_t i = 0; c->home && credential_stores[i]; i++) {
		_cleanup_free_ char *cs = path_join(c->home, credential_stores[i]);
		if (!cs)
			fatalx("out of memory");
		if (strcmp(abs, cs) == 0)
			store = true;
		else if (kind != BOX_FS_DENY && path_is_under(abs, cs)) {
			err_at(c, v->line, s->name, key,
			       "%s lies inside the credential store ~/%s, which may be granted only by naming it exactly",
			       q(c, v->text), credential_stores[i]);
			return;
		}
	}
	if (kind != BOX_FS_DENY && !own_paths_check(c, v->line, s->name, key, abs, v->text))
		return;
	if (c->opts.offline)
		goto add;
	if (lstat(abs, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			err_at(c, v->line, s->name, key, "%s does not exist", q(c, v->text));
		else
			err_at(c, v->line, s->name, key, "%s cannot be checked: %s", q(c, v->text),
			       strerror(errno));
		return;
	}
	int r = path_canonicalize(abs, &canon);
	if (S_ISLNK(st.st_mode)) {
		if (r == 0)
			err_at(c, v->line, s->name, key,
			       "%s is a symbolic link to %s; name what it points at", q(c, v->text),
			       shown(c, canon, v->text));
		else
			err_at(c, v->line, s->name, key, "%s is a symbolic link that resolves nowhere",
			       q(c, v->text));
		return;
	}
	if (r < 0) {
		err_at(c, v->line, s->name, key, "%s cannot be resolved: %s", q(c, v->text),
		       strerror(-r));
		return;
	}
	if (strcmp(canon, abs) != 0) {
		err_at(c, v->line, s->name, key,
		       "%s is not spelled canonically; the canonical spelling is %s", q(c, v->text),
		       shown(c, canon, v->text));
		return;
	}
	if ((kind == BOX_FS_READ_FILE || kind == BOX_FS_WRITE_FILE) && S_ISDIR(st.st_mode)) {
		err_at(c, v->line, s->name, key,
		       "%s is a directory; %s names one file (a tree belongs in %s)", q(c, v->text),
		       key, kind == BOX_FS_READ_FILE ? "read" : "write");
		return;
	}
	if (kind == BOX_FS_EXEC && !S_ISDIR(st.st_mode)) {
		if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
			err_at(c, v->line, s->name, key, "%s is not an executable file or a directory",
			       q(c, v->text));
			return;
		}
		if (st.st_mode & (S_ISUID | S_ISGID)) {
			err_at(c, v->line, s->name, key,
			       "%s is set%s; a setuid or setgid program is never granted exec",
			       q(c, v->text), st.st_mode & S_ISUID ? "uid" : "gid");
			return;
		}
	}
	if (kind == BOX_FS_DENY && !deny_links_ok(c, s, v, abs, &st))
		return;
add:;
	struct box_grant_list *l = &fs->lists[kind];
	struct box_grant *g = GROW(l->v, l->n);
	g->path = TAKE_PTR(abs);
	g->spelling = xstrdup(v->text);
	g->is_dir = c->opts.offline ? false : S_ISDIR(st.st_mode);
	g->credential_store = store;
	g->src = src_at(c, v->line);
}

static void
process_fs(struct ctx *c, struct raw_section *s, struct box_filesystem *fs, bool agent)
{
	if (!s)
		return;
	fs->src = src_at(c, s->line);
	for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++) {
		if (kind == BOX_FS_EXEC && !agent)
			continue;
		if (!take_list(s, fs_names[kind]))
			continue;
		for_each_value(s, fs_names[kind], k, v) grant_add(c, s, (enum box_fs_kind)kind, v, fs);
	}
	if (!agent)
		for (size_t i = 0; i < s->n; i++)
			if (!s->keys[i].used && strcmp(s->keys[i].name, "exec") == 0) {
				s->keys[i].used = true;
				err_at(c, s->keys[i].line, s->name, "exec",
				       "not accepted here: a tool's or MCP server's grants are exec-capable already; accepted: read write read_file write_file deny");
			}
	report_unknown(c, s, agent ? agent_fs_keys : fs_keys, NULL);
}

/* Find an executable regular file: absolute, or a bare name on `path_env`. */
static bool
is_exec_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) &&
	       access(p, X_OK) == 0;
}

static char *
search_path(const char *name, const char *path_env)
{
	const char *p = path_env;
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > 0 && p[0] == '/') {
			char *cand = xasprintf("%.*s/%s", (int)n, p, name);
			if (is_exec_file(cand))
				return cand;
			free(cand);
		}
		if (!e)
			break;
		p = e + 1;
	}
	return NULL;
}

static bool
is_shell_name(const char *base)
{
	static const char *const shells[] = { "sh", "bash", "zsh", "dash", "rbash", NULL };
	return in_list(shells, base);
}

static void
add_interpreter(struct box_command *cmd, const char *canon)
{
	for (size_t i = 0; i < cmd->n_interpreters; i++)
		if (strcmp(cmd->interpreters[i], canon) == 0)
			return;
	*GROW(cmd->interpreters, cmd->n_interpreters) = xstrdup(canon);
}

static const char *shell_msg =
	"is replaced by box's shell alias inside the box; run a program, or declare a [tool.NAME]";

/*
 * Follow the #! chain of `file` (canonical): every interpreter becomes an
 * implicit exec grant; for the agent none may be a shell. Returns false
 * after reporting an error.
 */
static bool
follow_shebang(struct ctx *c, struct raw_section *s, unsigned line, const char *file,
	       struct box_command *cmd, const char *path_env, bool agent, int depth)
{
	char buf[SHEBANG_MAX + 1];
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return true; /* unreadable: the kernel decides at exec */
	ssize_t n = read(fd, buf, SHEBANG_MAX);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return true;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	char *p = buf + 2;
	while (is_blank(*p))
		p++;
	char *interp = p;
	while (*p && !is_blank(*p))
		p++;
	if (*p)
		*p++ = '\0';
	while (is_blank(*p))
		p++;
	char *arg = p; /* the rest, one argument for the kernel */
	size_t al = strlen(arg);
	while (al && isspace((unsigned char)arg[al - 1]))
		arg[--al] = '\0';

	if (depth >= SHEBANG_DEPTH) {
		err_at(c, line, s->name, "command", "the #! chain of %s is deeper than %d", q(c, file),
		       SHEBANG_DEPTH);
		return false;
	}
	if (!*interp || interp[0] != '/') {
		err_at(c, line, s->name, "command",
		       "the #! line of %s does not name an interpreter by absolute path", q(c, file));
		return false;
	}
	_cleanup_free_ char *canon = NULL;
	if (path_canonicalize(interp, &canon) < 0 || !is_exec_file(canon)) {
		err_at(c, line, s->name, "command",
		       "the #! interpreter %s of %s is not an executable file", q(c, interp),
		       q(c, file));
		return false;
	}
	if (agent && (is_shell_name(path_basename(interp)) || is_shell_name(path_basename(canon)))) {
		err_at(c, line, s->name, "command", "%s runs %s (#!), which %s", qs(c, file),
		       qs(c, interp), shell_msg);
		return false;
	}
	add_interpreter(cmd, canon);
	if (!follow_shebang(c, s, line, canon, cmd, path_env, agent, depth + 1))
		return false;

	if (strcmp(path_basename(canon), "env") != 0 || !*arg)
		return true;
	/* #!/usr/bin/env [-S] [-opts] [VAR=val...] NAME ... */
	char **words = NULL;
	size_t nw = 0;
	const char *e;
	const char *target = NULL;
	if (cmdline_split(arg, &words, &nw, &e) < 0) {
		cmdline_free(words);
		return true;
	}
	for (size_t i = 0; i < nw; i++) {
		if (words[i][0] == '-' || strchr(words[i], '='))
			continue;
		target = words[i];
		break;
	}
	bool ok = true;
	if (target) {
		_cleanup_free_ char *found =
			strchr(target, '/') ? xstrdup(target) : search_path(target, path_env);
		_cleanup_free_ char *tcanon = NULL;
		if (!found || path_canonicalize(found, &tcanon) < 0 || !is_exec_file(tcanon)) {
			err_at(c, line, s->name, "command",
			       "%s runs %s through env (#!), and it is not found on PATH %s",
			       q(c, file), q(c, target), q(c, path_env));
			ok = false;
		} else if (agent && (is_shell_name(path_basename(target)) ||
				     is_shell_name(path_basename(tcanon)))) {
			err_at(c, line, s->name, "command", "%s runs %s through env (#!), which %s",
			       qs(c, file), qs(c, target), shell_msg);
			ok = false;
		} else {
			add_interpreter(cmd, tcanon);
			ok = follow_shebang(c, s, line, tcanon, cmd, path_env, agent, depth + 1);
		}
	}
	cmdline_free(words);
	return ok;
}

/* Parse `command`, resolve element 0 and its #! chain. */
static void
process_command(struct ctx *c, struct raw_section *s, struct box_process *p, bool agent)
{
	struct box_command *cmd = &p->command;
	struct raw_key *k = take_command(c, s);
	if (!k) {
		if (s)
			err_at(c, s->line, s->name, "command", "required key is missing");
		return;
	}
	cmd->src = src_at(c, k->line);
	for (size_t i = 0; i < k->n; i++) {
		const char *e;
		if (cmdline_split(k->values[i].text, &cmd->argv, &cmd->argc, &e) == -EINVAL) {
			err_at(c, k->values[i].line, s->name, "command", "%s: %s", q(c, k->values[i].text),
			       e);
			return;
		}
	}
	if (cmd->argc == 0) {
		err_at(c, k->line, s->name, "command", "empty; name a program");
		return;
	}
	cmd->written0 = xstrdup(cmd->argv[0]);
	const char *w0 = cmd->written0; /* argv[0] is replaced by the resolved path below */
	if (!*w0) {
		err_at(c, k->line, s->name, "command", "element 0 is empty; name a program");
		return;
	}
	if (strncmp(w0, "~/", 2) == 0) {
		/* ~/… is the owner's passwd home; the box is sent the absolute path. */
		if (!c->home) {
			err_at(c, k->line, s->name, "command",
			       "%s: the box owner has no home to expand ~ to", q(c, w0));
			return;
		}
		char *abs = NULL;
		if (path_expand_home(w0, c->home, &abs) < 0)
			fatalx("out of memory");
		free(cmd->written0);
		cmd->written0 = abs;
		w0 = abs;
	}
	if (strchr(w0, '/') && w0[0] != '/') {
		err_at(c, k->line, s->name, "command",
		       "%s is a relative path; write an absolute path, ~/…, or a bare name found on "
		       "PATH",
		       q(c, w0));
		return;
	}
	if (c->opts.offline)
		return;
	/*
	 * The section's own env PATH when it sets one, else the box's default PATH —
	 * never the caller's (a pyenv or asdf shim there is not what the box runs).
	 */
	const char *path_env = DEFAULT_PATH, *which = "the box's default PATH";
	for (size_t i = 0; i < p->env.n; i++)
		if (strcmp(p->env.v[i].name, "PATH") == 0 && p->env.v[i].set) {
			path_env = p->env.v[i].value;
			which = "the section's env PATH";
		}
	char *resolved;
	if (w0[0] == '/') {
		if (!is_exec_file(w0)) {
			struct stat st;
			if (lstat(w0, &st) < 0 && errno == ENOENT)
				err_at(c, k->line, s->name, "command", "%s does not exist", q(c, w0));
			else
				err_at(c, k->line, s->name, "command", "%s is not an executable file",
				       q(c, w0));
			return;
		}
		resolved = xstrdup(w0);
	} else {
		resolved = search_path(w0, path_env);
		if (!resolved) {
			err_at(c, k->line, s->name, "command", "%s is not found on %s %s", q(c, w0),
			       which, q(c, path_env));
			return;
		}
	}
	free(cmd->argv[0]);
	cmd->argv[0] = resolved;
	if (path_canonicalize(resolved, &cmd->program) < 0) {
		err_at(c, k->line, s->name, "command", "%s cannot be resolved: %s", q(c, resolved),
		       strerror(errno));
		return;
	}
	if (agent && (is_shell_name(path_basename(w0)) || is_shell_name(path_basename(resolved)) ||
		      is_shell_name(path_basename(cmd->program)))) {
		err_at(c, k->line, s->name, "command", "%s %s", resolved, shell_msg);
		return;
	}
	(void)follow_shebang(c, s, k->line, cmd->program, cmd, path_env, agent, 0);
}

static int
env_cmp(const void *a, const void *b)
{
	return strcmp(((const struct box_env_var *)a)->name, ((const struct box_env_var *)b)->name);
}

static void
env_default(struct box_env *env, const char *name, const char *value)
{
	if (!value)
		return;
	for (size_t i = 0; i < env->n; i++)
		if (strcmp(env->v[i].name, name) == 0)
			return;
	struct box_env_var *v = GROW(env->v, env->n);
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->value = xstrdup(value);
}

static bool egress_names_var(struct ctx *c, const char *name, const char **section);

static void
process_env(struct ctx *c, struct raw_section *s, struct box_env *env)
{
	if (s) {
		env->src = src_at(c, s->line);
		for (size_t i = 0; i < s->n; i++) {
			struct raw_key *k = &s->keys[i];
			const char *egress_sec;
			if (k->used)
				continue;
			struct raw_key *first = take_scalar(c, s, k->name);
			if (!first)
				continue;
			if (!valid_env_name(k->name)) {
				err_at(c, k->line, s->name, k->name,
				       "not a valid variable name; accepted: [A-Za-z_][A-Za-z0-9_]*");
				continue;
			}
			if (env_reserved(k->name)) {
				err_at(c, k->line, s->name, k->name,
				       "reserved: box sets it (proxy, CA, identity or loader variable)");
				continue;
			}
			if (egress_names_var(c, k->name, &egress_sec)) {
				err_at(c, k->line, s->name, k->name,
				       "reserved: [%s] binds it to a credential placeholder", egress_sec);
				continue;
			}
			if (strcmp(k->name, "HOME") == 0 && !path_is_clean_absolute(val(k))) {
				err_at(c, k->line, s->name, k->name,
				       "%s is not a clean absolute path", q(c, val(k)));
				continue;
			}
			struct box_env_var *v = GROW(env->v, env->n);
			v->name = xstrdup(k->name);
			v->value = xstrdup(val(k));
			v->set = true;
			v->src = src_at(c, k->line);
		}
	}
	env_default(env, "HOME", c->home);
	env_default(env, "PATH", DEFAULT_PATH);
	if (env->n)
		qsort(env->v, env->n, sizeof(env->v[0]), env_cmp);
}

static void
process_workspace(struct ctx *c, struct raw_section *s, struct box_str *dst)
{
	struct raw_key *k = take_scalar(c, s, "workspace");
	struct stat st;
	if (!k)
		return;
	char *abs = path_from_spelling(c, vline(k), s->name, "workspace", val(k), NULL);
	if (!abs)
		return;
	if (!c->opts.offline && (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode))) {
		err_at(c, vline(k), s->name, "workspace", "%s is not an existing directory",
		       q(c, val(k)));
		free(abs);
		return;
	}
	dst->value = abs;
	dst->src = src_at(c, vline(k));
}

static void
process_network(struct ctx *c, struct raw_section *s, struct box_process *p)
{
	p->contain_egress.value = true;
	if (!s)
		return;
	p->network_src = src_at(c, s->line);
	get_bool(c, s, "contain_egress", &p->contain_egress, true);
	report_unknown(c, s, net_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* sections                                                            */

static void
section_empty_check(struct ctx *c, struct raw_section *s)
{
	if (s && s->n == 0)
		err_at(c, s->line, s->name, NULL, "empty section; remove it or give it keys");
}

static void
process_owner(struct ctx *c)
{
	struct box_owner *o = &c->cfg->agent.user;
	struct raw_key *k = take_scalar(c, c->agent, "user");
	struct passwd *pw = getpwuid(c->caller);

	o->uid = c->caller;
	o->gid = pw ? pw->pw_gid : getgid();
	o->name = xstrdup(pw ? pw->pw_name : "?");
	o->home = pw && pw->pw_dir[0] == '/' ? xstrdup(pw->pw_dir) : NULL;
	c->caller_home = o->home ? xstrdup(o->home) : NULL;
	if (!pw)
		err_at(c, 0, NULL, NULL, "the calling uid %u has no passwd entry", (unsigned)c->caller);
	if (k) {
		const char *name = val(k);
		struct passwd *u = NULL;
		uint64_t uid;
		if (parse_u64(name, UINT32_MAX - 1, &uid) == 0)
			u = getpwuid((uid_t)uid);
		else
			u = getpwnam(name);
		if (!u) {
			err_at(c, vline(k), c->agent->name, "user", "%s: no such user", q(c, name));
		} else if (u->pw_uid != c->caller && c->caller != 0) {
			err_at(c, vline(k), c->agent->name, "user",
			       "%s: only root may name another user", q(c, name));
		} else if (u->pw_dir[0] != '/') {
			err_at(c, vline(k), c->agent->name, "user", "%s has no absolute home directory",
			       q(c, name));
		} else {
			o->uid = u->pw_uid;
			o->gid = u->pw_gid;
			free(o->name);
			free(o->home);
			o->name = xstrdup(u->pw_name);
			o->home = xstrdup(u->pw_dir);
			o->set = true;
			o->src = src_at(c, vline(k));
		}
	}
	c->home = o->home;
}

static void
process_box(struct ctx *c)
{
	struct raw_section *s = c->box;
	struct box_box *b = &c->cfg->box;
	static const char *const hs_names[] = { "always", "batch", "off", NULL };

	b->require.value = BOX_LAYER_ALL;
	if (!s) {
		err_at(c, 0, NULL, NULL, "no [box] section; it names the box (name = ...)");
		return;
	}
	b->src = src_at(c, s->line);
	struct raw_key *k = take_scalar(c, s, "name");
	if (!k)
		err_at(c, s->line, s->name, "name", "required key is missing");
	else if (!valid_name(val(k), BOX_NAME_MAX, NULL))
		err_at(c, vline(k), s->name, "name",
		       "%s is not a valid name; accepted: 1-32 characters of A-Za-z0-9_-", q(c, val(k)));
	else {
		b->name.value = xstrdup(val(k));
		b->name.src = src_at(c, vline(k));
	}

	k = take_scalar(c, s, "policy");
	if (k) {
		_cleanup_free_ char *dir = NULL;
		if (c->cfg->abs_path) {
			if (path_dirname(c->cfg->abs_path, &dir) < 0)
				fatalx("out of memory");
		} else
			dir = getcwd(NULL, 0);
		b->policy_written = xstrdup(val(k));
		_cleanup_free_ char *abs =
			path_from_spelling(c, vline(k), s->name, "policy", val(k), dir ? dir : "/");
		if (abs && c->opts.offline) {
			b->policy.path = TAKE_PTR(abs);
			b->policy.src = src_at(c, vline(k));
		} else if (abs) {
			_cleanup_free_ char *canon = NULL;
			const char *why = NULL;
			int r = path_canonicalize(abs, &canon);
			if (r < 0)
				err_at(c, vline(k), s->name, "policy", "%s: %s", abs, strerror(-r));
			else if (read_user_file(c, canon, BOX_POLICY_FILE_MAX, false, &b->policy.data,
						&b->policy.len, &why) < 0)
				err_at(c, vline(k), s->name, "policy", "%s %s", canon, why);
			else {
				b->policy.path = TAKE_PTR(canon);
				b->policy.src = src_at(c, vline(k));
			}
		}
	}

	k = take_scalar(c, s, "state_dir");
	if (k) {
		char *abs = path_from_spelling(c, vline(k), s->name, "state_dir", val(k), NULL);
		struct stat st;
		if (abs && !path_is_clean_absolute(abs)) {
			err_at(c, vline(k), s->name, "state_dir", "%s is not a clean absolute path",
			       q(c, val(k)));
			free(abs);
		} else if (abs && !c->opts.offline && lstat(abs, &st) == 0 && !S_ISDIR(st.st_mode)) {
			err_at(c, vline(k), s->name, "state_dir", "%s exists and is not a directory",
			       q(c, val(k)));
			free(abs);
		} else if (abs) {
			b->state_dir.value = abs;
			b->state_dir.src = src_at(c, vline(k));
		}
	} else if (b->name.value) {
		const char *xdg = getenv("XDG_STATE_HOME");
		if (c->cfg->service)
			b->state_dir.value = xasprintf("/var/lib/box/%u/%s", (unsigned)c->caller,
						       b->name.value);
		else if (xdg && xdg[0] == '/' && c->cfg->agent.user.uid == c->caller)
			b->state_dir.value = xasprintf("%s/box/%s", xdg, b->name.value);
		else if (c->home)
			b->state_dir.value =
				xasprintf("%s/.local/state/box/%s", c->home, b->name.value);
	}

	k = take_scalar(c, s, "require");
	if (k) {
		static const char *const layers[] = { "userns", "mountns", "netns", "landlock",
						      "seccomp", NULL };
		char **words = NULL;
		size_t nw = 0;
		const char *e;
		unsigned mask = 0;
		bool bad = false;
		(void)cmdline_split(val(k), &words, &nw, &e);
		for (size_t i = 0; i < nw; i++) {
			int bit = -1;
			for (int j = 0; layers[j]; j++)
				if (strcmp(layers[j], words[i]) == 0)
					bit = j;
			if (bit < 0) {
				err_at(c, vline(k), s->name, "require",
				       "%s is not a layer; accepted: userns mountns netns landlock seccomp",
				       q(c, words[i]));
				bad = true;
			} else if (mask & (1U << bit)) {
				err_at(c, vline(k), s->name, "require", "%s is listed twice", words[i]);
				bad = true;
			}
			if (bit >= 0)
				mask |= 1U << bit;
		}
		cmdline_free(words);
		for (int j = 0; j < 3; j++)
			if (!(mask & (1U << j))) {
				err_at(c, vline(k), s->name, "require",
				       "must contain %s; box never runs without it", layers[j]);
				bad = true;
			}
		if (!bad) {
			b->require.value = mask;
			b->require.set = true;
			b->require.src = src_at(c, vline(k));
		}
	}
	get_num(c, s, "timeout", NUM_DURATION, UINT32_MAX * 1000ULL, &b->timeout_ms, 0);
	get_num(c, s, "command_timeout", NUM_DURATION, UINT32_MAX * 1000ULL, &b->command_timeout_ms,
		0);
	/* history_sync: AUTO (index 0) is the unset state, not a value to write. */
	if (get_enum(c, s, "history_sync", hs_names, &b->history_sync, -1))
		b->history_sync.value++;
	else
		b->history_sync.value = BOX_HISTORY_SYNC_AUTO;
	report_unknown(c, s, box_keys, NULL);
}

static bool
parse_ip_port(const char *s, bool need_port, uint16_t *port)
{
	char host[64];
	const char *colon;
	unsigned char buf[16];

	if (s[0] == '[') {
		const char *e = strchr(s, ']');
		if (!e || (size_t)(e - s - 1) >= sizeof(host))
			return false;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = '\0';
		if (inet_pton(AF_INET6, host, buf) != 1)
			return false;
		colon = e + 1;
	} else {
		colon = strchr(s, ':');
		size_t n = colon ? (size_t)(colon - s) : strlen(s);
		if (n >= sizeof(host))
			return false;
		memcpy(host, s, n);
		host[n] = '\0';
		if (inet_pton(AF_INET, host, buf) != 1)
			return false;
	}
	if (!colon || !*colon)
		return !need_port;
	if (*colon != ':')
		return false;
	return parse_port(colon + 1, port) == 0;
}

static void
get_aux_file(struct ctx *c, struct raw_section *s, const char *key, struct box_file *dst)
{
	struct raw_key *k = take_scalar(c, s, key);
	const char *why;
	if (!k)
		return;
	_cleanup_free_ char *abs = path_from_spelling(c, vline(k), s->name, key, val(k), NULL);
	if (!abs)
		return;
	if (c->opts.offline) {
		dst->path = TAKE_PTR(abs);
		dst->src = src_at(c, vline(k));
		return;
	}
	_cleanup_free_ char *canon = NULL;
	int r = path_canonicalize(abs, &canon);
	if (r < 0) {
		err_at(c, vline(k), s->name, key, "%s: %s", q(c, val(k)), strerror(-r));
		return;
	}
	if (read_user_file(c, canon, BOX_AUX_FILE_MAX, false, &dst->data, &dst->len, &why) < 0) {
		err_at(c, vline(k), s->name, key, "%s %s", q(c, val(k)), why);
		return;
	}
	dst->path = TAKE_PTR(canon);
	dst->src = src_at(c, vline(k));
}

static void
process_gateway(struct ctx *c)
{
	struct raw_section *s = c->gateway;
	struct box_gateway *g = &c->cfg->gateway;

	g->port.value = 3128;
	g->connect_timeout_ms.value = 10 * 1000;
	g->idle_timeout_ms.value = 300 * 1000;
	g->max_connections.value = 1024;
	g->max_request_body.value = 64ULL << 20;
	if (!s)
		return;
	g->src = src_at(c, s->line);
	get_num(c, s, "port", NUM_PORT, 65535, &g->port, 3128);
	get_num(c, s, "connect_timeout", NUM_DURATION, 3600 * 1000ULL, &g->connect_timeout_ms,
		10 * 1000);
	get_num(c, s, "idle_timeout", NUM_DURATION, 24 * 3600 * 1000ULL, &g->idle_timeout_ms,
		300 * 1000);
	get_num(c, s, "max_connections", NUM_COUNT, 1 << 20, &g->max_connections, 1024);
	get_num(c, s, "max_request_body", NUM_SIZE, 1ULL << 40, &g->max_request_body, 64ULL << 20);
	get_aux_file(c, s, "upstream_ca", &g->upstream_ca);
	if (g->upstream_ca.data && !strstr(g->upstream_ca.data, "-----BEGIN CERTIFICATE-----"))
		err_at(c, g->upstream_ca.src.line, s->name, "upstream_ca",
		       "%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
		       g->upstream_ca.path);
	get_aux_file(c, s, "hosts_file", &g->hosts_file);
	struct raw_key *k = take_scalar(c, s, "resolver");
	uint16_t port;
	if (k && !parse_ip_port(val(k), true, &port))
		err_at(c, vline(k), s->name, "resolver",
		       "%s is not accepted; accepted: IPv4:PORT or [IPv6]:PORT", q(c, val(k)));
	else if (k) {
		g->resolver.value = xstrdup(val(k));
		g->resolver.src = src_at(c, vline(k));
	}
	get_bool(c, s, "allow_host_loopback", &g->allow_host_loopback, false);
	report_unknown(c, s, gateway_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* credentials                                                         */

static bool
valid_hostname(const char *h)
{
	size_t n = strlen(h), label = 0;
	unsigned char buf[4];
	if (n == 0 || n > 253)
		return false;
	if (inet_pton(AF_INET, h, buf) == 1)
		return true;
	for (const char *p = h;; p++) {
		if (*p == '.' || *p == '\0') {
			if (label == 0 || label > 63 || p[-1] == '-' || p[-(ptrdiff_t)label] == '-')
				return false;
			label = 0;
			if (!*p)
				break;
			continue;
		}
		if (!isalnum((unsigned char)*p) && *p != '-')
			return false;
		label++;
	}
	return true;
}

/*
 * host[:port][/path] or *.domain[:port][/path]. `url`: the rest of an
 * https:// URL, whose path may be "/" or end with "/" (no wildcard).
 * Returns NULL (ok) or a message.
 */
static const char *
parse_destination(const char *s, bool url, struct box_destination *d)
{
	bool allow_wildcard = !url;
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	_cleanup_free_ char *hp = xstrndup(s, hl);
	char *colon = strrchr(hp, ':');
	uint16_t port = 443;

	memset(d, 0, sizeof(*d));
	if (colon) {
		if (parse_port(colon + 1, &port) < 0)
			return "has a port outside 1-65535";
		*colon = '\0';
	}
	char *host = hp;
	if (strncmp(host, "*.", 2) == 0) {
		if (!allow_wildcard)
			return "may not be a wildcard";
		d->wildcard = true;
		host += 2;
		if (!strchr(host, '.'))
			return "is too broad: *.domain needs a domain with a dot (e.g. *.example.com)";
	}
	if (strchr(host, '*'))
		return "has a * that is not a leading *. label";
	if (!valid_hostname(host))
		return "is not a host name (letters, digits, - and . labels) or an IPv4 address";
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (slash) {
		size_t pl = strlen(slash);
		if (!url && (pl == 1 || slash[pl - 1] == '/'))
			return "has a path that ends with /; write the prefix without it";
		for (const char *p = slash; *p; p++)
			if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || strchr("?#\"<>\\^`{|}", *p))
				return "has a path with a character outside a URL path";
		if (strstr(slash, "//"))
			return "has an empty path segment";
		for (const char *p = slash; (p = strstr(p, "/.")); p++)
			if (p[2] == '\0' || p[2] == '/' || (p[2] == '.' && (p[3] == '\0' || p[3] == '/')))
				return "has a . or .. path segment";
		while (pl > 1 && slash[pl - 1] == '/')
			pl--;
		if (pl > 1)
			d->path_prefix = xstrndup(slash, pl);
	}
	d->host = xstrdup(host);
	d->port = port;
	d->spelling = xstrdup(s);
	return NULL;
}

static bool
path_prefix_overlap(const char *a, const char *b)
{
	if (!a || !b)
		return true;
	return path_is_under(a, b) || path_is_under(b, a);
}

static bool
host_overlap(const struct box_destination *a, const struct box_destination *b)
{
	if (!a->wildcard && !b->wildcard)
		return strcmp(a->host, b->host) == 0;
	if (a->wildcard && b->wildcard) {
		size_t la = strlen(a->host), lb = strlen(b->host);
		const struct box_destination *lo = la >= lb ? a : b, *hi = la >= lb ? b : a;
		size_t ll = strlen(lo->host), lh = strlen(hi->host);
		return strcmp(lo->host, hi->host) == 0 ||
		       (ll > lh && lo->host[ll - lh - 1] == '.' && strcmp(lo->host + ll - lh, hi->host) == 0);
	}
	const struct box_destination *w = a->wildcard ? a : b, *h = a->wildcard ? b : a;
	size_t lw = strlen(w->host), lh = strlen(h->host);
	return lh > lw && h->host[lh - lw - 1] == '.' && strcmp(h->host + lh - lw, w->host) == 0;
}

static bool
dest_overlap(const struct box_destination *a, const struct box_destination *b)
{
	return a->port == b->port && host_overlap(a, b) &&
	       path_prefix_overlap(a->path_prefix, b->path_prefix);
}

static void
get_secret(struct ctx *c, struct raw_section *s, struct box_secret *sec, bool required)
{
	struct raw_key *k = take_scalar(c, s, "secret");
	if (!k) {
		if (required)
			err_at(c, s->line, s->name, "secret", "required key is missing");
		return;
	}
	const char *v = val(k);
	unsigned line = vline(k);
	if (strncmp(v, "env://", 6) == 0) {
		if (!valid_env_name(v + 6)) {
			err_at(c, line, s->name, "secret",
			       "%s: env://NAME needs a variable name [A-Za-z_][A-Za-z0-9_]*", q(c, v));
			return;
		}
		sec->kind = BOX_SECRET_ENV;
		if (!c->opts.offline) {
			const char *e = getenv(v + 6);
			if (!e || !*e) {
				err_at(c, line, s->name, "secret",
				       "%s is unset or empty in boxctl's environment", v);
				sec->kind = BOX_SECRET_NONE;
				return;
			}
			sec->value = xstrdup(e);
			sec->len = strlen(e);
		}
	} else if (strncmp(v, "file://", 7) == 0) {
		const char *p = v + 7;
		if (p[0] != '/') {
			err_at(c, line, s->name, "secret",
			       "%s: file:// needs an absolute path (file:///path)", q(c, v));
			return;
		}
		_cleanup_free_ char *abs = path_from_spelling(c, line, s->name, "secret", p, NULL);
		if (!abs)
			return;
		sec->kind = BOX_SECRET_FILE;
		if (!c->opts.offline) {
			const char *why;
			if (path_canonicalize(abs, &sec->path) < 0) {
				err_at(c, line, s->name, "secret", "%s cannot be opened: %s", abs,
				       strerror(errno));
				sec->kind = BOX_SECRET_NONE;
				return;
			}
			if (read_user_file(c, abs, BOX_SECRET_FILE_MAX, true, &sec->value, &sec->len,
					   &why) < 0) {
				err_at(c, line, s->name, "secret", "%s %s", abs, why);
				sec->kind = BOX_SECRET_NONE;
				return;
			}
			/* One trailing newline is the file's, not the secret's. */
			if (sec->len && sec->value[sec->len - 1] == '\n')
				sec->value[--sec->len] = '\0';
			if (sec->len && sec->value[sec->len - 1] == '\r')
				sec->value[--sec->len] = '\0';
			if (sec->len == 0) {
				err_at(c, line, s->name, "secret", "%s is empty", abs);
				sec->kind = BOX_SECRET_NONE;
				return;
			}
		}
	} else {
		err_at(c, line, s->name, "secret",
		       "%s is not accepted; accepted: env://NAME or file:///absolute/path", q(c, v));
		return;
	}
	for (size_t i = 0; i < sec->len; i++)
		if ((unsigned char)sec->value[i] < 0x20 || sec->value[i] == 0x7f) {
			err_at(c, line, s->name, "secret",
			       "%s holds a control character (value not shown)", v);
			sec->kind = BOX_SECRET_NONE;
			return;
		}
	sec->ref = xstrdup(v);
	sec->src = src_at(c, line);
}

static bool
valid_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

/* prefix may be written in double quotes to keep blanks: prefix = "Token " */
static bool
unquote_prefix(const char *v, char **ret)
{
	size_t n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		*ret = xstrndup(v + 1, n - 2);
	else
		*ret = xstrdup(v);
	for (const char *p = *ret; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"') {
			free(*ret);
			*ret = NULL;
			return false;
		}
	return true;
}

static const char *const placement_names[] = { "header", "basic_auth", "query_param", NULL };

/* placement, header, prefix: shared by [egress] and http [mcp]. */
static void
get_placement(struct ctx *c, struct raw_section *s, const struct box_secret *sec,
	      struct box_enum *placement, struct box_str *header, struct box_str *prefix,
	      bool allow_query)
{
	static const char *const mcp_placements[] = { "header", "basic_auth", NULL };
	get_enum(c, s, "placement", allow_query ? placement_names : mcp_placements, placement,
		 BOX_PLACEMENT_HEADER);
	struct raw_key *hk = take_scalar(c, s, "header");
	struct raw_key *pk = take_scalar(c, s, "prefix");
	if (placement->set && sec->kind == BOX_SECRET_NONE && !sec->ref && !allow_query)
		err_at(c, placement->src.line, s->name, "placement", "applies only with a secret");
	if (placement->value != BOX_PLACEMENT_HEADER) {
		if (hk)
			err_at(c, hk->line, s->name, "header", "applies only to placement = header");
		if (pk)
			err_at(c, pk->line, s->name, "prefix", "applies only to placement = header");
		if (placement->value == BOX_PLACEMENT_BASIC_AUTH && sec->value &&
		    !memchr(sec->value, ':', sec->len))
			err_at(c, sec->src.line, s->name, "secret",
			       "%s holds no ':'; placement = basic_auth needs user:password (value not shown)",
			       sec->ref);
		return;
	}
	if (hk && !valid_token(val(hk)))
		err_at(c, vline(hk), s->name, "header", "%s is not an HTTP header name", q(c, val(hk)));
	else if (hk) {
		header->value = xstrdup(val(hk));
		header->src = src_at(c, vline(hk));
	}
	if (!header->value && (hk || sec->kind != BOX_SECRET_NONE || sec->ref))
		header->value = xstrdup("Authorization");
	if (pk) {
		if (!unquote_prefix(val(pk), &prefix->value))
			err_at(c, vline(pk), s->name, "prefix",
			       "%s holds a control character or a quote", q(c, val(pk)));
		else
			prefix->src = src_at(c, vline(pk));
	} else if (header->value)
		prefix->value = xstrdup(strcasecmp(header->value, "Authorization") == 0 ? "Bearer " : "");
}

static void
process_egress(struct ctx *c, struct group *gr, struct box_egress *e)
{
	struct raw_section *s = gr->main;
	static const char *const inject_names[] = { "placeholder", "always", NULL };

	e->name = xstrdup(gr->name);
	e->src = src_at(c, s->line);
	if (!take_list(s, "destinations"))
		err_at(c, s->line, s->name, "destinations", "required key is missing");
	for_each_value(s, "destinations", k, v) {
		struct box_destination d;
		const char *why = parse_destination(v->text, false, &d);
		if (why) {
			err_at(c, v->line, s->name, "destinations", "%s %s", q(c, v->text), why);
			continue;
		}
		d.src = src_at(c, v->line);
		*GROW(e->dest, e->n_dest) = d;
	}
	get_secret(c, s, &e->secret, true);

	struct raw_key *k = take_scalar(c, s, "variable");
	if (k) {
		if (!valid_env_name(val(k)))
			err_at(c, vline(k), s->name, "variable",
			       "%s is not a valid variable name; accepted: [A-Za-z_][A-Za-z0-9_]*",
			       q(c, val(k)));
		else if (env_reserved(val(k)) || strcmp(val(k), "HOME") == 0 ||
			 strcmp(val(k), "PATH") == 0)
			err_at(c, vline(k), s->name, "variable", "%s is reserved: box sets it",
			       q(c, val(k)));
		else {
			e->variable.value = xstrdup(val(k));
			e->variable.src = src_at(c, vline(k));
		}
	} else if (e->secret.ref && e->secret.kind == BOX_SECRET_ENV) {
		const char *name = e->secret.ref + 6;
		if (env_reserved(name) || strcmp(name, "HOME") == 0 || strcmp(name, "PATH") == 0)
			err_at(c, e->secret.src.line, s->name, "secret",
			       "%s would bind the reserved variable %s; set variable", e->secret.ref,
			       name);
		else
			e->variable.value = xstrdup(name);
	} else if (e->secret.kind == BOX_SECRET_FILE || (e->secret.ref && !e->variable.value)) {
		err_at(c, s->line, s->name, "variable", "required with a file:// secret");
	}
	get_placement(c, s, &e->secret, &e->placement, &e->header, &e->prefix, true);
	k = take_scalar(c, s, "param");
	if (e->placement.value == BOX_PLACEMENT_QUERY_PARAM) {
		if (!k)
			err_at(c, e->placement.src.line, s->name, "param",
			       "required with placement = query_param");
		else if (!valid_name(val(k), 64, ".~"))
			err_at(c, vline(k), s->name, "param",
			       "%s is not accepted; accepted: 1-64 characters of A-Za-z0-9._~-",
			       q(c, val(k)));
		else {
			e->param.value = xstrdup(val(k));
			e->param.src = src_at(c, vline(k));
		}
	} else if (k)
		err_at(c, vline(k), s->name, "param", "applies only to placement = query_param");
	get_enum(c, s, "inject", inject_names, &e->inject, BOX_INJECT_PLACEHOLDER);
	k = take_scalar(c, s, "placeholder_prefix");
	if (k && !valid_name(val(k), 32, "."))
		err_at(c, vline(k), s->name, "placeholder_prefix",
		       "%s is not accepted; accepted: 1-32 characters of A-Za-z0-9._-", q(c, val(k)));
	else if (k) {
		e->placeholder_prefix.value = xstrdup(val(k));
		e->placeholder_prefix.src = src_at(c, vline(k));
	} else
		e->placeholder_prefix.value = xstrdup("box_");
	report_unknown(c, s, egress_keys, NULL);
}

static bool
egress_names_var(struct ctx *c, const char *name, const char **section)
{
	for (size_t i = 0; i < c->cfg->n_egress; i++)
		if (c->cfg->egress[i].variable.value &&
		    strcmp(c->cfg->egress[i].variable.value, name) == 0) {
			*section = c->egress[i].main->name;
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ */
/* processes                                                           */

static void
process_agent(struct ctx *c)
{
	struct box_agent *a = &c->cfg->agent;
	struct raw_section *s = c->agent;

	process_env(c, c->agent_env, &a->proc.env);
	section_empty_check(c, c->agent_env);
	if (!s) {
		err_at(c, 0, NULL, NULL, "no [agent] section; it names the agent's command");
		process_fs(c, c->agent_fs, &a->proc.fs, true);
		return;
	}
	a->src = src_at(c, s->line);
	process_command(c, s, &a->proc, true);
	process_workspace(c, s, &a->proc.workspace);
	if (!a->proc.workspace.value && !c->opts.offline) {
		a->proc.workspace.value = getcwd(NULL, 0);
		if (!a->proc.workspace.value)
			err_at(c, s->line, s->name, "workspace",
			       "unset, and the current directory cannot be resolved: %s", strerror(errno));
	}
	get_num(c, s, "memory_max", NUM_SIZE, 1ULL << 50, &a->memory_max, 0);
	get_num(c, s, "pids_max", NUM_COUNT, 1 << 22, &a->pids_max, 0);
	get_num(c, s, "nofile", NUM_COUNT, 1 << 30, &a->proc.nofile, 0);
	get_num(c, s, "nproc", NUM_COUNT, 1 << 22, &a->proc.nproc, 0);
	take_scalar(c, s, "user"); /* handled in process_owner */
	report_unknown(c, s, agent_keys, NULL);
	process_fs(c, c->agent_fs, &a->proc.fs, true);
	section_empty_check(c, c->agent_fs);
}

static void
process_tool(struct ctx *c, struct group *gr, struct box_tool *t)
{
	static const char *const sup_names[] = { "none", "fs", NULL };
	struct raw_section *s = gr->main;

	t->name = xstrdup(gr->name);
	t->src = src_at(c, s->line);
	process_env(c, gr->env, &t->proc.env);
	section_empty_check(c, gr->env);
	process_command(c, s, &t->proc, false);
	process_workspace(c, s, &t->proc.workspace);
	get_num(c, s, "nofile", NUM_COUNT, 1 << 30, &t->proc.nofile, 0);
	get_num(c, s, "nproc", NUM_COUNT, 1 << 22, &t->proc.nproc, 0);
	get_enum(c, s, "supervise", sup_names, &t->supervise, BOX_SUPERVISE_NONE);
	report_unknown(c, s, tool_keys, NULL);
	process_fs(c, gr->fs, &t->proc.fs, false);
	section_empty_check(c, gr->fs);
	process_network(c, gr->net, &t->proc);
	section_empty_check(c, gr->net);
}

static const char *const cedar_reserved[] = { "true", "false", "if", "then", "else", "in",
					      "is", "like", "has", NULL };

static void
process_mcp(struct ctx *c, struct group *gr, struct box_mcp *m)
{
	static const char *const type_names[] = { "stdio", "http", NULL };
	struct raw_section *s = gr->main;

	m->name = xstrdup(gr->name);
	m->src = src_at(c, s->line);
	m->ns = xstrdup(gr->name);
	for (char *p = m->ns; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	if (strcmp(m->ns, "Box") == 0)
		err_at(c, s->line, s->name, NULL, "the name Box is reserved for box's own actions");
	else if (isdigit((unsigned char)m->ns[0]))
		err_at(c, s->line, s->name, NULL,
		       "the name starts with a digit, which a policy namespace may not");
	else if (in_list(cedar_reserved, m->ns) || strncmp(m->ns, "__cedar", 7) == 0)
		err_at(c, s->line, s->name, NULL, "the name %s is a Cedar keyword", m->ns);

	bool written = false;
	for (size_t i = 0; i < s->n; i++)
		written |= strcmp(s->keys[i].name, "type") == 0;
	bool have_type = get_enum(c, s, "type", type_names, &m->type, BOX_MCP_STDIO);
	if (!written)
		err_at(c, s->line, s->name, "type", "required key is missing; accepted: stdio, http");
	get_bool(c, s, "allow_tool_changes", &m->allow_tool_changes, false);
	get_num(c, s, "max_frame", NUM_SIZE, 64ULL << 20, &m->max_frame, 4ULL << 20);
	m->proc.contain_egress.value = true;
	if (!have_type) {
		/* Unknown type: take every key quietly, the type error says it all. */
		for (size_t i = 0; i < s->n; i++)
			if (in_list(mcp_keys, s->keys[i].name))
				s->keys[i].used = true;
		report_unknown(c, s, mcp_keys, NULL);
		return;
	}
	if (m->type.value == BOX_MCP_STDIO) {
		static const char *const http_only[] = { "url", "secret", "placement", "header",
							 "prefix", NULL };
		static const char *const reserved_alias[] = { "sh", "bash", "zsh", "dash", "python",
							      "python3", NULL };
		process_env(c, gr->env, &m->proc.env);
		section_empty_check(c, gr->env);
		process_command(c, s, &m->proc, false);
		struct raw_key *k = take_scalar(c, s, "alias");
		const char *alias = k ? val(k) :
					m->proc.command.argc ? path_basename(m->proc.command.argv[0]) :
							       NULL;
		if (alias && (!valid_name(alias, 32, ".") || strcmp(alias, ".") == 0 ||
			      strcmp(alias, "..") == 0))
			err_at(c, k ? vline(k) : m->proc.command.src.line, s->name,
			       k ? "alias" : "command",
			       "alias %s is not accepted; accepted: 1-32 characters of A-Za-z0-9._- (not . or ..)%s",
			       q(c, alias), k ? "" : "; set alias");
		else if (alias && in_list(reserved_alias, alias))
			err_at(c, k ? vline(k) : m->proc.command.src.line, s->name,
			       k ? "alias" : "command",
			       "alias %s would replace box's own %s alias; %s", alias, alias,
			       k ? "choose another" : "set alias");
		else if (alias) {
			m->alias.value = xstrdup(alias);
			m->alias.src = src_at(c, k ? vline(k) : 0);
		}
		for (size_t i = 0; i < s->n; i++)
			if (!s->keys[i].used && in_list(http_only, s->keys[i].name)) {
				s->keys[i].used = true;
				err_at(c, s->keys[i].line, s->name, s->keys[i].name,
				       "applies only to type = http");
			}
		report_unknown(c, s, mcp_keys, NULL);
		process_fs(c, gr->fs, &m->proc.fs, false);
		section_empty_check(c, gr->fs);
		process_network(c, gr->net, &m->proc);
		section_empty_check(c, gr->net);
		return;
	}
	/* http */
	static const char *const stdio_only[] = { "command", "alias", NULL };
	struct raw_section *subs[] = { gr->env, gr->fs, gr->net };
	for (size_t i = 0; i < ELEMENTSOF(subs); i++)
		if (subs[i])
			err_at(c, subs[i]->line, subs[i]->name, NULL, "applies only to type = stdio");
	struct raw_key *k = take_scalar(c, s, "url");
	if (!k)
		err_at(c, s->line, s->name, "url", "required key is missing for type = http");
	else if (strncmp(val(k), "https://", 8) != 0)
		err_at(c, vline(k), s->name, "url",
		       "%s is not accepted; accepted: https://host[:port]/path", q(c, val(k)));
	else {
		const char *why = parse_destination(val(k) + 8, true, &m->url_dest);
		if (why)
			err_at(c, vline(k), s->name, "url", "%s %s", q(c, val(k)), why);
		else {
			m->url.value = xstrdup(val(k));
			m->url.src = src_at(c, vline(k));
			m->url_dest.src = m->url.src;
		}
	}
	get_secret(c, s, &m->secret, false);
	get_placement(c, s, &m->secret, &m->placement, &m->header, &m->prefix, false);
	for (size_t i = 0; i < s->n; i++)
		if (!s->keys[i].used && in_list(stdio_only, s->keys[i].name)) {
			s->keys[i].used = true;
			err_at(c, s->keys[i].line, s->name, s->keys[i].name,
			       "applies only to type = stdio");
		}
	report_unknown(c, s, mcp_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* cross-section checks                                                */

struct masked_file {
	const char *path;
	const char *what;
};

static void
fs_cross_check(struct ctx *c, const char *secname, struct box_filesystem *fs,
	       const struct masked_file *files, size_t n_files)
{
	for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++) {
		struct box_grant_list *l = &fs->lists[kind];
		const char *key = fs_names[kind];
		for (size_t j = 0; j < l->n; j++) {
			struct box_grant *g = &l->v[j];
			bool bad = false;
			for (size_t i = 0; i < j && !bad; i++) {
				struct box_grant *o = &l->v[i];
				if (strcmp(o->path, g->path) == 0) {
					err_at(c, g->src.line, secname, key,
					       "%s is a duplicate entry (first at line %u)",
					       q(c, g->spelling), o->src.line);
					bad = true;
				} else if (path_is_under(g->path, o->path) ||
					   path_is_under(o->path, g->path)) {
					bool inner = path_is_under(g->path, o->path);
					err_at(c, g->src.line, secname, key,
					       "%s lies %s %s (line %u); one list may not hold an entry and something inside it",
					       q(c, g->spelling), inner ? "inside" : "around",
					       q(c, o->spelling), o->src.line);
					bad = true;
				}
			}
			if (bad || kind == BOX_FS_DENY)
				continue;
			struct box_grant_list *d = &fs->lists[BOX_FS_DENY];
			for (size_t i = 0; i < d->n && !bad; i++)
				if (path_is_under(g->path, d->v[i].path)) {
					err_at(c, g->src.line, secname, key,
					       "%s lies inside the deny entry %s (line %u)",
					       q(c, g->spelling), q(c, d->v[i].spelling),
					       d->v[i].src.line);
					bad = true;
				}
			for (size_t i = 0; i < n_files && !bad; i++) {
				if (strcmp(g->path, files[i].path) == 0) {
					err_at(c, g->src.line, secname, key,
					       "%s is %s, which is masked in every sandbox view",
					       q(c, g->spelling), files[i].what);
					bad = true;
					continue;
				}
				if (kind != BOX_FS_WRITE || !path_is_under(files[i].path, g->path))
					continue;
				_cleanup_free_ char *dir = NULL;
				if (path_dirname(files[i].path, &dir) < 0)
					fatalx("out of memory");
				if (strcmp(dir, g->path) != 0) {
					err_at(c, g->src.line, secname, key,
					       "%s (%s) lies in a subdirectory of this write grant %s; the box could rename that directory and plant a new file for the next run",
					       files[i].path, files[i].what, q(c, g->spelling));
					bad = true;
				}
			}
		}
	}
}

static void
egress_cross_check(struct ctx *c)
{
	struct box_config *cfg = c->cfg;
	struct dref {
		const struct box_destination *d;
		const char *section;
	} *all = NULL;
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_egress; i++)
		for (size_t j = 0; j < cfg->egress[i].n_dest; j++)
			*GROW(all, n) = (struct dref){ &cfg->egress[i].dest[j], c->egress[i].main->name };
	for (size_t i = 0; i < cfg->n_mcp; i++)
		if (cfg->mcp[i].secret.ref && cfg->mcp[i].url_dest.host)
			*GROW(all, n) = (struct dref){ &cfg->mcp[i].url_dest, c->mcp[i].main->name };
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < j; i++) {
			const struct box_destination *a = all[i].d, *b = all[j].d;
			if (!dest_overlap(a, b))
				continue;
			bool same = strcmp(all[i].section, all[j].section) == 0;
			const char *key = strncmp(all[j].section, "mcp.", 4) == 0 ? "url" : "destinations";
			if (same && a->wildcard == b->wildcard && strcmp(a->host, b->host) == 0 &&
			    !a->path_prefix == !b->path_prefix &&
			    (!a->path_prefix || strcmp(a->path_prefix, b->path_prefix) == 0))
				err_at(c, b->src.line, all[j].section, key,
				       "%s is a duplicate entry (first at line %u)", q(c, b->spelling),
				       a->src.line);
			else
				err_at(c, b->src.line, all[j].section, key,
				       "%s overlaps %s of [%s] (line %u); one destination has one credential",
				       q(c, b->spelling), q(c, a->spelling), all[i].section, a->src.line);
			break;
		}
	free(all);

	for (size_t j = 0; j < cfg->n_egress; j++)
		for (size_t i = 0; i < j; i++) {
			const char *a = cfg->egress[i].variable.value, *b = cfg->egress[j].variable.value;
			if (a && b && strcmp(a, b) == 0) {
				unsigned line = cfg->egress[j].variable.src.line ?
							cfg->egress[j].variable.src.line :
							cfg->egress[j].secret.src.line;
				err_at(c, line, c->egress[j].main->name, "variable",
				       "%s is also the variable of [%s]; each binding needs its own", b,
				       c->egress[i].main->name);
				break;
			}
		}
}

static void
mcp_cross_check(struct ctx *c)
{
	struct box_config *cfg = c->cfg;
	for (size_t j = 0; j < cfg->n_mcp; j++)
		for (size_t i = 0; i < j; i++) {
			struct box_mcp *a = &cfg->mcp[i], *b = &cfg->mcp[j];
			if (strcmp(a->ns, b->ns) == 0)
				err_at(c, b->src.line, c->mcp[j].main->name, NULL,
				       "[%s] and [%s] share the policy namespace %s; rename one",
				       c->mcp[i].main->name, c->mcp[j].main->name, a->ns);
			if (a->alias.value && b->alias.value && strcmp(a->alias.value, b->alias.value) == 0)
				err_at(c, b->alias.src.line ? b->alias.src.line : b->src.line,
				       c->mcp[j].main->name, "alias",
				       "[%s] and [%s] both use the alias %s; set alias on one",
				       c->mcp[i].main->name, c->mcp[j].main->name, a->alias.value);
		}
}

static void
landlock_check(struct ctx *c, struct box_process *p, const char *secname)
{
	if (p->contain_egress.value || !(c->cfg->box.require.value & BOX_LAYER_LANDLOCK))
		return;
	if (c->landlock_abi >= 6)
		return;
	err_at(c, p->contain_egress.src.line, secname, "contain_egress",
	       "false needs Landlock ABI 6 (this kernel: %d), or [box] require without landlock",
	       c->landlock_abi);
}

static void
limits_check(struct ctx *c)
{
	struct box_agent *a = &c->cfg->agent;
	struct box_host_cgroups cg;
	bool boxd_root = geteuid() == 0 || c->cfg->service;

	if (!a->memory_max.set && !a->pids_max.set)
		return;
	if (box_host_cgroups_probe(c->opts.mountinfo, c->opts.cgroup_root_prefix, &cg) < 0)
		memset(&cg, 0, sizeof(cg));
	if (a->memory_max.set && !cg.v2_memory && !(cg.v1_memory && boxd_root))
		err_at(c, a->memory_max.src.line, c->agent->name, "memory_max",
		       "this host offers no mechanism for it: no cgroup v2 memory controller%s",
		       cg.v1_memory ? ", and the v1 memory hierarchy needs a root boxd" :
				      " and no v1 memory hierarchy");
	if (a->pids_max.set && !cg.v2_pids && !(cg.v1_pids && boxd_root) && a->user.uid == 0)
		err_at(c, a->pids_max.src.line, c->agent->name, "pids_max",
		       "this host offers no mechanism for it: no cgroup pids controller a %s boxd can use, and RLIMIT_NPROC does not bind root",
		       boxd_root ? "root" : "user's");
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
	"[mcp.NAME.env] [mcp.NAME.filesystem] [mcp.NAME.network] [gateway]";

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

	process_agent(c);
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
	if (cfg->abs_path)
		*GROW(files, n_files) = (struct masked_file){ cfg->abs_path, "box.ini" };
	if (cfg->box.policy.path)
		*GROW(files, n_files) = (struct masked_file){ cfg->box.policy.path, "the policy file" };
	for (size_t i = 0; i < cfg->n_egress; i++)
		if (cfg->egress[i].secret.path && cfg->egress[i].secret.ref)
			*GROW(files, n_files) = (struct masked_file){
				cfg->egress[i].secret.path,
				keep(c, xasprintf("the secret of [%s]", c->egress[i].main->name))
			};
	for (size_t i = 0; i < cfg->n_mcp; i++)
		if (cfg->mcp[i].secret.path && cfg->mcp[i].secret.ref)
			*GROW(files, n_files) = (struct masked_file){
				cfg->mcp[i].secret.path,
				keep(c, xasprintf("the secret of [%s]", c->mcp[i].main->name))
			};

	if (c->agent_fs)
		fs_cross_check(c, c->agent_fs->name, &cfg->agent.proc.fs, files, n_files);
	for (size_t i = 0; i < cfg->n_tools; i++) {
		if (c->tools[i].fs)
			fs_cross_check(c, c->tools[i].fs->name, &cfg->tools[i].proc.fs, files, n_files);
		landlock_check(c, &cfg->tools[i].proc,
			       c->tools[i].net ? c->tools[i].net->name : c->tools[i].main->name);
	}
	for (size_t i = 0; i < cfg->n_mcp; i++) {
		if (c->mcp[i].fs)
			fs_cross_check(c, c->mcp[i].fs->name, &cfg->mcp[i].proc.fs, files, n_files);
		if (cfg->mcp[i].type.value == BOX_MCP_STDIO)
			landlock_check(c, &cfg->mcp[i].proc,
				       c->mcp[i].net ? c->mcp[i].net->name : c->mcp[i].main->name);
	}
	free(files);
	egress_cross_check(c);
	mcp_cross_check(c);
	if (!c->opts.offline)
		limits_check(c);
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
	struct group *gs[] = { c->tools, c->egress, c->mcp };
	size_t ns[] = { c->n_tools, c->n_egress, c->n_mcp };
	for (size_t g = 0; g < 3; g++) {
		for (size_t i = 0; i < ns[g]; i++)
			free(gs[g][i].name);
		free(gs[g]);
	}
	for (size_t i = 0; i < c->n_tmp; i++)
		free(c->tmp[i]);
	free(c->tmp);
	free(c->caller_home);
}

static int
load(struct ctx *c, const char *data, size_t len, struct box_config **ret)
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
						 c->opts.offline ? 6 : box_host_landlock_abi();

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

static void
ctx_init(struct ctx *c, const char *name, const struct box_config_options *opts,
	 struct box_config_errors *errs)
{
	memset(c, 0, sizeof(*c));
	if (opts)
		c->opts = *opts;
	c->errs = errs;
	c->first_err = errs->n;
	c->cfg = xmalloc(sizeof(*c->cfg));
	memset(c->cfg, 0, sizeof(*c->cfg));
	c->cfg->path = xstrdup(name);
	c->file = c->cfg->path;
	c->caller = getuid();
	box_walk_budget_init(&c->walk, BOX_WALK_ENTRIES_MAX, BOX_WALK_TIME_MS);
}

int
box_config_load(const char *path, const struct box_config_options *opts, struct box_config **ret,
		struct box_config_errors *errs)
{
	struct ctx c;
	const char *why = NULL;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	ctx_init(&c, path, opts, errs);
	if (path_canonicalize(path, &c.cfg->abs_path) < 0)
		err_at(&c, 0, NULL, NULL, "cannot be opened: %s", strerror(errno));
	else if (read_user_file(&c, c.cfg->abs_path, BOX_CONFIG_FILE_MAX, false, &data, &len, &why) < 0)
		err_at(&c, 0, NULL, NULL, "%s", why);
	return load(&c, data, len, ret);
}

int
box_config_load_buffer(const char *name, const char *data, size_t len,
		       const struct box_config_options *opts, struct box_config **ret,
		       struct box_config_errors *errs)
{
	struct ctx c;
	ctx_init(&c, name, opts, errs);
	if (len > BOX_CONFIG_FILE_MAX) {
		err_at(&c, 0, NULL, NULL, "is larger than %lu bytes", BOX_CONFIG_FILE_MAX);
		return load(&c, NULL, 0, ret);
	}
	return load(&c, data ? data : "", len, ret);
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
	file_free(&cfg->gateway.upstream_ca);
	free(cfg->gateway.resolver.value);
	file_free(&cfg->gateway.hosts_file);
	free(cfg);
}

/* ------------------------------------------------------------------ */
/* host probes                                                         */

int
box_host_landlock_abi(void)
{
	long r = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION_FLAG);
	return r < 0 ? 0 : (int)r;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void
unescape_octal(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else
			*o++ = *s;
	}
	*o = '\0';
}

static bool
has_word(const char *list, const char *word, const char *seps)
{
	size_t wl = strlen(word);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, seps);
		if (n == wl && strncmp(p, word, wl) == 0)
			return true;
		p += n;
		p += strspn(p, seps);
	}
	return false;
}

int
box_host_cgroups_probe(const char *mountinfo, const char *root_prefix, struct box_host_cgroups *ret)
{
	_cleanup_fclose_ FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	memset(ret, 0, sizeof(*ret));
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[6] = { 0 };
		char *save = NULL, *tok = strtok_r(line, " \n", &save);
		int n = 0;
		/* id parent dev root mountpoint ... - fstype source superopts */
		for (; tok && n < 5; tok = strtok_r(NULL, " \n", &save))
			fields[n++] = tok;
		while (tok && strcmp(tok, "-") != 0)
			tok = strtok_r(NULL, " \n", &save);
		if (n < 5 || !tok)
			continue;
		char *fstype = strtok_r(NULL, " \n", &save);
		(void)strtok_r(NULL, " \n", &save);
		char *opts = strtok_r(NULL, " \n", &save);
		if (!fstype)
			continue;
		if (strcmp(fstype, "cgroup") == 0 && opts) {
			ret->v1_memory |= has_word(opts, "memory", ",");
			ret->v1_pids |= has_word(opts, "pids", ",");
		} else if (strcmp(fstype, "cgroup2") == 0) {
			unescape_octal(fields[4]);
			_cleanup_free_ char *p =
				xasprintf("%s%s/cgroup.controllers", root_prefix ? root_prefix : "",
					  fields[4]);
			_cleanup_fclose_ FILE *cf = fopen(p, "re");
			char buf[512];
			if (cf && fgets(buf, sizeof(buf), cf)) {
				ret->v2_memory |= has_word(buf, "memory", " \n");
				ret->v2_pids |= has_word(buf, "pids", " \n");
			}
		}
	}
	return 0;
}
