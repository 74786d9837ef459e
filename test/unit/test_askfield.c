/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_askfield.c — boxd/askfield.c, a held request's fields as the text `boxctl run`'s
 * prompt shows (AskEntry.fields, proto/boxd.proto): each kind of value, escapes for control
 * bytes and for bytes of no valid UTF-8 character, the cut at BOX_ASK_FIELD_TEXT_MAX on a
 * whole character, the nesting bound, the field count bound, and that every rendering is
 * one AskReply's validator (proto/validate.c) accepts.
 * Trusts: nothing; test code.
 */
#include <stdlib.h>
#include <string.h>

#include "boxd/askfield.h"
#include "tap.h"

static Box__PolicyValue vals[40];
static Box__PolicyField flds[40];
static Box__PolicyField *fptrs[40];
static size_t nv, nf;

static Box__PolicyValue *
str_v(const char *s)
{
	Box__PolicyValue *v = &vals[nv++];
	box__policy_value__init(v);
	v->kind_case = BOX__POLICY_VALUE__KIND_STR;
	v->str = (char *)s;
	return v;
}

static Box__PolicyField *
field(const char *name, Box__PolicyValue *v)
{
	Box__PolicyField *f = &flds[nf];
	box__policy_field__init(f);
	f->name = (char *)name;
	f->value = v;
	fptrs[nf] = f;
	nf++;
	return f;
}

/* The reply a listing of one ask with FS would be: does the client's validator take it? */
static bool
reply_valid(struct ask_fields *fs)
{
	Box__AskReply rep = BOX__ASK_REPLY__INIT;
	Box__AskEntry e = BOX__ASK_ENTRY__INIT, *ep = &e;
	char *rules[] = { (char *)"r" };
	e.ask_id = 1;
	e.action = (char *)"shell:exec";
	e.resource = (char *)"x";
	e.rules = rules;
	e.n_rules = 1;
	e.message = (char *)"m";
	e.source = (char *)"box-shell";
	e.fields = fs->p;
	e.n_fields = fs->n;
	rep.status = BOX__REPLY_STATUS__REPLY_OK;
	rep.asks = &ep;
	rep.n_asks = 1;
	return box_validate_ask_reply(&rep) == 0;
}

static void
reset(void)
{
	nv = nf = 0;
}

static void
test_kinds(void)
{
	static struct ask_fields fs;
	reset();
	field("command", str_v("echo hi | head -1"));
	Box__PolicyValue *i = &vals[nv++];
	box__policy_value__init(i);
	i->kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	i->integer = -42;
	field("n", i);
	Box__PolicyValue *b = &vals[nv++];
	box__policy_value__init(b);
	b->kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
	b->boolean = true;
	field("flag", b);
	Box__PolicyValue *elems[2] = { str_v("a"), str_v("b c") };
	Box__PolicyValueSet set = BOX__POLICY_VALUE_SET__INIT;
	set.elems = elems;
	set.n_elems = 2;
	Box__PolicyValue *sv = &vals[nv++];
	box__policy_value__init(sv);
	sv->kind_case = BOX__POLICY_VALUE__KIND_SET;
	sv->set = &set;
	field("argv", sv);
	Box__PolicyField inner = BOX__POLICY_FIELD__INIT, *innerp = &inner;
	inner.name = (char *)"k";
	inner.value = str_v("v");
	Box__PolicyValueRecord rec = BOX__POLICY_VALUE_RECORD__INIT;
	rec.fields = &innerp;
	rec.n_fields = 1;
	Box__PolicyValue *rv = &vals[nv++];
	box__policy_value__init(rv);
	rv->kind_case = BOX__POLICY_VALUE__KIND_RECORD;
	rv->record = &rec;
	field("args", rv);
	ask_fields_render(&fs, fptrs, nf);
	CHECK_INT(fs.n, 5);
	CHECK(strcmp(fs.p[0]->name, "command") == 0);
	CHECK(strcmp(fs.p[0]->value, "echo hi | head -1") == 0);
	CHECK(strcmp(fs.p[1]->value, "-42") == 0);
	CHECK(strcmp(fs.p[2]->value, "true") == 0);
	CHECK(strcmp(fs.p[3]->value, "[\"a\", \"b c\"]") == 0);
	CHECK(strcmp(fs.p[4]->value, "{k: \"v\"}") == 0);
	CHECK(reply_valid(&fs));
}

/* What the agent chose cannot reach a terminal as a control: escapes instead. */
static void
test_escapes(void)
{
	static struct ask_fields fs;
	reset();
	field("command", str_v("a\nb\tc\x1b[2Jd\x7f\x01"));
	field("path", str_v("caf\xc3\xa9 \xff\xc3 \xe2\x80"));
	ask_fields_render(&fs, fptrs, nf);
	CHECK_INT(fs.n, 2);
	CHECK(strcmp(fs.p[0]->value, "a\\nb\\tc\\x1b[2Jd\\x7f\\x01") == 0);
	/* é kept; 0xff, a lone lead byte and a cut 3-byte character escaped byte by byte */
	CHECK(strcmp(fs.p[1]->value, "caf\xc3\xa9 \\xff\\xc3 \\xe2\\x80") == 0);
	CHECK(reply_valid(&fs));
}

/* A long value is cut on a whole character and says so; a long escape is never split. */
static void
test_cut(void)
{
	static struct ask_fields fs;
	static char big[4000], ctl[2000];
	reset();
	for (size_t i = 0; i + 2 < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	memset(ctl, 0x1b, sizeof(ctl) - 1);
	field("a", str_v(big));
	field("b", str_v(ctl));
	ask_fields_render(&fs, fptrs, nf);
	CHECK_INT(fs.n, 2);
	for (size_t k = 0; k < 2; k++) {
		size_t n = strlen(fs.p[k]->value);
		CHECK(n <= BOX_ASK_FIELD_TEXT_MAX);
		CHECK(n > BOX_ASK_FIELD_TEXT_MAX - 8);
		CHECK(strcmp(fs.p[k]->value + n - 3, "...") == 0);
	}
	CHECK(strncmp(fs.p[1]->value + strlen(fs.p[1]->value) - 7, "\\x1b...", 7) == 0);
	CHECK(reply_valid(&fs));
}

/* At most BOX_ASK_FIELDS_MAX fields; a name that is not text is left out; nesting bounded. */
static void
test_bounds(void)
{
	static struct ask_fields fs;
	reset();
	field("bad\nname", str_v("x"));
	for (int i = 0; i < 20; i++)
		field("f", str_v("v"));
	ask_fields_render(&fs, fptrs, nf);
	CHECK_INT(fs.n, BOX_ASK_FIELDS_MAX);
	for (size_t k = 0; k < fs.n; k++)
		CHECK(strcmp(fs.p[k]->name, "f") == 0);

	/* 12 sets, one inside the other. */
	reset();
	static Box__PolicyValueSet sets[12];
	static Box__PolicyValue *inner[12];
	Box__PolicyValue *v = str_v("deep");
	for (int i = 0; i < 12; i++) {
		box__policy_value_set__init(&sets[i]);
		inner[i] = v;
		sets[i].elems = &inner[i];
		sets[i].n_elems = 1;
		v = &vals[nv++];
		box__policy_value__init(v);
		v->kind_case = BOX__POLICY_VALUE__KIND_SET;
		v->set = &sets[i];
	}
	field("nest", v);
	ask_fields_render(&fs, fptrs, nf);
	CHECK_INT(fs.n, 1);
	CHECK(strstr(fs.p[0]->value, "deep") == NULL);
	CHECK(strstr(fs.p[0]->value, "[[[[[[[[[...]]]]]]]]]") != NULL);
	CHECK(reply_valid(&fs));
}

int
main(void)
{
	RUN(test_kinds);
	RUN(test_escapes);
	RUN(test_cut);
	RUN(test_bounds);
	return tap_done();
}
