/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — the lexer and parser of box-shell's language:
 * POSIX sh as dash reads it plus bash's [[ ]], (( )), arrays, $'…', <<<,
 * &>, |&, function NAME, ;& ;;&.
 *
 * Words are kept as their raw text (quotes and all); expand.c interprets
 * them at run time. A $(…) is parsed here once to find its end (so a case
 * pattern's ')' inside it is right) and again when it runs.
 *
 * Trusts: nothing in the text. Nesting is capped (SH_MAX_PARSE_DEPTH), so a
 * 10,000-deep "((((" is a syntax error, not a stack overflow; NUL bytes are
 * refused by the callers before the text reaches here. Errors are printed as
 * bash does ("box-shell: line N: syntax error near unexpected token `X'").
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sh.h"

enum tok {
	T_EOF, T_NL, T_WORD, T_SEMI, T_AMP, T_AND, T_OR, T_PIPE, T_PIPEAMP, T_DSEMI, T_SEMIAMP,
	T_DSEMIAMP, T_LPAREN, T_RPAREN, T_REDIR,
};

struct pending_heredoc {
	struct redir *r;
	struct pending_heredoc *next;
};

struct alias_guard {
	char *name;
	size_t end;
};

/* Offsets of the backslash-newline pairs the scanners dropped from the word being scanned
 * (see hole_add). At most one per two bytes of the text. */
struct holes {
	size_t *v;
	size_t n, cap;
};

struct parser {
	struct sh_shell *sh;
	char *s;          /* owned copy (aliases splice into it) */
	size_t len, pos;
	int line;
	bool have;        /* lookahead valid */
	enum tok t;
	char *word;       /* T_WORD text (owned until consumed) */
	int tline;        /* line of the token */
	size_t tstart;    /* offset of the token */
	enum redir_type rtype;
	int rfd;
	bool rstrip;      /* <<- */
	struct pending_heredoc *hd, **hd_tail;
	bool error;
	bool stop_rparen; /* sub-parser of $(...) */
	bool cmdsub_body; /* the text is a $(...)'s, run (cmdsub_run): see read_heredocs */
	struct alias_guard guards[16];
	int nguards;
	bool alias_next;  /* previous alias ended in a blank */
	int depth;
	bool in_dbrack;
	bool no_alias;    /* a $( ) sub-parser: never splice into the shared text */
	bool quiet;       /* parse_complete: print nothing, change nothing in sh */
	bool at_eof;      /* the error was the text ending too early (more input would do) */
	bool in_eval;     /* eval's text: bash's messages say "NAME: eval: line N:" */
	struct holes *holes; /* own_holes, or the parent's in a $( ) sub-parser */
	struct holes own_holes;
	bool scan_in_dq;  /* scan_dollar called from inside "…" */
	size_t len0;      /* the text's length before any alias spliced into it */
	size_t alias_end; /* the end of the alias text spliced in last (its newlines: no line) */
	char *orig;       /* the text before the first alias spliced into it (or NULL) */
	size_t orig_len;
};

/* Errors go to the shell's stderr, except for parse_complete's silent parse. */
#define PERR(p, ...)                                                          \
	do {                                                                  \
		if (!(p)->quiet)                                              \
			sh_errline_in((p)->sh, (p)->in_eval ? "eval" : NULL, __VA_ARGS__); \
	} while (0)

static int parse_depth_total;

static struct node *parse_list(struct parser *p, bool compound);
static struct node *parse_andor(struct parser *p);
static struct node *parse_command(struct parser *p);

bool
is_name(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

/* ---- errors ---- */

static void
print_line_of(struct parser *p, size_t off)
{
	if (p->orig) {
		/* aliases spliced into the text: bash shows the line as written (an offset
		 * past the splices, moved back by what they added) */
		long at = (long)off - ((long)p->len - (long)p->orig_len);
		size_t a = at < 0 ? 0 : (size_t)at > p->orig_len ? p->orig_len : (size_t)at, b = a;
		while (a > 0 && p->orig[a - 1] != '\n')
			a--;
		while (b < p->orig_len && p->orig[b] != '\n')
			b++;
		PERR(p, p->tline, "`%.*s'", (int)(b - a), p->orig + a);
		return;
	}
	size_t a = off, b = off;
	if (a > p->len)
		a = b = p->len;
	while (a > 0 && p->s[a - 1] != '\n')
		a--;
	while (b < p->len && p->s[b] != '\n')
		b++;
	PERR(p, p->tline, "`%.*s'", (int)(b - a), p->s + a);
}

static const char *
tok_text(struct parser *p)
{
	switch (p->t) {
	case T_EOF: return NULL;
	case T_NL: return "newline";
	case T_WORD: return p->word;
	case T_SEMI: return ";";
	case T_AMP: return "&";
	case T_AND: return "&&";
	case T_OR: return "||";
	case T_PIPE: return "|";
	case T_PIPEAMP: return "|&";
	case T_DSEMI: return ";;";
	case T_SEMIAMP: return ";&";
	case T_DSEMIAMP: return ";;&";
	case T_LPAREN: return "(";
	case T_RPAREN: return ")";
	case T_REDIR:
		switch (p->rtype) {
		case R_IN: return "<";
		case R_OUT: return ">";
		case R_CLOBBER: return ">|";
		case R_APPEND: return ">>";
		case R_RDWR: return "<>";
		case R_DUPIN: return "<&";
		case R_DUPOUT: return ">&";
		case R_HEREDOC: return "<<";
		case R_HERESTR: return "<<<";
		case R_ALLOUT: return "&>";
		case R_ALLAPPEND: return "&>>";
		default: return "?";
		}
	default: return "?";
	}
}

static void
syntax_error(struct parser *p)
{
	if (p->error)
		return;
	p->error = true;
	const char *t = tok_text(p);
	if (!t) {
		p->at_eof = true;
		PERR(p, p->line, "syntax error: unexpected end of file");
		return;
	}
	PERR(p, p->tline, "syntax error near unexpected token `%s'", t);
	print_line_of(p, p->tstart);
}

static void
error_msg(struct parser *p, int line, const char *msg)
{
	if (p->error)
		return;
	p->error = true;
	PERR(p, line, "%s", msg);
}

/* ---- lexer ---- */

/*
 * A backslash-newline is a line continuation: bash drops it before the lexer sees the text,
 * wherever it stands (inside a word, an operator, `$(`, `$((`, `))`, a double-quoted string,
 * ${…}, `…`), except inside single quotes, $'…', a comment and a quoted here-doc's body.
 * Words keep their raw text (expand.c reads them), so the scanners note each pair they pass
 * in that sense here, and add_seg leaves the noted pairs out of the word's text.
 */
static void
hole_add(struct parser *p, size_t at)
{
	struct holes *h = p->holes;
	if (h->n && h->v[h->n - 1] >= at)
		return; /* scanned a second time (a failed $(( guess) */
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 16;
		h->v = xrealloc(h->v, h->cap * sizeof *h->v);
	}
	h->v[h->n++] = at;
}

/* Past the backslash-newline pairs at j, noting them and counting their lines. */
static size_t
skip_cont(struct parser *p, size_t j)
{
	while (j + 1 < p->len && p->s[j] == '\\' && p->s[j + 1] == '\n') {
		hole_add(p, j);
		p->line++;
		j += 2;
	}
	return j;
}

/* The same as a look ahead: nothing noted, nothing counted. */
static size_t
peek_cont(const struct parser *p, size_t j)
{
	while (j + 1 < p->len && p->s[j] == '\\' && p->s[j + 1] == '\n')
		j += 2;
	return j;
}

/* Does a `$` at i start $( or ${ (a continuation between them allowed)? */
static bool
dollar_opens(const struct parser *p, size_t i)
{
	size_t j = peek_cont(p, i + 1);
	return j < p->len && (p->s[j] == '(' || p->s[j] == '{');
}

/* Append the text [i, e) to b without the noted backslash-newline pairs. */
static void
add_seg(struct parser *p, struct sbuf *b, size_t i, size_t e)
{
	const struct holes *h = p->holes;
	size_t k = 0;
	while (k < h->n && h->v[k] < i)
		k++;
	while (i < e) {
		size_t stop = e;
		if (k < h->n && h->v[k] < e)
			stop = h->v[k++];
		sb_addn(b, p->s + i, stop - i);
		i = stop + 2;
	}
}

static bool
is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
	       c == '>' || c == '(' || c == ')';
}

static void
read_heredocs(struct parser *p)
{
	while (p->hd) {
		struct pending_heredoc *h = p->hd;
		p->hd = h->next;
		struct redir *r = h->r;
		free(h);
		/* The delimiter is the word with its quotes removed: inside "…" a backslash
		 * quotes only $ ` " \ (<<"\EOF" ends at \EOF), inside '…' nothing. */
		struct sbuf d = {0};
		const char *w = r->word;
		char in = 0;
		for (size_t i = 0; w[i]; i++) {
			if ((w[i] == '\'' && in != '"') || (w[i] == '"' && in != '\'')) {
				r->quoted = true;
				in = in ? 0 : w[i];
				continue;
			}
			if (w[i] == '\\' && w[i + 1] && in != '\'' &&
			    (in != '"' || strchr("$`\"\\", w[i + 1]))) {
				r->quoted = true;
				i++;
			}
			sb_addc(&d, w[i]);
		}
		char *delim = sb_take(&d);
		size_t dl = strlen(delim);
		struct sbuf body = {0};
		int start_line = p->line;
		bool found = false, rparen_end = false;
		struct sbuf ln = {0};
		while (p->pos < p->len) {
			/* One line. In an unquoted body a backslash-newline joins the next line to
			 * it before the delimiter is looked for (bash: "EO\<newline>F" ends it);
			 * <<- strips the tabs of the first line only. */
			ln.len = 0;
			size_t line_start = p->pos;
			int line0 = p->line;
			for (bool first = true;; first = false) {
				size_t e = p->pos;
				while (e < p->len && p->s[e] != '\n')
					e++;
				const char *a = p->s + p->pos;
				size_t n = e - p->pos;
				if (r->strip_tabs && first)
					while (n > 0 && *a == '\t') {
						a++;
						n--;
					}
				p->pos = e < p->len ? e + 1 : e;
				p->line++;
				sb_addn(&ln, a, n);
				if (r->quoted || e >= p->len || p->pos >= p->len)
					break;
				/* a backslash pairs with the character after it */
				bool esc = false;
				for (size_t k = 0; k < ln.len; k++)
					if (ln.s[k] == '\\' && ++k == ln.len)
						esc = true;
				if (!esc)
					break;
				ln.len--;
			}
			if (ln.len == dl && (dl == 0 || memcmp(ln.s, delim, dl) == 0)) {
				found = true;
				break;
			}
			/* Inside $( ): a line starting with the delimiter and holding the `)`
			 * after it ends the body, as at the end of the text (bash 5.2's
			 * make_here_document: warned), and the rest of the line is read on. Run,
			 * that $( )'s text ends with the delimiter and what stood before the `)`:
			 * that last line ends the body there, quietly (warned at parse). */
			if (ln.len > dl && memcmp(ln.s, delim, dl) == 0 && dl > 0 &&
			    ((p->stop_rparen && memchr(ln.s + dl, ')', ln.len - dl)) ||
			     (p->cmdsub_body && p->pos >= p->len &&
			      strspn(ln.s + dl, " \t") == ln.len - dl))) {
				if (p->cmdsub_body) {
					found = true;
					break;
				}
				p->pos = line_start;
				while (r->strip_tabs && p->s[p->pos] == '\t')
					p->pos++;
				p->pos += dl;
				p->line = line0;
				PERR(p, line0,
				     "warning: here-document at line %d delimited by end-of-file "
				     "(wanted `%s')",
				     start_line - 1 < 1 ? 1 : start_line - 1, delim);
				rparen_end = true;
				break;
			}
			if (ln.len)
				sb_addn(&body, ln.s, ln.len);
			sb_addc(&body, '\n');
		}
		free(ln.s);
		if (!found && !rparen_end)
			p->at_eof = true;
		if (!found && !rparen_end)
			PERR(p, p->len > 0 && p->s[p->len - 1] == '\n' ? p->line - 1 : p->line,
				   "warning: here-document at line %d delimited by end-of-file "
				   "(wanted `%s')",
				   start_line - 1 < 1 ? 1 : start_line - 1, delim);
		free(delim);
		r->body = body.s ? sb_take(&body) : xstrdup("");
	}
	p->hd_tail = &p->hd;
}

/* Find the end of a balanced construct. Returns the index after it or -1. */
static long scan_dollar(struct parser *p, size_t i);

static long
scan_squote(struct parser *p, size_t i)
{
	/* i at the opening quote */
	for (i++; i < p->len; i++) {
		if (p->s[i] == '\n')
			p->line++;
		if (p->s[i] == '\'')
			return (long)i + 1;
	}
	return -1;
}

static long
scan_dsquote(struct parser *p, size_t i)
{
	/* $'...': i at the quote */
	for (i++; i < p->len; i++) {
		if (p->s[i] == '\\' && i + 1 < p->len) {
			i++;
			continue;
		}
		if (p->s[i] == '\n')
			p->line++;
		if (p->s[i] == '\'')
			return (long)i + 1;
	}
	return -1;
}

static long
scan_backquote(struct parser *p, size_t i)
{
	for (i++; i < p->len; i++) {
		if (p->s[i] == '\\' && i + 1 < p->len) {
			if (p->s[i + 1] == '\n') {
				hole_add(p, i);
				p->line++;
			}
			i++;
			continue;
		}
		if (p->s[i] == '\n')
			p->line++;
		if (p->s[i] == '`')
			return (long)i + 1;
	}
	return -1;
}

static long
scan_dquote(struct parser *p, size_t i)
{
	for (i++; i < p->len; i++) {
		char c = p->s[i];
		if (c == '\\' && i + 1 < p->len) {
			if (p->s[i + 1] == '\n') {
				hole_add(p, i);
				p->line++;
			}
			i++;
			continue;
		}
		if (c == '\n')
			p->line++;
		if (c == '"')
			return (long)i + 1;
		if (c == '`') {
			long e = scan_backquote(p, i);
			if (e < 0)
				return -1;
			i = (size_t)e - 1;
		} else if (c == '$' && dollar_opens(p, i)) {
			bool save = p->scan_in_dq;
			p->scan_in_dq = true;
			long e = scan_dollar(p, i);
			p->scan_in_dq = save;
			if (e < 0)
				return -1;
			i = (size_t)e - 1;
		}
	}
	return -1;
}

/* i at '$' followed by '(' or '{' (dollar_opens); <( and >( too */
static long
scan_dollar(struct parser *p, size_t i)
{
	if (++p->depth > SH_MAX_PARSE_DEPTH || ++parse_depth_total > SH_MAX_PARSE_DEPTH) {
		p->depth--;
		parse_depth_total--;
		error_msg(p, p->line, "syntax error: nesting too deep");
		return -1;
	}
	long ret = -1;
	bool in_dq = p->scan_in_dq;
	p->scan_in_dq = false;
	size_t o = skip_cont(p, i + 1); /* the '(' or '{' */
	if (p->s[o] == '{') {
		/* posix mode: in "${x+'a}" the quote is a plain character (bash) */
		bool sq_plain = in_dq && p->sh && p->sh->opt_posix;
		size_t j = o + 1;
		for (; j < p->len; j++) {
			char c = p->s[j];
			if (c == '\\' && j + 1 < p->len) {
				if (p->s[j + 1] == '\n') {
					hole_add(p, j);
					p->line++;
				}
				j++;
				continue;
			}
			if (c == '\n')
				p->line++;
			if (c == '}') {
				ret = (long)j + 1;
				break;
			}
			long e = 0;
			if (c == '$' && j + 1 < p->len && p->s[j + 1] == '\'' && !sq_plain)
				e = scan_dsquote(p, j + 1); /* $'…' (bash: "${x:-$'\t'}" too) */
			else if (c == '\'' && !sq_plain)
				e = scan_squote(p, j);
			else if (c == '"')
				e = scan_dquote(p, j);
			else if (c == '`')
				e = scan_backquote(p, j);
			else if (c == '$' && dollar_opens(p, j))
				e = scan_dollar(p, j);
			else
				continue;
			if (e < 0)
				break;
			j = (size_t)e - 1;
		}
	} else if (peek_cont(p, o + 1) < p->len && p->s[peek_cont(p, o + 1)] == '(') {
		/* $(( arithmetic )): a guess, undone (lines and noted pairs) if no )) ends it */
		int line0 = p->line;
		size_t holes0 = p->holes->n;
		int d = 0;
		size_t j = skip_cont(p, o + 1) + 1;
		for (; j < p->len; j++) {
			char c = p->s[j];
			if (c == '\\' && j + 1 < p->len && p->s[j + 1] == '\n') {
				hole_add(p, j);
				p->line++;
				j++;
				continue;
			}
			if (c == '\n')
				p->line++;
			if (c == '(')
				d++;
			else if (c == ')') {
				if (d == 0) {
					size_t k = peek_cont(p, j + 1);
					if (k < p->len && p->s[k] == ')') {
						skip_cont(p, j + 1);
						ret = (long)k + 1;
					}
					break;
				}
				d--;
			} else if (c == '$' && dollar_opens(p, j)) {
				long e = scan_dollar(p, j);
				if (e < 0)
					break;
				j = (size_t)e - 1;
			} else if (c == '\'' || c == '"') {
				long e = c == '\'' ? scan_squote(p, j) : scan_dquote(p, j);
				if (e < 0)
					break;
				j = (size_t)e - 1;
			}
		}
		if (ret < 0 && !p->error) {
			/* Not arithmetic after all: $( (subshell) ) */
			p->line = line0;
			p->holes->n = holes0;
		}
	}
	if (ret < 0 && p->s[o] == '(' && !p->error) {
		/* $( command ): a sub-parser to the matching ')' */
		struct parser sub = {0};
		sub.sh = p->sh;
		sub.s = p->s;
		sub.len = p->len;
		sub.pos = o + 1;
		sub.line = p->line;
		sub.holes = p->holes;
		sub.hd_tail = &sub.hd;
		sub.stop_rparen = true;
		sub.in_eval = p->in_eval;
		/* Aliases apply when it runs; in POSIX mode, as bash 5.2, when it is parsed:
		 * the sub-parser splices into the shared text (taken back below), an alias
		 * may close the substitution, and the text run is the expanded one (not
		 * expanded again: cmdsub_run). */
		sub.no_alias = p->no_alias || !p->sh || !p->sh->opt_posix;
		sub.len0 = p->len0;
		sub.depth = p->depth;
		sub.quiet = p->quiet;
		struct node *n = parse_list(&sub, true);
		node_free(n);
		if (sub.orig) {
			/* an alias spliced into the text: it is the sub-parser's now (the
			 * text before, p->s, is sub.orig: kept as ours or freed) */
			if (!p->orig) {
				p->orig = sub.orig;
				p->orig_len = sub.orig_len;
			} else
				free(sub.orig);
			p->s = sub.s;
			p->len = sub.len;
		}
		for (int g = 0; g < sub.nguards; g++)
			free(sub.guards[g].name);
		if (!sub.error) {
			/* parse_list stopped at a lookahead token */
			if (sub.have && sub.t == T_RPAREN) {
				ret = (long)sub.tstart + 1;
				p->line = sub.line;
			} else if (sub.have && sub.t == T_EOF) {
				p->at_eof = true;
				/* bash: at the line after the last, newline-ended or not */
				error_msg(p, sub.line + (p->len && p->s[p->len - 1] != '\n'),
					  "unexpected EOF while looking for matching `)'");
			} else {
				p->t = sub.t;
				free(p->word);
				p->word = sub.word;
				sub.word = NULL;
				p->tline = sub.tline;
				p->tstart = sub.tstart;
				p->rtype = sub.rtype;
				syntax_error(p);
			}
		} else {
			p->error = true;
			p->at_eof = p->at_eof || sub.at_eof;
		}
		free(sub.word);
		while (sub.hd) {
			struct pending_heredoc *h = sub.hd;
			sub.hd = h->next;
			free(h);
		}
	}
	p->depth--;
	parse_depth_total--;
	return ret;
}

/* Scan one word from p->pos; dbrack_regex: parens and '|' are word
 * characters (the right side of =~). */
static char *
scan_word(struct parser *p, bool regex)
{
	int word_line = p->line;
	struct sbuf b = {0};
	int pdepth = 0;
	size_t i = p->pos;
	if (p->holes == &p->own_holes)
		p->holes->n = 0; /* the pairs of the words before are out of their text */
	while (i < p->len) {
		char c = p->s[i];
		if (regex) {
			if (c == '(') {
				pdepth++;
				sb_addc(&b, c);
				i++;
				continue;
			}
			if (c == ')' && pdepth > 0) {
				pdepth--;
				sb_addc(&b, c);
				i++;
				continue;
			}
			if (c == '|' && pdepth >= 0 && !(i + 1 < p->len && p->s[i + 1] == '|')) {
				sb_addc(&b, c);
				i++;
				continue;
			}
			if ((c == '<' || c == '>') && pdepth > 0) {
				sb_addc(&b, c);
				i++;
				continue;
			}
			if ((c == ' ' || c == '\t') && pdepth > 0) {
				sb_addc(&b, c);
				i++;
				continue;
			}
		}
		long e;
		if ((c == '<' || c == '>') && i + 1 < p->len && p->s[i + 1] == '(' &&
		    !regex && !(p->sh && p->sh->dash_errors)) {
			/* <(…) >(…), anywhere in a word (bash: x=<(…), --in=<(…)): to the
			 * matching ')' as $( ) */
			e = scan_dollar(p, i);
			if (e < 0) {
				if (!p->error)
					goto unterminated_paren;
				free(b.s);
				return NULL;
			}
			add_seg(p, &b, i, (size_t)e);
			i = (size_t)e;
			continue;
		}
		if (is_meta(c))
			break;
		switch (c) {
		case '\\':
			if (i + 1 < p->len && p->s[i + 1] == '\n') {
				i += 2;
				p->line++;
				continue;
			}
			sb_addn(&b, p->s + i, i + 1 < p->len ? 2 : 1);
			i += 2;
			continue;
		case '\'':
			e = scan_squote(p, i);
			if (e < 0)
				goto unterminated_sq;
			break;
		case '"':
			e = scan_dquote(p, i);
			if (e < 0)
				goto unterminated_dq;
			break;
		case '`':
			e = scan_backquote(p, i);
			if (e < 0)
				goto unterminated_bq;
			break;
		case '$':
			if (i + 1 < p->len && p->s[i + 1] == '\'') {
				e = scan_dsquote(p, i + 1);
				if (e < 0)
					goto unterminated_sq;
			} else if (dollar_opens(p, i)) {
				e = scan_dollar(p, i);
				if (e < 0) {
					if (!p->error) {
						if (p->s[peek_cont(p, i + 1)] == '{')
							goto unterminated_brace;
						goto unterminated_paren;
					}
					free(b.s);
					return NULL;
				}
			} else if (i + 1 < p->len && p->s[i + 1] == '"') {
				/* $"..." is "..." */
				i++;
				continue;
			} else {
				e = (long)i + 1;
			}
			break;
		case '(':
		default:
			/* NAME=( ... ) compound assignment */
			e = (long)i + 1;
			break;
		}
		add_seg(p, &b, i, (size_t)e);
		i = (size_t)e;
		/* compound assignment: word so far is NAME= or NAME+= and '(' follows;
		 * or an extglob group ?( *( +( @( !( (shopt extglob; always in [[ ]]) */
		if (i < p->len && p->s[i] == '(' &&
		    ((b.len >= 2 && b.s[b.len - 1] == '=' &&
		      (is_name(b.s, b.len - 1) ||
		       (b.s[b.len - 2] == '+' && is_name(b.s, b.len - 2)))) ||
		     (b.len >= 1 && strchr("?*+@!", b.s[b.len - 1]) && p->sh &&
		      (p->sh->extglob || p->in_dbrack)))) {
			int d = 0;
			size_t j = i;
			for (; j < p->len; j++) {
				char cc = p->s[j];
				if (cc == '\n')
					p->line++;
				if (cc == '\\') {
					if (j + 1 < p->len && p->s[j + 1] == '\n') {
						hole_add(p, j);
						p->line++;
					}
					j++;
					continue;
				}
				if (cc == '\'' || cc == '"') {
					long ee = cc == '\'' ? scan_squote(p, j) : scan_dquote(p, j);
					if (ee < 0)
						goto unterminated_paren;
					j = (size_t)ee - 1;
					continue;
				}
				if (cc == '$' && dollar_opens(p, j)) {
					long ee = scan_dollar(p, j);
					if (ee < 0)
						goto unterminated_paren;
					j = (size_t)ee - 1;
					continue;
				}
				if (cc == '(')
					d++;
				else if (cc == ')' && --d == 0)
					break;
			}
			if (j >= p->len)
				goto unterminated_paren;
			add_seg(p, &b, i, j + 1);
			i = j + 1;
		}
	}
	p->pos = i;
	if (!b.s)
		return xstrdup("");
	return sb_take(&b);
unterminated_sq:
	p->at_eof = true;
	error_msg(p, word_line, "unexpected EOF while looking for matching `''");
	goto fail;
unterminated_dq:
	p->at_eof = true;
	error_msg(p, word_line, "unexpected EOF while looking for matching `\"'");
	goto fail;
unterminated_bq:
	p->at_eof = true;
	error_msg(p, word_line, "unexpected EOF while looking for matching ``'");
	goto fail;
unterminated_paren:
	p->at_eof = true;
	error_msg(p, p->line, "unexpected EOF while looking for matching `)'");
	goto fail;
unterminated_brace:
	p->at_eof = true;
	error_msg(p, p->line, "unexpected EOF while looking for matching `}'");
fail:
	free(b.s);
	p->pos = p->len;
	return NULL;
}

static void
skip_blanks(struct parser *p)
{
	for (;;) {
		while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
			p->pos++;
		if (p->pos + 1 < p->len && p->s[p->pos] == '\\' && p->s[p->pos + 1] == '\n') {
			p->pos += 2;
			p->line++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == '#') {
			while (p->pos < p->len && p->s[p->pos] != '\n')
				p->pos++;
		}
		return;
	}
}

static void
op_chars(const struct parser *p, char oc[3], size_t opos[3])
{
	size_t j = p->pos;
	for (int k = 0; k < 3; k++) {
		if (k)
			j = peek_cont(p, j);
		opos[k] = j;
		oc[k] = j < p->len ? p->s[j] : 0;
		if (j < p->len)
			j++;
	}
}

static void
op_adv(struct parser *p, const size_t opos[3], int n)
{
	size_t to = opos[n - 1] + 1;
	for (size_t j = p->pos; j < to; j++)
		if (p->s[j] == '\n')
			p->line++;
	p->pos = to;
}

static enum tok
lex(struct parser *p)
{
	if (p->have)
		return p->t;
	free(p->word);
	p->word = NULL;
	skip_blanks(p);
	p->have = true;
	p->tline = p->line;
	p->tstart = p->pos;
	if (p->pos >= p->len)
		return p->t = T_EOF;
	const char *s = p->s + p->pos;
	size_t left = p->len - p->pos;
	/* An operator's characters may have backslash-newlines between them (bash): oc[k] is
	 * its k-th character (0 past the end), op_adv moves past k of them. */
	char oc[3];
	size_t opos[3];
	op_chars(p, oc, opos);
#define AT(k, ch) (oc[k] == (ch))
	switch (s[0]) {
	case '\n':
		/* a newline an alias's value brought is no line of the script (bash) */
		if (p->pos >= p->alias_end)
			p->line++;
		p->pos++;
		if (p->hd)
			read_heredocs(p);
		return p->t = T_NL;
	case ';':
		if (AT(1, ';') && AT(2, '&')) {
			op_adv(p, opos, 3);
			return p->t = T_DSEMIAMP;
		}
		if (AT(1, ';')) {
			op_adv(p, opos, 2);
			return p->t = T_DSEMI;
		}
		if (AT(1, '&')) {
			op_adv(p, opos, 2);
			return p->t = T_SEMIAMP;
		}
		p->pos++;
		return p->t = T_SEMI;
	case '&':
		if (AT(1, '&')) {
			op_adv(p, opos, 2);
			return p->t = T_AND;
		}
		if (AT(1, '>')) {
			p->rfd = -1;
			if (AT(2, '>')) {
				op_adv(p, opos, 3);
				p->rtype = R_ALLAPPEND;
			} else {
				op_adv(p, opos, 2);
				p->rtype = R_ALLOUT;
			}
			return p->t = T_REDIR;
		}
		p->pos++;
		return p->t = T_AMP;
	case '|':
		if (AT(1, '|')) {
			op_adv(p, opos, 2);
			return p->t = T_OR;
		}
		if (AT(1, '&')) {
			op_adv(p, opos, 2);
			return p->t = T_PIPEAMP;
		}
		p->pos++;
		return p->t = T_PIPE;
	case '(':
		p->pos++;
		return p->t = T_LPAREN;
	case ')':
		p->pos++;
		return p->t = T_RPAREN;
	default:
		break;
	}
	/* IO_NUMBER: digits directly before < or > */
	size_t k = 0;
	int fd = -1;
	while (k < left && k < 4 && isdigit((unsigned char)s[k]))
		k++;
	if (k > 0 && k < left && (s[k] == '<' || s[k] == '>') &&
	    !(k + 1 < left && s[k + 1] == '(' && !(p->sh && p->sh->dash_errors))) {
		/* (2>(…) is the word 2/dev/fd/N, bash) */
		fd = atoi(s);
		s += k;
		left -= k;
		p->pos += k;
		op_chars(p, oc, opos);
	} else if (left > 2 && s[0] == '{' && 0) {
		/* {varname}> is not supported */
	}
	if (fd < 0 && (s[0] == '<' || s[0] == '>') && left > 1 && s[1] == '(' && !(p->sh && p->sh->dash_errors))
		goto word; /* <(…) >(…): a process substitution, a word (bash) */
	if (s[0] == '<' || s[0] == '>') {
		p->rfd = fd;
		p->rstrip = false;
		if (s[0] == '<') {
			if (AT(1, '<') && AT(2, '<')) {
				op_adv(p, opos, 3);
				p->rtype = R_HERESTR;
			} else if (AT(1, '<') && AT(2, '-')) {
				op_adv(p, opos, 3);
				p->rtype = R_HEREDOC;
				p->rstrip = true;
			} else if (AT(1, '<')) {
				op_adv(p, opos, 2);
				p->rtype = R_HEREDOC;
			} else if (AT(1, '&')) {
				op_adv(p, opos, 2);
				p->rtype = R_DUPIN;
			} else if (AT(1, '>')) {
				op_adv(p, opos, 2);
				p->rtype = R_RDWR;
			} else {
				op_adv(p, opos, 1);
				p->rtype = R_IN;
			}
		} else {
			if (AT(1, '>')) {
				op_adv(p, opos, 2);
				p->rtype = R_APPEND;
			} else if (AT(1, '|')) {
				op_adv(p, opos, 2);
				p->rtype = R_CLOBBER;
			} else if (AT(1, '&')) {
				op_adv(p, opos, 2);
				p->rtype = R_DUPOUT;
			} else {
				op_adv(p, opos, 1);
				p->rtype = R_OUT;
			}
		}
		return p->t = T_REDIR;
	}
#undef AT
word:;
	char *w = scan_word(p, false);
	if (!w) {
		/* an error (printed); a nested $( ) may have left its token in p->word */
		p->t = T_EOF;
		return T_EOF;
	}
	free(p->word);
	p->word = w;
	return p->t = T_WORD;
}

static void
consume(struct parser *p)
{
	p->have = false;
}

static char *
take_word(struct parser *p)
{
	char *w = p->word;
	p->word = NULL;
	p->have = false;
	return w;
}

static bool
is_word(struct parser *p, const char *kw)
{
	return lex(p) == T_WORD && strcmp(p->word, kw) == 0;
}

static void
linebreak(struct parser *p)
{
	while (!p->error && lex(p) == T_NL)
		consume(p);
}

static bool
expect_word(struct parser *p, const char *kw)
{
	linebreak(p);
	if (p->error)
		return false;
	if (!is_word(p, kw)) {
		syntax_error(p);
		return false;
	}
	consume(p);
	return true;
}

/* Alias substitution at a command word: splices the value into the text. */
static bool
try_alias(struct parser *p)
{
	if (!p->sh || p->no_alias || !p->sh->expand_aliases || lex(p) != T_WORD)
		return false;
	const char *w = p->word;
	const char *val = alias_get(p->sh, w);
	if (!val)
		return false;
	for (int i = 0; i < p->nguards; i++)
		if (p->pos <= p->guards[i].end && strcmp(p->guards[i].name, w) == 0)
			return false;
	size_t vl = strlen(val);
	if (p->len + vl > SH_MAX_SCRIPT)
		return false;
	char *ns = xmalloc(p->tstart + vl + (p->len - p->pos) + 1);
	memcpy(ns, p->s, p->tstart);
	memcpy(ns + p->tstart, val, vl);
	memcpy(ns + p->tstart + vl, p->s + p->pos, p->len - p->pos);
	size_t newlen = p->tstart + vl + (p->len - p->pos);
	ns[newlen] = 0;
	/* Guards shift with the splice. */
	long delta = (long)(p->tstart + vl) - (long)p->pos;
	for (int i = 0; i < p->nguards; i++)
		if (p->guards[i].end >= p->pos)
			p->guards[i].end = (size_t)((long)p->guards[i].end + delta);
	p->alias_end = p->alias_end >= p->pos ? (size_t)((long)p->alias_end + delta) : 0;
	if (p->alias_end < p->tstart + vl)
		p->alias_end = p->tstart + vl;
	if (p->nguards < 16) {
		p->guards[p->nguards].name = xstrdup(w);
		p->guards[p->nguards].end = p->tstart + vl;
		p->nguards++;
	}
	p->alias_next = vl > 0 && (val[vl - 1] == ' ' || val[vl - 1] == '\t');
	if (!p->orig) {
		p->orig = p->s; /* for the line a syntax error shows (print_line_of) */
		p->orig_len = p->len;
	} else
		free(p->s);
	p->s = ns;
	p->len = newlen;
	p->pos = p->tstart;
	free(p->word);
	p->word = NULL;
	p->have = false;
	return true;
}

static struct redir *
parse_redir(struct parser *p)
{
	struct redir *r = xmalloc(sizeof *r);
	memset(r, 0, sizeof *r);
	r->type = p->rtype;
	r->fd = p->rfd;
	r->strip_tabs = r->type == R_HEREDOC && p->rstrip;
	consume(p);
	if (lex(p) != T_WORD) {
		syntax_error(p);
		free(r);
		return NULL;
	}
	r->word = take_word(p);
	if (r->type == R_HEREDOC) {
		struct pending_heredoc *h = xmalloc(sizeof *h);
		h->r = r;
		h->next = NULL;
		*p->hd_tail = h;
		p->hd_tail = &h->next;
	}
	return r;
}

static void
add_redirs(struct parser *p, struct node *n)
{
	struct redir **tail = &n->redirs;
	while (*tail)
		tail = &(*tail)->next;
	while (!p->error && lex(p) == T_REDIR) {
		struct redir *r = parse_redir(p);
		if (!r)
			return;
		*tail = r;
		tail = &r->next;
	}
}

static struct node *
new_node(struct parser *p, enum node_type t)
{
	struct node *n = xmalloc(sizeof *n);
	memset(n, 0, sizeof *n);
	n->type = t;
	n->line = p->tline;
	return n;
}

static bool
is_terminator_word(const char *w)
{
	static const char *const kws[] = {"then", "else", "elif", "fi",  "do",
					  "done", "esac", "}",    NULL};
	for (int i = 0; kws[i]; i++)
		if (strcmp(w, kws[i]) == 0)
			return true;
	return false;
}

static bool
at_list_end(struct parser *p)
{
	enum tok t = lex(p);
	if (t == T_EOF || t == T_RPAREN || t == T_DSEMI || t == T_SEMIAMP || t == T_DSEMIAMP)
		return true;
	if (t == T_WORD && is_terminator_word(p->word))
		return true;
	return false;
}

static struct word *
new_word(char *s)
{
	struct word *w = xmalloc(sizeof *w);
	w->next = NULL;
	w->s = s;
	return w;
}

static bool
depth_enter(struct parser *p)
{
	if (++p->depth > SH_MAX_PARSE_DEPTH || ++parse_depth_total > SH_MAX_PARSE_DEPTH * 2 ||
	    sh_stack_low()) {
		error_msg(p, p->line, "syntax error: nesting too deep");
		return false;
	}
	return true;
}

static void
depth_leave(struct parser *p)
{
	p->depth--;
	parse_depth_total--;
}

/* compound=true: a compound_list (newlines separate, ends at a terminator) */
static struct node *
parse_list(struct parser *p, bool compound)
{
	struct node *list = NULL;
	if (compound)
		linebreak(p);
	if (p->error)
		return NULL;
	if (compound && at_list_end(p)) {
		syntax_error(p);
		return NULL;
	}
	for (;;) {
		struct node *a = parse_andor(p);
		if (!a)
			break;
		enum tok t = lex(p);
		if (t == T_AMP) {
			consume(p);
			struct node *as = new_node(p, N_ASYNC);
			as->u.b.a = a;
			as->line = a->line;
			a = as;
		} else if (t == T_SEMI) {
			consume(p);
		}
		if (!list) {
			list = new_node(p, N_LIST);
			list->line = a->line;
		}
		list->u.p.v = xrealloc(list->u.p.v, (list->u.p.n + 1) * sizeof(struct node *));
		list->u.p.v[list->u.p.n++] = a;
		if (p->error)
			break;
		if (compound) {
			bool sep = t == T_AMP || t == T_SEMI || lex(p) == T_NL;
			linebreak(p);
			/* a command word: an alias there may be the reserved word ending the
			 * list (bash: alias DONE='}') */
			while (!p->error && try_alias(p))
				;
			if (p->error || at_list_end(p))
				break;
			if (!sep) {
				syntax_error(p);
				break;
			}
		} else {
			t = lex(p);
			if (t == T_NL || t == T_EOF)
				break;
			if (!(p->t == T_WORD || p->t == T_REDIR || p->t == T_LPAREN) ||
			    (lex(p) == T_WORD && is_terminator_word(p->word))) {
				syntax_error(p);
				break;
			}
			if (list->u.p.n > 0) {
				/* a command must follow a separator */
				enum node_type lt = list->u.p.v[list->u.p.n - 1]->type;
				(void)lt;
			}
		}
	}
	if (p->error) {
		node_free(list);
		return NULL;
	}
	if (list && list->u.p.n == 1 && list->u.p.v[0]->type != N_ASYNC) {
		struct node *one = list->u.p.v[0];
		free(list->u.p.v);
		free(list);
		return one;
	}
	return list;
}

static struct node *
parse_pipeline(struct parser *p)
{
	bool bang = false, negated = false, timed = false, tposix = false;
	int tline = 0;
	/* bash's pipeline_command: any run of `time [-p] [--]` (the keyword: times the whole
	 * pipeline, reports on the shell's stderr) and `!` (each inverts), then a pipeline or,
	 * after either, nothing: `!` alone is false, `time` alone reports */
	for (;;) {
		if (is_word(p, "time")) {
			if (!timed)
				tline = p->tline;
			consume(p);
			timed = true;
			if (is_word(p, "-p")) {
				consume(p);
				tposix = true;
			}
			if (is_word(p, "--"))
				consume(p);
		} else if (is_word(p, "!")) {
			if (!timed && !negated)
				tline = p->tline;
			consume(p);
			bang = !bang;
			negated = true;
		} else
			break;
	}
	if (timed || negated) {
		enum tok t = lex(p);
		if (t == T_NL || t == T_EOF || t == T_SEMI || at_list_end(p) || (timed && t == T_AMP)) {
			struct node *pl = new_node(p, N_PIPE);
			pl->line = tline;
			pl->u.p.bang = bang;
			pl->u.p.timed = timed;
			pl->u.p.time_posix = tposix;
			return pl;
		}
	}
	struct node *c = parse_command(p);
	if (!c)
		return NULL;
	if (lex(p) != T_PIPE && lex(p) != T_PIPEAMP && !bang && !timed)
		return c;
	struct node *pl = new_node(p, N_PIPE);
	pl->line = timed ? tline : c->line;
	pl->u.p.bang = bang;
	pl->u.p.timed = timed;
	pl->u.p.time_posix = tposix;
	for (;;) {
		pl->u.p.v = xrealloc(pl->u.p.v, (pl->u.p.n + 1) * sizeof(struct node *));
		pl->u.p.v[pl->u.p.n++] = c;
		enum tok t = lex(p);
		if (t != T_PIPE && t != T_PIPEAMP)
			break;
		if (t == T_PIPEAMP) {
			/* |&: 2>&1 on the left stage, after its own redirections */
			struct redir *r = xmalloc(sizeof *r);
			memset(r, 0, sizeof *r);
			r->type = R_DUPOUT;
			r->fd = 2;
			r->word = xstrdup("1");
			struct redir **tail = &c->redirs;
			while (*tail)
				tail = &(*tail)->next;
			*tail = r;
		}
		consume(p);
		linebreak(p);
		c = parse_command(p);
		if (!c) {
			if (!p->error)
				syntax_error(p);
			node_free(pl);
			return NULL;
		}
	}
	return pl;
}

static struct node *
parse_andor(struct parser *p)
{
	struct node *a = parse_pipeline(p);
	while (a && !p->error) {
		enum tok t = lex(p);
		if (t != T_AND && t != T_OR)
			break;
		consume(p);
		linebreak(p);
		struct node *b = parse_pipeline(p);
		if (!b) {
			if (!p->error)
				syntax_error(p);
			node_free(a);
			return NULL;
		}
		struct node *n = new_node(p, t == T_AND ? N_AND : N_OR);
		n->line = a->line;
		n->u.b.a = a;
		n->u.b.b = b;
		a = n;
	}
	if (p->error) {
		node_free(a);
		return NULL;
	}
	return a;
}

/* Text between (( and the matching )); p->pos after "((". */
static char *
scan_arith(struct parser *p)
{
	int d = 0;
	size_t i = p->pos;
	for (; i < p->len; i++) {
		char c = p->s[i];
		if (c == '\n')
			p->line++;
		if (c == '(')
			d++;
		else if (c == ')') {
			if (d == 0) {
				if (i + 1 < p->len && p->s[i + 1] == ')') {
					char *e = xstrndup(p->s + p->pos, i - p->pos);
					p->pos = i + 2;
					return e;
				}
				break;
			}
			d--;
		}
	}
	error_msg(p, p->line, "unexpected EOF while looking for matching `)'");
	return NULL;
}

static struct node *parse_dbrack_words(struct parser *p);

/* [[ … ]]: its words may hold extglob groups whatever shopt says (bash) */
static struct node *
parse_dbrack(struct parser *p)
{
	bool was = p->in_dbrack;
	p->in_dbrack = true;
	struct node *n = parse_dbrack_words(p);
	p->in_dbrack = was;
	return n;
}

static struct node *
parse_dbrack_words(struct parser *p)
{
	struct node *n = new_node(p, N_DBRACK);
	struct word **tail = &n->u.db.toks;
	bool regex_next = false;
	char last_tok[3] = ""; /* the previous word when an operator of 1-2 characters */
	for (;;) {
		/* blanks and newlines */
		while (p->pos < p->len &&
		       (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n')) {
			if (p->s[p->pos] == '\n')
				p->line++;
			p->pos++;
		}
		if (p->pos >= p->len) {
			p->have = true;
			p->t = T_EOF;
			syntax_error(p);
			node_free(n);
			return NULL;
		}
		const char *s = p->s + p->pos;
		char *tok = NULL;
		if (s[0] == ']' && p->pos + 1 < p->len && s[1] == ']' &&
		    (p->pos + 2 >= p->len || is_meta(s[2]))) {
			p->pos += 2;
			break;
		}
		/* after == != = a pattern: !( starts an extglob group there */
		bool pat_next = (strcmp(last_tok, "==") == 0 ||
					     strcmp(last_tok, "!=") == 0 || strcmp(last_tok, "=") == 0);
		if (!regex_next && (s[0] == '(' || s[0] == ')' ||
				    (s[0] == '!' && is_meta(s[1]) && !(pat_next && s[1] == '(')))) {
			tok = xstrndup(s, 1);
			p->pos++;
		} else if (!regex_next && p->pos + 1 < p->len &&
			   ((s[0] == '&' && s[1] == '&') || (s[0] == '|' && s[1] == '|'))) {
			tok = xstrndup(s, 2);
			p->pos += 2;
		} else if (!regex_next && (s[0] == '<' || s[0] == '>')) {
			tok = xstrndup(s, 1);
			p->pos++;
		} else if (s[0] == '&' || s[0] == '|' || s[0] == ';') {
			p->have = true;
			p->tline = p->line;
			p->tstart = p->pos;
			p->t = s[0] == ';' ? T_SEMI : s[0] == '&' ? T_AMP : T_PIPE;
			p->pos++;
			syntax_error(p);
			node_free(n);
			return NULL;
		} else {
			tok = scan_word(p, regex_next);
			if (!tok) {
				node_free(n);
				return NULL;
			}
			if (!*tok) {
				free(tok);
				p->have = true;
				p->t = T_EOF;
				syntax_error(p);
				node_free(n);
				return NULL;
			}
		}
		/* Mark operators so that a quoted "(" stays a word: operators get a
		 * leading \001. */
		bool op = (strcmp(tok, "(") == 0 || strcmp(tok, ")") == 0 || strcmp(tok, "!") == 0 ||
			   strcmp(tok, "&&") == 0 || strcmp(tok, "||") == 0 || strcmp(tok, "<") == 0 ||
			   strcmp(tok, ">") == 0) &&
			  !regex_next;
		regex_next = strcmp(tok, "=~") == 0;
		snprintf(last_tok, sizeof last_tok, "%s", strlen(tok) <= 2 ? tok : "");
		if (op) {
			char *t2 = xmalloc(strlen(tok) + 2);
			t2[0] = '\001';
			strcpy(t2 + 1, tok);
			free(tok);
			tok = t2;
		}
		*tail = new_word(tok);
		tail = &(*tail)->next;
	}
	p->have = false;
	if (!n->u.db.toks) {
		p->have = true;
		p->t = T_WORD;
		free(p->word);
		p->word = xstrdup("]]");
		p->tline = p->line;
		syntax_error(p);
		free(p->word);
		p->word = NULL;
		node_free(n);
		return NULL;
	}
	return n;
}

static void
skip_blanks_nl_raw(struct parser *p)
{
	skip_blanks(p);
}

static struct node *
parse_for(struct parser *p)
{
	consume(p); /* for */
	skip_blanks_nl_raw(p);
	if (!p->have && p->pos + 1 < p->len && p->s[p->pos] == '(' && p->s[p->pos + 1] == '(') {
		p->pos += 2;
		char *e = scan_arith(p);
		if (!e)
			return NULL;
		struct node *n = new_node(p, N_AFOR);
		/* split on ';' at depth 0 */
		char *parts[3] = {NULL, NULL, NULL};
		int k = 0, d = 0;
		char *st = e;
		for (char *q = e;; q++) {
			if (*q == '(')
				d++;
			else if (*q == ')')
				d--;
			if ((*q == ';' && d == 0 && k < 2) || !*q) {
				char save = *q;
				*q = 0;
				parts[k++] = xstrdup(st);
				st = q + 1;
				if (!save)
					break;
			}
		}
		free(e);
		if (k != 3) {
			for (int i = 0; i < 3; i++)
				free(parts[i]);
			error_msg(p, p->line, "syntax error: arithmetic expression required");
			free(n);
			return NULL;
		}
		n->u.af.init = parts[0];
		n->u.af.cond = parts[1];
		n->u.af.step = parts[2];
		lex(p);
		if (p->t == T_SEMI)
			consume(p);
		linebreak(p);
		if (is_word(p, "{")) {
			consume(p);
			n->u.af.body = parse_list(p, true);
			if (!n->u.af.body || !expect_word(p, "}")) {
				node_free(n);
				return NULL;
			}
			return n;
		}
		if (!expect_word(p, "do")) {
			node_free(n);
			return NULL;
		}
		n->u.af.body = parse_list(p, true);
		if (!n->u.af.body || !expect_word(p, "done")) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (lex(p) != T_WORD || !is_name(p->word, strlen(p->word))) {
		if (lex(p) == T_WORD) {
			char msg[300];
			snprintf(msg, sizeof msg, "`%s': not a valid identifier", p->word);
			error_msg(p, p->tline, msg);
		} else
			syntax_error(p);
		return NULL;
	}
	struct node *n = new_node(p, N_FOR);
	n->u.f.var = take_word(p);
	/* optional newlines, then "in" words or do */
	linebreak(p);
	if (is_word(p, "in")) {
		consume(p);
		n->u.f.has_in = true;
		struct word **tail = &n->u.f.words;
		while (lex(p) == T_WORD) {
			*tail = new_word(take_word(p));
			tail = &(*tail)->next;
		}
		if (p->error) {
			node_free(n);
			return NULL;
		}
		if (lex(p) == T_SEMI || lex(p) == T_NL)
			consume(p);
		else {
			syntax_error(p);
			node_free(n);
			return NULL;
		}
	} else if (lex(p) == T_SEMI) {
		consume(p);
	}
	linebreak(p);
	if (is_word(p, "{")) {
		consume(p);
		n->u.f.body = parse_list(p, true);
		if (!n->u.f.body || !expect_word(p, "}")) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (!expect_word(p, "do")) {
		node_free(n);
		return NULL;
	}
	n->u.f.body = parse_list(p, true);
	if (!n->u.f.body || !expect_word(p, "done")) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *
parse_case(struct parser *p)
{
	consume(p);
	struct node *n = new_node(p, N_CASE);
	if (lex(p) != T_WORD) {
		syntax_error(p);
		free(n);
		return NULL;
	}
	n->u.c.word = take_word(p);
	linebreak(p);
	if (!expect_word(p, "in")) {
		node_free(n);
		return NULL;
	}
	struct case_item **tail = &n->u.c.items;
	for (;;) {
		linebreak(p);
		if (p->error)
			break;
		if (is_word(p, "esac")) {
			consume(p);
			return n;
		}
		struct case_item *ci = xmalloc(sizeof *ci);
		memset(ci, 0, sizeof *ci);
		*tail = ci;
		tail = &ci->next;
		if (lex(p) == T_LPAREN)
			consume(p);
		struct word **wt = &ci->pats;
		for (;;) {
			if (lex(p) != T_WORD) {
				syntax_error(p);
				node_free(n);
				return NULL;
			}
			*wt = new_word(take_word(p));
			wt = &(*wt)->next;
			if (lex(p) == T_PIPE) {
				consume(p);
				continue;
			}
			if (lex(p) == T_RPAREN) {
				consume(p);
				break;
			}
			syntax_error(p);
			node_free(n);
			return NULL;
		}
		linebreak(p);
		enum tok t = lex(p);
		if (!(t == T_DSEMI || t == T_SEMIAMP || t == T_DSEMIAMP || is_word(p, "esac"))) {
			ci->body = parse_list(p, true);
			if (!ci->body) {
				node_free(n);
				return NULL;
			}
		}
		t = lex(p);
		if (t == T_DSEMI || t == T_SEMIAMP || t == T_DSEMIAMP) {
			ci->term = t == T_DSEMI ? 0 : t == T_SEMIAMP ? 1 : 2;
			consume(p);
			continue;
		}
		if (is_word(p, "esac")) {
			consume(p);
			return n;
		}
		syntax_error(p);
		node_free(n);
		return NULL;
	}
	node_free(n);
	return NULL;
}

/* if … elif … else … fi: each elif an N_IF in the else branch of the one
 * before, built in a loop (a script may chain 100000 of them). */
static struct node *
parse_if(struct parser *p)
{
	struct node *head = NULL, **slot = &head;
	for (;;) {
		consume(p); /* if / elif */
		struct node *n = new_node(p, N_IF);
		*slot = n;
		n->u.b.a = parse_list(p, true);
		if (!n->u.b.a || !expect_word(p, "then"))
			break;
		n->u.b.b = parse_list(p, true);
		if (!n->u.b.b)
			break;
		if (is_word(p, "elif")) {
			slot = &n->u.b.c;
			continue;
		}
		if (is_word(p, "else")) {
			consume(p);
			n->u.b.c = parse_list(p, true);
			if (!n->u.b.c)
				break;
		}
		if (!expect_word(p, "fi"))
			break;
		return head;
	}
	node_free(head);
	return NULL;
}

static struct node *
parse_compound(struct parser *p, bool *is_compound)
{
	*is_compound = true;
	enum tok t = lex(p);
	struct node *n = NULL;
	if (t == T_LPAREN) {
		consume(p);
		n = new_node(p, N_SUBSHELL);
		n->u.b.a = parse_list(p, true);
		if (!n->u.b.a || lex(p) != T_RPAREN) {
			if (!p->error)
				syntax_error(p);
			node_free(n);
			return NULL;
		}
		consume(p);
		return n;
	}
	if (t != T_WORD) {
		*is_compound = false;
		return NULL;
	}
	const char *w = p->word;
	if (strcmp(w, "{") == 0) {
		consume(p);
		n = new_node(p, N_GROUP);
		n->u.b.a = parse_list(p, true);
		if (!n->u.b.a || !expect_word(p, "}")) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (strcmp(w, "if") == 0)
		return parse_if(p);
	if (strcmp(w, "while") == 0 || strcmp(w, "until") == 0) {
		n = new_node(p, w[0] == 'w' ? N_WHILE : N_UNTIL);
		consume(p);
		n->u.b.a = parse_list(p, true);
		if (!n->u.b.a || !expect_word(p, "do")) {
			node_free(n);
			return NULL;
		}
		n->u.b.b = parse_list(p, true);
		if (!n->u.b.b || !expect_word(p, "done")) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (strcmp(w, "for") == 0)
		return parse_for(p);
	if (strcmp(w, "case") == 0)
		return parse_case(p);
	if (strcmp(w, "[[") == 0) {
		consume(p);
		return parse_dbrack(p);
	}
	*is_compound = false;
	return NULL;
}

static struct node *
parse_function_body(struct parser *p, char *name, int line)
{
	linebreak(p);
	bool isc;
	struct node *body = parse_compound(p, &isc);
	if (!body) {
		if (!p->error)
			syntax_error(p);
		free(name);
		return NULL;
	}
	add_redirs(p, body);
	body->refs = 1;
	struct node *n = new_node(p, N_FUNC);
	n->line = line;
	n->u.fn.name = name;
	n->u.fn.body = body;
	return n;
}

static bool
is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');
	if (!eq || eq == w)
		return false;
	size_t n = (size_t)(eq - w);
	if (n > 0 && w[n - 1] == '+')
		n--;
	const char *br = memchr(w, '[', n);
	if (br) {
		if (w[n - 1] != ']')
			return false;
		n = (size_t)(br - w);
	}
	return is_name(w, n);
}

static struct node *
parse_command(struct parser *p)
{
	if (!depth_enter(p)) {
		depth_leave(p);
		return NULL;
	}
	struct node *ret = NULL;
	enum tok t;
	if (p->alias_next || true)
		while (try_alias(p))
			;
	p->alias_next = false;
	t = lex(p);
	if (p->error)
		goto out;
	/* (( arithmetic )) */
	if (t == T_LPAREN && p->pos < p->len && p->s[p->pos] == '(') {
		int line = p->tline;
		p->pos++;
		p->have = false;
		char *e = scan_arith(p);
		if (!e)
			goto out;
		ret = new_node(p, N_ARITH);
		ret->line = line;
		ret->u.ar.expr = e;
		add_redirs(p, ret);
		goto out;
	}
	bool isc;
	ret = parse_compound(p, &isc);
	if (isc) {
		if (ret)
			add_redirs(p, ret);
		if (p->error) {
			node_free(ret);
			ret = NULL;
		}
		goto out;
	}
	if (t == T_WORD && strcmp(p->word, "function") == 0) {
		int line = p->tline;
		consume(p);
		if (lex(p) != T_WORD) {
			syntax_error(p);
			goto out;
		}
		char *name = take_word(p);
		if (lex(p) == T_LPAREN) {
			consume(p);
			if (lex(p) != T_RPAREN) {
				syntax_error(p);
				free(name);
				goto out;
			}
			consume(p);
		}
		ret = parse_function_body(p, name, line);
		goto out;
	}
	if (t == T_WORD && is_terminator_word(p->word)) {
		syntax_error(p);
		goto out;
	}
	/* simple command */
	struct node *n = new_node(p, N_SIMPLE);
	struct word **at = &n->u.s.assigns, **wt = &n->u.s.words;
	struct redir **rt = &n->redirs;
	bool any = false;
	for (;;) {
		t = lex(p);
		if (p->error)
			break;
		if (t == T_REDIR) {
			struct redir *r = parse_redir(p);
			if (!r)
				break;
			*rt = r;
			rt = &r->next;
			any = true;
			continue;
		}
		if (t != T_WORD)
			break;
		if (!n->u.s.words && is_assignment(p->word)) {
			*at = new_word(take_word(p));
			at = &(*at)->next;
			any = true;
			continue;
		}
		if (n->u.s.words && !n->u.s.words->next && lex(p) == T_WORD && p->alias_next) {
			/* alias value ending in a blank: the next word too */
		}
		bool first = !n->u.s.words;
		*wt = new_word(take_word(p));
		wt = &(*wt)->next;
		any = true;
		if (first) {
			if (p->alias_next) {
				p->alias_next = false;
				while (try_alias(p))
					;
			}
			/* NAME () compound: a function */
			if (!n->u.s.assigns && lex(p) == T_LPAREN) {
				if (!n->redirs && p->pos < p->len) {
					size_t save = p->pos;
					skip_blanks(p);
					if (p->pos < p->len && p->s[p->pos] == ')') {
						p->pos++;
						p->have = false;
						char *name = n->u.s.words->s;
						n->u.s.words->s = NULL;
						int line = n->line;
						node_free(n);
						ret = parse_function_body(p, name, line);
						goto out;
					}
					p->pos = save;
				}
				syntax_error(p);
				break;
			}
		}
	}
	if (p->error) {
		node_free(n);
		goto out;
	}
	if (!any) {
		node_free(n);
		syntax_error(p);
		goto out;
	}
	if (t == T_LPAREN) {
		syntax_error(p);
		node_free(n);
		goto out;
	}
	ret = n;
out:
	depth_leave(p);
	return ret;
}

/* ---- public ---- */

struct parser *
parser_new(struct sh_shell *sh, const char *text, size_t len, int first_line)
{
	struct parser *p = xmalloc(sizeof *p);
	memset(p, 0, sizeof *p);
	p->sh = sh;
	p->s = xmalloc(len + 1);
	memcpy(p->s, text, len);
	p->s[len] = 0;
	p->len = len;
	p->len0 = len;
	p->line = first_line;
	p->hd_tail = &p->hd;
	p->holes = &p->own_holes;
	p->in_eval = sh->parse_eval;
	sh->parse_eval = false;
	p->cmdsub_body = sh->parse_cmdsub;
	sh->parse_cmdsub = false;
	/* in POSIX mode its aliases were expanded when it was parsed (scan_dollar) */
	p->no_alias = p->cmdsub_body && sh->opt_posix;
	return p;
}

/* How much of the original text the commands parsed so far took (aliases
 * spliced in are not counted), and the line parsing goes on at. */
size_t
parser_consumed(const struct parser *p, int *line)
{
	size_t grown = p->len - p->len0;
	*line = p->line;
	return p->pos > grown ? (p->pos - grown > p->len0 ? p->len0 : p->pos - grown) : 0;
}

void
parser_free(struct parser *p)
{
	if (!p)
		return;
	free(p->s);
	free(p->orig);
	free(p->word);
	free(p->own_holes.v);
	while (p->hd) {
		struct pending_heredoc *h = p->hd;
		p->hd = h->next;
		free(h);
	}
	for (int i = 0; i < p->nguards; i++)
		free(p->guards[i].name);
	free(p);
}

int
parse_next(struct parser *p, struct node **out)
{
	*out = NULL;
	if (p->error)
		return -1;
	for (int i = 0; i < p->nguards; i++)
		free(p->guards[i].name);
	p->nguards = 0;
	while (lex(p) == T_NL)
		consume(p);
	if (p->error)
		return -1;
	if (lex(p) == T_EOF)
		return 0;
	parse_depth_total = 0;
	struct node *n = parse_list(p, false);
	if (p->error || !n) {
		if (!p->error)
			syntax_error(p);
		node_free(n);
		return -1;
	}
	/* The command ends at a newline (its here-docs follow it) or EOF. */
	if (lex(p) == T_NL) {
		consume(p);
	} else if (lex(p) != T_EOF) {
		syntax_error(p);
		node_free(n);
		return -1;
	}
	if (p->hd) {
		/* here-doc at EOF without a newline after the command */
		read_heredocs(p);
	}
	if (p->sh && !p->quiet)
		p->sh->lineno = p->line;
	*out = n;
	return 1;
}

int
parse_complete(struct sh_shell *sh, const char *text, size_t len)
{
	struct parser *p = parser_new(sh, text, len, 1);
	p->quiet = true;
	struct node *n;
	int r;
	while ((r = parse_next(p, &n)) > 0)
		node_free(n);
	/* at_eof without an error: a here-doc still open at the end */
	r = p->at_eof ? 0 : r == 0 ? 1 : -1;
	/* A backslash before the last newline continues the line (bash's `> ` too). */
	if (r == 1 && len >= 2 && text[len - 1] == '\n') {
		size_t k = 0;
		while (k + 1 < len && text[len - 2 - k] == '\\')
			k++;
		if (k % 2)
			r = 0;
	}
	parser_free(p);
	return r;
}

int
parse_all(struct sh_shell *sh, const char *text, size_t len, int line, struct node **out)
{
	struct parser *p = parser_new(sh, text, len, line);
	struct node *list = NULL;
	int r;
	struct node *n;
	while ((r = parse_next(p, &n)) > 0) {
		if (!n)
			continue;
		if (!list)
			list = new_node(p, N_LIST);
		list->u.p.v = xrealloc(list->u.p.v, (list->u.p.n + 1) * sizeof(struct node *));
		list->u.p.v[list->u.p.n++] = n;
	}
	parser_free(p);
	if (r < 0) {
		node_free(list);
		*out = NULL;
		return -1;
	}
	*out = list;
	return 0;
}

long
parse_cmdsub_end(struct sh_shell *sh, const char *s, size_t len)
{
	/* s starts with "$(" */
	struct parser *p = parser_new(sh, s, len, 1);
	p->sh = NULL;
	p->quiet = true; /* a scan only: the substitution's own parse reports (and sh is gone) */
	long e = scan_dollar(p, 0);
	parser_free(p);
	return e;
}

static void
words_free(struct word *w)
{
	while (w) {
		struct word *n = w->next;
		free(w->s);
		free(w);
		w = n;
	}
}

/* Iterative along the child that chains: the left operand of && and ||
 * (a left-deep list) and the else branch of an if (elif), so that a long
 * chain does not recurse once per link. */
void
node_free(struct node *n)
{
	while (n) {
		struct node *next = NULL;
		for (struct redir *r = n->redirs; r;) {
			struct redir *nx = r->next;
			free(r->word);
			free(r->body);
			free(r);
			r = nx;
		}
		switch (n->type) {
		case N_SIMPLE:
			words_free(n->u.s.assigns);
			words_free(n->u.s.words);
			break;
		case N_PIPE:
		case N_LIST:
			for (size_t i = 0; i < n->u.p.n; i++)
				node_free(n->u.p.v[i]);
			free(n->u.p.v);
			break;
		case N_AND:
		case N_OR:
			node_free(n->u.b.b);
			node_free(n->u.b.c);
			next = n->u.b.a;
			break;
		case N_ASYNC:
		case N_NOT:
		case N_SUBSHELL:
		case N_GROUP:
		case N_IF:
		case N_WHILE:
		case N_UNTIL:
			node_free(n->u.b.a);
			node_free(n->u.b.b);
			next = n->u.b.c;
			break;
		case N_FOR:
			free(n->u.f.var);
			words_free(n->u.f.words);
			node_free(n->u.f.body);
			break;
		case N_AFOR:
			free(n->u.af.init);
			free(n->u.af.cond);
			free(n->u.af.step);
			node_free(n->u.af.body);
			break;
		case N_CASE:
			free(n->u.c.word);
			for (struct case_item *c = n->u.c.items; c;) {
				struct case_item *nx = c->next;
				words_free(c->pats);
				node_free(c->body);
				free(c);
				c = nx;
			}
			break;
		case N_FUNC:
			free(n->u.fn.name);
			node_release(n->u.fn.body);
			break;
		case N_DBRACK:
			words_free(n->u.db.toks);
			break;
		case N_ARITH:
			free(n->u.ar.expr);
			break;
		default:
			break;
		}
		free(n);
		n = next;
	}
}

void
node_release(struct node *n)
{
	if (n && --n->refs <= 0)
		node_free(n);
}

/* ---- bash's canonical text of a function (declare -f, type) ----
 * print_cmd.c's layout: a function's body one command a line, four spaces
 * an indentation level, ";" after each but the last of a list; conditions
 * and pipelines on one line; words as written. Depth is bounded by the parse
 * (SH_MAX_PARSE_DEPTH) and checked against the stack. */
static void pr_node(struct sbuf *b, const struct node *n, int ind, bool nl);

static void
pr_indent(struct sbuf *b, int ind)
{
	for (int i = 0; i < ind; i++)
		sb_adds(b, "    ");
}

static void
pr_redirs(struct sbuf *b, const struct redir *r)
{
	for (; r; r = r->next) {
		char fd[24] = "";
		int def = (r->type == R_IN || r->type == R_DUPIN || r->type == R_HEREDOC ||
			   r->type == R_HERESTR || r->type == R_RDWR)
				  ? 0
				  : 1;
		bool dup = r->type == R_DUPIN || r->type == R_DUPOUT;
		if (r->fd >= 0 && (r->fd != def || dup))
			snprintf(fd, sizeof fd, "%d", r->fd);
		else if (dup)
			snprintf(fd, sizeof fd, "%d", def);
		sb_addc(b, ' ');
		sb_adds(b, fd);
		const char *op = "?";
		switch (r->type) {
		case R_IN: op = "< "; break;
		case R_OUT: op = "> "; break;
		case R_CLOBBER: op = ">| "; break;
		case R_APPEND: op = ">> "; break;
		case R_RDWR: op = "<> "; break;
		case R_DUPIN: op = "<&"; break;
		case R_DUPOUT: op = ">&"; break;
		case R_HEREDOC: op = r->strip_tabs ? "<<-" : "<<"; break;
		case R_HERESTR: op = "<<< "; break;
		case R_ALLOUT: op = "&> "; break;
		case R_ALLAPPEND: op = "&>> "; break;
		default: break;
		}
		sb_adds(b, op);
		sb_adds(b, r->word ? r->word : "");
	}
}

/* The here-documents of N's redirections, after its line. */
static void
pr_heredocs(struct sbuf *b, const struct redir *r)
{
	for (; r; r = r->next)
		if (r->type == R_HEREDOC) {
			sb_addc(b, '\n');
			sb_adds(b, r->body ? r->body : "");
			/* the delimiter as it ends the body: its quotes removed */
			for (const char *w = r->word ? r->word : ""; *w; w++)
				if (*w != '\'' && *w != '"' && *w != '\\')
					sb_addc(b, *w);
		}
}

static bool
has_heredoc(const struct redir *r)
{
	for (; r; r = r->next)
		if (r->type == R_HEREDOC)
			return true;
	return false;
}

static void pr_inline(struct sbuf *b, const struct node *n, int ind);

/* A word as written, but each $( ) in it printed from its parse, as bash 5.2
 * does ("$( echo a )" is "$(echo a)"); one that does not parse stays as is. */
static void
pr_word(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);
	bool dq = false;
	struct sh_shell *sh = sh_current;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < n) {
			sb_addn(b, s + i, 2);
			i++;
			continue;
		}
		if (c == '\'' && !dq) {
			const char *q = strchr(s + i + 1, '\'');
			size_t e = q ? (size_t)(q - s) : n - 1;
			sb_addn(b, s + i, e - i + 1);
			i = e;
			continue;
		}
		if (c == '"')
			dq = !dq;
		if (c == '$' && i + 1 < n && s[i + 1] == '(' && !(i + 2 < n && s[i + 2] == '(') && sh &&
		    !sh_stack_low()) {
			long e = parse_cmdsub_end(sh, s + i, n - i);
			if (e > 3 && s[i + (size_t)e - 1] == ')') { /* e: just past the ')' */
				struct parser *p = parser_new(sh, s + i + 2, (size_t)e - 3, 1);
				p->quiet = true;
				p->no_alias = true;
				struct node *list = NULL, *nd;
				int r;
				size_t cnt = 0;
				while ((r = parse_next(p, &nd)) > 0) {
					if (!nd)
						continue;
					if (!list)
						list = new_node(p, N_LIST);
					list->u.p.v = xrealloc(list->u.p.v, (list->u.p.n + 1) * sizeof(struct node *));
					list->u.p.v[list->u.p.n++] = nd;
					cnt++;
				}
				parser_free(p);
				if (r == 0 && list) {
					sb_adds(b, "$(");
					pr_inline(b, cnt == 1 ? list->u.p.v[0] : list, 0);
					sb_addc(b, ')');
					node_free(list);
					i += (size_t)e - 1;
					continue;
				}
				node_free(list);
			}
		}
		sb_addc(b, c);
	}
}

static void
pr_words(struct sbuf *b, const struct word *w, bool first)
{
	for (; w; w = w->next) {
		if (!first)
			sb_addc(b, ' ');
		first = false;
		pr_word(b, w->s);
	}
}

/* A compound body: its commands one a line at IND, each but the last with
 * ";" after it (LAST_SEMI: the last too, as bash prints if, while and for
 * bodies); an asynchronous command and the next share a line ("a & b"). */
static void
pr_body(struct sbuf *b, const struct node *n, int ind, bool last_semi)
{
	const struct node *const *v = &n;
	size_t cnt = 1;
	if (n && n->type == N_LIST) {
		v = (const struct node *const *)n->u.p.v;
		cnt = n->u.p.n;
	}
	bool fresh = true;
	for (size_t i = 0; i < cnt; i++) {
		const struct node *c = v[i];
		if (fresh)
			pr_indent(b, ind);
		pr_node(b, c, ind, true);
		if (c && c->type == N_ASYNC && i + 1 < cnt) {
			sb_addc(b, ' ');
			fresh = false;
			continue;
		}
		fresh = true;
		if (c && c->type != N_ASYNC && (i + 1 < cnt || last_semi))
			sb_addc(b, ';');
		if (c && c->type == N_SIMPLE && has_heredoc(c->redirs))
			pr_heredocs(b, c->redirs);
		sb_addc(b, '\n');
	}
}

/* A condition or an inline list: "a; b" */
static void
pr_inline(struct sbuf *b, const struct node *n, int ind)
{
	if (n && n->type == N_LIST) {
		for (size_t i = 0; i < n->u.p.n; i++) {
			if (i)
				sb_adds(b, n->u.p.v[i - 1]->type == N_ASYNC ? " " : "; ");
			pr_node(b, n->u.p.v[i], ind, false);
		}
		return;
	}
	pr_node(b, n, ind, false);
}

static void
pr_node(struct sbuf *b, const struct node *n, int ind, bool nl)
{
	if (!n)
		return;
	if (sh_stack_low()) {
		sb_adds(b, "...");
		return;
	}
	switch (n->type) {
	case N_SIMPLE:
		pr_words(b, n->u.s.assigns, true);
		pr_words(b, n->u.s.words, !n->u.s.assigns);
		pr_redirs(b, n->redirs);
		return;
	case N_PIPE:
		if (n->u.p.timed)
			sb_adds(b, n->u.p.time_posix ? "time -p " : "time ");
		if (n->u.p.bang)
			sb_adds(b, "! ");
		for (size_t i = 0; i < n->u.p.n; i++) {
			if (i)
				sb_adds(b, " | ");
			pr_node(b, n->u.p.v[i], ind, false);
		}
		return;
	case N_AND:
	case N_OR:
		pr_node(b, n->u.b.a, ind, false);
		sb_adds(b, n->type == N_AND ? " && " : " || ");
		pr_node(b, n->u.b.b, ind, false);
		return;
	case N_NOT:
		sb_adds(b, "! ");
		pr_node(b, n->u.b.a, ind, false);
		return;
	case N_ASYNC:
		pr_node(b, n->u.b.a, ind, nl);
		sb_adds(b, " &");
		return;
	case N_LIST:
		if (nl) {
			/* a list where one command stands: its commands one a line */
			for (size_t i = 0; i < n->u.p.n; i++) {
				if (i && n->u.p.v[i - 1]->type == N_ASYNC) {
					sb_addc(b, ' ');
				} else if (i) {
					sb_adds(b, ";\n");
					pr_indent(b, ind);
				}
				pr_node(b, n->u.p.v[i], ind, true);
			}
		} else
			pr_inline(b, n, ind);
		return;
	case N_SUBSHELL:
		sb_adds(b, "( ");
		pr_node(b, n->u.b.a, ind, true);
		sb_adds(b, " )");
		break;
	case N_GROUP:
		sb_adds(b, "{ \n");
		pr_body(b, n->u.b.a, ind + 1, false);
		pr_indent(b, ind);
		sb_addc(b, '}');
		break;
	case N_IF:
		sb_adds(b, "if ");
		pr_inline(b, n->u.b.a, ind);
		sb_adds(b, "; then\n");
		pr_body(b, n->u.b.b, ind + 1, true);
		if (n->u.b.c) {
			pr_indent(b, ind);
			sb_adds(b, "else\n");
			pr_body(b, n->u.b.c, ind + 1, true);
		}
		pr_indent(b, ind);
		sb_adds(b, "fi");
		break;
	case N_WHILE:
	case N_UNTIL:
		sb_adds(b, n->type == N_WHILE ? "while " : "until ");
		pr_inline(b, n->u.b.a, ind);
		sb_adds(b, "; do\n");
		pr_body(b, n->u.b.b, ind + 1, true);
		pr_indent(b, ind);
		sb_adds(b, "done");
		break;
	case N_FOR:
		sb_adds(b, "for ");
		sb_adds(b, n->u.f.var);
		if (n->u.f.has_in) {
			sb_adds(b, " in ");
			pr_words(b, n->u.f.words, true);
		} else
			sb_adds(b, " in \"$@\"");
		sb_adds(b, ";\n");
		pr_indent(b, ind);
		sb_adds(b, "do\n");
		pr_body(b, n->u.f.body, ind + 1, true);
		pr_indent(b, ind);
		sb_adds(b, "done");
		break;
	case N_AFOR:
		sb_adds(b, "for ((");
		sb_adds(b, n->u.af.init ? n->u.af.init : "");
		sb_adds(b, "; ");
		sb_adds(b, n->u.af.cond ? n->u.af.cond : "");
		sb_adds(b, "; ");
		sb_adds(b, n->u.af.step ? n->u.af.step : "");
		sb_adds(b, "))\n");
		pr_indent(b, ind);
		sb_adds(b, "do\n");
		pr_body(b, n->u.af.body, ind + 1, true);
		pr_indent(b, ind);
		sb_adds(b, "done");
		break;
	case N_CASE:
		sb_adds(b, "case ");
		sb_adds(b, n->u.c.word);
		sb_adds(b, " in \n");
		for (const struct case_item *c = n->u.c.items; c; c = c->next) {
			pr_indent(b, ind + 1);
			for (const struct word *w = c->pats; w; w = w->next) {
				if (w != c->pats)
					sb_adds(b, " | ");
				sb_adds(b, w->s);
			}
			sb_adds(b, ")\n");
			if (c->body)
				pr_body(b, c->body, ind + 2, false);
			pr_indent(b, ind + 1);
			sb_adds(b, c->term == 1 ? ";&\n" : c->term == 2 ? ";;&\n" : ";;\n");
		}
		pr_indent(b, ind);
		sb_adds(b, "esac");
		break;
	case N_FUNC:
		sb_adds(b, "function ");
		sb_adds(b, n->u.fn.name);
		sb_adds(b, " () \n");
		pr_indent(b, ind);
		pr_node(b, n->u.fn.body, ind, true);
		return; /* the body printed its own redirections */
	case N_DBRACK:
		sb_adds(b, "[[");
		for (const struct word *w = n->u.db.toks; w; w = w->next) {
			sb_addc(b, ' ');
			for (const char *q = w->s; *q; q++)
				if (*q != '\x01') /* the parser's mark of an operator */
					sb_addc(b, *q);
		}
		sb_adds(b, " ]]");
		break;
	case N_ARITH:
		sb_adds(b, "((");
		sb_adds(b, n->u.ar.expr);
		sb_adds(b, "))");
		break;
	default:
		break;
	}
	pr_redirs(b, n->redirs);
}

char *
func_text(const char *name, const struct node *body)
{
	struct sbuf b = {0};
	sb_adds(&b, name);
	sb_adds(&b, " () \n");
	pr_node(&b, body, 0, true);
	sb_addc(&b, '\n');
	return sb_take(&b);
}
