/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ask.c — `boxctl approve NAME|ID [ID] [--box | --always]` and `boxctl deny NAME|ID [ID] [--box]`
 * (docs/boxctl.1.md): a person's answer to a decision the box holds for them (a forbid
 * annotated @ask, docs/box-policy.5.md). Without ID: list what waits (oldest first). With
 * ID: answer that one, once, or with --box for every equal request of this run. Asks the
 * boxd that runs the box (the service's, then this user's embedded ones); boxd checks that
 * the caller is the box's owner or root, box-policyd answers the held decision and logs it
 * with source "person" and the caller's uid.
 * `approve NAME ID --always` (ask_always, ask.h) edits the box's policy file so that the
 * policy itself permits requests equal to that one from now on, puts it in force and then
 * permits the held one.
 * Trusts: replies only after box_ipc_decode() validated them; what a box chose (paths,
 * messages, a request's field values) is printed through put_safe and written into policy
 * text only as escaped Cedar literals (cedar_text.h). The policy file is the caller's: it is
 * read and written as the caller (as its owner when root calls), never through a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ask.h"
#include "boxpolicy.h"
#include "cedar_text.h"
#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "logchain.h"
#include "parse.h"
#include "policy_reload.h"
#include "privdrop.h"
#include "termsafe.h"

#define POLICY_TEXT_CAP BP_MAX_POLICY_BYTES

/* One boxd: 1 answered (*RES kept), 0 it runs no such box, negative errno. */
static int
ask_one(const char *path, const Box__AskRequest *q, struct box_ipc_msg *res, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_ASK_REQUEST, &q->base,
			    BOX__MSG_TYPE__MSG_ASK_REPLY, res, err, 10000);
	if (r < 0)
		return r == -EREMOTEIO ? r : 0;
	const Box__AskReply *rep = (const Box__AskReply *)res->msg;
	if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND && !rep->box_id) {
		box_ipc_msg_done(res);
		return 0; /* (NOT_FOUND with the box named: no such decision waits) */
	}
	return 1;
}

/* The boxd that runs BOX answers Q (*M kept): 1, or an exit code after the error line. */
static int
ask_call(const char *box, const Box__AskRequest *q, struct box_ipc_msg *m)
{
	char *err = NULL;
	int r = ask_one(client_service_path(), q, m, &err);
	char **socks = NULL;
	if (r == 0 && client_embedded_sockets(&socks) == 0) {
		for (size_t i = 0; socks[i]; i++) {
			if (r == 0)
				r = ask_one(socks[i], q, m, &err);
			free(socks[i]);
		}
	}
	free(socks);
	if (r <= 0) {
		if (r == 0)
			fprintf(stderr, "boxctl: error: no box named %s\n", box);
		else
			fprintf(stderr, "boxctl: error: %s: %s\n", box, err ? err : strerror(-r));
		free(err);
		return BOXCTL_EXIT_FAILURE;
	}
	free(err);
	const Box__AskReply *rep = (const Box__AskReply *)m->msg;
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		fprintf(stderr, "boxctl: error: %s: %s\n", box, rep->error ? rep->error : "refused");
		box_ipc_msg_done(m);
		return BOXCTL_EXIT_FAILURE;
	}
	return 1;
}

static void
print_list(const Box__AskReply *rep)
{
	if (rep->n_asks == 0) {
		printf("nothing of box %s waits for an answer\n", rep->name);
		return;
	}
	for (size_t i = 0; i < rep->n_asks; i++) {
		const Box__AskEntry *a = rep->asks[i];
		printf("%" PRIu64 "  waiting %" PRIu64 "s  ", a->ask_id, a->waited_ms / 1000);
		put_safe(stdout, a->source);
		fputs("  ", stdout);
		put_safe(stdout, a->action);
		fputc(' ', stdout);
		put_safe(stdout, a->resource[0] ? a->resource : "-");
		fputs("  ", stdout);
		if (a->by_default)
			fputs("(no permit matched: ask = default)", stdout);
		for (size_t k = 0; k < a->n_rules; k++) {
			if (k)
				fputc(',', stdout);
			put_safe(stdout, a->rules[k]);
		}
		for (size_t k = 0; k < a->n_fields; k++) {
			fputs("\n    field ", stdout);
			put_safe(stdout, a->fields[k]->name);
			fputs(" = ", stdout);
			put_safe(stdout, a->fields[k]->value);
		}
		fputs("\n    ", stdout);
		put_safe(stdout, a->message);
		fputc('\n', stdout);
	}
}

static int
cmd_answer(int argc, char **argv, bool permit)
{
	const char *box = NULL, *id = NULL;
	bool for_box = false, always = false;
	const char *usage = permit ? "usage: boxctl approve NAME|ID [DECISION] [--box | --always]\n"
				   : "usage: boxctl deny NAME|ID [DECISION] [--box]\n";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return BOXCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--box") == 0)
			for_box = true;
		else if (permit && strcmp(argv[i], "--always") == 0)
			always = true;
		else if (argv[i][0] == '-')
			goto usage;
		else if (!box)
			box = argv[i];
		else if (!id)
			id = argv[i];
		else
			goto usage;
	}
	if (!box || ((for_box || always) && !id) || (for_box && always))
		goto usage;
	Box__AskRequest q = BOX__ASK_REQUEST__INIT;
	q.box = (char *)box;
	if (id) {
		uint64_t v;
		if (parse_u64(id, UINT64_MAX, &v) < 0 || v == 0) {
			fprintf(stderr, "boxctl: error: %s is not a decision number (see `boxctl %s "
					"%s`)\n", id, permit ? "approve" : "deny", box);
			return BOXCTL_EXIT_USAGE;
		}
		if (always)
			return ask_always(box, v, stdout);
		q.has_ask_id = q.has_permit = q.has_for_box = true;
		q.ask_id = v;
		q.permit = permit;
		q.for_box = for_box;
	}
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = ask_call(box, &q, &m);
	if (r != 1)
		return r;
	const Box__AskReply *rep = (const Box__AskReply *)m.msg;
	if (!id)
		print_list(rep);
	else
		printf("decision %s of box %s %s%s\n", id, rep->name,
		       permit ? "permitted" : "denied", for_box ? " (for this box)" : "");
	box_ipc_msg_done(&m);
	return BOXCTL_EXIT_OK;
usage:
	fputs(usage, stderr);
	return BOXCTL_EXIT_USAGE;
}

int
cmd_approve(int argc, char **argv)
{
	return cmd_answer(argc, argv, true);
}

int
cmd_deny(int argc, char **argv)
{
	return cmd_answer(argc, argv, false);
}

/* ---- the answer "always" (ask.h) ---------------------------------------------------- */

/* An edit: TEXT inserted at byte AT of the old text (edits sorted by AT). */
struct edit {
	size_t at;
	char *text;
};

#define INPUT_DEPTH_MAX 8 /* nesting of sets and records (proto/policy_validate.h's) */

/* A field or record key written bare into rule text: [A-Za-z_][A-Za-z0-9_]*, <= 128 bytes. */
static bool
plain_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/*
 * One value of the request's input (JSON, as the decision log writes it) as a Cedar
 * literal; ETYPE: an enumeration's entity type (the value its id). 0, or -EINVAL for a
 * value no request holds (a real number, null, too deep).
 */
static int
put_value(FILE *o, json_t *v, const char *etype, int depth)
{
	if (depth > INPUT_DEPTH_MAX)
		return -EINVAL;
	if (json_is_string(v)) {
		if (etype)
			fprintf(o, "%s::", etype);
		cedar_put_lit(o, json_string_value(v), false);
	} else if (json_is_integer(v)) {
		json_int_t k = json_integer_value(v);
		/* -9223372036854775808 is no literal: its magnitude is out of range */
		if (k == INT64_MIN)
			fputs("(-9223372036854775807 - 1)", o);
		else
			fprintf(o, "%" PRId64, (int64_t)k);
	} else if (json_is_boolean(v)) {
		fputs(json_is_true(v) ? "true" : "false", o);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		fputc('[', o);
		json_array_foreach(v, i, e) {
			if (i)
				fputs(", ", o);
			if (put_value(o, e, NULL, depth + 1) < 0)
				return -EINVAL;
		}
		fputc(']', o);
	} else if (json_is_object(v)) {
		const char *k;
		json_t *e;
		bool first = true;
		fputc('{', o);
		json_object_foreach(v, k, e) {
			if (!first)
				fputs(", ", o);
			first = false;
			cedar_put_lit(o, k, false);
			fputs(": ", o);
			if (put_value(o, e, NULL, depth + 1) < 0)
				return -EINVAL;
		}
		fputc('}', o);
	} else {
		return -EINVAL;
	}
	return 0;
}

/*
 * The action's scope, `action == Box::Action::"fs:read"` or `action == NS::Action::"tool"`:
 * 0, or -EINVAL for an action that cannot be spelled.
 */
static int
put_action(FILE *o, const char *action)
{
	const char *sep = strstr(action, "::Action::\"");
	if (!sep) {
		fputs("action == Box::Action::", o);
		cedar_put_lit(o, action, false);
		return 0;
	}
	size_t nslen = (size_t)(sep - action), tlen = strlen(sep + 11);
	if (nslen == 0 || tlen < 2 || sep[11 + tlen - 1] != '"')
		return -EINVAL;
	for (size_t i = 0; i < nslen; i++) {
		char c = action[i];
		bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (i > 0 && c >= '0' && c <= '9');
		if (!ok)
			return -EINVAL;
	}
	_cleanup_free_ char *tool = strndup(sep + 11, tlen - 1);
	if (!tool)
		return -ENOMEM;
	fprintf(o, "action == %.*s::Action::", (int)nslen, action);
	cedar_put_lit(o, tool, false);
	return 0;
}

/*
 * The condition a request of ACTION equal to INPUT (a JSON object: the request's fields,
 * in its order) meets: each field equal to its value (an optional one, or any of an MCP
 * tool's, behind `has`), "true" with none. NULL on an error (*why set).
 */
static char *
request_condition(const struct bp_schema *schema, const char *action, const char *input,
		  const char **why)
{
	json_error_t je;
	json_t *in = json_loads(input, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(in)) {
		json_decref(in);
		*why = "its input is not a JSON object";
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	if (!o) {
		json_decref(in);
		*why = "out of memory";
		return NULL;
	}
	bool box_action = strstr(action, "::Action::\"") == NULL;
	const char *name;
	json_t *v;
	size_t i = 0;
	*why = NULL;
	json_object_foreach(in, name, v) {
		bool optional = true;
		const char *etype = NULL;
		if (!plain_name(name)) {
			*why = "its input has a field name no rule can spell";
			break;
		}
		if (box_action && bp_schema_box_field(schema, action, name, &optional, &etype) < 0) {
			*why = "its input has a field this boxctl does not know";
			break;
		}
		if (i++)
			fputs(" &&\n         ", o);
		if (optional)
			fprintf(o, "context.input has %s && ", name);
		fprintf(o, "context.input.%s == ", name);
		if (put_value(o, v, etype, 1) < 0) {
			*why = "its input has a value no rule can spell";
			break;
		}
	}
	if (i == 0)
		fputs("true", o);
	json_decref(in);
	if (fclose(o) != 0 && !*why)
		*why = "out of memory";
	if (*why) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* "2026-12-06T20:50:00Z" */
static void
now_utc(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "%lld", (long long)t);
}

/* A rule name of P that is free: always_ACTION_ID, with _2, _3, … when taken. */
static char *
free_rule_id(const struct bp_policy *p, const char *action, uint64_t id)
{
	char base[96];
	size_t n = (size_t)snprintf(base, sizeof(base), "always_");
	for (const char *c = action; *c && n < 60; c++)
		base[n++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ? *c : '_');
	snprintf(base + n, sizeof(base) - n, "_%" PRIu64, id);
	char *name = NULL;
	for (unsigned k = 1; k < 1000; k++) {
		free(name);
		name = NULL;
		if ((k == 1 ? asprintf(&name, "%s", base) : asprintf(&name, "%s_%u", base, k)) < 0)
			return NULL;
		bool taken = false;
		for (size_t i = 0; i < bp_policy_rule_count(p) && !taken; i++)
			taken = strcmp(bp_policy_rule_name(p, i), name) == 0;
		if (!taken)
			return name;
	}
	free(name);
	return NULL;
}

/*
 * The edits for the answer "always" to held request A of TEXT (loaded as P): before
 * the `;` of each @ask forbid that held it, an `unless` clause; for a request no permit
 * matched, a permit at the end. 0 with *EDITS (*N), or an exit code after the error line.
 */
static int
always_edits(const char *file, const char *text, size_t len, const struct bp_policy *p,
	     const struct bp_schema *schema, const Box__AskEntry *a,
	     struct edit **edits, size_t *n)
{
	const char *why = NULL;
	_cleanup_free_ char *cond = request_condition(schema, a->action, a->input, &why);
	char when[64], head[256];
	if (!cond) {
		fprintf(stderr, "boxctl: error: decision %" PRIu64 ": %s\n", a->ask_id, why);
		return BOXCTL_EXIT_FAILURE;
	}
	now_utc(when, sizeof(when));
	snprintf(head, sizeof(head), "// boxctl approve --always: decision %" PRIu64 ", uid %u, %s",
		 a->ask_id, (unsigned)getuid(), when);
	size_t cap = a->by_default ? 1 : a->n_rules;
	*edits = calloc(cap, sizeof(**edits));
	*n = 0;
	if (!*edits)
		goto oom;
	if (a->by_default) {
		_cleanup_free_ char *id = free_rule_id(p, a->action, a->ask_id);
		char *buf = NULL;
		size_t blen = 0;
		FILE *o = id ? open_memstream(&buf, &blen) : NULL;
		if (!o)
			goto oom;
		/* a new line of its own, after whatever the file ends with */
		if (len > 0 && text[len - 1] != '\n')
			fputc('\n', o);
		fprintf(o, "\n%s\n// ", head);
		cedar_put_comment(o, a->action);
		fputc(' ', o);
		cedar_put_comment(o, a->resource);
		fprintf(o, "\n@id(\"%s\")\npermit (principal, ", id);
		int r = put_action(o, a->action);
		fprintf(o, ", resource)\nwhen { %s };\n", cond);
		if (fclose(o) != 0 || r < 0) {
			free(buf);
			fprintf(stderr, "boxctl: error: decision %" PRIu64 ": its action cannot be "
					"written as a rule\n", a->ask_id);
			return BOXCTL_EXIT_FAILURE;
		}
		(*edits)[(*n)++] = (struct edit){ .at = len, .text = buf };
		return 0;
	}
	for (size_t k = 0; k < a->n_rules; k++) {
		size_t i, start, end;
		for (i = 0; i < bp_policy_rule_count(p); i++)
			if (strcmp(bp_policy_rule_name(p, i), a->rules[k]) == 0)
				break;
		if (i == bp_policy_rule_count(p) || !bp_policy_rule_is_forbid(p, i) ||
		    !bp_policy_rule_annotation(p, i, "ask") ||
		    bp_policy_rule_span(p, i, &start, &end) < 0 || end > len || text[end - 1] != ';') {
			fprintf(stderr, "boxctl: error: %s: no forbid annotated @ask named ", file);
			put_safe(stderr, a->rules[k]);
			fputs(" (the box's policy holds one)\n", stderr);
			return BOXCTL_EXIT_FAILURE;
		}
		char *buf = NULL;
		if (asprintf(&buf, "\n%s\nunless { %s }", head, cond) < 0)
			goto oom;
		(*edits)[(*n)++] = (struct edit){ .at = end - 1, .text = buf };
	}
	/* in file order (the rules of one decision are named in their own order) */
	for (size_t i = 1; i < *n; i++)
		for (size_t j = i; j > 0 && (*edits)[j - 1].at > (*edits)[j].at; j--) {
			struct edit t = (*edits)[j];
			(*edits)[j] = (*edits)[j - 1];
			(*edits)[j - 1] = t;
		}
	return 0;
oom:
	fprintf(stderr, "boxctl: error: out of memory\n");
	return BOXCTL_EXIT_FAILURE;
}

static void
edits_free(struct edit *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].text);
	free(e);
}

/* TEXT with EDITS applied (NULL: out of memory or too large). */
static char *
edits_apply(const char *text, size_t len, const struct edit *e, size_t n, size_t *ret_len)
{
	size_t total = len;
	for (size_t i = 0; i < n; i++)
		total += strlen(e[i].text);
	if (total > POLICY_TEXT_CAP)
		return NULL;
	char *out = malloc(total + 1);
	if (!out)
		return NULL;
	size_t pos = 0, w = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(out + w, text + pos, e[i].at - pos);
		w += e[i].at - pos;
		pos = e[i].at;
		size_t l = strlen(e[i].text);
		memcpy(out + w, e[i].text, l);
		w += l;
	}
	memcpy(out + w, text + pos, len - pos);
	w += len - pos;
	out[w] = '\0';
	*ret_len = w;
	return out;
}

/* ---- the unified diff of an edit (insertions only) ---- */

struct lines {
	size_t n;
	size_t *start; /* n + 1: line i is [start[i], start[i + 1]) with its '\n' */
};

static int
lines_of(const char *t, size_t len, struct lines *l)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += t[i] == '\n';
	if (len && t[len - 1] != '\n')
		n++;
	l->start = malloc((n + 1) * sizeof(size_t));
	if (!l->start)
		return -ENOMEM;
	l->n = 0;
	l->start[0] = 0;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '\n')
			l->start[++l->n] = i + 1;
	if (len && t[len - 1] != '\n')
		l->start[++l->n] = len;
	return 0;
}

static void
diff_line(FILE *o, char mark, const char *t, const struct lines *l, size_t i)
{
	size_t a = l->start[i], b = l->start[i + 1];
	fputc(mark, o);
	put_safe_n(o, t + a, b - a - (t[b - 1] == '\n'));
	fputc('\n', o);
	if (t[b - 1] != '\n')
		fputs("\\ No newline at end of file\n", o);
}

/*
 * OLD and NEW (OLD with E inserted) as a unified diff of FILE with 3 lines of context.
 * An insertion changes the old line it falls in (none at the very end of a text ending in
 * a line break); every other line is the same on both sides.
 */
static int
print_diff(FILE *o, const char *file, const char *old, size_t olen, const char *nw, size_t nlen,
	   const struct edit *e, size_t n)
{
	struct lines lo = { 0 }, ln = { 0 };
	bool *changed = NULL;
	size_t *grow = NULL; /* per old line: lines it becomes beyond its 1 (or 0 past the end) */
	int r = -ENOMEM;
	if (lines_of(old, olen, &lo) < 0 || lines_of(nw, nlen, &ln) < 0)
		goto out;
	changed = calloc(lo.n + 1, sizeof(bool));
	grow = calloc(lo.n + 1, sizeof(size_t));
	if (!changed || !grow)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t line = 0;
		while (line < lo.n && lo.start[line + 1] <= e[i].at &&
		       !(lo.start[line + 1] == e[i].at && e[i].at == olen && old[olen - 1] != '\n'))
			line++;
		changed[line] = true;
		size_t k = 0;
		for (const char *c = e[i].text; *c; c++)
			k += *c == '\n';
		grow[line] += k;
	}
	fprintf(o, "--- ");
	put_safe(o, file);
	fprintf(o, "\n+++ ");
	put_safe(o, file);
	fputc('\n', o);
	size_t nline = 0; /* the new line where old line i starts */
	size_t *new_at = calloc(lo.n + 2, sizeof(size_t));
	if (!new_at)
		goto out;
	for (size_t i = 0; i <= lo.n; i++) {
		new_at[i] = nline;
		nline += (i < lo.n ? 1 : 0) + grow[i];
	}
	/* Past the last old line: what was appended after a final line break (when the old text
	 * has none, its last line took the insertion and the count above is one too many). */
	new_at[lo.n] = ln.n - grow[lo.n];
	new_at[lo.n + 1] = ln.n;
	size_t i = 0;
	while (i <= lo.n) {
		if (!changed[i]) {
			i++;
			continue;
		}
		/* a hunk: from 3 lines before the first change to 3 after the last (gaps <= 6) */
		size_t first = i, last = i;
		for (size_t k = i + 1; k <= lo.n && k <= last + 7; k++)
			if (changed[k])
				last = k;
		size_t a = first > 3 ? first - 3 : 0;
		size_t b = last + 3 < lo.n ? last + 3 : lo.n - (lo.n > 0 ? 1 : 0);
		if (b < last)
			b = last;
		size_t ob = b < lo.n ? b + 1 : lo.n; /* old lines [a, ob) */
		size_t na = new_at[a], nb = b < lo.n ? new_at[b + 1] : ln.n;
		fprintf(o, "@@ -%zu,%zu +%zu,%zu @@\n", ob > a ? a + 1 : a, ob - a,
			nb > na ? na + 1 : na, nb - na);
		for (size_t k = a; k <= b && k <= lo.n; k++) {
			size_t ns = new_at[k], ne = k < lo.n ? new_at[k + 1] : ln.n;
			if (!changed[k]) {
				if (k < lo.n)
					diff_line(o, ' ', old, &lo, k);
				continue;
			}
			if (k < lo.n)
				diff_line(o, '-', old, &lo, k);
			for (size_t j = ns; j < ne; j++)
				diff_line(o, '+', nw, &ln, j);
		}
		i = b + 1;
	}
	free(new_at);
	r = 0;
out:
	free(lo.start);
	free(ln.start);
	free(changed);
	free(grow);
	return r;
}

/* ---- the policy file ---- */

/* The whole of FD (at most the policy cap): 0 with *TEXT (NUL-terminated), or -errno. */
static int
read_fd(int fd, char **text, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > POLICY_TEXT_CAP + 1) {
				free(buf);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	if (n > POLICY_TEXT_CAP) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

/* PATH split into its directory (opened O_PATH|O_DIRECTORY) and its last component. */
static int
open_parent(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash || !slash[1])
		return -EINVAL;
	*base = slash + 1;
	_cleanup_free_ char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Read PATH's last component in DIRFD, never through a symlink: 0 with the text, or -errno
 * (-ELOOP: a symlink, -EINVAL: not a regular file).
 */
static int
read_policy_at(int dirfd, const char *base, char **text, size_t *len, struct stat *st)
{
	_cleanup_close_ int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
						     O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	return read_fd(fd, text, len);
}

/*
 * Replace PATH's text EXPECT (ELEN bytes) by TEXT: a new file in the same directory
 * (O_EXCL, the old file's mode), written and synced, renamed over it, the directory
 * synced. -ESTALE when the file no longer holds EXPECT (nothing written); -ELOOP for a
 * symlink; other -errno (not writable, …).
 */
static int
replace_policy(const char *path, const char *expect, size_t elen, const char *text, size_t len)
{
	const char *base;
	_cleanup_close_ int dirfd = open_parent(path, &base);
	if (dirfd < 0)
		return dirfd;
	char *cur = NULL;
	size_t clen = 0;
	struct stat st;
	int r = read_policy_at(dirfd, base, &cur, &clen, &st);
	if (r < 0)
		return r;
	bool same = clen == elen && memcmp(cur, expect, elen) == 0;
	free(cur);
	if (!same)
		return -ESTALE;
	char tmp[64];
	int fd = -1;
	for (unsigned k = 0; k < 100 && fd < 0; k++) {
		snprintf(tmp, sizeof(tmp), ".box-policy-%ld-%u.tmp", (long)getpid(), k);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    st.st_mode & 0777);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	size_t w = 0;
	r = 0;
	while (w < len && r == 0) {
		ssize_t k = write(fd, text + w, len - w);
		if (k < 0 && errno != EINTR)
			r = -errno;
		else if (k > 0)
			w += (size_t)k;
	}
	if (r == 0 && fchmod(fd, st.st_mode & 0777) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, base) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dirfd, tmp, 0);
		return r;
	}
	_cleanup_close_ int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

/*
 * replace_policy as the user who may: the caller; when root edits a file another user owns,
 * a child switched to that user's ids (root never writes through a path its owner controls).
 * A root-owned file in a directory another user owns is refused (-EPERM).
 */
static int
replace_policy_as(const char *path, const char *expect, size_t elen, const char *text,
		  size_t len)
{
	if (getuid() != 0 && geteuid() != 0)
		return replace_policy(path, expect, elen, text, len);
	struct stat st, dst;
	if (lstat(path, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	const char *base;
	_cleanup_close_ int dirfd = open_parent(path, &base);
	if (dirfd < 0)
		return dirfd;
	if (fstat(dirfd, &dst) < 0)
		return -errno;
	if (st.st_uid == 0) {
		if (dst.st_uid != 0)
			return -EPERM;
		return replace_policy(path, expect, elen, text, len);
	}
	struct passwd *pw = getpwuid(st.st_uid);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		gid_t groups[PRIVDROP_GROUPS_MAX];
		int ng = PRIVDROP_GROUPS_MAX;
		gid_t gid = pw ? pw->pw_gid : st.st_gid;
		if (!pw || getgrouplist(pw->pw_name, gid, groups, &ng) < 0)
			ng = 0;
		struct privdrop pd = { .uid = st.st_uid, .gid = gid, .groups = groups,
				       .n_groups = (size_t)ng };
		if (privdrop_switch_ids(&pd, NULL) < 0)
			_exit(EPERM);
		int r = replace_policy(path, expect, elen, text, len);
		_exit(r < 0 ? (-r) & 0xff : 0);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(ws))
		return -EIO;
	return -WEXITSTATUS(ws);
}

/* The directory of PATH opened and locked (flock, exclusive: the --always answers editing a
 * file in it wait for each other): the fd, or -errno. */
static int
lock_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return -EINVAL;
	_cleanup_free_ char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			int e = -errno;
			close(fd);
			return e;
		}
	return fd;
}

static const char *
replace_error(int r)
{
	switch (r) {
	case -ESTALE: return "it changed while it was being edited";
	case -ELOOP: return "it is a symbolic link (edit the file it points to and reload)";
	case -EPERM: return "root does not write a root-owned file in a directory another user owns";
	default: return strerror(-r);
	}
}

int
ask_always(const char *box, uint64_t ask_id, FILE *out)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT, rm = BOX_IPC_MSG_INIT;
	Box__AskRequest q = BOX__ASK_REQUEST__INIT;
	struct bp_schema *schema = NULL;
	struct bp_policy *p = NULL;
	struct edit *edits = NULL;
	size_t n_edits = 0, len = 0, nlen = 0;
	char *text = NULL, *ntext = NULL, *file = NULL, *err = NULL;
	int code = BOXCTL_EXIT_FAILURE;
	uint8_t sha[LOGCHAIN_HASH_LEN], want[LOGCHAIN_HASH_LEN];
	_cleanup_close_ int lockfd = -1;
	int r;

	/*
	 * 1. What waits, the request itself and the policy the box runs. Listed twice: the
	 * second time holding a lock on the file's directory, so that two answers editing one
	 * file are made one after the other (the second edits the first's result).
	 */
	const Box__AskReply *rep = NULL;
	const Box__AskEntry *a = NULL;
	for (int pass = 0; pass < 2; pass++) {
		box_ipc_msg_done(&m);
		a = NULL;
		q.box = (char *)box;
		r = ask_call(box, &q, &m);
		if (r != 1) {
			code = r;
			goto out;
		}
		rep = (const Box__AskReply *)m.msg;
		for (size_t i = 0; i < rep->n_asks && !a; i++)
			if (rep->asks[i]->ask_id == ask_id)
				a = rep->asks[i];
		if (!a) {
			fprintf(stderr, "boxctl: error: %s: no decision %" PRIu64 " waits (answered, "
					"timed out, or its asker is gone)\n", box, ask_id);
			goto out;
		}
		if (!a->input) {
			fprintf(stderr, "boxctl: error: %s: boxd did not send decision %" PRIu64
					"'s request\n", box, ask_id);
			goto out;
		}
		if (!rep->policy_file || !rep->has_policy_sha256) {
			fprintf(stderr, "boxctl: error: %s: the box runs no policy file to edit; "
					"nothing changed, decision %" PRIu64 " still waits\n", box,
				ask_id);
			goto out;
		}
		memcpy(want, rep->policy_sha256.data, sizeof(want));
		if (pass == 1) {
			if (strcmp(file, rep->policy_file) != 0) {
				fprintf(stderr, "boxctl: error: %s: its policy file changed meanwhile; "
						"nothing changed, decision %" PRIu64 " still waits\n",
					box, ask_id);
				goto out;
			}
			break;
		}
		file = strdup(rep->policy_file);
		if (!file)
			goto oom;
		lockfd = lock_dir_of(file);
		if (lockfd < 0) {
			fprintf(stderr, "boxctl: error: %s: cannot be edited: %s; nothing changed, "
					"decision %" PRIu64 " still waits\n", file,
				replace_error(lockfd), ask_id);
			goto out;
		}
	}

	/* 2. The file as the box loaded it: read as the caller, never through a symlink. */
	{
		const char *base;
		struct stat st;
		_cleanup_close_ int dirfd = open_parent(file, &base);
		r = dirfd < 0 ? dirfd : read_policy_at(dirfd, base, &text, &len, &st);
	}
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: cannot be edited: %s; nothing changed, decision "
				"%" PRIu64 " still waits\n", file, replace_error(r), ask_id);
		goto out;
	}
	logchain_sha256(text, len, sha);
	if (memcmp(sha, want, sizeof(sha)) != 0) {
		fprintf(stderr, "boxctl: error: %s: changed since the box loaded it (the box runs "
				"another text; `boxctl policy reload %s` puts the file in force); nothing "
				"changed, decision %" PRIu64 " still waits\n", file, box, ask_id);
		goto out;
	}

	/* 3. The edit, checked as `boxctl policy reload` checks a file. */
	struct bp_load_options o = { .schema = NULL, .allow_unknown_namespaces = true };
	if (bp_schema_new(&schema) < 0)
		goto oom;
	o.schema = schema;
	r = bp_policy_load(text, len, &o, &p, NULL);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: does not load here (%s); nothing changed, "
				"decision %" PRIu64 " still waits\n", file, strerror(-r), ask_id);
		goto out;
	}
	code = always_edits(file, text, len, p, schema, a, &edits, &n_edits);
	if (code != 0) {
		fprintf(stderr, "boxctl: nothing changed, decision %" PRIu64 " still waits\n", ask_id);
		code = BOXCTL_EXIT_FAILURE;
		goto out;
	}
	code = BOXCTL_EXIT_FAILURE;
	ntext = edits_apply(text, len, edits, n_edits, &nlen);
	if (!ntext) {
		fprintf(stderr, "boxctl: error: %s: the edited policy would pass %u bytes; nothing "
				"changed, decision %" PRIu64 " still waits\n", file,
			(unsigned)POLICY_TEXT_CAP, ask_id);
		goto out;
	}
	if (print_diff(out, file, text, len, ntext, nlen, edits, n_edits) < 0)
		goto oom;
	fflush(out);
	r = policy_text_check(file, ntext, nlen);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: the edited policy does not load; nothing "
				"changed, decision %" PRIu64 " still waits\n", file, ask_id);
		goto out;
	}

	/* 4. Written atomically as the file's owner; then in force if the box still runs TEXT. */
	r = replace_policy_as(file, text, len, ntext, nlen);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: cannot be edited: %s; nothing changed, decision "
				"%" PRIu64 " still waits\n", file, replace_error(r), ask_id);
		goto out;
	}
	r = policy_reload_send(box, ntext, nlen, file, want, &rm, &err);
	const Box__PolicyReloadResult *res = r > 0 ? (const Box__PolicyReloadResult *)rm.msg : NULL;
	if (!res || res->status != BOX__REPLY_STATUS__REPLY_OK) {
		/* Put the file back as it was (unless someone changed it since). */
		int b = replace_policy_as(file, ntext, nlen, text, len);
		fprintf(stderr, "boxctl: error: reload %s: %s; %s, decision %" PRIu64 " still waits\n",
			box, res && res->error ? res->error : err ? err : r == 0 ? "no such box" :
			strerror(r < 0 ? -r : EIO), b == 0 ? "the file is as it was" :
			"the file keeps the edit (it could not be put back)", ask_id);
		goto out;
	}
	fprintf(out, "box %s: policy generation %llu in force (%s): requests equal to decision %"
		     PRIu64 " are permitted by the policy from now on\n",
		res->name ? res->name : box, (unsigned long long)res->generation, file, ask_id);

	/* 5. The held request itself. */
	box_ipc_msg_done(&m);
	Box__AskRequest an = BOX__ASK_REQUEST__INIT;
	an.box = (char *)box;
	an.has_ask_id = an.has_permit = true;
	an.ask_id = ask_id;
	an.permit = true;
	r = ask_call(box, &an, &m);
	if (r != 1) {
		fprintf(stderr, "boxctl: the policy is changed and in force, but decision %" PRIu64
				" was not answered (above)\n", ask_id);
		code = r;
		goto out;
	}
	fprintf(out, "decision %" PRIu64 " of box %s permitted\n", ask_id, box);
	code = BOXCTL_EXIT_OK;
	goto out;
oom:
	fprintf(stderr, "boxctl: error: out of memory\n");
	code = BOXCTL_EXIT_FAILURE;
out:
	box_ipc_msg_done(&m);
	box_ipc_msg_done(&rm);
	bp_policy_free(p);
	bp_schema_free(schema);
	edits_free(edits, n_edits);
	free(text);
	free(ntext);
	free(file);
	free(err);
	return code;
}
