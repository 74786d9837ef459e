/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_suggest.c — `boxctl policy suggest NAME|ID|LOG... [--action A] [--since T]`
 * (docs/boxctl.1.md): from a box's denied requests whose cause is
 * `no_match` (no permit matched), propose the narrowest permit rules that
 * would allow them, printed as a policy file that `boxctl policy check` loads.
 *
 * Grouping (one rule per group, in order of the group's first denial):
 *   fs:*          paths of one directory; one path: `path == "P"`, several:
 *                 `path like "DIR/…"` with a final star (DIR their deepest common directory,
 *                 spelled as the log spells it, `~/…`), or the exact set
 *                 when DIR is `/` or `~` (a pattern there would admit the
 *                 whole tree); the operations seen, exactly
 *   http:request  host and port exactly; paths as above; the methods seen
 *   net:connect   host and port exactly
 *   shell:exec    the program; shell:spawn the program_path
 *   mcp:call      the server, the method and the tool / prompt / uri
 * Each rule has @id("suggest_N_…") and a comment counting the requests it
 * covers. Denials of cause `forbidden` are never undone: they are counted
 * (with the forbidding rules) in a comment and on stderr; so are `error`
 * denials (no permit can help a request that could not be evaluated).
 *
 * Reading a box's log: NAME|ID goes through `boxctl log NAME|ID --json`
 * (log.c, in a child process writing into a pipe), so that a running box's
 * files come from its boxd and an ID selects that run's lines exactly as
 * `boxctl log` does. An argument holding `/` or `.` (no box name does) is a
 * log file read as it is, `-` is stdin.
 *
 * Trusts nothing in the log (agent-chosen strings): every value is escaped
 * for the Cedar string literal it goes into, comments hold only printable
 * ASCII (the rest as \xNN), lines and counts are capped.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cedar_text.h"
#include "commands.h"
#include "parse.h"
#include "policy_history.h"
#include "proto/validate.h"

#define SUGGEST_LINE_MAX (1u << 20)
#define SUGGEST_MAX_GROUPS 4096     /* rules proposed at most; more are counted, not proposed */
#define SUGGEST_MAX_VALUES 4096     /* distinct values one group keeps */
#define SUGGEST_SHOWN 5             /* resources named in a rule's comment */

enum gkind {
	G_FS = 0,
	G_HTTP,
	G_NET,
	G_EXEC,
	G_SPAWN,
	G_MCP,
};

struct strset {
	size_t n, cap;
	char **v;
};

struct group {
	enum gkind kind;
	char *action;  /* "fs:read" */
	char *key;     /* the grouping key, for lookup */
	char *a, *b;   /* fs: dir; http/net: host + port text; exec/spawn: program; mcp: server, method */
	char *opt_name, *opt_val; /* mcp: "tool" / "prompt" / "uri" and its value */
	long long port;
	struct strset paths, ops, resources;
	unsigned long requests;
};

struct suggest {
	size_t n, cap;
	struct group *g;
	const char *action_filter;
	int64_t since_ns;
	bool have_since;
	unsigned long lines, denials, forbidden, errors, dropped, skipped_kinds, bad_lines;
	struct strset forbid_rules;
	const char *source; /* what the log is of, for the header */
};

/* ---- small sets of strings ---- */

static bool
strset_has(const struct strset *s, const char *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return true;
	return false;
}

static int
strset_add(struct strset *s, const char *v)
{
	if (strset_has(s, v))
		return 0;
	if (s->n >= SUGGEST_MAX_VALUES)
		return -E2BIG;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	char *c = strdup(v);
	if (!c)
		return -ENOMEM;
	s->v[s->n++] = c;
	return 1;
}

static void
strset_free(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strset){ 0 };
}

/* ---- --since ---- */

/* T: RFC 3339, or a duration before now: N followed by s, m, h or d (ms too). */
static int
parse_since(const char *t, int64_t *ret)
{
	if (ph_rfc3339_to_ns(t, ret) == 0)
		return 0;
	size_t digits = strspn(t, "0123456789");
	char num[24];
	uint64_t n;
	if (digits == 0 || digits >= sizeof(num))
		return -EINVAL;
	memcpy(num, t, digits);
	num[digits] = 0;
	if (parse_u64(num, INT64_MAX, &n) < 0)
		return -EINVAL;
	const char *end = t + digits;
	long long mul;
	if (strcmp(end, "ms") == 0)
		mul = 1000000LL;
	else if (strcmp(end, "s") == 0)
		mul = 1000000000LL;
	else if (strcmp(end, "m") == 0)
		mul = 60LL * 1000000000LL;
	else if (strcmp(end, "h") == 0)
		mul = 3600LL * 1000000000LL;
	else if (strcmp(end, "d") == 0)
		mul = 86400LL * 1000000000LL;
	else
		return -EINVAL;
	if (n > (uint64_t)(INT64_MAX / mul))
		return -ERANGE;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*ret = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - (int64_t)n * mul;
	return 0;
}

/* The line's time: time_ns when present, else its RFC 3339 `time`. */
static bool
line_time(json_t *o, int64_t *ns)
{
	json_t *tn = json_object_get(o, "time_ns");
	if (json_is_integer(tn)) {
		*ns = (int64_t)json_integer_value(tn);
		return true;
	}
	const char *t = json_string_value(json_object_get(o, "time"));
	return t && ph_rfc3339_to_ns(t, ns) == 0;
}

/* ---- groups ---- */

static const char *
input_str(json_t *input, const char *field)
{
	return json_string_value(json_object_get(input, field));
}

/* The directory of PATH ("~/a/b" -> "~/a", "/a" -> "/", "~/a" -> "~"; "" when none). */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup("");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static struct group *
find_group(struct suggest *s, const char *action, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->g[i].action, action) == 0 && strcmp(s->g[i].key, key) == 0)
			return &s->g[i];
	return NULL;
}

static struct group *
new_group(struct suggest *s, enum gkind kind, const char *action, const char *key)
{
	if (s->n >= SUGGEST_MAX_GROUPS)
		return NULL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct group *ng = realloc(s->g, cap * sizeof(*ng));
		if (!ng)
			return NULL;
		s->g = ng;
		s->cap = cap;
	}
	struct group *g = &s->g[s->n];
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->action = strdup(action);
	g->key = strdup(key);
	if (!g->action || !g->key) {
		free(g->action);
		free(g->key);
		return NULL;
	}
	s->n++;
	return g;
}

static enum gkind
kind_of(const char *action, bool *known)
{
	*known = true;
	if (strncmp(action, "fs:", 3) == 0 && strcmp(action, "fs:other") != 0)
		return G_FS;
	if (strcmp(action, "http:request") == 0)
		return G_HTTP;
	if (strcmp(action, "net:connect") == 0)
		return G_NET;
	if (strcmp(action, "shell:exec") == 0)
		return G_EXEC;
	if (strcmp(action, "shell:spawn") == 0)
		return G_SPAWN;
	if (strcmp(action, "mcp:call") == 0)
		return G_MCP;
	*known = false;
	return G_FS;
}

/* One no_match denial. 0, or -EINVAL when its input lacks what its action needs. */
static int
add_denial(struct suggest *s, const char *action, json_t *input, const char *resource)
{
	bool known;
	enum gkind kind = kind_of(action, &known);
	if (!known) {
		s->skipped_kinds++;
		return 0;
	}
	char key[8192];
	const char *a = NULL, *b = NULL, *path = NULL, *op = NULL, *optn = NULL, *optv = NULL;
	long long port = 0;
	char *dir = NULL;
	switch (kind) {
	case G_FS:
		path = input_str(input, "path");
		op = input_str(input, "operation");
		if (!path || !op)
			return -EINVAL;
		dir = dir_of(path);
		if (!dir)
			return -ENOMEM;
		a = dir;
		snprintf(key, sizeof(key), "%s", dir);
		break;
	case G_HTTP:
	case G_NET:
		a = input_str(input, "host");
		if (!a || !json_is_integer(json_object_get(input, "port")))
			return -EINVAL;
		port = json_integer_value(json_object_get(input, "port"));
		snprintf(key, sizeof(key), "%s:%lld", a, port);
		if (kind == G_HTTP) {
			path = input_str(input, "path");
			op = input_str(input, "method");
			if (!path || !op)
				return -EINVAL;
		}
		break;
	case G_EXEC:
	case G_SPAWN:
		a = input_str(input, kind == G_EXEC ? "program" : "program_path");
		if (!a)
			return -EINVAL;
		snprintf(key, sizeof(key), "%s", a);
		break;
	case G_MCP:
	default:
		a = input_str(input, "server");
		b = input_str(input, "method");
		if (!a || !b)
			return -EINVAL;
		for (int i = 0; i < 3 && !optn; i++) {
			static const char *const opts[] = { "tool", "prompt", "uri" };
			if ((optv = input_str(input, opts[i])))
				optn = opts[i];
		}
		snprintf(key, sizeof(key), "%s\n%s\n%s\n%s", a, b, optn ? optn : "",
			 optv ? optv : "");
		break;
	}
	struct group *g = find_group(s, action, key);
	if (!g) {
		g = new_group(s, kind, action, key);
		if (!g) {
			free(dir);
			s->dropped++;
			return 0;
		}
		g->a = strdup(a);
		g->b = b ? strdup(b) : NULL;
		g->opt_name = optn ? strdup(optn) : NULL;
		g->opt_val = optv ? strdup(optv) : NULL;
		g->port = port;
	}
	free(dir);
	g->requests++;
	/* a set that is full keeps its values: the rule then covers only those */
	if (path)
		(void)strset_add(&g->paths, path);
	if (op)
		(void)strset_add(&g->ops, op);
	if (resource && g->resources.n < SUGGEST_SHOWN)
		(void)strset_add(&g->resources, resource);
	return 0;
}

static void
one_line(struct suggest *s, const char *line, size_t len, const char *file, unsigned long lineno)
{
	json_error_t je;
	json_t *o = json_loadb(line, len, 0, &je);
	if (!json_is_object(o)) {
		if (s->bad_lines++ == 0)
			fprintf(stderr, "boxctl: warning: %s:%lu: not a decision line (%s); skipped\n",
				file, lineno, o ? "not an object" : je.text);
		json_decref(o);
		return;
	}
	s->lines++;
	const char *verdict = json_string_value(json_object_get(o, "verdict"));
	const char *cause = json_string_value(json_object_get(o, "cause"));
	const char *action = json_string_value(json_object_get(o, "action"));
	if (json_object_get(o, "record") || !verdict || strcmp(verdict, "deny") != 0 || !cause ||
	    !action)
		goto out;
	if (s->action_filter && strcmp(action, s->action_filter) != 0)
		goto out;
	if (s->have_since) {
		int64_t t;
		if (!line_time(o, &t) || t < s->since_ns)
			goto out;
	}
	if (strcmp(cause, "forbidden") == 0) {
		s->forbidden++;
		json_t *rules = json_object_get(o, "rules");
		for (size_t i = 0; i < json_array_size(rules); i++) {
			const char *r = json_string_value(json_array_get(rules, i));
			if (r)
				(void)strset_add(&s->forbid_rules, r);
		}
		goto out;
	}
	if (strcmp(cause, "error") == 0) {
		s->errors++;
		goto out;
	}
	if (strcmp(cause, "no_match") != 0)
		goto out;
	json_t *input = json_object_get(o, "input");
	if (!json_is_object(input) ||
	    add_denial(s, action, input, json_string_value(json_object_get(o, "resource"))) < 0) {
		if (s->bad_lines++ == 0)
			fprintf(stderr, "boxctl: warning: %s:%lu: a denial without the input its "
					"action needs; skipped\n",
				file, lineno);
		goto out;
	}
	s->denials++;
out:
	json_decref(o);
}

/* Every line of FD (a last line without its newline included). */
static int
read_lines(struct suggest *s, FILE *f, const char *file)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = 0;
		if (n == 0 || strspn(line, " \t\r") == (size_t)n)
			continue;
		if ((size_t)n > SUGGEST_LINE_MAX) {
			if (s->bad_lines++ == 0)
				fprintf(stderr, "boxctl: warning: %s:%lu: line too long; skipped\n",
					file, lineno);
			continue;
		}
		one_line(s, line, (size_t)n, file, lineno);
	}
	int r = ferror(f) ? -EIO : 0;
	free(line);
	return r;
}

static int
read_path(struct suggest *s, const char *path)
{
	if (strcmp(path, "-") == 0)
		return read_lines(s, stdin, "stdin");
	FILE *f = fopen(path, "re");
	if (!f) {
		int r = -errno;
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
		return r;
	}
	int r = read_lines(s, f, path);
	fclose(f);
	if (r < 0)
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
	return r;
}

/*
 * A box's log, as `boxctl log WHAT --json` prints it (a child process runs
 * cmd_log with its stdout on a pipe). Returns the child's exit status or a
 * negative errno.
 */
static int
read_box(struct suggest *s, const char *what)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(BOXCTL_EXIT_FAILURE);
		close(fds[1]);
		char *argv[] = { "log", (char *)what, "--json", NULL };
		int rc = cmd_log(3, argv);
		fflush(stdout);
		_exit(rc);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	int r = 0;
	if (!f) {
		r = -errno;
		close(fds[0]);
	} else {
		char label[300];
		snprintf(label, sizeof(label), "log of %s", what);
		r = read_lines(s, f, label);
		fclose(f);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (r < 0)
		return r;
	return WIFEXITED(st) ? WEXITSTATUS(st) : BOXCTL_EXIT_FAILURE;
}

/* ---- printing ---- */

/* The deepest directory holding every path of SET ("" when they share none). */
static char *
common_dir(const struct strset *set)
{
	size_t len = strlen(set->v[0]);
	for (size_t i = 1; i < set->n; i++) {
		size_t k = 0;
		while (k < len && set->v[i][k] == set->v[0][k])
			k++;
		len = k;
	}
	/* the prefix ends at a whole directory: cut back to a '/' (every path continues there) */
	for (;;) {
		bool whole = true;
		for (size_t i = 0; i < set->n && whole; i++)
			whole = set->v[i][len] == '/';
		if (whole)
			break;
		if (len == 0)
			return strdup("");
		len--;
	}
	if (len == 0)
		return strdup("/");
	return strndup(set->v[0], len);
}

static void
put_path_cond(FILE *out, const char *field, const struct strset *paths)
{
	if (paths->n == 1) {
		fprintf(out, "context.input.%s == ", field);
		cedar_put_lit(out, paths->v[0], false);
		return;
	}
	char *dir = common_dir(paths);
	if (dir && dir[0] && strcmp(dir, "/") != 0 && strcmp(dir, "~") != 0) {
		/* the directory is literal, the final star the pattern's */
		fprintf(out, "context.input.%s like \"", field);
		cedar_put_lit_body(out, dir, true);
		fputs("/*\"", out);
	} else {
		fputc('[', out);
		for (size_t i = 0; i < paths->n; i++) {
			if (i)
				fputs(", ", out);
			cedar_put_lit(out, paths->v[i], false);
		}
		fprintf(out, "].contains(context.input.%s)", field);
	}
	free(dir);
}

static const char *
op_type(const char *action)
{
	if (strcmp(action, "fs:read") == 0)
		return "Box::FsReadOperation";
	if (strcmp(action, "fs:write") == 0)
		return "Box::FsWriteOperation";
	if (strcmp(action, "fs:delete") == 0)
		return "Box::FsDeleteOperation";
	return "Box::FsMoveOperation";
}

/* "_" and an @id slug of S: [a-z0-9_] only, at most 40 bytes ("root" when S has none). */
static void
put_slug(FILE *out, const char *s)
{
	size_t n = 0;
	bool last_us = true;
	fputc('_', out);
	for (const unsigned char *p = (const unsigned char *)s; *p && n < 40; p++) {
		unsigned c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (c >= 'A' && c <= 'Z') {
			c = c - 'A' + 'a';
			ok = true;
		}
		if (ok) {
			fputc((int)c, out);
			last_us = false;
			n++;
		} else if (!last_us) {
			fputc('_', out);
			last_us = true;
			n++;
		}
	}
	if (n == 0)
		fputs("root", out);
}

static void
print_group(FILE *out, const struct group *g, size_t index)
{
	unsigned long distinct = g->kind == G_FS || g->kind == G_HTTP ? g->paths.n : 1;
	fprintf(out, "\n// covers %lu denied request%s", g->requests, g->requests == 1 ? "" : "s");
	if (distinct > 1)
		fprintf(out, " (%lu distinct)", distinct);
	fputs(": ", out);
	cedar_put_comment(out, g->action);
	for (size_t i = 0; i < g->resources.n; i++) {
		fputs(i ? ", " : " ", out);
		cedar_put_comment(out, g->resources.v[i]);
	}
	if (g->requests > g->resources.n && distinct > g->resources.n)
		fputs(", ...", out);
	fputc('\n', out);
	fprintf(out, "@id(\"suggest_%zu", index);
	put_slug(out, g->action);
	put_slug(out, g->kind == G_HTTP || g->kind == G_NET ? g->key : g->a);
	fputs("\")\npermit (principal, action == Box::Action::", out);
	cedar_put_lit(out, g->action, false);
	fputs(", resource)\nwhen { ", out);
	switch (g->kind) {
	case G_FS:
		put_path_cond(out, "path", &g->paths);
		if (g->ops.n == 1) {
			fprintf(out, " && context.input.operation == %s::", op_type(g->action));
			cedar_put_lit(out, g->ops.v[0], false);
		} else {
			fputs(" && context.input.operation in [", out);
			for (size_t i = 0; i < g->ops.n; i++) {
				fprintf(out, "%s%s::", i ? ", " : "", op_type(g->action));
				cedar_put_lit(out, g->ops.v[i], false);
			}
			fputc(']', out);
		}
		break;
	case G_HTTP:
	case G_NET:
		fputs("context.input.host == ", out);
		cedar_put_lit(out, g->a, false);
		fprintf(out, " && context.input.port == %lld", g->port);
		if (g->kind == G_NET)
			break;
		fputs(" && ", out);
		put_path_cond(out, "path", &g->paths);
		if (g->ops.n == 1) {
			fputs(" && context.input.method == ", out);
			cedar_put_lit(out, g->ops.v[0], false);
		} else {
			fputs(" && [", out);
			for (size_t i = 0; i < g->ops.n; i++) {
				if (i)
					fputs(", ", out);
				cedar_put_lit(out, g->ops.v[i], false);
			}
			fputs("].contains(context.input.method)", out);
		}
		break;
	case G_EXEC:
	case G_SPAWN:
		fprintf(out, "context.input.%s == ", g->kind == G_EXEC ? "program" : "program_path");
		cedar_put_lit(out, g->a, false);
		break;
	case G_MCP:
	default:
		fputs("context.input.server == ", out);
		cedar_put_lit(out, g->a, false);
		fputs(" && context.input.method == ", out);
		cedar_put_lit(out, g->b, false);
		if (g->opt_name) {
			fprintf(out, " && context.input has %s && context.input.%s == ", g->opt_name,
				g->opt_name);
			cedar_put_lit(out, g->opt_val, false);
		}
		break;
	}
	fputs(" };\n", out);
}

static void
print_suggestion(FILE *out, const struct suggest *s)
{
	fputs("// boxctl policy suggest: permits for the denials no permit matched (cause no_match) "
	      "of ",
	      out);
	cedar_put_comment(out, s->source);
	fputc('\n', out);
	fprintf(out, "// %lu denied request%s, %zu rule%s", s->denials, s->denials == 1 ? "" : "s",
		s->n, s->n == 1 ? "" : "s");
	if (s->action_filter) {
		fputs("; action ", out);
		cedar_put_comment(out, s->action_filter);
	}
	if (s->have_since)
		fputs("; since the given time", out);
	fputc('\n', out);
	if (s->forbidden) {
		fprintf(out, "// not proposed: %lu request%s denied by a forbid (", s->forbidden,
			s->forbidden == 1 ? " was" : "s were");
		for (size_t i = 0; i < s->forbid_rules.n; i++) {
			if (i)
				fputs(", ", out);
			cedar_put_comment(out, s->forbid_rules.v[i]);
		}
		fputs("): a forbid overrides any permit; suggest never undoes one\n", out);
	}
	if (s->errors)
		fprintf(out, "// not proposed: %lu request%s could not be evaluated (cause error); "
			     "no permit changes that\n",
			s->errors, s->errors == 1 ? "" : "s");
	if (s->skipped_kinds)
		fprintf(out, "// not proposed: %lu denial%s of actions suggest does not group\n",
			s->skipped_kinds, s->skipped_kinds == 1 ? "" : "s");
	if (s->dropped)
		fprintf(out, "// not proposed: %lu denial%s beyond %u rules\n", s->dropped,
			s->dropped == 1 ? "" : "s", SUGGEST_MAX_GROUPS);
	for (size_t i = 0; i < s->n; i++)
		print_group(out, &s->g[i], i + 1);
}

static void
suggest_free(struct suggest *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct group *g = &s->g[i];
		free(g->action);
		free(g->key);
		free(g->a);
		free(g->b);
		free(g->opt_name);
		free(g->opt_val);
		strset_free(&g->paths);
		strset_free(&g->ops);
		strset_free(&g->resources);
	}
	free(s->g);
	strset_free(&s->forbid_rules);
}

/* A log file rather than a box: it holds `/` or `.` (no box name does), or is `-` (stdin). */
static bool
is_path_arg(const char *a)
{
	return strchr(a, '/') || strchr(a, '.') || strcmp(a, "-") == 0;
}

#define SUGGEST_USAGE "usage: boxctl policy suggest NAME|ID|LOG... [--action A] [--since T]\n"

int
cmd_policy_suggest(int argc, char **argv)
{
	struct suggest s = { 0 };
	const char *since = NULL;
	const char *what[64];
	size_t n_what = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(SUGGEST_USAGE, stdout);
			return BOXCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--action") == 0 && i + 1 < argc)
			s.action_filter = argv[++i];
		else if (strcmp(argv[i], "--since") == 0 && i + 1 < argc)
			since = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1] != 0)
			goto usage;
		else if (n_what < sizeof(what) / sizeof(what[0]))
			what[n_what++] = argv[i];
		else
			goto usage;
	}
	if (!n_what)
		goto usage;
	if (since) {
		if (parse_since(since, &s.since_ns) < 0) {
			fprintf(stderr, "boxctl: error: --since '%s': neither an RFC 3339 time nor a "
					"duration such as 10m\n",
				since);
			return BOXCTL_EXIT_USAGE;
		}
		s.have_since = true;
	}
	int rc = BOXCTL_EXIT_OK;
	for (size_t i = 0; i < n_what && rc == BOXCTL_EXIT_OK; i++) {
		if (is_path_arg(what[i])) {
			if (read_path(&s, what[i]) < 0)
				rc = BOXCTL_EXIT_FAILURE;
			continue;
		}
		if (!box_valid_name(what[i]) && !box_valid_box_id(what[i])) {
			fprintf(stderr, "boxctl: error: '%s' is neither a box name, a box id nor a "
					"decision log\n",
				what[i]);
			rc = BOXCTL_EXIT_USAGE;
			break;
		}
		int r = read_box(&s, what[i]);
		if (r < 0) {
			fprintf(stderr, "boxctl: error: the log of %s: %s\n", what[i], strerror(-r));
			rc = BOXCTL_EXIT_FAILURE;
		} else if (r != 0) {
			rc = r; /* cmd_log said why */
		}
	}
	if (rc == BOXCTL_EXIT_OK) {
		char src[512];
		snprintf(src, sizeof(src), "%s%s", what[0], n_what > 1 ? " and more" : "");
		s.source = src;
		print_suggestion(stdout, &s);
		fflush(stdout);
		if (s.forbidden) {
			fprintf(stderr, "boxctl: policy suggest: %lu denied request%s came from a forbid (",
				s.forbidden, s.forbidden == 1 ? "" : "s");
			for (size_t i = 0; i < s.forbid_rules.n; i++) {
				if (i)
					fputs(", ", stderr);
				cedar_put_comment(stderr, s.forbid_rules.v[i]);
			}
			fputs("); no permit is proposed for them: a forbid overrides any permit\n",
			      stderr);
		}
		if (!s.denials)
			fprintf(stderr, "boxctl: policy suggest: no denial with cause no_match; nothing "
					"to propose\n");
	}
	suggest_free(&s);
	return rc;
usage:
	fputs(SUGGEST_USAGE, stderr);
	return BOXCTL_EXIT_USAGE;
}
