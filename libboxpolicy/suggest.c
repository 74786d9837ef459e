/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suggest.c — the tail of a load error that names something the schema does
 * not know (an action, a field of an action's input, an enum value, an entity
 * type): the nearest valid name, when one is close, and the list of valid names.
 *
 *   unknown action `Box::Action::"fs:raed"`; did you mean `fs:read`? valid actions: fs:read, …
 *
 * "Close" is the optimal-string-alignment distance (Damerau–Levenshtein with
 * adjacent transpositions, each edit costing 1) of at most a third of the
 * misspelled word's length, at least 1 and at most 3, and smaller than the
 * word's length (so a one-letter word never "means" another one-letter
 * name). On a tie the name listed first in the schema wins, so the output is
 * deterministic. Names longer than SUGGEST_NAME_MAX are never suggested.
 *
 * Pure: writes only into the caller's buffer. Trusts nothing: the word comes
 * from the policy text, the names from the schema (MCP servers name tools).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define SUGGEST_NAME_MAX 64
/* the list stops (", ...") once the message would pass this many bytes */
#define SUGGEST_LIST_BUDGET 480

size_t
name_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > SUGGEST_NAME_MAX || lb > SUGGEST_NAME_MAX)
		return SIZE_MAX;
	/* three rows of the OSA table: i-2, i-1, i */
	size_t rows[3][SUGGEST_NAME_MAX + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev[j] + 1; /* deletion */
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1; /* insertion */
			if (prev[j - 1] + cost < best)
				best = prev[j - 1] + cost; /* substitution */
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1; /* transposition */
			cur[j] = best;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *
nearest_name(const char *word, const void *set, size_t n, name_at_fn at)
{
	size_t len = strlen(word);
	size_t limit = len / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	if (limit >= len)
		limit = len ? len - 1 : 0;
	const char *best = NULL;
	size_t best_d = limit + 1;
	for (size_t i = 0; i < n; i++) {
		const char *name = at(set, i);
		if (!name || strcmp(name, word) == 0)
			continue;
		size_t d = name_distance(word, name);
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	return best;
}

static void
append(char *buf, size_t size, size_t *len, const char *s)
{
	int w = snprintf(buf + *len, size - *len, "%s", s);
	if (w < 0)
		return;
	*len += (size_t)w < size - *len ? (size_t)w : size - *len - 1;
}

void
suggest_names(char *buf, size_t size, const char *word, const void *set, size_t n,
	      name_at_fn at, const char *valid_what)
{
	if (!buf || size == 0 || n == 0)
		return;
	size_t len = strnlen(buf, size - 1);
	const char *near = word ? nearest_name(word, set, n, at) : NULL;
	if (near) {
		append(buf, size, &len, "; did you mean `");
		append(buf, size, &len, near);
		append(buf, size, &len, "`? ");
	} else {
		append(buf, size, &len, "; ");
	}
	append(buf, size, &len, "valid ");
	append(buf, size, &len, valid_what);
	append(buf, size, &len, ": ");
	size_t start = len;
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const char *name = at(set, i);
		if (!name)
			continue;
		if (!first && len - start + strlen(name) + 2 > SUGGEST_LIST_BUDGET) {
			append(buf, size, &len, ", ...");
			return;
		}
		if (!first)
			append(buf, size, &len, ", ");
		append(buf, size, &len, name);
		first = false;
	}
}

/* ---- name sets the validators pass ---- */

const char *
name_at_strings(const void *set, size_t i)
{
	return ((const char *const *)set)[i];
}

const char *
name_at_attrs(const void *set, size_t i)
{
	return ((const struct rattr *)set)[i].name;
}

/* The schema's actions of one entity type (Box::Action, NS::Action): others read as NULL. */
struct action_names {
	const struct bp_schema *s;
	const char *etype;
};

static const char *
name_at_action(const void *set, size_t i)
{
	const struct action_names *an = set;
	const struct s_action *a = &an->s->actions[i];
	return strcmp(a->etype, an->etype) == 0 ? a->id : NULL;
}

void
suggest_action(char *buf, size_t size, const struct bp_schema *s, const char *etype,
	       const char *id)
{
	struct action_names an = { .s = s, .etype = etype };
	bool any = false;
	for (size_t i = 0; i < s->n_actions && !any; i++)
		any = name_at_action(&an, i) != NULL;
	if (any)
		suggest_names(buf, size, id, &an, s->n_actions, name_at_action, "actions");
}

void
suggest_enum(char *buf, size_t size, const struct s_enum *e, const char *id)
{
	char what[200];
	snprintf(what, sizeof(what), "values of %s", e->etype);
	suggest_names(buf, size, id, e->ids, e->n, name_at_strings, what);
}

void
suggest_entity_type(char *buf, size_t size, const struct bp_schema *s, const char *etype)
{
	/* the fixed types and the enumerations; MCP namespaces are named in their own errors */
	const char *names[3 + 16];
	size_t n = 0;
	names[n++] = "Box::Agent";
	names[n++] = "Box::Resource";
	names[n++] = "Box::Action";
	for (size_t i = 0; i < s->n_enums && n < sizeof(names) / sizeof(names[0]); i++)
		names[n++] = s->enums[i].etype;
	suggest_names(buf, size, etype, names, n, name_at_strings, "entity types");
}
