/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_sh_parse.c — box-shell's parser, arithmetic and variable caps as
 * units (libshell/parse.c, arith.c, vars.c; no execution): bash's syntax
 * error messages and their lines, the nesting cap, here-document bodies, the
 * node shapes, arithmetic results and errors, a variable's length cap and
 * the array index cap.
 * Trusts: nothing; it is test code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libshell/sh.h"
#include "tap.h"

/* exec.c's message functions: captured (no execution is linked). */
static char msgs[8][512];
static int msg_lines[8];
static int nmsgs;

static void
capture(int line, const char *fmt, va_list ap)
{
	if (nmsgs < 8) {
		vsnprintf(msgs[nmsgs], sizeof msgs[0], fmt, ap);
		msg_lines[nmsgs] = line;
	}
	nmsgs++;
}

void
sh_err(struct sh_shell *sh, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	capture(sh->lineno, fmt, ap);
	va_end(ap);
}

void
sh_errline(struct sh_shell *sh, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	capture(line, fmt, ap);
	va_end(ap);
}

void
sh_errline_in(struct sh_shell *sh, const char *in, int line, const char *fmt, ...)
{
	va_list ap;
	(void)in;
	va_start(ap, fmt);
	capture(line, fmt, ap);
	va_end(ap);
}

static struct sh_shell *sh;

/* parse_all's list of complete commands, down to its only command. */
static struct node *
one(struct node *n)
{
	return n && n->type == N_LIST && n->u.p.n == 1 ? n->u.p.v[0] : n;
}

static int
parse(const char *text, struct node **out)
{
	nmsgs = 0;
	memset(msgs, 0, sizeof msgs);
	return parse_all(sh, text, strlen(text), 1, out);
}

static void
test_syntax_error_token(void)
{
	struct node *n;
	CHECK_INT(parse("echo a\nfi\n", &n), -1);
	CHECK_INT(nmsgs, 2);
	CHECK_STR(msgs[0], "syntax error near unexpected token `fi'");
	CHECK_INT(msg_lines[0], 2);
	CHECK_STR(msgs[1], "`fi'");
	CHECK_INT(parse("echo a; )", &n), -1);
	CHECK_STR(msgs[0], "syntax error near unexpected token `)'");
	CHECK_STR(msgs[1], "`echo a; )'");
	CHECK_INT(parse("if ; then :; fi", &n), -1);
	CHECK_STR(msgs[0], "syntax error near unexpected token `;'");
	CHECK_INT(parse("{ echo a }", &n), -1);
	CHECK_STR(msgs[0], "syntax error: unexpected end of file");
}

static void
test_syntax_error_eof(void)
{
	struct node *n;
	CHECK_INT(parse("if true; then\necho x\n", &n), -1);
	CHECK_STR(msgs[0], "syntax error: unexpected end of file");
	CHECK_INT(msg_lines[0], 3);
	CHECK_INT(parse("echo 'abc\n", &n), -1);
	CHECK_STR(msgs[0], "unexpected EOF while looking for matching `''");
	CHECK_INT(msg_lines[0], 1);
	CHECK_INT(parse("echo \"a$(b\n", &n), -1);
	CHECK(nmsgs >= 1);
	CHECK_INT(parse("echo ${x\n", &n), -1);
	CHECK(nmsgs >= 1);
}

static char *
repeat(const char *a, int n, const char *mid, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), lm = strlen(mid);
	char *s = malloc((la + lb) * (size_t)n + lm + 1);
	char *p = s;
	for (int i = 0; i < n; i++, p += la)
		memcpy(p, a, la);
	memcpy(p, mid, lm);
	p += lm;
	for (int i = 0; i < n; i++, p += lb)
		memcpy(p, b, lb);
	*p = 0;
	return s;
}

static void
test_nesting_cap(void)
{
	struct node *n = NULL;
	char *ok = repeat("( ", 300, "echo", " )");
	CHECK_INT(parse(ok, &n), 0);
	CHECK(n != NULL);
	node_free(n);
	free(ok);
	char *deep = repeat("( ", 10000, "echo", " )");
	CHECK_INT(parse(deep, &n), -1);
	CHECK_STR(msgs[0], "syntax error: nesting too deep");
	free(deep);
	char *subs = repeat("$(", 5000, "x", ")");
	char *cmd = malloc(strlen(subs) + 6);
	sprintf(cmd, "echo %s", subs);
	CHECK_INT(parse(cmd, &n), -1);
	CHECK_STR(msgs[0], "syntax error: nesting too deep");
	free(subs);
	free(cmd);
	/* the cap is per command: a long flat script is fine */
	char *flat = repeat("{ echo; }\n", 20000, "", "");
	CHECK_INT(parse(flat, &n), 0);
	CHECK_INT(n ? (long long)n->u.p.n : 0, 20000);
	node_free(n);
	free(flat);
}

static void
test_heredoc(void)
{
	struct node *n;
	CHECK_INT(parse("cat <<E; echo after\nbody $x\n  E\nE\n", &n), 0);
	struct node *m = one(n);
	CHECK(m && m->type == N_LIST && m->u.p.v[0]->redirs);
	if (m && m->type == N_LIST && m->u.p.v[0]->redirs) {
		struct redir *r = m->u.p.v[0]->redirs;
		CHECK_INT(r->type, R_HEREDOC);
		CHECK_STR(r->body, "body $x\n  E\n");
		CHECK(!r->quoted);
	}
	node_free(n);
	CHECK_INT(parse("cat <<-'E'\n\tx\n\tE\n", &n), 0);
	m = one(n);
	if (m && m->redirs) {
		CHECK_STR(m->redirs->body, "x\n");
		CHECK(m->redirs->quoted && m->redirs->strip_tabs);
	} else
		CHECK(0);
	node_free(n);
	CHECK_INT(parse("cat <<E\nno end\n", &n), 0);
	CHECK_INT(nmsgs, 1);
	CHECK_STR(msgs[0], "warning: here-document at line 1 delimited by end-of-file (wanted `E')");
	node_free(n);
}

static void
test_shapes(void)
{
	struct node *n;
	CHECK_INT(parse("f() { :; }", &n), 0);
	CHECK(one(n) && one(n)->type == N_FUNC && strcmp(one(n)->u.fn.name, "f") == 0);
	node_free(n);
	CHECK_INT(parse("function g { :; }", &n), 0);
	CHECK(one(n) && one(n)->type == N_FUNC);
	node_free(n);
	CHECK_INT(parse("a | b && c || ! d", &n), 0);
	CHECK(one(n) && one(n)->type == N_OR && one(n)->u.b.a->type == N_AND && one(n)->u.b.a->u.b.a->type == N_PIPE);
	node_free(n);
	CHECK_INT(parse("case x in a|b) echo;; *) ;& esac", &n), 0);
	CHECK(one(n) && one(n)->type == N_CASE && one(n)->u.c.items && one(n)->u.c.items->next &&
	      one(n)->u.c.items->next->term == 1);
	node_free(n);
	CHECK_INT(parse("[[ a == b && ( -f x || ! -d y ) ]]", &n), 0);
	CHECK(one(n) && one(n)->type == N_DBRACK);
	node_free(n);
	CHECK_INT(parse("for ((i=0; i<3; i++)); do :; done", &n), 0);
	CHECK(one(n) && one(n)->type == N_AFOR && strcmp(one(n)->u.af.cond, " i<3") == 0);
	node_free(n);
	CHECK_INT(parse("x=(1 \"2 3\") y=1 cmd arg >out 2>&1", &n), 0);
	CHECK(one(n) && one(n)->type == N_SIMPLE && one(n)->u.s.assigns && one(n)->u.s.assigns->next &&
	      strcmp(one(n)->u.s.words->s, "cmd") == 0 && one(n)->redirs && one(n)->redirs->next);
	node_free(n);
	/* a case pattern's ')' inside $( ) */
	CHECK_INT(parse("x=$(case a in a) echo y;; esac)", &n), 0);
	node_free(n);
}

static void
test_arith(void)
{
	intmax_t v = 0;
	nmsgs = 0;
	CHECK_INT(arith_eval(sh, "1+2*3", &v), 0);
	CHECK_INT(v, 7);
	CHECK_INT(arith_eval(sh, "2**10 - (7 % 4) << 1", &v), 0);
	CHECK_INT(v, 2042);
	CHECK_INT(arith_eval(sh, "x=5, x*=2, x", &v), 0);
	CHECK_INT(v, 10);
	CHECK_STR(var_value(sh, "x"), "10");
	CHECK_INT(arith_eval(sh, "16#ff + 0x10 + 010", &v), 0);
	CHECK_INT(v, 255 + 16 + 8);
	CHECK_INT(arith_eval(sh, "1 ? 2 : (y=3)", &v), 0);
	CHECK_INT(v, 2);
	CHECK(var_value(sh, "y") == NULL);
	CHECK_INT(arith_eval(sh, "1/0", &v), -1);
	CHECK_STR(msgs[0], "1/0: division by 0 (error token is \"0\")");
	nmsgs = 0;
	CHECK_INT(arith_eval(sh, "1+", &v), -1);
	CHECK_STR(msgs[0], "1+: syntax error: operand expected (error token is \"+\")");
	nmsgs = 0;
	/* a variable referring to itself: the recursion cap, not a crash */
	var_set(sh, "r", "r+1", 0);
	CHECK_INT(arith_eval(sh, "r", &v), -1);
	CHECK(nmsgs == 1 && strstr(msgs[0], "expression recursion level exceeded"));
}

static void
test_value_caps(void)
{
	size_t big = SH_MAX_VALUE + 1;
	char *s = malloc(big + 1);
	memset(s, 'x', big);
	s[big] = 0;
	nmsgs = 0;
	CHECK_INT(var_set(sh, "v", s, 0), -1);
	CHECK_STR(msgs[0], "v: value too long (max 16777216 bytes)");
	s[SH_MAX_VALUE] = 0;
	CHECK_INT(var_set(sh, "v", s, 0), 0);
	free(s);
	nmsgs = 0;
	CHECK_INT(var_set_elem(sh, "a", SH_MAX_ARRAY + 1, "x"), -1);
	CHECK(nmsgs == 1 && strstr(msgs[0], "array index too large"));
	CHECK_INT(var_set_elem(sh, "a", 3, "x"), 0);
	CHECK_INT((long long)var_array_count(var_get(sh, "a")), 1);
	var_set(sh, "ro", "1", V_READONLY);
	nmsgs = 0;
	CHECK_INT(var_set(sh, "ro", "2", 0), -1);
	CHECK_STR(msgs[0], "ro: readonly variable");
}

int
main(void)
{
	sh = sh_new(NULL, NULL, "test", 0, NULL);
	RUN(test_syntax_error_token);
	RUN(test_syntax_error_eof);
	RUN(test_nesting_cap);
	RUN(test_heredoc);
	RUN(test_shapes);
	RUN(test_arith);
	RUN(test_value_caps);
	sh_free(sh);
	return tap_done();
}
