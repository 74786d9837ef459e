/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lexer.c — splits policy text into tokens with 1-based line:column
 * positions (columns count characters, not bytes).
 *
 * Trusts: nothing; the text is arbitrary bytes. Strings are kept raw here and
 * decoded by unescape_string (the decoding depends on where they appear).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *
tok_kind_name(enum tok_kind k)
{
	switch (k) {
	case T_EOF: return "end of input";
	case T_IDENT: return "an identifier";
	case T_INT: return "an integer";
	case T_STRING: return "a string";
	case T_LPAREN: return "`(`";
	case T_RPAREN: return "`)`";
	case T_LBRACKET: return "`[`";
	case T_RBRACKET: return "`]`";
	case T_LBRACE: return "`{`";
	case T_RBRACE: return "`}`";
	case T_COMMA: return "`,`";
	case T_SEMI: return "`;`";
	case T_DOT: return "`.`";
	case T_COLON: return "`:`";
	case T_COLONCOLON: return "`::`";
	case T_AT: return "`@`";
	case T_EQ: return "`==`";
	case T_NE: return "`!=`";
	case T_LT: return "`<`";
	case T_LE: return "`<=`";
	case T_GT: return "`>`";
	case T_GE: return "`>=`";
	case T_AND: return "`&&`";
	case T_OR: return "`||`";
	case T_NOT: return "`!`";
	case T_PLUS: return "`+`";
	case T_MINUS: return "`-`";
	case T_STAR: return "`*`";
	case T_SLASH: return "`/`";
	case T_PERCENT: return "`%`";
	case T_ASSIGN: return "`=`";
	case T_QUESTION: return "`?`";
	case T_DOLLAR: return "`$`";
	case T_OTHER: return "an unexpected character";
	default: return "a token";
	}
}

static bool
is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_ident_char(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

int
lex(const char *text, size_t len, struct lexer_result *out)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 256, n = 0;
	struct token *toks = malloc(cap * sizeof(*toks));
	if (!toks)
		return -ENOMEM;
	uint32_t line = 1, col = 1;
	size_t i = 0;

#define ADVANCE(k)                                                             \
	do {                                                                   \
		for (size_t adv_ = 0; adv_ < (k); adv_++, i++) {               \
			unsigned char ch_ = (unsigned char)text[i];            \
			if (ch_ == '\n') {                                     \
				line++;                                        \
				col = 1;                                       \
			} else if ((ch_ & 0xC0) != 0x80) {                     \
				col++;                                         \
			}                                                      \
		}                                                              \
	} while (0)

	for (;;) {
		/* whitespace and // comments */
		while (i < len) {
			unsigned char c = (unsigned char)text[i];
			if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
				ADVANCE(1);
			} else if (c == '/' && i + 1 < len && text[i + 1] == '/') {
				while (i < len && text[i] != '\n')
					ADVANCE(1);
			} else {
				break;
			}
		}
		if (n + 1 >= cap) {
			if (cap >= BP_MAX_TOKENS) {
				free(toks);
				return -E2BIG;
			}
			cap *= 2;
			struct token *nt = realloc(toks, cap * sizeof(*toks));
			if (!nt) {
				free(toks);
				return -ENOMEM;
			}
			toks = nt;
		}
		struct token *t = &toks[n];
		memset(t, 0, sizeof(*t));
		t->line = line;
		t->col = col;
		t->p = text + i;
		if (i >= len) {
			t->k = T_EOF;
			n++;
			break;
		}
		unsigned char c = (unsigned char)text[i];
		size_t start = i;
		if (is_ident_start(c)) {
			size_t j = i;
			while (j < len && is_ident_char((unsigned char)text[j]))
				j++;
			t->k = T_IDENT;
			ADVANCE(j - start);
		} else if (c >= '0' && c <= '9') {
			size_t j = i;
			uint64_t v = 0;
			bool over = false;
			while (j < len && text[j] >= '0' && text[j] <= '9') {
				unsigned d = (unsigned)(text[j] - '0');
				if (v > (UINT64_MAX - d) / 10)
					over = true;
				else
					v = v * 10 + d;
				j++;
			}
			t->k = T_INT;
			t->ival = v;
			t->ioverflow = over;
			ADVANCE(j - start);
		} else if (c == '"') {
			size_t j = i + 1;
			bool closed = false;
			while (j < len) {
				if (text[j] == '\\' && j + 1 < len) {
					j += 2;
					continue;
				}
				if (text[j] == '"') {
					closed = true;
					j++;
					break;
				}
				j++;
			}
			if (!closed) {
				if (!out->err) {
					out->err = true;
					out->err_line = line;
					out->err_col = col;
					out->err_msg = "unterminated string literal";
				}
				t->k = T_EOF;
				n++;
				break;
			}
			t->k = T_STRING;
			ADVANCE(j - start);
		} else {
			char c2 = i + 1 < len ? text[i + 1] : 0;
			size_t w = 1;
			switch (c) {
			case '(': t->k = T_LPAREN; break;
			case ')': t->k = T_RPAREN; break;
			case '[': t->k = T_LBRACKET; break;
			case ']': t->k = T_RBRACKET; break;
			case '{': t->k = T_LBRACE; break;
			case '}': t->k = T_RBRACE; break;
			case ',': t->k = T_COMMA; break;
			case ';': t->k = T_SEMI; break;
			case '.': t->k = T_DOT; break;
			case '@': t->k = T_AT; break;
			case '+': t->k = T_PLUS; break;
			case '-': t->k = T_MINUS; break;
			case '*': t->k = T_STAR; break;
			case '/': t->k = T_SLASH; break;
			case '%': t->k = T_PERCENT; break;
			case '?': t->k = T_QUESTION; break;
			case '$': t->k = T_DOLLAR; break;
			case ':':
				if (c2 == ':') {
					t->k = T_COLONCOLON;
					w = 2;
				} else {
					t->k = T_COLON;
				}
				break;
			case '=':
				if (c2 == '=') {
					t->k = T_EQ;
					w = 2;
				} else {
					t->k = T_ASSIGN;
				}
				break;
			case '!':
				if (c2 == '=') {
					t->k = T_NE;
					w = 2;
				} else {
					t->k = T_NOT;
				}
				break;
			case '<':
				if (c2 == '=') {
					t->k = T_LE;
					w = 2;
				} else {
					t->k = T_LT;
				}
				break;
			case '>':
				if (c2 == '=') {
					t->k = T_GE;
					w = 2;
				} else {
					t->k = T_GT;
				}
				break;
			case '&':
				if (c2 == '&') {
					t->k = T_AND;
					w = 2;
				} else {
					t->k = T_OTHER;
				}
				break;
			case '|':
				if (c2 == '|') {
					t->k = T_OR;
					w = 2;
				} else {
					t->k = T_OTHER;
				}
				break;
			default:
				t->k = T_OTHER;
				/* one whole UTF-8 character */
				while (start + w < len && ((unsigned char)text[start + w] & 0xC0) == 0x80 &&
				       w < 4)
					w++;
				break;
			}
			ADVANCE(w);
		}
		t->len = (uint32_t)(i - start);
		n++;
	}
#undef ADVANCE
	out->toks = toks;
	out->n = n;
	return 0;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}


/*
 * Decode a T_STRING token. In a pattern (out_len != NULL and err about
 * patterns handled by the caller) the caller passes the raw text itself; this
 * decodes a plain string: `\*` is refused here.
 */
bool
unescape_string(const struct token *t, struct arena *ar, char **out, size_t *out_len,
		const char **err)
{
	const char *s = t->p + 1;
	size_t n = t->len - 2;
	char *o = arena_alloc(ar, n + 1);
	if (!o) {
		*err = "out of memory";
		return false;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c != '\\') {
			o[k++] = c;
			continue;
		}
		if (++i >= n) {
			*err = "a string ends in a lone backslash";
			return false;
		}
		switch (s[i]) {
		case 'n': o[k++] = '\n'; break;
		case 'r': o[k++] = '\r'; break;
		case 't': o[k++] = '\t'; break;
		case '0': o[k++] = '\0'; break;
		case '\\': o[k++] = '\\'; break;
		case '"': o[k++] = '"'; break;
		case '\'': o[k++] = '\''; break;
		case 'u': {
			if (i + 1 >= n || s[i + 1] != '{') {
				*err = "invalid escape `\\u`: expected `\\u{HEX}`";
				return false;
			}
			size_t j = i + 2;
			uint32_t cp = 0;
			int digits = 0;
			while (j < n && hexval(s[j]) >= 0 && digits < 7) {
				cp = cp * 16 + (uint32_t)hexval(s[j]);
				digits++;
				j++;
			}
			if (j >= n || s[j] != '}' || digits == 0 || digits > 6 || cp > 0x10FFFF ||
			    (cp >= 0xD800 && cp <= 0xDFFF)) {
				*err = "invalid unicode escape: expected `\\u{HEX}` with 1 to 6 hex "
				       "digits naming a Unicode scalar value";
				return false;
			}
			/* \u{HEX} never needs more room than its own spelling */
			k += bp_utf8_put(o + k, cp);
			i = j;
			break;
		}
		case '*':
			*err = "the escape `\\*` is only valid in a `like` pattern";
			return false;
		default:
			*err = "invalid escape sequence in a string";
			return false;
		}
	}
	o[k] = 0;
	*out = o;
	*out_len = k;
	return true;
}
