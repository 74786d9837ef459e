/* SPDX-License-Identifier: Apache-2.0 */
/*
 * askfield.c — a held request's input fields as text for a person (askfield.h): what
 * `boxctl run`'s prompt and AskReply listings show of "the action, its fields"
 * (docs/boxctl.1.md). The values are the agent's (a command line, a path, a host), so the
 * text holds no control character and only whole UTF-8 characters (AskReply's validator,
 * proto/validate.c, refuses anything else, and boxctl escapes C1 and bidi controls once
 * more when it prints): a control byte or a byte that does not start a valid UTF-8
 * character is written as an escape. Everything is bounded: BOX_ASK_FIELD_TEXT_MAX bytes a
 * value, BOX_ASK_FIELDS_MAX fields, 8 levels of nesting.
 * Trusts: nothing in the values (box-policyd validated their shape, not their bytes).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "askfield.h"
#include "text.h"

#define ASK_FIELD_DEPTH_MAX 8
#define CUT_MARK "..."

struct text {
	char *buf;   /* BOX_ASK_FIELD_TEXT_MAX + 1 bytes */
	size_t len;
	bool full;   /* something did not fit: cut, ends in CUT_MARK */
};

/* N bytes that go together (one character, one escape), or nothing when they do not fit. */
static void
put(struct text *t, const char *s, size_t n)
{
	if (t->full)
		return;
	if (t->len + n > BOX_ASK_FIELD_TEXT_MAX - (sizeof(CUT_MARK) - 1)) {
		t->full = true;
		return;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

static void
put_str(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* The length of the valid UTF-8 character at P (LEFT bytes there), or 0. */
static size_t
utf8_char(const unsigned char *p, size_t left)
{
	size_t need = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	if (need == 0 || need > left || !box_valid_utf8((const char *)p, need))
		return 0;
	return need;
}

/* S's bytes: controls and bytes of no valid character escaped. */
static void
put_escaped(struct text *t, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	char esc[8];

	while (left && !t->full) {
		unsigned c = *p;
		size_t n = 1;
		if (c == '\n') {
			put(t, "\\n", 2);
		} else if (c == '\t') {
			put(t, "\\t", 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put_str(t, esc);
		} else if (c < 0x80) {
			put(t, (const char *)p, 1);
		} else if ((n = utf8_char(p, left)) > 0) {
			put(t, (const char *)p, n);
		} else {
			n = 1;
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put_str(t, esc);
		}
		p += n;
		left -= n;
	}
}

static void put_value(struct text *t, const Box__PolicyValue *v, bool quote, int depth);

static void
put_fields(struct text *t, Box__PolicyField *const *f, size_t n, int depth)
{
	put(t, "{", 1);
	for (size_t i = 0; i < n && !t->full; i++) {
		if (i)
			put(t, ", ", 2);
		put_escaped(t, f[i]->name);
		put(t, ": ", 2);
		put_value(t, f[i]->value, true, depth + 1);
	}
	put(t, "}", 1);
}

/* V as text; QUOTE: a string inside a set or record, in double quotes. */
static void
put_value(struct text *t, const Box__PolicyValue *v, bool quote, int depth)
{
	char num[32];

	if (depth > ASK_FIELD_DEPTH_MAX) {
		put_str(t, CUT_MARK);
		return;
	}
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR:
		if (quote)
			put(t, "\"", 1);
		put_escaped(t, v->str);
		if (quote)
			put(t, "\"", 1);
		return;
	case BOX__POLICY_VALUE__KIND_INTEGER:
		snprintf(num, sizeof(num), "%lld", (long long)v->integer);
		put_str(t, num);
		return;
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		put_str(t, v->boolean ? "true" : "false");
		return;
	case BOX__POLICY_VALUE__KIND_SET:
		put(t, "[", 1);
		for (size_t i = 0; v->set && i < v->set->n_elems && !t->full; i++) {
			if (i)
				put(t, ", ", 2);
			put_value(t, v->set->elems[i], true, depth + 1);
		}
		put(t, "]", 1);
		return;
	case BOX__POLICY_VALUE__KIND_RECORD:
		if (v->record)
			put_fields(t, v->record->fields, v->record->n_fields, depth);
		else
			put(t, "{}", 2);
		return;
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default:
		put_str(t, "(no value)");
		return;
	}
}

void
ask_fields_render(struct ask_fields *fs, Box__PolicyField *const *in, size_t n)
{
	fs->n = 0;
	for (size_t i = 0; i < n && fs->n < BOX_ASK_FIELDS_MAX; i++) {
		const Box__PolicyField *pf = in[i];
		if (!pf || !pf->value || !box_text_len_ok(pf->name, 1, 128) ||
		    !box_text_no_ctl(pf->name) || !box_valid_utf8(pf->name, strlen(pf->name)))
			continue;
		struct text t = { .buf = fs->text[fs->n] };
		put_value(&t, pf->value, false, 0);
		if (t.full) {
			memcpy(t.buf + t.len, CUT_MARK, sizeof(CUT_MARK) - 1);
			t.len += sizeof(CUT_MARK) - 1;
		}
		t.buf[t.len] = '\0';
		Box__AskField *f = &fs->f[fs->n];
		box__ask_field__init(f);
		f->name = pf->name;
		f->value = t.buf;
		fs->p[fs->n++] = f;
	}
}
