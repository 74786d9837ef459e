/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lineedit.c — the interactive shell's line editor (libedit, BSD-licensed):
 * the prompt's line is edited at the terminal (emacs keys, arrows), the
 * session's lines are kept as history (up and down arrows, Ctrl-R), and Tab
 * completes a command name (builtins, box-shell's own commands, functions,
 * aliases, the programs on PATH) in command position, else a file name
 * (docs/box-sh.1.md "Interactive"). Used by the interactive loop
 * (invocation.c) when fd 0 and fd 2 are a terminal; otherwise the loop reads
 * fd 0 a byte at a time as before.
 *
 * What it decides: nothing. An edited line is only text; it goes through the
 * interpreter exactly as a line read from fd 0 would, every command in it
 * decided by box-policyd. Completion lists directories with the process's
 * own access (the box's mount view and Landlock; no policy decision: it reads
 * names, never a file's contents), capped at LE_MAX_NAMES names.
 *
 * Signals: libedit installs no handler (EL_SIGNAL off); its read goes
 * through le_getc, which gives up on the interactive loop's SIGINT flag
 * (Ctrl-C: the line is abandoned) and re-reads the window size on its
 * SIGWINCH flag. The terminal keeps ISIG in libedit's edit mode, so Ctrl-C
 * is still the SIGINT the alias forwards.
 *
 * Trusts: the terminal's bytes are a person's typing, taken as text only;
 * the interpreter's state (PATH, cwd, functions) as the script left it.
 */
#include <dirent.h>
#include <errno.h>
#include <histedit.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "cmd.h"
#include "host.h"
#include "sh.h"
#include "lineedit.h"

#define LE_HISTORY 1000    /* lines kept */
#define LE_MAX_NAMES 20000 /* completion candidates gathered, at most */
#define LE_LIST_MAX 200    /* shown without asking */

struct sh_lineedit {
	EditLine *el;
	History *hist;
	FILE *out;
	struct sh_shell *sh;
	const volatile sig_atomic_t *intr;
	volatile sig_atomic_t *winch;
	void (*resized)(struct sh_shell *sh);
	char *prompt;
	bool eof;
	locale_t utf8; /* the editor's own character set (uselocale around each read) */
	bool tab_again; /* the last key was a Tab that completed nothing: the next one lists */
	mbstate_t mbs;
};

/* ---- reading ---------------------------------------------------------------------- */

static int
le_getc(EditLine *el, wchar_t *wc)
{
	struct sh_lineedit *le = NULL;
	el_get(el, EL_CLIENTDATA, &le);
	for (;;) {
		if (*le->intr) {
			errno = EINTR;
			return -1;
		}
		if (*le->winch) {
			*le->winch = 0;
			el_resize(el);
			le->resized(le->sh);
		}
		unsigned char c;
		ssize_t n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			le->eof = true;
			return 0;
		}
		if (c != '\t')
			le->tab_again = false;
		if (MB_CUR_MAX == 1) {
			*wc = (wchar_t)c;
			return 1;
		}
		wchar_t w;
		size_t r = mbrtowc(&w, (const char *)&c, 1, &le->mbs);
		if (r == (size_t)-2)
			continue; /* more bytes of the character */
		if (r == (size_t)-1) {
			memset(&le->mbs, 0, sizeof le->mbs);
			w = (wchar_t)c;
		}
		*wc = w;
		return 1;
	}
}

static char *
le_prompt(EditLine *el)
{
	struct sh_lineedit *le = NULL;
	el_get(el, EL_CLIENTDATA, &le);
	return le->prompt ? le->prompt : (char *)"";
}

/* ---- completion ------------------------------------------------------------------- */

struct names {
	char **v;
	size_t n, cap;
};

static void
names_add(struct names *ns, const char *name, size_t len, bool dir)
{
	if (ns->n >= LE_MAX_NAMES)
		return;
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? ns->cap * 2 : 64;
		ns->v = xrealloc(ns->v, ns->cap * sizeof(*ns->v));
	}
	char *s = xmalloc(len + 2);
	memcpy(s, name, len);
	s[len] = dir ? '/' : '\0';
	s[len + 1] = '\0';
	ns->v[ns->n++] = s;
}

static void
names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of DIR starting with PREFIX (a directory with a '/'); programs: executable files only. */
static void
list_dir(struct names *ns, const char *dir, const char *prefix, bool programs)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t pl = strlen(prefix);
	struct dirent *e;
	while ((e = readdir(d)) && ns->n < LE_MAX_NAMES) {
		if (strncmp(e->d_name, prefix, pl) != 0)
			continue;
		if (e->d_name[0] == '.' && (pl == 0 || strcmp(e->d_name, ".") == 0 ||
					    strcmp(e->d_name, "..") == 0))
			continue;
		struct stat st;
		bool isdir = false, exe = false;
		if (fstatat(dirfd(d), e->d_name, &st, 0) == 0) {
			isdir = S_ISDIR(st.st_mode);
			exe = S_ISREG(st.st_mode) && (st.st_mode & 0111);
		}
		if (programs && !exe)
			continue;
		names_add(ns, e->d_name, strlen(e->d_name), isdir && !programs);
	}
	closedir(d);
}

static void
command_names(struct sh_lineedit *le, struct names *ns, const char *prefix)
{
	size_t pl = strlen(prefix);
	for (size_t i = 0; builtin_name(i); i++)
		if (strncmp(builtin_name(i), prefix, pl) == 0)
			names_add(ns, builtin_name(i), strlen(builtin_name(i)), false);
	const struct sh_cmd_def *const *tabs = sh_host_get()->commands;
	for (size_t t = 0; tabs && tabs[t]; t++)
		for (const struct sh_cmd_def *d = tabs[t]; d->name; d++)
			if (strncmp(d->name, prefix, pl) == 0)
				names_add(ns, d->name, strlen(d->name), false);
	struct sh_shell *sh = le->sh;
	for (size_t i = 0; i < sizeof(sh->funcs) / sizeof(*sh->funcs); i++)
		for (struct func *f = sh->funcs[i]; f; f = f->next)
			if (strncmp(f->name, prefix, pl) == 0)
				names_add(ns, f->name, strlen(f->name), false);
	for (struct alias *a = sh->aliases; a; a = a->next)
		if (strncmp(a->name, prefix, pl) == 0)
			names_add(ns, a->name, strlen(a->name), false);
	const char *path = var_value(sh, "PATH");
	for (const char *p = path; p && *p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l && l < PATH_MAX && p[0] == '/') {
			char dir[PATH_MAX];
			memcpy(dir, p, l);
			dir[l] = '\0';
			list_dir(ns, dir, prefix, true);
		}
		p = e ? e + 1 : NULL;
	}
}

/* Does the word starting at START sit where a command name goes? */
static bool
command_position(const char *buf, size_t start)
{
	size_t i = start;
	while (i > 0 && (buf[i - 1] == ' ' || buf[i - 1] == '\t'))
		i--;
	if (i == 0)
		return true;
	char c = buf[i - 1];
	if (c == ';' || c == '|' || c == '&' || c == '(' || c == '{' || c == '`')
		return true;
	/* after a reserved word that takes a command */
	static const char *const words[] = {"then", "do", "else", "elif", "if", "while", "until",
					    "time", "!", NULL};
	for (int w = 0; words[w]; w++) {
		size_t l = strlen(words[w]);
		if (i >= l && strncmp(buf + i - l, words[w], l) == 0 &&
		    (i == l || strchr(" \t;|&(", buf[i - l - 1])))
			return true;
	}
	return false;
}

/* Print the candidates in columns under the line, then redraw it. */
static void
show_names(struct sh_lineedit *le, struct names *ns)
{
	size_t width = 0, cols = 80;
	const char *c = var_value(le->sh, "COLUMNS");
	if (c && atoi(c) > 10)
		cols = (size_t)atoi(c);
	for (size_t i = 0; i < ns->n; i++)
		if (strlen(ns->v[i]) > width)
			width = strlen(ns->v[i]);
	width += 2;
	size_t per = cols / width ? cols / width : 1;
	size_t rows = (ns->n + per - 1) / per;
	fputc('\n', le->out);
	if (ns->n > LE_LIST_MAX) {
		fprintf(le->out, "(%zu possibilities; type more of the name)\n", ns->n);
		return;
	}
	for (size_t r = 0; r < rows; r++) {
		for (size_t k = 0; k < per; k++) {
			size_t i = k * rows + r;
			if (i >= ns->n)
				break;
			const char *s = ns->v[i];
			fprintf(le->out, "%-*s", (int)(k + 1 < per && i + rows < ns->n ? width : 0), s);
		}
		fputc('\n', le->out);
	}
}

/* The text to insert for NAME: shell-special characters get a backslash. */
static void
insert_quoted(EditLine *el, const char *s, size_t n)
{
	char buf[2 * PATH_MAX + 2];
	size_t o = 0;
	for (size_t i = 0; i < n && o + 2 < sizeof buf; i++) {
		if (strchr(" \t\n\\'\"`$&|;<>()*?[]#~=%{}!", s[i]))
			buf[o++] = '\\';
		buf[o++] = s[i];
	}
	buf[o] = '\0';
	if (o)
		el_insertstr(el, buf);
}

static unsigned char
le_complete(EditLine *el, int ch)
{
	(void)ch;
	struct sh_lineedit *le = NULL;
	el_get(el, EL_CLIENTDATA, &le);
	const LineInfo *li = el_line(el);
	size_t cur = (size_t)(li->cursor - li->buffer);
	if (cur >= PATH_MAX)
		return CC_ERROR;
	char buf[PATH_MAX];
	memcpy(buf, li->buffer, cur);
	buf[cur] = '\0';
	/* The word under the cursor: back to an unescaped blank or an operator. */
	size_t start = cur;
	while (start > 0 && !strchr(" \t;|&()<>`{", buf[start - 1]))
		start--;
	/* Unescape it (a backslash quotes the next character; quotes are dropped). */
	char word[PATH_MAX];
	size_t wl = 0;
	for (size_t i = start; i < cur; i++) {
		if (buf[i] == '\\' && i + 1 < cur)
			i++;
		else if (buf[i] == '\'' || buf[i] == '"')
			continue;
		word[wl++] = buf[i];
	}
	word[wl] = '\0';

	struct names ns = { 0 };
	const char *base = word;
	if (command_position(buf, start) && !strchr(word, '/')) {
		command_names(le, &ns, word);
	} else {
		char dir[PATH_MAX];
		const char *slash = strrchr(word, '/');
		const char *home = le->sh->home;
		char *tail = slash ? (char *)slash + 1 : word;
		size_t dl = slash ? (size_t)(slash - word) + 1 : 0;
		int n;
		if (dl && word[0] == '~' && (word[1] == '/') && home)
			n = snprintf(dir, sizeof dir, "%s%.*s", home, (int)(dl - 1), word + 1);
		else if (dl && word[0] == '/')
			n = snprintf(dir, sizeof dir, "%.*s", (int)dl, word);
		else
			n = snprintf(dir, sizeof dir, "%s/%.*s", le->sh->cwd, (int)dl, word);
		if (n < 0 || (size_t)n >= sizeof dir)
			return CC_ERROR;
		list_dir(&ns, dir, tail, false);
		base = tail;
	}
	unsigned char rc = CC_REFRESH;
	if (ns.n == 0) {
		rc = CC_REFRESH_BEEP;
		goto out;
	}
	qsort(ns.v, ns.n, sizeof(*ns.v), name_cmp);
	/* A name found twice (a builtin also on PATH, a program in two PATH dirs): once. */
	size_t u = 1;
	for (size_t i = 1; i < ns.n; i++) {
		if (strcmp(ns.v[i], ns.v[u - 1]) == 0)
			free(ns.v[i]);
		else
			ns.v[u++] = ns.v[i];
	}
	ns.n = u;
	size_t bl = strlen(base);
	/* The longest common prefix of the candidates. */
	size_t common = strlen(ns.v[0]);
	for (size_t i = 1; i < ns.n; i++) {
		size_t k = 0;
		while (k < common && ns.v[i][k] == ns.v[0][k])
			k++;
		common = k;
	}
	/* Never half a UTF-8 character: back to the start of the one it cuts. */
	while (common > bl && ((unsigned char)ns.v[0][common] & 0xc0) == 0x80)
		common--;
	if (ns.n == 1) {
		const char *s = ns.v[0];
		size_t l = strlen(s);
		insert_quoted(el, s + bl, l - bl - (l && s[l - 1] == '/' ? 1 : 0));
		el_insertstr(el, l && s[l - 1] == '/' ? "/" : " ");
	} else if (common > bl) {
		insert_quoted(el, ns.v[0] + bl, common - bl);
	} else if (le->tab_again) {
		show_names(le, &ns);
		rc = CC_REDISPLAY;
	} else {
		le->tab_again = true; /* as bash: the second Tab lists */
		rc = CC_REFRESH_BEEP;
	}
out:
	names_free(&ns);
	return rc;
}

/* ---- the editor ------------------------------------------------------------------- */

struct sh_lineedit *
lineedit_open(struct sh_shell *sh, const volatile sig_atomic_t *intr,
	      volatile sig_atomic_t *winch, void (*resized)(struct sh_shell *sh))
{
	if (!isatty(0) || !isatty(2))
		return NULL;
	/* libedit finds the terminal's capabilities by TERM in the process's environment. */
	const char *term = var_value(sh, "TERM");
	if (term && *term && !strchr(term, '/'))
		(void)setenv("TERM", term, 1);
	else
		(void)unsetenv("TERM");
	struct sh_lineedit *le = xmalloc(sizeof *le);
	memset(le, 0, sizeof *le);
	le->sh = sh;
	le->intr = intr;
	le->winch = winch;
	le->resized = resized;
	/* The editor's output (prompt, echo) goes to fd 2, as bash's does. */
	/*
	 * The terminal's characters are UTF-8: libedit decodes and re-encodes
	 * them with the thread's locale, which is UTF-8 only while a line is
	 * read, so the interpreter itself keeps the C locale's byte semantics.
	 */
	le->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	le->out = fdopen(2, "w");
	if (!le->out) {
		free(le);
		return NULL;
	}
	(void)setvbuf(le->out, NULL, _IOFBF, 4096);
	locale_t old = le->utf8 ? uselocale(le->utf8) : (locale_t)0;
	le->el = el_init_fd("box-sh", stdin, le->out, le->out, 0, 2, 2);
	if (old)
		(void)uselocale(old);
	le->hist = history_init();
	if (!le->el || !le->hist) {
		if (le->el)
			el_end(le->el);
		if (le->hist)
			history_end(le->hist);
		if (le->utf8)
			freelocale(le->utf8);
		free(le);
		return NULL;
	}
	HistEvent ev;
	history(le->hist, &ev, H_SETSIZE, LE_HISTORY);
	history(le->hist, &ev, H_SETUNIQUE, 1);
	el_set(le->el, EL_CLIENTDATA, le);
	el_set(le->el, EL_EDITOR, "emacs");
	el_set(le->el, EL_SIGNAL, 0);
	el_set(le->el, EL_HIST, history, le->hist);
	el_set(le->el, EL_PROMPT, le_prompt);
	el_set(le->el, EL_GETCFN, le_getc);
	el_set(le->el, EL_ADDFN, "box-complete", "complete a command or file name", le_complete);
	el_set(le->el, EL_BIND, "^I", "box-complete", NULL);
	el_set(le->el, EL_BIND, "^R", "em-inc-search-prev", NULL);
	/* Ctrl-left/right and Home/End as xterm and tmux send them. */
	el_set(le->el, EL_BIND, "\033[1;5D", "ed-prev-word", NULL);
	el_set(le->el, EL_BIND, "\033[1;5C", "em-next-word", NULL);
	el_set(le->el, EL_BIND, "\033[H", "ed-move-to-beg", NULL);
	el_set(le->el, EL_BIND, "\033[F", "ed-move-to-end", NULL);
	el_set(le->el, EL_BIND, "\033[3~", "ed-delete-next-char", NULL);
	/*
	 * Characters U+0080-U+00FF (é, ü, ß) are text, not Meta keys: libedit's
	 * emacs map binds those codes to M-… commands, so é (U+00E9) would be
	 * M-i. Alt-KEY still works: a terminal sends it as ESC KEY.
	 */
	for (wchar_t c = 0x80; c <= 0xff; c++) {
		wchar_t key[2] = { c, 0 };
		el_wset(le->el, EL_BIND, key, L"ed-insert", NULL);
	}
	return le;
}

int
lineedit_read(struct sh_lineedit *le, const char *prompt, struct sbuf *line)
{
	line->len = 0;
	free(le->prompt);
	le->prompt = xstrdup(prompt);
	le->eof = false;
	memset(&le->mbs, 0, sizeof le->mbs);
	int n = 0;
	locale_t old = le->utf8 ? uselocale(le->utf8) : (locale_t)0;
	const char *s = el_gets(le->el, &n);
	if (old)
		(void)uselocale(old);
	fflush(le->out);
	if (*le->intr) {
		/* Abandon what was typed: the next prompt starts on an empty line. */
		el_reset(le->el);
		const LineInfo *li = el_line(le->el);
		if (li->lastchar > li->buffer) {
			el_cursor(le->el, (int)(li->lastchar - li->cursor));
			el_deletestr(le->el, (int)(li->lastchar - li->buffer));
		}
		return -1;
	}
	if (!s || n <= 0)
		return 0;
	if ((size_t)n > SH_MAX_SCRIPT)
		n = SH_MAX_SCRIPT;
	sb_addn(line, s, (size_t)n);
	if (line->s[line->len - 1] != '\n') /* end of input after a partial line */
		sb_addc(line, '\n');
	return 1;
}

void
lineedit_remember(struct sh_lineedit *le, const char *text, size_t len)
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	if (!len)
		return;
	char *s = xmalloc(len + 1);
	memcpy(s, text, len);
	s[len] = '\0';
	HistEvent ev;
	history(le->hist, &ev, H_ENTER, s);
	free(s);
}
