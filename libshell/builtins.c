/* SPDX-License-Identifier: Apache-2.0 */
/*
 * builtins.c — the shell's builtins, run in the shell's
 * process: : true false cd pwd echo printf test [ read export unset readonly
 * shift set eval . source exec exit return type command builtin alias
 * unalias getopts umask wait local declare typeset let trap break continue
 * kill shopt; each is decided as a shell:exec by the caller (exec.c) before
 * it runs. `cd` decides fs:read change_dir, `.` reads through sh_fs_open,
 * `test -e` and friends stat through sh_fs_stat (read_metadata).
 *
 * Trusts: nothing in the arguments; messages are bash's.
 */
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "sh.h"

int wrappers_find(const char *name, sh_builtin_fn *fn);

/* ---- buffered output of builtins ---- */

static char obuf[8192];
static size_t olen;
static int ofd = -1;
static int oerr;       /* first write error since bi_take_error */

int
bi_take_error(void)
{
	bi_flush();
	int e = oerr;
	oerr = 0;
	return e;
}

void
bi_flush(void)
{
	size_t off = 0;
	if (olen > 0 && sh_decide_before_output)
		sh_decide_before_output();
	while (off < olen) {
		ssize_t w = write(ofd, obuf + off, olen - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (!oerr)
				oerr = errno;
			break;
		}
		off += (size_t)w;
	}
	olen = 0;
}

void
bi_out(int fd, const char *s, size_t n)
{
	if (fd != ofd || olen + n > sizeof obuf) {
		bi_flush();
		ofd = fd;
	}
	if (n > sizeof obuf) {
		size_t off = 0;
		while (off < n) {
			ssize_t w = write(fd, s + off, n - off);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				if (!oerr)
					oerr = errno;
				return;
			}
			off += (size_t)w;
		}
		return;
	}
	memcpy(obuf + olen, s, n);
	olen += n;
}

void
bi_outs(int fd, const char *s)
{
	bi_out(fd, s, strlen(s));
}

/* ---- trivial ---- */

static int
b_true(struct sh_shell *sh, int argc, char **argv)
{
	return 0;
}

static int
b_false(struct sh_shell *sh, int argc, char **argv)
{
	return 1;
}

/* ---- echo / printf ---- */

static int
b_echo(struct sh_shell *sh, int argc, char **argv)
{
	bool nl = true, esc = false;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1])
			break;
		bool ok = true;
		for (const char *p = a + 1; *p; p++)
			if (!strchr("neE", *p))
				ok = false;
		if (!ok)
			break;
		for (const char *p = a + 1; *p; p++) {
			if (*p == 'n')
				nl = false;
			else if (*p == 'e')
				esc = true;
			else if (*p == 'E')
				esc = false;
		}
	}
	for (int first = i; i < argc; i++) {
		if (i > first)
			bi_out(1, " ", 1);
		const char *a = argv[i];
		if (!esc) {
			bi_outs(1, a);
			continue;
		}
		size_t n = strlen(a);
		for (size_t k = 0; k < n; k++) {
			if (a[k] == '\\' && k + 1 < n) {
				char o[SH_ESCAPE_MAX];
				size_t on;
				size_t used = ansi_escape(a + k + 1, n - k - 1, o, &on, true);
				if (used == (size_t)-1)
					return 0;
				bi_out(1, o, on);
				k += used;
			} else
				bi_out(1, a + k, 1);
		}
	}
	if (nl)
		bi_out(1, "\n", 1);
	return 0;
}

static bool
num_arg(struct sh_shell *sh, const char *s, intmax_t *v, int *st)
{
	if (!*s) {
		*v = 0;
		return true;
	}
	if (s[0] == '\'' || s[0] == '"') {
		*v = (unsigned char)s[1];
		return true;
	}
	char *e;
	errno = 0;
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-' || *p == '+')
		*v = strtoimax(s, &e, 0);
	else
		*v = (intmax_t)strtoumax(s, &e, 0);
	if (*e || e == s) {
		sh_err(sh, "printf: %s: invalid number", s);
		*st = 1;
		return false;
	}
	if (errno == ERANGE) {
		sh_err(sh, "printf: %s: Numerical result out of range", s);
		*st = 1;
	}
	return true;
}

/* %b: backslash escapes; returns true when \c stopped the output */
static bool
put_b(struct sbuf *o, const char *a)
{
	size_t n = strlen(a);
	for (size_t k = 0; k < n; k++) {
		if (a[k] == '\\' && k + 1 < n) {
			char e[SH_ESCAPE_MAX];
			size_t en;
			size_t used = ansi_escape(a + k + 1, n - k - 1, e, &en, true);
			if (used == (size_t)-1)
				return true;
			sb_addn(o, e, en);
			k += used;
		} else
			sb_addc(o, a[k]);
	}
	return false;
}

/*
 * The conversion specs handed to vsnprintf are rebuilt from validated flags
 * and one conversion letter, never the script's text; the width and the
 * precision always go as int arguments (`*` and `.*`), whether the format
 * wrote them as digits or asked for an argument: a precision of -1 is none.
 * Neither may pass SH_MAX_EXPANSION, nor may the output.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static bool
sb_format(struct sbuf *o, const char *spec, ...)
{
	va_list ap;
	va_start(ap, spec);
	int need = vsnprintf(NULL, 0, spec, ap);
	va_end(ap);
	if (need < 0 || (size_t)need > SH_MAX_EXPANSION - o->len)
		return false;
	char *t = xmalloc((size_t)need + 1);
	va_start(ap, spec);
	vsnprintf(t, (size_t)need + 1, spec, ap);
	va_end(ap);
	sb_addn(o, t, (size_t)need);
	free(t);
	return true;
}
#pragma GCC diagnostic pop

/* A width or precision: its digits at fmt[*j], or (`*`) the next argument
 * as a number (missing: 0). Values past SH_MAX_EXPANSION are clamped just
 * past it, so the output cap refuses them. */
static int
printf_width(struct sh_shell *sh, const char *fmt, size_t fl, size_t *j, int argc, char **argv,
	     int *ai, bool *used_arg, int *st)
{
	intmax_t v = 0;
	if (*j < fl && fmt[*j] == '*') {
		(*j)++;
		if (*ai < argc) {
			num_arg(sh, argv[(*ai)++], &v, st);
			*used_arg = true;
		}
	} else {
		while (*j < fl && isdigit((unsigned char)fmt[*j])) {
			if (v <= SH_MAX_EXPANSION)
				v = v * 10 + (fmt[*j] - '0');
			(*j)++;
		}
	}
	intmax_t lim = (intmax_t)SH_MAX_EXPANSION + 1;
	return (int)(v > lim ? lim : v < -lim ? -lim : v);
}

static int
do_printf(struct sh_shell *sh, struct sbuf *o, const char *fmt, int argc, char **argv)
{
	int ai = 0, st = 0;
	size_t fl = strlen(fmt);
	do {
		bool used_arg = false;
		for (size_t i = 0; i < fl; i++) {
			char c = fmt[i];
			if (c == '\\') {
				char e[SH_ESCAPE_MAX];
				size_t en;
				size_t used = ansi_escape(fmt + i + 1, fl - i - 1, e, &en, false);
				if (i + 1 < fl && fmt[i + 1] == 'c')
					return st;
				sb_addn(o, e, en);
				i += used;
				continue;
			}
			if (c != '%') {
				sb_addc(o, c);
				continue;
			}
			if (i + 1 < fl && fmt[i + 1] == '%') {
				sb_addc(o, '%');
				i++;
				continue;
			}
			/* %[flags][width][.prec][length]conv: each flag kept once */
			char flags[8];
			size_t nfl = 0;
			size_t j = i + 1;
			for (; j < fl && strchr("-+ #0", fmt[j]); j++)
				if (!memchr(flags, fmt[j], nfl))
					flags[nfl++] = fmt[j];
			flags[nfl] = 0;
			int width = printf_width(sh, fmt, fl, &j, argc, argv, &ai, &used_arg, &st);
			int prec = -1;
			if (j < fl && fmt[j] == '.') {
				j++;
				prec = printf_width(sh, fmt, fl, &j, argc, argv, &ai, &used_arg, &st);
			}
			while (j < fl && strchr("hlLjzt", fmt[j]))
				j++;
			if (j < fl && fmt[j] == '(') {
				/* %(strftime)T: the argument's seconds (-1 or none: now) */
				const char *cl = memchr(fmt + j, ')', fl - j);
				if (!cl || (size_t)(cl - fmt) + 1 >= fl || cl[1] != 'T') {
					sh_err(sh, "printf: `%.*s': missing format character",
					       (int)(fl - i), fmt + i);
					return 1;
				}
				const char *targ = ai < argc ? argv[ai] : NULL;
				if (targ) {
					ai++;
					used_arg = true;
				}
				intmax_t secs = -1;
				if (targ && *targ)
					num_arg(sh, targ, &secs, &st);
				time_t t = secs == -1 ? time(NULL) : secs == -2 ? (time_t)sh->start_time
									: (time_t)secs;
				struct tm tm;
				char tf[256], tout[1024];
				size_t tfl = (size_t)(cl - (fmt + j + 1));
				if (tfl >= sizeof tf)
					tfl = sizeof tf - 1;
				memcpy(tf, fmt + j + 1, tfl);
				tf[tfl] = 0;
				/* strftime reads no arguments: the script's format is safe */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
				size_t tn = localtime_r(&t, &tm) ? strftime(tout, sizeof tout, tf, &tm) : 0;
#pragma GCC diagnostic pop
				tout[tn] = 0;
				char tspec[24];
				snprintf(tspec, sizeof tspec, "%%%s*.*s", flags);
				if (!sb_format(o, tspec, width, prec, tout)) {
					sh_err(sh, "printf: output too large (max %u bytes)",
					       SH_MAX_EXPANSION);
					return 1;
				}
				i = (size_t)(cl - fmt) + 1;
				continue;
			}
			if (j >= fl) {
				sh_err(sh, "printf: `%.*s': missing format character", (int)(j - i),
				       fmt + i);
				return 1;
			}
			char conv = fmt[j];
			i = j;
			const char *arg = ai < argc ? argv[ai] : NULL;
			if (arg) {
				ai++;
				used_arg = true;
			}
			char spec[24];
			bool fits = true;
			switch (conv) {
			case 'd':
			case 'i':
			case 'o':
			case 'u':
			case 'x':
			case 'X': {
				intmax_t v = 0;
				if (arg)
					num_arg(sh, arg, &v, &st);
				snprintf(spec, sizeof spec, "%%%s*.*j%c", flags, conv == 'i' ? 'd' : conv);
				fits = sb_format(o, spec, width, prec, v);
				break;
			}
			case 'f':
			case 'F':
			case 'e':
			case 'E':
			case 'g':
			case 'G':
			case 'a':
			case 'A': {
				long double v = 0;
				if (arg && *arg) {
					char *e;
					v = strtold(arg, &e);
					if (*e) {
						sh_err(sh, "printf: %s: invalid number", arg);
						st = 1;
					}
				}
				snprintf(spec, sizeof spec, "%%%s*.*L%c", flags, conv);
				fits = sb_format(o, spec, width, prec, v);
				break;
			}
			case 'c':
				/* %c of nothing is a NUL byte (bash) */
				snprintf(spec, sizeof spec, "%%%s*c", flags);
				fits = sb_format(o, spec, width, arg ? arg[0] : 0);
				break;
			case 's':
			case 'b':
			case 'q': {
				struct sbuf tmp = {0};
				bool stop = false;
				if (conv == 'b')
					stop = put_b(&tmp, arg ? arg : "");
				else if (conv == 'q') {
					const char *qa = arg ? arg : "";
					bool ctl = false;
					for (const char *qp = qa; *qp; qp++)
						ctl |= (unsigned char)*qp < 0x20 || *qp == 0x7f;
					if (!*qa)
						sb_adds(&tmp, "''");
					if (ctl) { /* $'…' as bash */
						char *bq = bash_quote(qa);
						sb_adds(&tmp, bq);
						free(bq);
						qa = "";
					}
					for (const char *qp = qa; *qp; qp++) {
						if (!(isalnum((unsigned char)*qp) || strchr("_-./=:,+@%^", *qp) ||
						      (unsigned char)*qp >= 0x80))
							sb_addc(&tmp, '\\');
						sb_addc(&tmp, *qp);
					}
				} else
					sb_adds(&tmp, arg ? arg : "");
				snprintf(spec, sizeof spec, "%%%s*.*s", flags);
				/* %s of a value with NUL: only up to it (bash the same) */
				fits = sb_format(o, spec, width, prec, tmp.s ? tmp.s : "");
				sb_free(&tmp);
				if (stop && fits)
					return st;
				break;
			}
			default:
				sh_err(sh, "printf: `%c': invalid format character", conv);
				return 1;
			}
			if (!fits) {
				sh_err(sh, "printf: output too large (max %u bytes)", SH_MAX_EXPANSION);
				return 1;
			}
		}
		if (!used_arg)
			break;
	} while (ai < argc);
	return st;
}


static int
b_printf(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	const char *var = NULL;
	if (i < argc && strcmp(argv[i], "-v") == 0 && i + 1 < argc) {
		var = argv[i + 1];
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		sh_err(sh, "printf: usage: printf [-v var] format [arguments]");
		return 2;
	}
	struct sbuf o = {0};
	int st = do_printf(sh, &o, argv[i], argc - i - 1, argv + i + 1);
	if (var) {
		if (var_set(sh, var, o.s ? o.s : "", 0) < 0)
			st = 1;
	} else if (o.len)
		bi_out(1, o.s, o.len);
	sb_free(&o);
	return st;
}

/* ---- set -o options ---- */

/*
 * bash's `set -o` options, in the order `set -o` lists them. The ones this
 * interpreter honours point at their flag; the others are shown at the value
 * they have here (brace expansion and comments always on, no job control,
 * no history, no editing). `set -o`/`set +o` of a fixed one marked settable
 * (scripts commonly set them) is accepted and changes nothing; the other
 * fixed ones are refused as unknown names, as before this table.
 */
#define OPT_FIXED SIZE_MAX
static const struct set_option {
	const char *name;
	size_t off;   /* offsetof a bool in struct sh_shell, or OPT_FIXED */
	bool fixed;   /* the value of an OPT_FIXED option */
	bool settable; /* an OPT_FIXED option that `set -o`/`set +o` accepts (no-op) */
} set_options[] = {
	{"allexport", offsetof(struct sh_shell, opt_a), false, true},
	{"braceexpand", OPT_FIXED, true, true},
	{"emacs", OPT_FIXED, false, false},
	{"errexit", offsetof(struct sh_shell, opt_e), false, true},
	{"errtrace", OPT_FIXED, false, false},
	{"functrace", OPT_FIXED, false, false},
	{"hashall", OPT_FIXED, true, true},
	{"histexpand", OPT_FIXED, false, false},
	{"history", OPT_FIXED, false, true},
	{"ignoreeof", OPT_FIXED, false, false},
	{"interactive-comments", OPT_FIXED, true, true},
	{"keyword", OPT_FIXED, false, false},
	{"monitor", OPT_FIXED, false, true},
	{"noclobber", offsetof(struct sh_shell, opt_C), false, true},
	{"noexec", offsetof(struct sh_shell, opt_n), false, true},
	{"noglob", offsetof(struct sh_shell, opt_f), false, true},
	{"nolog", OPT_FIXED, false, true},
	{"notify", OPT_FIXED, false, false},
	{"nounset", offsetof(struct sh_shell, opt_u), false, true},
	{"onecmd", OPT_FIXED, false, false},
	{"physical", OPT_FIXED, false, false},
	{"pipefail", offsetof(struct sh_shell, opt_pipefail), false, true},
	{"posix", offsetof(struct sh_shell, opt_posix), false, true},
	{"privileged", OPT_FIXED, false, false},
	{"verbose", offsetof(struct sh_shell, opt_v), false, true},
	{"vi", OPT_FIXED, false, false},
	{"xtrace", offsetof(struct sh_shell, opt_x), false, true},
};

/*
 * dash's `set -o` list, in its order, for the sh/dash dialect (the options dash 0.5.12
 * knows; the ones this interpreter honours point at their flag, the others are off here).
 */
static const struct set_option dash_set_options[] = {
	{"errexit", offsetof(struct sh_shell, opt_e), false, true},
	{"noglob", offsetof(struct sh_shell, opt_f), false, true},
	{"ignoreeof", OPT_FIXED, false, false},
	{"interactive", OPT_FIXED, false, false},
	{"monitor", OPT_FIXED, false, true},
	{"noexec", offsetof(struct sh_shell, opt_n), false, true},
	{"stdin", OPT_FIXED, false, false},
	{"xtrace", offsetof(struct sh_shell, opt_x), false, true},
	{"verbose", offsetof(struct sh_shell, opt_v), false, true},
	{"vi", OPT_FIXED, false, false},
	{"emacs", OPT_FIXED, false, false},
	{"noclobber", offsetof(struct sh_shell, opt_C), false, true},
	{"allexport", offsetof(struct sh_shell, opt_a), false, true},
	{"notify", OPT_FIXED, false, false},
	{"nounset", offsetof(struct sh_shell, opt_u), false, true},
	{"privileged", OPT_FIXED, false, false},
	{"nolog", OPT_FIXED, false, true},
	{"debug", OPT_FIXED, false, false},
};

static const struct set_option *
set_option_find(const char *name)
{
	for (size_t i = 0; i < sizeof set_options / sizeof set_options[0]; i++)
		if (strcmp(set_options[i].name, name) == 0)
			return &set_options[i];
	return NULL;
}

static bool
set_option_value(struct sh_shell *sh, const struct set_option *o)
{
	return o->off == OPT_FIXED ? o->fixed : *(bool *)((char *)sh + o->off);
}

/* ---- test ---- */

static int
fs_stat(struct sh_shell *sh, const char *p, struct stat *st, bool follow)
{
	sh_update_fs(sh, "test");
	return sh_fs_stat(&sh->fs, p, st, follow);
}

int test_unary(struct sh_shell *sh, const char *op, const char *arg, int *res);
int
test_unary(struct sh_shell *sh, const char *op, const char *arg, int *res)
{
	if (op[0] != '-' || !op[1] || op[2])
		return -1;
	struct stat st;
	char o = op[1];
	switch (o) {
	case 'z': *res = arg[0] == 0; return 0;
	case 'n': *res = arg[0] != 0; return 0;
	case 'o': {
		const struct set_option *so = set_option_find(arg);
		*res = so && set_option_value(sh, so);
		return 0;
	}
	case 'v': {
		const char *br = strchr(arg, '[');
		size_t al = strlen(arg);
		if (br && al > 0 && arg[al - 1] == ']') {
			/* -v a[sub]: that element is set */
			char *name = xstrndup(arg, (size_t)(br - arg));
			char *sub = xstrndup(br + 1, al - (size_t)(br - arg) - 2);
			struct var *v = var_get(sh, name);
			intmax_t idx;
			*res = 0;
			if (!v)
				;
			else if (strcmp(sub, "@") == 0 || strcmp(sub, "*") == 0)
				*res = var_array_count(v) > 0;
			else if (v->flags & V_ASSOC)
				*res = assoc_get(v, sub) != NULL;
			else if (arith_eval(sh, sub, &idx) == 0) {
				if (!(v->flags & V_ARRAY))
					*res = idx == 0 && v->val;
				else {
					if (idx < 0)
						idx += (intmax_t)v->narr;
					*res = idx >= 0 && (size_t)idx < v->narr && v->arr[idx];
				}
			}
			free(name);
			free(sub);
			return 0;
		}
		*res = var_value(sh, arg) != NULL || (var_get(sh, arg) && var_array_count(var_get(sh, arg)));
		return 0;
	}
	case 't': {
		/* the shell's own fds are not the script's to probe (fsops.h) */
		int fd = atoi(arg);
		*res = sh_fdset_has(&sh->script_fds, fd) && isatty(fd);
		return 0;
	}
	case 'e': case 'f': case 'd': case 's': case 'r': case 'w': case 'x': case 'L':
	case 'h': case 'b': case 'c': case 'p': case 'S': case 'g': case 'u': case 'k':
	case 'O': case 'G': case 'N': case 'a': {
		bool follow = !(o == 'L' || o == 'h');
		if (!*arg) {
			*res = 0;
			return 0;
		}
		/* /dev/fd/N of an fd that is not the script's (the shell's own, or
		 * none): false, quietly, as for -t (bash: not open, false) */
		if (!strncmp(arg, "/dev/fd/", 8) && arg[8] && strspn(arg + 8, "0123456789") == strlen(arg + 8) &&
		    (strlen(arg + 8) > 6 || !sh_fdset_has(&sh->script_fds, atoi(arg + 8)))) {
			*res = 0;
			return 0;
		}
		if (fs_stat(sh, arg, &st, follow) < 0) {
			*res = 0;
			return 0;
		}
		switch (o) {
		case 'a':
		case 'e': *res = 1; break;
		case 'f': *res = S_ISREG(st.st_mode); break;
		case 'd': *res = S_ISDIR(st.st_mode); break;
		case 's': *res = st.st_size > 0; break;
		case 'L':
		case 'h': *res = S_ISLNK(st.st_mode); break;
		case 'b': *res = S_ISBLK(st.st_mode); break;
		case 'c': *res = S_ISCHR(st.st_mode); break;
		case 'p': *res = S_ISFIFO(st.st_mode); break;
		case 'S': *res = S_ISSOCK(st.st_mode); break;
		case 'g': *res = (st.st_mode & S_ISGID) != 0; break;
		case 'u': *res = (st.st_mode & S_ISUID) != 0; break;
		case 'k': *res = (st.st_mode & S_ISVTX) != 0; break;
		case 'O': *res = st.st_uid == geteuid(); break;
		case 'G': *res = st.st_gid == getegid(); break;
		case 'N': *res = st.st_mtime >= st.st_atime; break;
		case 'r':
		case 'w':
		case 'x': {
			int mode = o == 'r' ? R_OK : o == 'w' ? W_OK : X_OK;
			char *canon = NULL;
			if (sh_fs_canon(&sh->fs, arg, false, &canon) == 0) {
				/* -x: a file on a noexec grant by its mode, as the PATH search */
				*res = access(canon, mode) == 0 ||
				       (o == 'x' && sh_runnable_file(canon, &st));
				free(canon);
			} else
				*res = 0;
			break;
		}
		default: *res = 0; break;
		}
		return 0;
	}
	default:
		return -1;
	}
}

static bool
parse_int(const char *s, intmax_t *v)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return false;
	char *e;
	errno = 0;
	*v = strtoimax(s, &e, 10);
	while (isspace((unsigned char)*e))
		e++;
	return !*e && errno == 0;
}

static const char *test_name = "test";

int test_binary(struct sh_shell *sh, const char *a, const char *op, const char *b, int *res);
int
test_binary(struct sh_shell *sh, const char *a, const char *op, const char *b, int *res)
{
	if (strcmp(op, "=") == 0 || strcmp(op, "==") == 0) {
		*res = strcmp(a, b) == 0;
		return 0;
	}
	if (strcmp(op, "!=") == 0) {
		*res = strcmp(a, b) != 0;
		return 0;
	}
	if (strcmp(op, "<") == 0) {
		*res = strcmp(a, b) < 0;
		return 0;
	}
	if (strcmp(op, ">") == 0) {
		*res = strcmp(a, b) > 0;
		return 0;
	}
	static const char *const ar[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge", NULL};
	for (int i = 0; ar[i]; i++)
		if (strcmp(op, ar[i]) == 0) {
			intmax_t x, y;
			if (!parse_int(a, &x)) {
				sh_err(sh, "%s: %s: integer expression expected", test_name, a);
				return 2;
			}
			if (!parse_int(b, &y)) {
				sh_err(sh, "%s: %s: integer expression expected", test_name, b);
				return 2;
			}
			switch (i) {
			case 0: *res = x == y; break;
			case 1: *res = x != y; break;
			case 2: *res = x < y; break;
			case 3: *res = x <= y; break;
			case 4: *res = x > y; break;
			default: *res = x >= y; break;
			}
			return 0;
		}
	if (strcmp(op, "-nt") == 0 || strcmp(op, "-ot") == 0 || strcmp(op, "-ef") == 0) {
		struct stat sa, sb;
		int ra = fs_stat(sh, a, &sa, true), rb = fs_stat(sh, b, &sb, true);
		if (op[1] == 'e') {
			*res = ra == 0 && rb == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
			return 0;
		}
		bool nt;
		if (ra < 0 && rb < 0)
			nt = false;
		else if (ra < 0)
			nt = false;
		else if (rb < 0)
			nt = true;
		else
			nt = sa.st_mtim.tv_sec > sb.st_mtim.tv_sec ||
			     (sa.st_mtim.tv_sec == sb.st_mtim.tv_sec &&
			      sa.st_mtim.tv_nsec > sb.st_mtim.tv_nsec);
		if (op[1] == 'o') {
			bool ot;
			if (ra < 0 && rb < 0)
				ot = false;
			else if (ra < 0)
				ot = true;
			else if (rb < 0)
				ot = false;
			else
				ot = sa.st_mtim.tv_sec < sb.st_mtim.tv_sec ||
				     (sa.st_mtim.tv_sec == sb.st_mtim.tv_sec &&
				      sa.st_mtim.tv_nsec < sb.st_mtim.tv_nsec);
			*res = ot;
		} else
			*res = nt;
		return 0;
	}
	return -1;
}

static bool
is_binop(const char *s)
{
	static const char *const ops[] = {"=",   "==",  "!=",  "<",   ">",   "-eq", "-ne", "-lt",
					  "-le", "-gt", "-ge", "-nt", "-ot", "-ef", NULL};
	for (int i = 0; ops[i]; i++)
		if (strcmp(ops[i], s) == 0)
			return true;
	return false;
}

struct tst {
	struct sh_shell *sh;
	char **v;
	int n, i;
	int err; /* 2: syntax error */
	int depth; /* ( ) nesting */
};

static int t_or(struct tst *t);

static int
t_prim(struct tst *t)
{
	if (t->i >= t->n) {
		sh_err(t->sh, "test: argument expected");
		t->err = 2;
		return 0;
	}
	const char *a = t->v[t->i];
	if (strcmp(a, "!") == 0 && t->i + 1 < t->n) {
		/* a run of them in a loop: the arguments may hold 100000 */
		bool neg = false;
		while (t->i + 1 < t->n && strcmp(t->v[t->i], "!") == 0) {
			neg = !neg;
			t->i++;
		}
		int r = t_prim(t);
		return neg ? !r : r;
	}
	if (strcmp(a, "(") == 0 && t->i + 1 < t->n) {
		if (t->depth >= SH_MAX_PARSE_DEPTH) {
			sh_err(t->sh, "%s: expression nested too deeply", test_name);
			t->err = 2;
			return 0;
		}
		t->i++;
		t->depth++;
		int r = t_or(t);
		t->depth--;
		if (t->i >= t->n || strcmp(t->v[t->i], ")") != 0) {
			if (!t->err)
				sh_err(t->sh, "test: `)' expected");
			t->err = 2;
			return 0;
		}
		t->i++;
		return r;
	}
	if (t->i + 2 < t->n && is_binop(t->v[t->i + 1])) {
		int res = 0;
		int rc = test_binary(t->sh, a, t->v[t->i + 1], t->v[t->i + 2], &res);
		if (rc != 0)
			t->err = 2;
		t->i += 3;
		return res;
	}
	if (a[0] == '-' && a[1] && !a[2] && t->i + 1 < t->n) {
		int res;
		if (test_unary(t->sh, a, t->v[t->i + 1], &res) == 0) {
			t->i += 2;
			return res;
		}
		sh_err(t->sh, "test: %s: unary operator expected", a);
		t->err = 2;
		return 0;
	}
	t->i++;
	return a[0] != 0;
}

static int
t_and(struct tst *t)
{
	int r = t_prim(t);
	while (!t->err && t->i < t->n && strcmp(t->v[t->i], "-a") == 0) {
		t->i++;
		int b = t_prim(t);
		r = r && b;
	}
	return r;
}

static int
t_or(struct tst *t)
{
	int r = t_and(t);
	while (!t->err && t->i < t->n && strcmp(t->v[t->i], "-o") == 0) {
		t->i++;
		int b = t_and(t);
		r = r || b;
	}
	return r;
}

static int
b_test(struct sh_shell *sh, int argc, char **argv)
{
	int n = argc - 1;
	char **v = argv + 1;
	test_name = argv[0];
	if (strcmp(argv[0], "[") == 0) {
		if (n < 1 || strcmp(v[n - 1], "]") != 0) {
			sh_err(sh, "[: missing `]'");
			return 2;
		}
		n--;
	}
	struct tst t = {.sh = sh, .v = v, .n = n};
	if (n == 0)
		return 1;
	/* POSIX rules by argument count */
	if (n == 1)
		return v[0][0] ? 0 : 1;
	if (n == 2) {
		if (strcmp(v[0], "!") == 0)
			return v[1][0] ? 1 : 0;
		int res;
		if (test_unary(sh, v[0], v[1], &res) == 0)
			return res ? 0 : 1;
		sh_err(sh, "%s: %s: unary operator expected", argv[0], v[0]);
		return 2;
	}
	if (n == 3 && is_binop(v[1])) {
		int res = 0;
		int rc = test_binary(sh, v[0], v[1], v[2], &res);
		if (rc == 2)
			return 2;
		return res ? 0 : 1;
	}
	if (n == 3 && strcmp(v[0], "!") == 0) {
		char *sub[3] = {(char *)"test", v[1], v[2]};
		int r = b_test(sh, 3, sub);
		if (strcmp(argv[0], "[") == 0) {
			/* the recursion expects "]" */
		}
		return r == 2 ? 2 : !r;
	}
	int r = t_or(&t);
	if (t.err)
		return 2;
	if (t.i < t.n) {
		sh_err(sh, "%s: too many arguments", argv[0]);
		return 2;
	}
	return r ? 0 : 1;
}

/* ---- cd / pwd ---- */

/* Changes the directory to DIR as cd does (decided: change_dir), messages
 * naming CMD; PRINT: the new directory on stdout. */
static int
change_dir(struct sh_shell *sh, const char *cmd, const char *dir, bool print)
{
	sh_update_fs(sh, cmd);
	char *canon = NULL;
	int r = sh_fs_chdir_check(&sh->fs, dir, &canon);
	if (r < 0) {
		sh_err(sh, "%s: %s: %s", cmd, dir, strerror(-r));
		return 1;
	}
	if (chdir(canon) < 0) {
		sh_err(sh, "%s: %s: %s", cmd, dir, strerror(errno));
		free(canon);
		return 1;
	}
	char *old = sh->cwd ? xstrdup(sh->cwd) : NULL;
	free(sh->cwd);
	sh->cwd = canon;
	if (old)
		var_set(sh, "OLDPWD", old, 0);
	free(old);
	var_set(sh, "PWD", canon, 0);
	sh_update_fs(sh, cmd);
	if (print) {
		bi_outs(1, canon);
		bi_out(1, "\n", 1);
	}
	return 0;
}

/* dirs' form of a directory: ~ for $HOME unless LONG */
static void
dirs_add(struct sh_shell *sh, struct sbuf *b, const char *d, bool lng)
{
	const char *home = var_value(sh, "HOME");
	size_t hl = home ? strlen(home) : 0;
	if (!lng && hl > 1 && strncmp(d, home, hl) == 0 && (d[hl] == '/' || !d[hl])) {
		sb_addc(b, '~');
		sb_adds(b, d + hl);
	} else
		sb_adds(b, d);
}

static int
dirs_print(struct sh_shell *sh, bool lng, bool per_line, bool numbered)
{
	struct sbuf b = {0};
	size_t n = sh->dirstack ? sh->dirstack->n : 0;
	for (size_t k = 0; k <= n; k++) {
		const char *d = k == 0 ? (sh->cwd ? sh->cwd : "/") : sh->dirstack->v[n - k];
		if (numbered) {
			char nb[32];
			snprintf(nb, sizeof nb, "%2zu  ", k);
			sb_adds(&b, nb);
		} else if (k > 0)
			sb_addc(&b, per_line ? '\n' : ' ');
		dirs_add(sh, &b, d, lng);
		if (numbered && k < n)
			sb_addc(&b, '\n');
	}
	sb_addc(&b, '\n');
	bi_out(1, b.s, b.len);
	sb_free(&b);
	return 0;
}

static int
b_dirs(struct sh_shell *sh, int argc, char **argv)
{
	bool lng = false, per_line = false, numbered = false;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || !argv[i][1]) {
			sh_err(sh, "dirs: %s: invalid argument", argv[i]);
			return 1;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 'c') {
				if (sh->dirstack)
					strv_free(sh->dirstack);
			} else if (*p == 'l')
				lng = true;
			else if (*p == 'p')
				per_line = true;
			else if (*p == 'v')
				per_line = numbered = true;
			else {
				sh_err(sh, "dirs: -%c: invalid option", *p);
				return 2;
			}
		}
	}
	for (int i = 1; i < argc; i++)
		if (strchr(argv[i], 'c'))
			return 0;
	return dirs_print(sh, lng, per_line, numbered);
}

/* hash: box-shell remembers no command paths (each command is looked up
 * afresh): -r and -d forget nothing, a NAME is checked in PATH; the table
 * is always empty. */
static int
b_hash(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1, st = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++)
			if (!strchr("rdlt", *p)) {
				sh_err(sh, "hash: -%c: invalid option", *p);
				return 2;
			}
	}
	if (i >= argc) {
		if (argc == 1)
			bi_outs(1, "hash: hash table empty\n");
		return 0;
	}
	for (; i < argc; i++) {
		if (builtin_find(argv[i]) || func_get(sh, argv[i]))
			continue;
		char *p = strchr(argv[i], '/') ? NULL : find_in_path(sh, argv[i]);
		if (!p && !strchr(argv[i], '/')) {
			sh_err(sh, "hash: %s: not found", argv[i]);
			st = 1;
		}
		free(p);
	}
	return st;
}

static int
b_pushd(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	bool quiet = false;
	if (i < argc && strcmp(argv[i], "-n") == 0) {
		quiet = true; /* -n: bash would not change directory; accepted as plain */
		i++;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (!sh->dirstack) {
		sh->dirstack = xmalloc(sizeof *sh->dirstack);
		memset(sh->dirstack, 0, sizeof *sh->dirstack);
	}
	struct strv *st = sh->dirstack;
	char *here = xstrdup(sh->cwd ? sh->cwd : "/");
	if (i >= argc) {
		/* exchange the top two */
		if (st->n == 0) {
			sh_err(sh, "pushd: no other directory");
			free(here);
			return 1;
		}
		char *to = st->v[st->n - 1];
		if (change_dir(sh, "pushd", to, false) != 0) {
			free(here);
			return 1;
		}
		free(to);
		st->v[st->n - 1] = here;
	} else {
		if (st->n >= SH_MAX_FIELDS) {
			sh_err(sh, "pushd: directory stack full");
			free(here);
			return 1;
		}
		if (change_dir(sh, "pushd", argv[i], false) != 0) {
			free(here);
			return 1;
		}
		strv_add(st, here);
	}
	(void)quiet;
	return dirs_print(sh, false, false, false);
}

static int
b_popd(struct sh_shell *sh, int argc, char **argv)
{
	struct strv *st = sh->dirstack;
	if (argc > 1 && strcmp(argv[1], "--") != 0 && strcmp(argv[1], "-n") != 0) {
		sh_err(sh, "popd: %s: invalid argument", argv[1]);
		return 1;
	}
	if (!st || st->n == 0) {
		sh_err(sh, "popd: directory stack empty");
		return 1;
	}
	char *to = st->v[st->n - 1];
	if (change_dir(sh, "popd", to, false) != 0)
		return 1;
	free(to);
	st->n--;
	return dirs_print(sh, false, false, false);
}

static int
b_cd(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	while (i < argc && (strcmp(argv[i], "-L") == 0 || strcmp(argv[i], "-P") == 0))
		i++;
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	const char *dir;
	bool print = false;
	if (i >= argc) {
		dir = var_value(sh, "HOME");
		if (!dir) {
			sh_err(sh, "cd: HOME not set");
			return 1;
		}
	} else if (i + 1 < argc) {
		sh_err(sh, "cd: too many arguments");
		return 1;
	} else if (strcmp(argv[i], "-") == 0) {
		dir = var_value(sh, "OLDPWD");
		if (!dir) {
			sh_err(sh, "cd: OLDPWD not set");
			return 1;
		}
		print = true;
	} else
		dir = argv[i];
	if (!*dir)
		return 0;
	return change_dir(sh, "cd", dir, print);
}

static int
b_pwd(struct sh_shell *sh, int argc, char **argv)
{
	bi_outs(1, sh->cwd ? sh->cwd : "/");
	bi_out(1, "\n", 1);
	return 0;
}

/* ---- read ---- */

static int
b_read(struct sh_shell *sh, int argc, char **argv)
{
	bool raw = false;
	const char *arr = NULL, *prompt = NULL;
	int delim = '\n';
	long nchars = -1;
	long timeout_ms = -1;
	bool probe = false;
	bool exact = false;
	int fd = 0;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			const char *val = NULL;
			if (strchr("adpnNtu", *p)) {
				if (p[1])
					val = p + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else {
					sh_err(sh, "read: -%c: option requires an argument", *p);
					return 2;
				}
			}
			switch (*p) {
			case 'r': raw = true; break;
			case 's': break;
			case 'a': arr = val; break;
			case 'd': delim = val[0] ? (unsigned char)val[0] : 0; break;
			case 'p': prompt = val; break;
			case 'n': nchars = atol(val); break;
			case 'N': nchars = atol(val); exact = true; break;
			case 't': {
				char *e;
				double t = strtod(val, &e);
				if (*e || t < 0) {
					sh_err(sh, "read: %s: invalid timeout specification", val);
					return 1;
				}
				/* -t 0 only asks whether input is there (below); a timeout past
				 * poll's int milliseconds waits that long */
				probe = t == 0;
				timeout_ms = t * 1000 >= INT_MAX ? INT_MAX : (long)(t * 1000);
				break;
			}
			case 'u':
				/* only an fd of the script's (fsops.h: not the shell's own) */
				fd = strlen(val) <= 6 && strspn(val, "0123456789") == strlen(val) && *val
					     ? atoi(val)
					     : -1;
				if (!sh_fdset_has(&sh->script_fds, fd) || fcntl(fd, F_GETFD) < 0) {
					sh_err(sh, "read: %s: invalid file descriptor: Bad file "
						   "descriptor",
					       val);
					return 1;
				}
				break;
			default:
				sh_err(sh, "read: -%c: invalid option", *p);
				return 2;
			}
			if (val)
				break;
		}
	}
	if (probe) {
		/* bash: read nothing, assign nothing; 0 when a read would not block (data or
		 * end of file), else 1 */
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		return poll(&pf, 1, 0) > 0 ? 0 : 1;
	}
	if (prompt && isatty(0))
		bi_outs(2, prompt);
	bi_flush();
	struct sbuf line = {0};
	struct sbuf mask = {0}; /* 1: escaped char (not a separator) */
	bool eof = false, timed_out = false;
	long got = 0;
	for (;;) {
		if (nchars >= 0 && got >= nchars)
			break;
		char c;
		if (timeout_ms >= 0) {
			struct pollfd pf = {.fd = fd, .events = POLLIN};
			int pr = poll(&pf, 1, (int)timeout_ms);
			if (pr == 0) {
				/* timed out: what was read is assigned, status > 128 (bash) */
				eof = true;
				timed_out = true;
				break;
			}
		}
		ssize_t r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			eof = true;
			break;
		}
		if (!exact && (unsigned char)c == delim)
			break;
		if (!raw && c == '\\') {
			char d;
			r = read(fd, &d, 1);
			if (r <= 0) {
				eof = true;
				break;
			}
			if (d == '\n')
				continue;
			sb_addc(&line, d);
			sb_addc(&mask, 1);
			got++;
			continue;
		}
		if (c == 0)
			continue;
		sb_addc(&line, c);
		sb_addc(&mask, 0);
		got++;
		if (line.len > SH_MAX_VALUE) {
			sh_err(sh, "read: line too long");
			sb_free(&line);
			sb_free(&mask);
			return 1;
		}
	}
	const char *ifs = var_value(sh, "IFS");
	if (!ifs)
		ifs = " \t\n";
	char *s = line.s ? line.s : (char *)"";
	char *m = mask.s ? mask.s : (char *)"";
	size_t n = line.len;
	int nvars = argc - i;
	const char *defname = "REPLY";
	if (arr) {
		struct strv items = {0};
		size_t k = 0;
		while (k < n) {
			while (k < n && !m[k] && strchr(ifs, s[k]) &&
			       (s[k] == ' ' || s[k] == '\t' || s[k] == '\n'))
				k++;
			if (k >= n)
				break;
			struct sbuf f = {0};
			while (k < n && (m[k] || !strchr(ifs, s[k])))
				sb_addc(&f, s[k++]);
			strv_add(&items, sb_take(&f));
			if (k < n) {
				/* one delimiter: IFS whitespace around a non-ws one */
				while (k < n && !m[k] && (s[k] == ' ' || s[k] == '\t') && strchr(ifs, s[k]))
					k++;
				if (k < n && !m[k] && strchr(ifs, s[k]) && !(s[k] == ' ' || s[k] == '\t'))
					k++;
			}
		}
		var_unset(sh, arr);
		for (size_t j = 0; j < items.n; j++)
			var_set_elem(sh, arr, j, items.v[j]);
		if (!items.n) {
			var_set_elem(sh, arr, 0, "");
			struct var *v = var_get(sh, arr);
			free(v->arr[0]);
			v->arr[0] = NULL;
		}
		strv_free(&items);
	} else if (nvars == 0) {
		var_set(sh, defname, s, 0);
	} else {
		size_t k = 0;
		/* leading IFS whitespace */
		for (int v = 0; v < nvars; v++) {
			while (k < n && !m[k] && strchr(ifs, s[k]) &&
			       (s[k] == ' ' || s[k] == '\t' || s[k] == '\n'))
				k++;
			struct sbuf f = {0};
			if (v == nvars - 1) {
				/* the rest, without trailing IFS whitespace */
				size_t e = n;
				while (e > k && !m[e - 1] && strchr(ifs, s[e - 1]) &&
				       (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n'))
					e--;
				sb_addn(&f, s + k, e - k);
				k = n;
			} else {
				while (k < n && (m[k] || !strchr(ifs, s[k])))
					sb_addc(&f, s[k++]);
				if (k < n) {
					while (k < n && !m[k] && (s[k] == ' ' || s[k] == '\t') &&
					       strchr(ifs, s[k]))
						k++;
					if (k < n && !m[k] && strchr(ifs, s[k]) &&
					    !(s[k] == ' ' || s[k] == '\t' || s[k] == '\n'))
						k++;
				}
			}
			char *val = sb_take(&f);
			if (var_set(sh, argv[i + v], val, 0) < 0) {
				free(val);
				sb_free(&line);
				sb_free(&mask);
				return 1;
			}
			free(val);
		}
	}
	sb_free(&line);
	sb_free(&mask);
	if (timed_out)
		return 142;
	return eof ? 1 : 0;
}

/* a mapfile option's count: digits only, within a long; -1 otherwise */
static long
mapfile_count(const char *v)
{
	if (!*v || strlen(v) > 9 || strspn(v, "0123456789") != strlen(v))
		return -1;
	return atol(v);
}

/* mapfile / readarray [-t] [-n COUNT] [-O ORIGIN] [-s SKIP] [-d DELIM] [-u FD]
 * [-C CALLBACK [-c QUANTUM]] [ARRAY] — bash's builtins/mapfile.def: without -O the array
 * is emptied first; the callback is shell text, run as eval runs it (each command in it is
 * decided as any other), every QUANTUM lines before the line is stored, with the index and
 * the line as two more words. */
static int
b_mapfile(struct sh_shell *sh, int argc, char **argv)
{
	bool trim = false, clear = true;
	long count = 0, origin = 0, skip = 0, quantum = 5000;
	const char *callback = NULL;
	int delim = '\n', fd = 0;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-t") == 0) {
			trim = true;
			continue;
		}
		if (a[2] || !strchr("ndusOcC", a[1])) {
			sh_err(sh, "%s: %s: invalid option", argv[0], a);
			return 2;
		}
		if (i + 1 >= argc) {
			sh_err(sh, "%s: %s: option requires an argument", argv[0], a);
			return 2;
		}
		const char *v = argv[++i];
		long n = mapfile_count(v);
		switch (a[1]) {
		case 'n':
			if (n < 0) {
				sh_err(sh, "%s: %s: invalid line count", argv[0], v);
				return 1;
			}
			count = n;
			break;
		case 'O':
			if (n < 0) {
				sh_err(sh, "%s: %s: invalid array origin", argv[0], v);
				return 1;
			}
			origin = n;
			clear = false;
			break;
		case 's':
			if (n < 0) {
				sh_err(sh, "%s: %s: invalid line count", argv[0], v);
				return 1;
			}
			skip = n;
			break;
		case 'c':
			if (n <= 0) {
				sh_err(sh, "%s: %s: invalid callback quantum", argv[0], v);
				return 1;
			}
			quantum = n;
			break;
		case 'C':
			callback = v;
			break;
		case 'd':
			delim = (unsigned char)v[0];
			break;
		case 'u':
			/* only an fd of the script's (fsops.h: not the shell's own) */
			fd = n >= 0 && n <= 999999 ? (int)n : -1;
			if (!sh_fdset_has(&sh->script_fds, fd) || fcntl(fd, F_GETFD) < 0) {
				sh_err(sh, "%s: %s: invalid file descriptor: Bad file descriptor",
				       argv[0], v);
				return 1;
			}
			break;
		default:
			break;
		}
	}
	const char *name = i < argc ? argv[i] : "MAPFILE";
	if (!is_name(name, strlen(name))) {
		sh_err(sh, "%s: `%s': not a valid identifier", argv[0], name);
		return 1;
	}
	if (clear)
		var_unset(sh, name);
	size_t idx = (size_t)origin;
	long stored = 0, skipped = 0;
	struct sbuf line = {0};
	bi_flush();
	for (;;) {
		if (count > 0 && stored >= count)
			break;
		char c;
		ssize_t r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		bool end = r <= 0;
		if (!end)
			sb_addc(&line, c);
		if (end || (unsigned char)c == delim) {
			if (line.len == 0 && end)
				break;
			if (trim && line.len && (unsigned char)line.s[line.len - 1] == delim)
				line.s[--line.len] = 0;
			if (skipped < skip) {
				skipped++;
			} else {
				/* bash counts from 1: the callback before every QUANTUM-th line */
				if (callback && (stored + 1) % quantum == 0) {
					char *q = bash_quote(line.s ? line.s : "");
					struct sbuf cmd = {0};
					char num[32];
					snprintf(num, sizeof num, " %zu ", idx);
					sb_adds(&cmd, callback);
					sb_adds(&cmd, num);
					sb_adds(&cmd, q);
					free(q);
					sh->parse_eval = true;
					(void)exec_text(sh, cmd.s, cmd.len, sh->lineno, NULL);
					sh->parse_eval = false;
					sb_free(&cmd);
					bi_flush();
				}
				if (var_set_elem(sh, name, idx++, line.s ? line.s : "") < 0) {
					sb_free(&line);
					return 1;
				}
				stored++;
			}
			line.len = 0;
			if (line.s)
				line.s[0] = 0;
			if (end)
				break;
		}
		if (line.len > SH_MAX_VALUE) {
			sh_err(sh, "%s: line too long", argv[0]);
			sb_free(&line);
			return 1;
		}
	}
	sb_free(&line);
	if (stored == 0 && clear && var_set_empty_array(sh, name) < 0)
		return 1;
	return 0;
}

/* ---- variables ---- */

/* "S" with bash's escapes for declare -p: \ before " \ $ ` */
static void
put_dq(struct sbuf *b, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			/* bash: a value with a control character as $'…' */
			char *q = bash_quote(s);
			sb_adds(b, q);
			free(q);
			return;
		}
	sb_addc(b, '"');
	for (const char *p = s; *p; p++) {
		if (strchr("\"\\$`", *p))
			sb_addc(b, '\\');
		sb_addc(b, *p);
	}
	sb_addc(b, '"');
}

/* bash's attribute letters of V, in its order (${x@a}, declare -p) */
void
var_attr_letters(const struct var *v, char out[8])
{
	char *o = out;
	if (v->flags & V_ARRAY)
		*o++ = 'a';
	if (v->flags & V_ASSOC)
		*o++ = 'A';
	if (v->flags & V_INTEGER)
		*o++ = 'i';
	if (v->flags & V_READONLY)
		*o++ = 'r';
	if (v->flags & V_EXPORT)
		*o++ = 'x';
	if (v->flags & V_CAPCASE)
		*o++ = 'c';
	if (v->flags & V_LOWER)
		*o++ = 'l';
	if (v->flags & V_UPPER)
		*o++ = 'u';
	*o = 0;
}

char *
var_decl_text(const struct var *v, bool single_quoted)
{
	struct sbuf b = {0};
	char attrs[8];
	var_attr_letters(v, attrs);
	if (single_quoted && !attrs[0] && v->val) { /* ${x@A} of a plain scalar */
		sb_adds(&b, v->name);
		sb_addc(&b, '=');
		char *q = bash_quote(v->val);
		sb_adds(&b, q);
		free(q);
		return sb_take(&b);
	}
	sb_adds(&b, "declare -");
	sb_adds(&b, attrs[0] ? attrs : "-");
	sb_addc(&b, ' ');
	sb_adds(&b, v->name);
	if ((v->flags & V_ASSOC) && v->as) {
		/* bash: declare -A a=([k]="v" ["a b"]="w" ) */
		struct strv ks = {0}, vs = {0};
		var_elems(v, &ks, &vs);
		sb_adds(&b, "=(");
		for (size_t i = 0; i < ks.n; i++) {
			sb_addc(&b, '[');
			if (strpbrk(ks.v[i], " \t\n'\"\\|&;()<>!{}*[?]^$`") || ks.v[i][0] == '~' ||
			    ks.v[i][0] == '#' || !ks.v[i][0])
				put_dq(&b, ks.v[i]);
			else
				sb_adds(&b, ks.v[i]);
			sb_adds(&b, "]=");
			put_dq(&b, vs.v[i]);
			sb_addc(&b, ' ');
		}
		sb_addc(&b, ')');
		strv_free(&ks);
		strv_free(&vs);
	} else if (v->flags & V_ARRAY) {
		sb_adds(&b, "=(");
		bool first = true;
		for (size_t i = 0; i < v->narr; i++) {
			if (!v->arr[i])
				continue;
			char ib[32];
			snprintf(ib, sizeof ib, "%s[%zu]=", first ? "" : " ", i);
			sb_adds(&b, ib);
			put_dq(&b, v->arr[i]);
			first = false;
		}
		sb_addc(&b, ')');
	} else if (v->val) {
		sb_addc(&b, '=');
		if (single_quoted) {
			char *q = bash_quote(v->val);
			sb_adds(&b, q);
			free(q);
		} else
			put_dq(&b, v->val);
	}
	return sb_take(&b);
}

/*
 * A value as `set` prints it, as bash's print_var_value: $'…' when it holds a
 * control character, '…' when it holds a character the shell would read as
 * syntax (a lone quote as \'), else as it is (an empty value prints nothing).
 */
static char *
set_quote(const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return bash_quote(s);
	if (!strcmp(s, "'"))
		return xstrdup("\\'");
	bool meta = false;
	for (const char *p = s; *p && !meta; p++) {
		if (strchr(" \t\n'\"\\|&;()<>!{}*[?]^$`", *p))
			meta = true;
		else if (*p == '~' && (p == s || p[-1] == '=' || p[-1] == ':'))
			meta = true;
		else if (*p == '#' && p == s)
			meta = true;
	}
	return meta ? shell_quote(s) : xstrdup(s);
}

static void
print_var_decl(struct var *v, void *arg)
{
	const char *how = arg;
	if (how[0] == 'x' && !(v->flags & V_EXPORT))
		return;
	if (how[0] == 'r' && !(v->flags & V_READONLY))
		return;
	if (how[0] == 's') {
		if (v->flags & (V_ARRAY | V_ASSOC))
			return;
		if (!v->val)
			return;
		struct sbuf b = {0};
		sb_adds(&b, v->name);
		sb_addc(&b, '=');
		char *q = set_quote(v->val);
		sb_adds(&b, q);
		free(q);
		sb_addc(&b, '\n');
		bi_out(1, b.s, b.len);
		sb_free(&b);
		return;
	}
	char *t = var_decl_text(v, false);
	bi_outs(1, t);
	bi_out(1, "\n", 1);
	free(t);
}

static int
assign_arg(struct sh_shell *sh, const char *cmd, const char *a, int flags, bool local)
{
	const char *eq = strchr(a, '=');
	size_t nl = eq ? (size_t)(eq - a) : strlen(a);
	bool append = eq && nl > 0 && a[nl - 1] == '+';
	size_t namel = append ? nl - 1 : nl;
	const char *br = memchr(a, '[', namel);
	size_t basel = br ? (size_t)(br - a) : namel;
	if (!is_name(a, basel)) {
		sh_err(sh, "%s: `%s': not a valid identifier", cmd, a);
		return 1;
	}
	char *name = xstrndup(a, basel);
	if (local)
		var_local(sh, name);
	int r = 0;
	/* A value "(…)" that was not written NAME=(…) unquoted (a quoted or
	 * expanded one) is a compound assignment only with -a or -A, or for
	 * declare/typeset/local of an array; export and readonly assign it as a
	 * string (bash). */
	bool compound = eq && eq[1] == '(' && !br;
	if (compound && !sh_decl_raw(sh, a) && !(flags & (V_ARRAY | V_ASSOC))) {
		struct var *v = var_get(sh, name);
		compound = cmd[0] != 'e' && cmd[0] != 'r' && v && (v->flags & (V_ARRAY | V_ASSOC));
	} else if (compound && !sh_decl_raw(sh, a)) {
		struct var *v = var_get(sh, name);
		if (v && (v->flags & V_READONLY)) {
			sh_err(sh, "%s: %s: readonly variable", cmd, name);
			free(name);
			return 1;
		}
	}
	if (flags & V_ASSOC) {
		struct var *v = var_get(sh, name);
		if (v && (v->flags & V_ARRAY)) {
			sh_err(sh, "%s: %s: cannot convert indexed to associative array", cmd, name);
			free(name);
			return 1;
		}
		if ((!v || !(v->flags & V_ASSOC)) && var_set_empty_assoc(sh, name, false) < 0) {
			free(name);
			return 1;
		}
		flags &= ~V_ASSOC;
	}
	if (eq) {
		if (compound) {
			/* declare -a x=(…): re-run as an assignment */
			r = sh_assign_word(sh, a, flags) < 0 ? 1 : 0;
			struct var *v = var_get(sh, name);
			if (v)
				v->flags |= flags & (V_EXPORT | V_READONLY);
		} else if (br) {
			r = sh_assign_word(sh, a, flags) < 0 ? 1 : 0;
		} else {
			struct var *v = var_get(sh, name);
			if (v && (flags & V_INTEGER))
				v->flags |= V_INTEGER;
			if (v && (flags & V_CASE))
				v->flags = (v->flags & ~V_CASE) | (flags & V_CASE);
			if (append) {
				const char *old = var_value(sh, name);
				char *nv = xmalloc(strlen(old ? old : "") + strlen(eq + 1) + 6);
				v = var_get(sh, name);
				if (old && *old && ((v && (v->flags & V_INTEGER)) || (flags & V_INTEGER)))
					sprintf(nv, "(%s)+(%s)", old, eq + 1); /* declare -i x+=e adds */
				else {
					strcpy(nv, old ? old : "");
					strcat(nv, eq + 1);
				}
				r = var_set(sh, name, nv, flags) < 0 ? 1 : 0;
				free(nv);
			} else
				r = var_set(sh, name, eq + 1, flags) < 0 ? 1 : 0;
		}
	} else {
		struct var *v = var_get(sh, name);
		if (v && (v->flags & V_READONLY) && (flags & ~V_READONLY)) {
			sh_err(sh, "%s: readonly variable", name);
			r = 1;
		} else if (v) {
			v->flags |= flags & (V_EXPORT | V_READONLY | V_INTEGER);
			if (flags & V_CASE)
				v->flags = (v->flags & ~V_CASE) | (flags & V_CASE);
			if (flags & V_ARRAY && !(v->flags & V_ARRAY))
				var_set_elem(sh, name, 0, v->val ? v->val : ""),
					v = var_get(sh, name);
			sh->env_dirty = true;
		} else {
			/* declared without a value */
			var_set(sh, name, NULL, flags | V_UNSET_PLACEHOLDER);
			if (flags & V_ARRAY)
				var_set_empty_array(sh, name);
		}
	}
	free(name);
	return r;
}

static int
b_export(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1, aflags = 0;
	bool unexport = false, print = false;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 'n')
				unexport = true;
			else if (*p == 'p')
				print = true;
			else if (*p == 'f') {
			} else if (*p == 'a')
				aflags |= V_ARRAY;
			else if (*p == 'A')
				aflags |= V_ASSOC;
			else {
				sh_err(sh, "%s: -%c: invalid option", argv[0], *p);
				return 2;
			}
		}
	}
	bool ro = strcmp(argv[0], "readonly") == 0;
	if (i >= argc || print) {
		var_foreach(sh, print_var_decl, (void *)(ro ? "r" : "x"));
		return 0;
	}
	int st = 0;
	for (; i < argc; i++) {
		if (unexport) {
			struct var *v = var_get(sh, argv[i]);
			if (v) {
				v->flags &= ~V_EXPORT;
				sh->env_dirty = true;
			}
			continue;
		}
		st |= assign_arg(sh, argv[0], argv[i], (ro ? V_READONLY : V_EXPORT) | aflags, false);
	}
	return st;
}

static int cmp_strp(const void *a, const void *b);

/* declare -f NAME: bash's text of the function; -F: "declare -f NAME" */
static void
print_func(struct sh_shell *sh, const char *name, bool name_only)
{
	struct func *f = func_get(sh, name);
	if (!f)
		return;
	if (name_only) {
		bi_outs(1, "declare -f ");
		bi_outs(1, name);
		bi_out(1, "\n", 1);
		return;
	}
	char *t = func_text(name, f->body);
	bi_outs(1, t);
	free(t);
}

static int
b_declare(struct sh_shell *sh, int argc, char **argv)
{
	int flags = 0, unflags = 0;
	bool print = false, funcs = false, global = false, fnames_only = false;
	bool local = strcmp(argv[0], "local") == 0;
	if (local && !sh->frame) {
		sh_err(sh, "local: can only be used in a function");
		return 1;
	}
	int i = 1;
	for (; i < argc && (argv[i][0] == '-' || argv[i][0] == '+') && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		bool minus = argv[i][0] == '-';
		for (const char *p = argv[i] + 1; *p; p++) {
			int f = 0;
			switch (*p) {
			case 'a': f = V_ARRAY; break;
			case 'i': f = V_INTEGER; break;
			case 'x': f = V_EXPORT; break;
			case 'r': f = V_READONLY; break;
			case 'p': print = true; break;
			case 'f': funcs = true; break;
			case 'F': funcs = fnames_only = true; break;
			case 'g': global = !local && minus; break;
			case 'l': f = V_LOWER; break;
			case 'u': f = V_UPPER; break;
			case 'c': f = V_CAPCASE; break;
			case 'n':
			case 't':
				break;
			case 'A': f = V_ASSOC; break;
			default:
				sh_err(sh, "%s: -%c: invalid option", argv[0], *p);
				return 2;
			}
			if (minus)
				flags |= f;
			else
				unflags |= f;
		}
	}
	if (funcs) {
		int st = 0;
		if (i >= argc) {
			/* every function, sorted by name */
			struct strv names = {0};
			for (int h = 0; h < 64; h++)
				for (struct func *f = sh->funcs[h]; f; f = f->next)
					strv_add(&names, xstrdup(f->name));
			if (names.n > 1)
				qsort(names.v, names.n, sizeof *names.v, cmp_strp);
			for (size_t k = 0; k < names.n; k++)
				print_func(sh, names.v[k], fnames_only);
			strv_free(&names);
			return 0;
		}
		for (; i < argc; i++)
			if (!func_get(sh, argv[i]))
				st = 1;
			else if (fnames_only) { /* declare -F NAME: the name alone */
				bi_outs(1, argv[i]);
				bi_out(1, "\n", 1);
			} else
				print_func(sh, argv[i], false);
		return st;
	}
	if (i >= argc) {
		var_foreach(sh, print_var_decl, (void *)"d");
		return 0;
	}
	int st = 0;
	for (; i < argc; i++) {
		if (print) {
			struct var *v = var_get(sh, argv[i]);
			if (!v) {
				sh_err(sh, "%s: %s: not found", argv[0], argv[i]);
				st = 1;
			} else
				print_var_decl(v, (void *)"d");
			continue;
		}
		/* in a function a declared name is local, unless -g: then the
		 * global variable is set, the locals stay as they are (bash) */
		size_t nl = strcspn(argv[i], "=[+");
		char *nm = xstrndup(argv[i], nl);
		struct saved_var *slot = global ? var_global_begin(sh, nm) : NULL;
		st |= assign_arg(sh, argv[0], argv[i], flags, local || (sh->frame && !global));
		if (unflags) {
			struct var *v = var_get(sh, nm);
			if (v) {
				v->flags &= ~(unflags & ~V_READONLY);
				sh->env_dirty = true;
			}
		}
		var_global_end(sh, slot);
		free(nm);
	}
	return st;
}

static int
b_unset(struct sh_shell *sh, int argc, char **argv)
{
	bool fn = false, var = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 'f')
				fn = true;
			else if (*p == 'v')
				var = true;
			else if (*p == 'n') {
			} else {
				sh_err(sh, "unset: -%c: invalid option", *p);
				return 2;
			}
		}
	}
	int st = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (fn && !var) {
			func_unset(sh, a);
			continue;
		}
		const char *br = strchr(a, '[');
		if (br && a[strlen(a) - 1] == ']') {
			char *name = xstrndup(a, (size_t)(br - a));
			char *ie = xstrndup(br + 1, strlen(br + 1) - 1);
			struct var *v = var_get(sh, name);
			intmax_t idx;
			if (v && (v->flags & V_ASSOC)) {
				/* the key as written, expanded once already (bash) */
				if (v->flags & V_READONLY) {
					sh_err(sh, "%s: cannot unset: readonly variable", name);
					st = 1;
				} else /* bash 5.2: a[@] is the key "@" here */
					assoc_unset(v, ie);
			} else if (strcmp(ie, "@") == 0 || strcmp(ie, "*") == 0)
				var_unset(sh, name);
			else if (v && (v->flags & V_ARRAY) && arith_eval(sh, ie, &idx) == 0) {
				if (idx < 0)
					idx += (intmax_t)v->narr;
				if (idx >= 0 && (size_t)idx < v->narr) {
					free(v->arr[idx]);
					v->arr[idx] = NULL;
					while (v->narr > 0 && !v->arr[v->narr - 1])
						v->narr--;
				}
			}
			free(name);
			free(ie);
			continue;
		}
		if (!is_name(a, strlen(a))) {
			sh_err(sh, "unset: `%s': not a valid identifier", a);
			st = 1;
			continue;
		}
		if (var_get(sh, a)) {
			if (var_unset(sh, a) < 0)
				st = 1;
		} else if (!var)
			func_unset(sh, a);
	}
	return st;
}

static int
b_shift(struct sh_shell *sh, int argc, char **argv)
{
	long n = 1;
	if (argc > 1) {
		char *e;
		n = strtol(argv[1], &e, 10);
		if (*e || n < 0) {
			sh_err(sh, "shift: %s: numeric argument required", argv[1]);
			return 1;
		}
	}
	if (n > sh->argc)
		return 1;
	for (long i = 0; i < n; i++)
		free(sh->argv[i]);
	memmove(sh->argv, sh->argv + n, (size_t)(sh->argc - n + 1) * sizeof(char *));
	sh->argc -= (int)n;
	return 0;
}

/* ---- set ---- */

static bool *
opt_by_letter(struct sh_shell *sh, char c)
{
	switch (c) {
	case 'e': return &sh->opt_e;
	case 'u': return &sh->opt_u;
	case 'x': return &sh->opt_x;
	case 'f': return &sh->opt_f;
	case 'C': return &sh->opt_C;
	case 'n': return &sh->opt_n;
	case 'v': return &sh->opt_v;
	case 'a': return &sh->opt_a;
	default: return NULL;
	}
}

int sh_set_options(struct sh_shell *sh, int argc, char **argv, int *consumed);
int
sh_set_options(struct sh_shell *sh, int argc, char **argv, int *consumed)
{
	int i = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if ((a[0] != '-' && a[0] != '+') || !a[1]) {
			if (strcmp(a, "-") == 0) {
				sh->opt_x = sh->opt_v = false;
				i++;
			}
			break;
		}
		if (strcmp(a, "--") == 0) {
			i++;
			*consumed = i;
			return 1; /* positional follow, even none */
		}
		bool on = a[0] == '-';
		for (const char *p = a + 1; *p; p++) {
			if (*p == 'o') {
				if (i + 1 >= argc) {
					/* set -o: list */
					*consumed = i + 1;
					return on ? 2 : 3;
				}
				const char *nm = argv[++i];
				const struct set_option *so = set_option_find(nm);
				if (!so || (so->off == OPT_FIXED && !so->settable)) {
					sh_err(sh, "set: %s: invalid option name", nm);
					return -1;
				}
				if (so->off != OPT_FIXED)
					*(bool *)((char *)sh + so->off) = on;
				break;
			}
			bool *o = opt_by_letter(sh, *p);
			if (!o) {
				if (strchr("hmBHbkPTE", *p))
					continue;
				sh_err(sh, "set: %c%c: invalid option", a[0], *p);
				return -1;
			}
			*o = on;
		}
	}
	*consumed = i;
	return 0;
}

static void
print_set_var(struct var *v, void *arg)
{
	if (v->flags & V_ARRAY) {
		print_var_decl(v, (void *)"d");
		return;
	}
	print_var_decl(v, (void *)"s");
}

static int
b_set(struct sh_shell *sh, int argc, char **argv)
{
	if (argc == 1) {
		var_foreach(sh, print_set_var, NULL);
		return 0;
	}
	int used;
	int r = sh_set_options(sh, argc - 1, argv + 1, &used);
	if (r < 0)
		return 2;
	if (r == 2 || r == 3) {
		/* the dialect's list and format: dash's under sh/dash, else bash's */
		bool dash = sh->dash_errors;
		const struct set_option *list = dash ? dash_set_options : set_options;
		size_t n = dash ? sizeof dash_set_options / sizeof dash_set_options[0]
				: sizeof set_options / sizeof set_options[0];
		if (dash && r == 2)
			bi_outs(1, "Current option settings\n");
		for (size_t k = 0; k < n; k++) {
			const struct set_option *so = &list[k];
			bool v = set_option_value(sh, so);
			char b[128];
			if (r == 2)
				snprintf(b, sizeof b, dash ? "%-16s%s\n" : "%-15s\t%s\n", so->name,
					 v ? "on" : "off");
			else
				snprintf(b, sizeof b, "set %co %s\n", v ? '-' : '+', so->name);
			bi_outs(1, b);
		}
		return 0;
	}
	if (r == 1 || used < argc - 1)
		set_positional(sh, argc - 1 - used, argv + 1 + used);
	return 0;
}

/* ---- eval, ., exec, exit, return, break ---- */

static int
b_eval(struct sh_shell *sh, int argc, char **argv)
{
	struct sbuf b = {0};
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			sb_addc(&b, ' ');
		sb_adds(&b, argv[i]);
	}
	if (!b.s)
		return 0;
	sh->parse_eval = true; /* taken by exec_text's parser (its messages) */
	int st = exec_text(sh, b.s, b.len, sh->lineno, NULL);
	sh->parse_eval = false;
	sb_free(&b);
	if (st == -2)
		return 2;
	return st;
}

int read_script(struct sh_shell *sh, const char *path, char **out, size_t *len, int *err);
int
read_script(struct sh_shell *sh, const char *path, char **out, size_t *len, int *err)
{
	sh_update_fs(sh, path);
	int fd = sh_fs_open(&sh->fs, path, O_RDONLY, 0);
	if (fd < 0) {
		*err = -fd;
		return -1;
	}
	int r = sh_read_script_fd(fd, out, len);
	close(fd);
	if (r < 0) {
		*err = -r;
		return -1;
	}
	return 0;
}

static int
b_source(struct sh_shell *sh, int argc, char **argv)
{
	if (argc < 2) {
		sh_err(sh, "%s: filename argument required", argv[0]);
		return 2;
	}
	const char *f = argv[1];
	char *path = NULL;
	if (!strchr(f, '/')) {
		path = find_source_in_path(sh, f);
		struct stat st;
		if (!path && stat(f, &st) == 0)
			path = xstrdup(f);
	}
	char *text;
	size_t len;
	int err;
	if (read_script(sh, path ? path : f, &text, &len, &err) < 0) {
		sh_err(sh, "%s: %s", f, strerror(err));
		free(path);
		return 1;
	}
	free(path);
	char **oldv = NULL;
	int oldc = 0;
	if (argc > 2) {
		oldv = sh->argv;
		oldc = sh->argc;
		sh->argv = NULL;
		sh->argc = 0;
		set_positional(sh, argc - 2, argv + 2);
	}
	int saveline = sh->lineno;
	int st = exec_text(sh, text, len, 1, f);
	sh->lineno = saveline;
	free(text);
	if (oldv) {
		for (int i = 0; i < sh->argc; i++)
			free(sh->argv[i]);
		free(sh->argv);
		sh->argv = oldv;
		sh->argc = oldc;
	}
	if (sh->jump == J_RETURN) {
		sh->jump = J_NONE;
		st = sh->status;
	}
	if (st == -2)
		return 2;
	return st;
}

/*
 * bash's SHLVL: the level it came with (0 when it is not a number) plus one, never below
 * 0; 1000 or more warns and starts again at 1 (bash's variables.c does the same).
 */
static void
count_shell_level(struct sh_shell *sh)
{
	const char *v = var_value(sh, "SHLVL");
	long lvl = 0;
	if (v && *v) {
		char *e;
		errno = 0;
		long n = strtol(v, &e, 10);
		while (*e == ' ' || *e == '\t')
			e++;
		if (!*e && errno == 0)
			lvl = n;
	}
	if (lvl < 0 || lvl == LONG_MAX)
		lvl = 0;
	else
		lvl++;
	if (lvl >= 1000) {
		sh_err(sh, "warning: shell level (%ld) too high, resetting to 1", lvl);
		lvl = 1;
	}
	char buf[24];
	(void)snprintf(buf, sizeof buf, "%ld", lvl);
	var_set(sh, "SHLVL", buf, V_EXPORT);
}

char *
sh_shlvl_nofork(struct sh_shell *sh)
{
	const char *v = var_value(sh, "SHLVL");
	struct var *var = var_get(sh, "SHLVL");
	if (sh->dash_errors || !v || !var || (var->flags & V_READONLY))
		return NULL;
	char *e;
	long lvl = strtol(v, &e, 10);
	if (!*v || *e || lvl <= 0)
		return NULL;
	char *saved = xstrdup(v);
	char buf[24];
	(void)snprintf(buf, sizeof buf, "%ld", lvl - 1);
	var_set(sh, "SHLVL", buf, 0);
	return saved;
}

void
sh_shlvl_restore(struct sh_shell *sh, char *saved)
{
	if (!saved)
		return;
	var_set(sh, "SHLVL", saved, 0);
	free(saved);
}

/* One startup file, run as `.` runs it; false when it cannot be read (the next is tried). */
static bool
read_startup_file(struct sh_shell *sh, const char *path)
{
	char *text;
	size_t len;
	int err;
	if (read_script(sh, path, &text, &len, &err) < 0)
		return false;
	int saveline = sh->lineno;
	(void)exec_text(sh, text, len, 1, path);
	sh->lineno = saveline;
	free(text);
	if (sh->jump == J_RETURN)
		sh->jump = J_NONE;
	return true;
}

/*
 * How a shell starts once its dialect and options are set (box-shell/invocation.c,
 * box-shell/main_sh.c, box-shell/wrappers.c): bash counts itself in SHLVL (dash leaves
 * it as it came); a login shell (PROFILE: -l, --login or argv[0] "-…", without
 * --noprofile) reads /etc/profile, then bash the first of ~/.bash_profile, ~/.bash_login
 * and ~/.profile that it can read, dash ~/.profile. Each read is the shell's own file
 * operation, decided as a `.` of the file is: a file the policy refuses is passed over as
 * bash passes over one it cannot read.
 */
void
sh_startup(struct sh_shell *sh, bool profile)
{
	bool bash = !sh->dash_errors;
	if (bash)
		count_shell_level(sh);
	if (!profile)
		return;
	(void)read_startup_file(sh, "/etc/profile");
	const char *home = var_value(sh, "HOME");
	if (!home || !*home || sh->jump == J_EXIT)
		return;
	static const char *const bash_files[] = { ".bash_profile", ".bash_login", ".profile", NULL };
	static const char *const dash_files[] = { ".profile", NULL };
	for (const char *const *f = bash ? bash_files : dash_files; *f; f++) {
		struct sbuf path = {0};
		sb_adds(&path, home);
		sb_addc(&path, '/');
		sb_adds(&path, *f);
		bool done = read_startup_file(sh, path.s);
		sb_free(&path);
		if (done)
			break;
	}
}

static int
exit_code_arg(struct sh_shell *sh, const char *name, const char *a, int *code)
{
	char *e;
	long v = strtol(a, &e, 10);
	if (!*a || *e) {
		sh_err(sh, "%s: %s: numeric argument required", name, a);
		*code = 2;
		return -1;
	}
	*code = (int)(v & 255);
	return 0;
}

static int
b_exit(struct sh_shell *sh, int argc, char **argv)
{
	/* in a trap, `exit` alone is the status the trap began with (POSIX) */
	int code = sh->in_trap ? sh->trap_status : sh->status;
	if (argc > 2) {
		sh_err(sh, "exit: too many arguments");
		return 1;
	}
	if (argc > 1)
		exit_code_arg(sh, "exit", argv[1], &code);
	sh->jump = J_EXIT;
	sh->jump_n = code;
	sh->status = code;
	return code;
}

static int
b_return(struct sh_shell *sh, int argc, char **argv)
{
	/* `return` alone in a trap: the status the trap began with */
	int code = sh->in_trap && sh->func_depth == sh->trap_func_depth ? sh->trap_status
									  : sh->status;
	if (argc > 1 && exit_code_arg(sh, "return", argv[1], &code) < 0) {
		code = 2;
	}
	if (sh->func_depth == 0 && sh->call_depth <= 1) {
		sh_err(sh, "return: can only `return' from a function or sourced script");
		return 2;
	}
	sh->jump = J_RETURN;
	sh->status = code;
	return code;
}

static int
b_break(struct sh_shell *sh, int argc, char **argv)
{
	long n = 1;
	if (argc > 1) {
		char *e;
		n = strtol(argv[1], &e, 10);
		if (*e || !*argv[1]) {
			sh_err(sh, "%s: %s: numeric argument required", argv[0], argv[1]);
			return 1;
		}
		if (n < 1) {
			sh_err(sh, "%s: %s: loop count out of range", argv[0], argv[1]);
			return 1;
		}
	}
	if (sh->loop_depth == 0) {
		sh_err(sh, "%s: only meaningful in a `for', `while', or `until' loop", argv[0]);
		return 0;
	}
	if (n > sh->loop_depth)
		n = sh->loop_depth;
	sh->jump = argv[0][0] == 'b' ? J_BREAK : J_CONTINUE;
	sh->jump_n = (int)n;
	return 0;
}

static void
unexport_var(struct var *v, void *arg)
{
	(void)arg;
	v->flags &= ~V_EXPORT;
}

int
sh_exec_parse(struct sh_shell *sh, int argc, char **argv, struct sh_exec_opts *o)
{
	*o = (struct sh_exec_opts){0};
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 'c') {
				o->clear_env = true;
			} else if (*p == 'l') {
				o->login = true;
			} else if (*p == 'a') {
				if (p[1]) {
					o->name = p + 1;
				} else if (i + 1 < argc) {
					o->name = argv[++i];
				} else {
					if (sh)
						sh_err(sh, "exec: -a: option requires an argument");
					goto usage;
				}
				break;
			} else {
				if (sh)
					sh_err(sh, "exec: -%c: invalid option", *p);
				goto usage;
			}
		}
	}
	return i;
usage:
	if (sh) {
		bi_flush();
		(void)!write(2, SH_EXEC_USAGE "\n", sizeof(SH_EXEC_USAGE));
	}
	return -1;
}

/*
 * exec [-cl] [-a NAME] [COMMAND [ARGS]]: runs COMMAND, then the shell ends
 * with its status (the process is not replaced: docs/box-sh.1.md). -a NAME
 * and -l (a leading '-') are the argv[0] a host program sees; -c runs it
 * with no environment. Without COMMAND the options do nothing and the
 * redirections stay (the caller's, as sh_exec_parse tells it).
 */
static int
b_exec(struct sh_shell *sh, int argc, char **argv)
{
	struct sh_exec_opts o;
	int i = sh_exec_parse(sh, argc, argv, &o);
	if (i < 0)
		return 2;
	if (i >= argc)
		return 0; /* the redirections stay: handled by the caller */
	char *login_name = NULL;
	if (o.login) {
		const char *n = o.name ? o.name : argv[i];
		size_t l = strlen(n);
		login_name = xmalloc(l + 2);
		login_name[0] = '-';
		memcpy(login_name + 1, n, l + 1);
	}
	if (o.clear_env) {
		/* the shell ends after this command: nothing of it is exported any more */
		var_foreach(sh, unexport_var, NULL);
		sh->env_dirty = true;
	}
	sh->exec_argv0 = login_name ? login_name : o.name;
	sh->exec_clear_env = o.clear_env;
	free(sh_shlvl_nofork(sh)); /* bash's exec: the program takes the shell's level */
	int st = exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
	sh->exec_argv0 = NULL;
	sh->exec_clear_env = false;
	free(login_name);
	sh->jump = J_EXIT;
	sh->jump_n = st;
	return st;
}

/* ---- type / command / builtin ---- */

static const char *const keywords[] = {"if", "then", "else", "elif", "fi", "case", "esac",
				       "for", "while", "until", "do", "done", "in", "function",
				       "{", "}", "!", "[[", "]]", "time", NULL};

static bool
is_keyword(const char *s)
{
	for (int i = 0; keywords[i]; i++)
		if (strcmp(keywords[i], s) == 0)
			return true;
	return false;
}

/* mode: 'v' command -v, 'V' command -V / type, 't' type -t */
static int
describe(struct sh_shell *sh, const char *name, char mode, bool nofunc)
{
	const char *al = alias_get(sh, name);
	char b[PATH_MAX + 256];
	if (al && !nofunc) {
		if (mode == 'v')
			snprintf(b, sizeof b, "alias %s='%s'\n", name, al);
		else if (mode == 't')
			snprintf(b, sizeof b, "alias\n");
		else
			snprintf(b, sizeof b, "%s is aliased to `%s'\n", name, al);
		bi_outs(1, b);
		return 0;
	}
	if (is_keyword(name)) {
		if (mode == 'v')
			snprintf(b, sizeof b, "%s\n", name);
		else if (mode == 't')
			snprintf(b, sizeof b, "keyword\n");
		else
			snprintf(b, sizeof b, "%s is a shell keyword\n", name);
		bi_outs(1, b);
		return 0;
	}
	if (!nofunc && func_get(sh, name)) {
		if (mode == 'v')
			snprintf(b, sizeof b, "%s\n", name);
		else if (mode == 't')
			snprintf(b, sizeof b, "function\n");
		else
			snprintf(b, sizeof b, "%s is a function\n", name);
		bi_outs(1, b);
		if (mode == 'V') {
			char *t = func_text(name, func_get(sh, name)->body);
			bi_outs(1, t);
			free(t);
		}
		return 0;
	}
	if (builtin_find(name) || own_command_find(name)) {
		if (mode == 'v')
			snprintf(b, sizeof b, "%s\n", name);
		else if (mode == 't')
			snprintf(b, sizeof b, "builtin\n");
		else
			snprintf(b, sizeof b, "%s is a shell builtin\n", name);
		bi_outs(1, b);
		return 0;
	}
	char *p = find_in_path(sh, name);
	/* In the box-shell daemon: a host program as box runs it (host.h), or not at all. */
	const struct sh_host_ops *ops = sh_host_get();
	if (p && ops->host_runnable && mode == 'v' && !ops->host_runnable(name, p)) {
		free(p);
		return 1;
	}
	char *host = p && mode == 'V' && ops->describe_host ? ops->describe_host(name, p) : NULL;
	if (host) {
		bi_outs(1, host);
		bi_outs(1, "\n");
		free(host);
		free(p);
		return 0;
	}
	if (p) {
		if (mode == 'v')
			snprintf(b, sizeof b, "%s\n", p);
		else if (mode == 't')
			snprintf(b, sizeof b, "file\n");
		else
			snprintf(b, sizeof b, "%s is %s\n", name, p);
		bi_outs(1, b);
		free(p);
		return 0;
	}
	if (mode == 'V')
		sh_err(sh, "type: %s: not found", name);
	return 1;
}

static int
b_type(struct sh_shell *sh, int argc, char **argv)
{
	char mode = 'V';
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-t") == 0)
			mode = 't';
		else if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "-P") == 0)
			mode = 'v';
		else if (strcmp(argv[i], "-a") == 0) {
		} else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else {
			sh_err(sh, "type: %s: invalid option", argv[i]);
			return 2;
		}
	}
	int st = 0;
	for (; i < argc; i++)
		if (describe(sh, argv[i], mode, false) != 0)
			st = 1;
	return st;
}

static int
b_command(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	char mode = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 'v')
				mode = 'v';
			else if (*p == 'V')
				mode = 'V';
			else if (*p == 'p') {
			} else {
				sh_err(sh, "command: -%c: invalid option", *p);
				return 2;
			}
		}
	}
	if (i >= argc)
		return 0;
	if (mode) {
		int st = 0;
		for (; i < argc; i++)
			if (describe(sh, argv[i], mode, false) != 0)
				st = 1;
		return st;
	}
	return exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
}

static int
b_builtin(struct sh_shell *sh, int argc, char **argv)
{
	if (argc < 2)
		return 0;
	const struct sh_builtin *b = builtin_find(argv[1]);
	if (!b) {
		sh_err(sh, "builtin: %s: not a shell builtin", argv[1]);
		return 1;
	}
	return exec_argv(sh, argc - 1, argv + 1, true, -1, -1, -1);
}

/* ---- alias ---- */

static int
b_alias(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	if (i < argc && strcmp(argv[i], "-p") == 0)
		i++;
	if (i >= argc) {
		for (struct alias *a = sh->aliases; a; a = a->next) {
			char *q = shell_quote(a->val);
			if (q[0] != '\'') {
				free(q);
				q = xmalloc(strlen(a->val) + 3);
				sprintf(q, "'%s'", a->val);
			}
			bi_outs(1, "alias ");
			bi_outs(1, a->name);
			bi_outs(1, "=");
			bi_outs(1, q);
			bi_outs(1, "\n");
			free(q);
		}
		return 0;
	}
	int st = 0;
	for (; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		if (eq) {
			char *n = xstrndup(argv[i], (size_t)(eq - argv[i]));
			alias_set(sh, n, eq + 1);
			free(n);
		} else {
			const char *v = alias_get(sh, argv[i]);
			if (!v) {
				sh_err(sh, "alias: %s: not found", argv[i]);
				st = 1;
				continue;
			}
			char *q = shell_quote(v);
			if (q[0] != '\'') {
				free(q);
				q = xmalloc(strlen(v) + 3);
				sprintf(q, "'%s'", v);
			}
			bi_outs(1, "alias ");
			bi_outs(1, argv[i]);
			bi_outs(1, "=");
			bi_outs(1, q);
			bi_outs(1, "\n");
			free(q);
		}
	}
	return st;
}

static int
b_unalias(struct sh_shell *sh, int argc, char **argv)
{
	int st = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-a") == 0) {
			while (sh->aliases)
				alias_unset(sh, sh->aliases->name);
			continue;
		}
		if (alias_unset(sh, argv[i]) < 0) {
			sh_err(sh, "unalias: %s: not found", argv[i]);
			st = 1;
		}
	}
	return st;
}

/* ---- getopts ---- */

/* OPTIND (IND) and the position inside its argument, for the next call. */
static void
getopts_store(struct sh_shell *sh, long ind, int sub)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%ld", ind);
	var_set(sh, "OPTIND", buf, 0); /* resets getopts_sub: set after */
	sh->getopts_optind = ind;
	sh->getopts_sub = sub;
}

/* getopts' own messages, as bash's: "$0: TEXT", unless OPTERR=0 */
static void
getopts_msg(struct sh_shell *sh, const char *what, char c)
{
	const char *oe = var_value(sh, "OPTERR");
	if (oe && !strcmp(oe, "0"))
		return;
	char line[1200];
	int k = snprintf(line, sizeof line, "%.1024s: %s -- %c\n", sh->arg0 ? sh->arg0 : "box-sh",
			 what, c);
	if (k > 0) {
		bi_flush();
		(void)!write(2, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
	}
}

/* bash clears OPTARG at the end of the options and after a reported error
 * even when it is readonly (its unbind_variable); after an option without an
 * argument a readonly OPTARG stays, with the assignment's message. */
static void
getopts_unset_optarg(struct sh_shell *sh, bool force)
{
	struct var *v = var_get(sh, "OPTARG");
	if (!v)
		return;
	if (!force && (v->flags & V_READONLY)) {
		sh_err(sh, "OPTARG: readonly variable");
		return;
	}
	var_unbind(sh, "OPTARG");
}

static void
getopts_set_name(struct sh_shell *sh, const char *name, const char *val, bool bad)
{
	if (bad)
		sh_err(sh, "getopts: `%s': not a valid identifier", name);
	else
		var_set(sh, name, val, 0);
}

static int
b_getopts(struct sh_shell *sh, int argc, char **argv)
{
	static const char usage[] = "getopts: usage: getopts optstring name [arg ...]\n";
	if (argc > 1 && argv[1][0] == '-' && argv[1][1] && strcmp(argv[1], "--")) {
		sh_err(sh, "getopts: %.2s: invalid option", argv[1]);
		bi_flush();
		(void)!write(2, usage, sizeof usage - 1);
		return 2;
	}
	if (argc > 1 && !strcmp(argv[1], "--")) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		/* bash: the usage line has no "NAME: line N:" before it */
		bi_flush();
		(void)!write(2, usage, sizeof usage - 1);
		return 2;
	}
	const char *opts = argv[1];
	const char *name = argv[2];
	/* bash: a bad NAME still reads the option (OPTIND moves), then fails */
	bool badname = !is_name(name, strlen(name));
	char **args = argc > 3 ? argv + 3 : sh->argv;
	int nargs = argc > 3 ? argc - 3 : sh->argc;
	bool silent = opts[0] == ':';
	if (silent)
		opts++;
	const char *oi = var_value(sh, "OPTIND");
	long ind = oi ? strtol(oi, NULL, 10) : 1;
	if (ind < 1)
		ind = 1;
	/* the position inside a grouped option holds only while OPTIND is the
	 * value getopts wrote, and inside the argument it reads now */
	if (ind != sh->getopts_optind)
		sh->getopts_sub = 0;
	if (ind > nargs) {
		/* past the end: OPTIND names the first non-option (bash) */
		getopts_store(sh, (long)nargs + 1, 0);
		getopts_set_name(sh, name, "?", badname);
		getopts_unset_optarg(sh, true);
		return 1;
	}
	const char *a = args[ind - 1];
	size_t sub = (size_t)sh->getopts_sub;
	if (sub >= strlen(a))
		sub = 0;
	if (sub == 0) {
		if (a[0] != '-' || !a[1]) {
			getopts_set_name(sh, name, "?", badname);
			getopts_unset_optarg(sh, true);
			return 1;
		}
		if (strcmp(a, "--") == 0) {
			getopts_store(sh, ind + 1, 0);
			getopts_set_name(sh, name, "?", badname);
			getopts_unset_optarg(sh, true);
			return 1;
		}
		sub = 1;
	}
	char c = a[sub++];
	const char *p = c == ':' ? NULL : strchr(opts, c);
	bool end_of_arg = a[sub] == 0;
	char cs[2] = {c, 0};
	if (!p) {
		if (silent) {
			var_set(sh, "OPTARG", cs, 0);
		} else {
			getopts_msg(sh, "illegal option", c);
			getopts_unset_optarg(sh, true);
		}
		getopts_set_name(sh, name, "?", badname);
	} else if (p[1] == ':') {
		if (!end_of_arg) {
			var_set(sh, "OPTARG", a + sub, 0);
			end_of_arg = true;
			getopts_set_name(sh, name, cs, badname);
		} else if (ind < nargs) {
			var_set(sh, "OPTARG", args[ind], 0);
			ind++;
			getopts_set_name(sh, name, cs, badname);
		} else if (silent) {
			getopts_set_name(sh, name, ":", badname);
			var_set(sh, "OPTARG", cs, 0);
		} else {
			getopts_msg(sh, "option requires an argument", c);
			getopts_set_name(sh, name, "?", badname);
			getopts_unset_optarg(sh, true);
		}
	} else {
		getopts_set_name(sh, name, cs, badname);
		getopts_unset_optarg(sh, false);
	}
	if (end_of_arg)
		getopts_store(sh, ind + 1, 0);
	else
		getopts_store(sh, ind, (int)sub);
	return badname ? 1 : 0;
}

/* ---- umask, wait, trap, kill, let, shopt ---- */

static int
b_umask(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	bool sym = false;
	if (i < argc && strcmp(argv[i], "-S") == 0) {
		sym = true;
		i++;
	}
	if (i >= argc) {
		mode_t m = umask(0);
		umask(m);
		char b[64];
		if (sym) {
			mode_t p = ~m & 0777;
			char u[4], g[4], o[4];
			int k;
			k = 0;
			if (p & 0400) u[k++] = 'r';
			if (p & 0200) u[k++] = 'w';
			if (p & 0100) u[k++] = 'x';
			u[k] = 0;
			k = 0;
			if (p & 040) g[k++] = 'r';
			if (p & 020) g[k++] = 'w';
			if (p & 010) g[k++] = 'x';
			g[k] = 0;
			k = 0;
			if (p & 04) o[k++] = 'r';
			if (p & 02) o[k++] = 'w';
			if (p & 01) o[k++] = 'x';
			o[k] = 0;
			snprintf(b, sizeof b, "u=%s,g=%s,o=%s\n", u, g, o);
		} else
			snprintf(b, sizeof b, "%04o\n", (unsigned)m);
		bi_outs(1, b);
		return 0;
	}
	if (!isdigit((unsigned char)argv[i][0])) {
		/* symbolic: [ugoa]*[=+-][rwx]* clauses, on the permitted bits */
		mode_t m = umask(0);
		umask(m);
		mode_t perm = ~m & 0777;
		const char *p = argv[i];
		for (;;) {
			mode_t who = 0;
			for (; strchr("ugoa", *p) && *p; p++)
				who |= *p == 'u' ? 0700 : *p == 'g' ? 070 : *p == 'o' ? 07 : 0777;
			if (!who)
				who = 0777;
			if (!*p || !strchr("=+-", *p)) {
				sh_err(sh, "umask: `%c': invalid symbolic mode operator", *p ? *p : ' ');
				return 1;
			}
			char op = *p++;
			mode_t bits = 0;
			for (; *p && *p != ','; p++) {
				if (*p == 'r')
					bits |= 0444;
				else if (*p == 'w')
					bits |= 0222;
				else if (*p == 'x')
					bits |= 0111;
				else {
					sh_err(sh, "umask: `%c': invalid symbolic mode character", *p);
					return 1;
				}
			}
			bits &= who;
			if (op == '=')
				perm = (perm & ~who) | bits;
			else if (op == '+')
				perm |= bits;
			else
				perm &= ~bits;
			if (*p != ',')
				break;
			p++;
		}
		umask(~perm & 0777);
		return 0;
	}
	char *e;
	long v = strtol(argv[i], &e, 8);
	if (*e || v < 0 || v > 0777) {
		sh_err(sh, "umask: %s: octal number out of range", argv[i]);
		return 1;
	}
	umask((mode_t)v);
	return 0;
}

/*
 * Waits for one job. A signal with a trap ends the wait (POSIX: wait returns
 * 128+N at once and the trap runs): its number, after its trap ran; 0 when
 * the job ended (j->status).
 */
static int
wait_job(struct sh_shell *sh, struct bgjob *j)
{
	for (;;) {
		int ws;
		pid_t r = waitpid(j->pid, &ws, 0);
		if (r == j->pid) {
			j->done = true;
			j->status = WIFEXITED(ws) ? WEXITSTATUS(ws)
				    : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
		} else if (r < 0 && errno == EINTR) {
			/* below */
		} else {
			j->done = true;
			j->status = 127;
		}
		/* a job that sends the signal and ends at once: the wait may see
		 * both, the signal still counts */
		for (int s = 1; s < 65; s++)
			if (sh->pending[s] && sh->traps[s] && *sh->traps[s] && !sh->in_trap) {
				sh_check_traps(sh);
				return s;
			}
		if (j->done)
			return 0;
	}
}

static int
b_wait(struct sh_shell *sh, int argc, char **argv)
{
	int st = 0;
	if (argc == 1) {
		for (struct bgjob *j = sh->jobs; j; j = j->next)
			if (!j->done) {
				int sig = wait_job(sh, j);
				if (sig)
					return 128 + sig;
			}
		while (sh->jobs) {
			struct bgjob *j = sh->jobs;
			sh->jobs = j->next;
			free(j);
		}
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-n") == 0)
			continue;
		struct bgjob **pp = &sh->jobs, *j = NULL;
		pid_t pid;
		if (a[0] == '%') {
			/* The job table's numbering (jobs.c); it names an unknown job itself. */
			pid = jobs_pid(sh, "wait", a);
			if (pid < 0) {
				st = 127;
				continue;
			}
		} else {
			char *e;
			long l = strtol(a, &e, 10);
			if (!*a || *e || l <= 0 || l > INT_MAX) {
				sh_err(sh, "wait: `%s': not a pid or valid job spec", a);
				st = 2;
				continue;
			}
			pid = (pid_t)l;
		}
		for (; *pp; pp = &(*pp)->next)
			if ((*pp)->pid == pid) {
				j = *pp;
				break;
			}
		if (!j) {
			sh_err(sh, "wait: pid %s is not a child of this shell", a);
			st = 127;
			continue;
		}
		if (!j->done) {
			int sig = wait_job(sh, j);
			if (sig)
				return 128 + sig;
		}
		st = j->status;
		*pp = j->next;
		free(j);
	}
	return st;
}

static const char *const signames[] = {
	"EXIT", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
	"SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP",
	"TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
};

static int
sig_number(const char *s)
{
	if (isdigit((unsigned char)s[0])) {
		int n = atoi(s);
		return n >= 0 && n < 65 ? n : -1;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	if (strcasecmp(s, "ERR") == 0)
		return TRAP_ERR;
	if (strcasecmp(s, "DEBUG") == 0)
		return TRAP_DEBUG;
	for (int i = 0; i < (int)(sizeof signames / sizeof signames[0]); i++)
		if (strcasecmp(signames[i], s) == 0)
			return i;
	return -1;
}

static void
trap_handler(int sig)
{
	if (sh_current)
		sh_current->pending[sig] = 1;
}

static int
b_trap(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc || strcmp(argv[i], "-p") == 0) {
		for (int s = 0; s < SH_NTRAP; s++) {
			if (!sh->traps[s])
				continue;
			const char *nm = s == TRAP_ERR     ? "ERR"
					 : s == TRAP_DEBUG ? "DEBUG"
					 : s < 32	   ? signames[s]
							   : "?";
			char *q = shell_quote(sh->traps[s]);
			if (q[0] != '\'') {
				free(q);
				q = xmalloc(strlen(sh->traps[s]) + 3);
				sprintf(q, "'%s'", sh->traps[s]);
			}
			bi_outs(1, "trap -- ");
			bi_outs(1, q);
			bi_outs(1, s == 0 || s >= TRAP_ERR ? " " : " SIG");
			bi_outs(1, nm);
			bi_outs(1, "\n");
			free(q);
		}
		return 0;
	}
	const char *action = argv[i];
	int first = i + 1;
	bool reset = strcmp(action, "-") == 0;
	if (sig_number(action) >= 0 && isdigit((unsigned char)action[0])) {
		/* trap N...: reset */
		reset = true;
		first = i;
	}
	if (first >= argc) {
		if (sig_number(action) >= 0) {
			reset = true;
			first = i;
		} else {
			sh_err(sh, "trap: usage: trap [-lp] [[arg] signal_spec ...]");
			return 2;
		}
	}
	int st = 0;
	for (int k = first; k < argc; k++) {
		int s = sig_number(argv[k]);
		if (s < 0) {
			sh_err(sh, "trap: %s: invalid signal specification", argv[k]);
			st = 1;
			continue;
		}
		/* ignored when the shell began: it stays so (POSIX, non-interactive) */
		if (s > 0 && s < 65 && !sh->interactive &&
		    (sh->ignored_at_entry & (1ull << (s - 1))))
			continue;
		free(sh->traps[s]);
		sh->traps[s] = reset ? NULL : xstrdup(action);
		if (s > 0 && s < 65 && s != SIGKILL && s != SIGSTOP) {
			if (reset)
				signal(s, SIG_DFL);
			else if (!*action)
				signal(s, SIG_IGN);
			else {
				struct sigaction sa = {0};
				sa.sa_handler = trap_handler;
				sigemptyset(&sa.sa_mask);
				sigaction(s, &sa, NULL);
			}
		}
	}
	/* the decision log's back end looks at the dispositions again (box-sh: a
	 * fatal signal's handler where the default is back, no buffer while
	 * SIGTERM is the script's) */
	if (sh->decider)
		(void)sh_decider_flush(sh->decider);
	return st;
}

static int
b_kill(struct sh_shell *sh, int argc, char **argv)
{
	int sig = SIGTERM;
	int i = 1;
	if (i < argc && strcmp(argv[i], "-l") == 0) {
		for (int s = 1; s < 32; s++) {
			bi_outs(1, signames[s]);
			bi_outs(1, "\n");
		}
		return 0;
	}
	if (i < argc && argv[i][0] == '-' && argv[i][1]) {
		const char *s = argv[i] + 1;
		/* -s NAME, and bash's -n NUMBER */
		if ((strcmp(s, "s") == 0 || strcmp(s, "n") == 0) && i + 1 < argc)
			s = argv[++i];
		sig = sig_number(s);
		if (sig < 0 || sig == TRAP_ERR) {
			sh_err(sh, "kill: %s: invalid signal specification", s);
			return 1;
		}
		i++;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	/* The signal may end this very process (kill -9 $$): its waiting decision lines go
	 * first (decide.h). */
	if (sh->decider)
		(void)sh_decider_flush(sh->decider);
	int st = 0;
	for (; i < argc; i++) {
		char *e = (char *)"";
		long pid = argv[i][0] == '%' ? jobs_pid(sh, "kill", argv[i]) : strtol(argv[i], &e, 10);
		if (pid < 0 && argv[i][0] == '%') {
			st = 1;
			continue;
		}
		if (*e) {
			sh_err(sh, "kill: %s: arguments must be process or job IDs", argv[i]);
			st = 1;
			continue;
		}
		if (kill((pid_t)pid, sig) < 0) {
			sh_err(sh, "kill: (%ld) - %s", pid, strerror(errno));
			st = 1;
		}
	}
	return st;
}

static int
b_let(struct sh_shell *sh, int argc, char **argv)
{
	if (argc < 2) {
		sh_err(sh, "let: expression expected");
		return 1;
	}
	intmax_t v = 0;
	for (int i = 1; i < argc; i++) {
		sh->arith_who = "let";
		int r = arith_eval(sh, argv[i], &v);
		sh->arith_who = NULL;
		if (r < 0)
			return 1;
	}
	return v ? 0 : 1;
}

/*
 * bash 5.2's shopt options, in the order `shopt` lists them, at the values a
 * non-interactive bash starts with. The ones this interpreter honours point
 * at their flag; login_shell is read-only (how the shell was started); the
 * others change nothing here, but keep the value a script gave them, so a
 * snapshot of the options (`shopt -p`, which harnesses save and source back)
 * reads as bash's (docs/box-sh.1.md).
 */
#define SHOPT_STORED SIZE_MAX
#define SHOPT_LOGIN (SIZE_MAX - 1)
static const struct shopt_option {
	const char *name;
	size_t off;   /* offsetof a bool in struct sh_shell, SHOPT_STORED or SHOPT_LOGIN */
	bool initial; /* a stored option's value at start */
} shopt_options[] = {
	{"autocd", SHOPT_STORED, false},
	{"assoc_expand_once", SHOPT_STORED, false},
	{"cdable_vars", SHOPT_STORED, false},
	{"cdspell", SHOPT_STORED, false},
	{"checkhash", SHOPT_STORED, false},
	{"checkjobs", SHOPT_STORED, false},
	{"checkwinsize", SHOPT_STORED, true},
	{"cmdhist", SHOPT_STORED, true},
	{"compat31", SHOPT_STORED, false},
	{"compat32", SHOPT_STORED, false},
	{"compat40", SHOPT_STORED, false},
	{"compat41", SHOPT_STORED, false},
	{"compat42", SHOPT_STORED, false},
	{"compat43", SHOPT_STORED, false},
	{"compat44", SHOPT_STORED, false},
	{"complete_fullquote", SHOPT_STORED, true},
	{"direxpand", SHOPT_STORED, false},
	{"dirspell", SHOPT_STORED, false},
	{"dotglob", offsetof(struct sh_shell, dotglob), false},
	{"execfail", SHOPT_STORED, false},
	{"expand_aliases", offsetof(struct sh_shell, expand_aliases), false},
	{"extdebug", offsetof(struct sh_shell, extdebug), false},
	{"extglob", offsetof(struct sh_shell, extglob), false},
	{"extquote", SHOPT_STORED, true},
	{"failglob", SHOPT_STORED, false},
	{"force_fignore", SHOPT_STORED, true},
	{"globasciiranges", SHOPT_STORED, true},
	{"globskipdots", SHOPT_STORED, true},
	{"globstar", SHOPT_STORED, false},
	{"gnu_errfmt", SHOPT_STORED, false},
	{"histappend", SHOPT_STORED, false},
	{"histreedit", SHOPT_STORED, false},
	{"histverify", SHOPT_STORED, false},
	{"hostcomplete", SHOPT_STORED, true},
	{"huponexit", SHOPT_STORED, false},
	{"inherit_errexit", offsetof(struct sh_shell, inherit_errexit), false},
	{"interactive_comments", SHOPT_STORED, true},
	{"lastpipe", offsetof(struct sh_shell, lastpipe), false},
	{"lithist", SHOPT_STORED, false},
	{"localvar_inherit", SHOPT_STORED, false},
	{"localvar_unset", SHOPT_STORED, false},
	{"login_shell", SHOPT_LOGIN, false},
	{"mailwarn", SHOPT_STORED, false},
	{"no_empty_cmd_completion", SHOPT_STORED, false},
	{"nocaseglob", SHOPT_STORED, false},
	{"nocasematch", SHOPT_STORED, false},
	{"noexpand_translation", SHOPT_STORED, false},
	{"nullglob", offsetof(struct sh_shell, nullglob), false},
	{"patsub_replacement", SHOPT_STORED, true},
	{"progcomp", SHOPT_STORED, true},
	{"progcomp_alias", SHOPT_STORED, false},
	{"promptvars", SHOPT_STORED, true},
	{"restricted_shell", SHOPT_STORED, false},
	{"shift_verbose", SHOPT_STORED, false},
	{"sourcepath", SHOPT_STORED, true},
	{"varredir_close", SHOPT_STORED, false},
	{"xpg_echo", SHOPT_STORED, false},
};
#define N_SHOPT (sizeof shopt_options / sizeof shopt_options[0])
_Static_assert(N_SHOPT <= 64, "shopt_stored is a 64-bit set");

static size_t
shopt_find(const char *name)
{
	for (size_t i = 0; i < N_SHOPT; i++)
		if (strcmp(shopt_options[i].name, name) == 0)
			return i;
	return N_SHOPT;
}

static bool
shopt_value(struct sh_shell *sh, size_t i)
{
	const struct shopt_option *o = &shopt_options[i];
	if (o->off == SHOPT_LOGIN)
		return sh->login_shell;
	if (o->off == SHOPT_STORED)
		/* the set holds what differs from the initial value: zero at start */
		return o->initial != ((sh->shopt_changed >> i) & 1);
	return *(bool *)((char *)sh + o->off);
}

static void
shopt_set(struct sh_shell *sh, size_t i, bool on)
{
	const struct shopt_option *o = &shopt_options[i];
	if (o->off == SHOPT_LOGIN)
		return;
	if (o->off == SHOPT_STORED) {
		if (on != o->initial)
			sh->shopt_changed |= 1ull << i;
		else
			sh->shopt_changed &= ~(1ull << i);
		return;
	}
	*(bool *)((char *)sh + o->off) = on;
}

/* One option as `shopt` (NAME<tab>on) or `shopt -p` (shopt -s NAME; set -o NAME) shows it. */
static void
shopt_show(const char *name, bool on, bool as_command, bool set_o)
{
	char line[300];
	if (as_command && set_o)
		snprintf(line, sizeof line, "set %co %s\n", on ? '-' : '+', name);
	else if (as_command)
		snprintf(line, sizeof line, "shopt -%c %s\n", on ? 's' : 'u', name);
	else
		snprintf(line, sizeof line, "%-15s\t%s\n", name, on ? "on" : "off");
	bi_outs(1, line);
}

/*
 * shopt [-pqsu] [-o] [NAME...], as bash: -s/-u set or unset the names (with
 * no names, -s/-u list the options that are on/off); -p shows them as
 * commands; -q only answers (0: every name is on); -o takes `set -o` names.
 * An unknown name is an error (status 1) and the others still apply.
 */
static int
b_shopt(struct sh_shell *sh, int argc, char **argv)
{
	int on = -1;
	bool quiet = false, print = false, set_o = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 's')
				on = 1;
			else if (*p == 'u')
				on = on == 1 ? 2 : 0;
			else if (*p == 'q')
				quiet = true;
			else if (*p == 'p')
				print = true;
			else if (*p == 'o')
				set_o = true;
			else {
				sh_err(sh, "shopt: -%c: invalid option", *p);
				bi_outs(2, "shopt: usage: shopt [-pqsu] [-o] [optname ...]\n");
				return 2;
			}
		}
	}
	if (on == 2) {
		sh_err(sh, "shopt: cannot set and unset shell options simultaneously");
		return 1;
	}
	if (i == argc) { /* every option: all, or those on (-s) / off (-u) */
		size_t n = set_o ? sizeof set_options / sizeof set_options[0] : N_SHOPT;
		for (size_t k = 0; k < n; k++) {
			const char *name = set_o ? set_options[k].name : shopt_options[k].name;
			bool v = set_o ? set_option_value(sh, &set_options[k]) : shopt_value(sh, k);
			if ((on == 1 && !v) || (on == 0 && v) || quiet)
				continue;
			shopt_show(name, v, print, set_o);
		}
		return 0;
	}
	int st = 0;
	for (; i < argc; i++) {
		if (set_o) {
			const struct set_option *so = set_option_find(argv[i]);
			if (!so) {
				sh_err(sh, "shopt: %s: invalid option name", argv[i]);
				st = 1;
				continue;
			}
			if (on >= 0) {
				char *av[] = {"set", on ? "-o" : "+o", argv[i], NULL};
				int used;
				if (sh_set_options(sh, 2, av + 1, &used) < 0)
					st = 1;
				continue;
			}
			bool v = set_option_value(sh, so);
			if (!v)
				st = 1;
			if (!quiet)
				shopt_show(so->name, v, print, true);
			continue;
		}
		size_t k = shopt_find(argv[i]);
		if (k == N_SHOPT) {
			sh_err(sh, "shopt: %s: invalid shell option name", argv[i]);
			st = 1;
			continue;
		}
		if (on >= 0) {
			shopt_set(sh, k, on);
			continue;
		}
		bool v = shopt_value(sh, k);
		if (!v)
			st = 1;
		if (!quiet)
			shopt_show(shopt_options[k].name, v, print, false);
	}
	return st;
}

static int
b_times(struct sh_shell *sh, int argc, char **argv)
{
	bi_outs(1, "0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n");
	return 0;
}

static int
b_nested(struct sh_shell *sh, int argc, char **argv)
{
	return run_nested_shell(sh, argc, argv);
}



static const struct sh_builtin builtins[];

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * compgen (the subset scripts use to list names, not completion itself):
 * -v -e -b -k -A variable|export|function|builtin|keyword|alias and -W
 * WORDS, then an optional word: the names that start with it, one a line.
 * complete accepts its arguments and does nothing (no interactive shell).
 */
static int
b_compgen(struct sh_shell *sh, int argc, char **argv)
{
	static const char *const kw_names[] = {"if", "then", "else", "elif", "fi", "case",
					       "esac", "for", "select", "while", "until", "do",
					       "done", "in", "function", "time", "{", "}", "!",
					       "[[", "]]", "coproc", NULL};
	bool vars = false, exported = false, funcs = false, bins = false, kws = false,
	     aliases = false;
	const char *words = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			const char *val = NULL;
			if (*p == 'A' || *p == 'W') {
				val = p[1] ? p + 1 : (i + 1 < argc ? argv[++i] : NULL);
				if (!val) {
					sh_err(sh, "compgen: -%c: option requires an argument", *p);
					return 2;
				}
			}
			switch (*p) {
			case 'v': vars = true; break;
			case 'e': exported = true; break;
			case 'b': bins = true; break;
			case 'k': kws = true; break;
			case 'a': aliases = true; break;
			case 'W': words = val; break;
			case 'A':
				if (strcmp(val, "variable") == 0)
					vars = true;
				else if (strcmp(val, "export") == 0)
					exported = true;
				else if (strcmp(val, "function") == 0)
					funcs = true;
				else if (strcmp(val, "builtin") == 0)
					bins = true;
				else if (strcmp(val, "keyword") == 0)
					kws = true;
				else if (strcmp(val, "alias") == 0)
					aliases = true;
				else {
					sh_err(sh, "compgen: %s: invalid action name", val);
					return 2;
				}
				break;
			default:
				sh_err(sh, "compgen: -%c: invalid option", *p);
				return 2;
			}
			if (val)
				break;
		}
	}
	const char *pre = i < argc ? argv[i] : "";
	size_t pl = strlen(pre);
	struct strv out = {0};
	if (vars || exported) {
		struct strv names = {0};
		for (int h = 0; h < 256; h++)
			for (struct var *v = sh->vars[h]; v; v = v->next) {
				bool set = v->val || v->narr || (v->as && v->as->n);
				if ((exported && (v->flags & V_EXPORT) && set) || (vars && set))
					if (strncmp(v->name, pre, pl) == 0)
						strv_add(&names, xstrdup(v->name));
			}
		if (names.n > 1)
			qsort(names.v, names.n, sizeof(char *), cmp_strp);
		for (size_t k = 0; k < names.n; k++)
			strv_add(&out, names.v[k]);
		free(names.v);
	}
	if (funcs) {
		struct strv names = {0};
		for (int h = 0; h < 64; h++)
			for (struct func *f = sh->funcs[h]; f; f = f->next)
				if (strncmp(f->name, pre, pl) == 0)
					strv_add(&names, xstrdup(f->name));
		if (names.n > 1)
			qsort(names.v, names.n, sizeof(char *), cmp_strp);
		for (size_t k = 0; k < names.n; k++)
			strv_add(&out, names.v[k]);
		free(names.v);
	}
	if (aliases) {
		struct strv names = {0};
		for (struct alias *a = sh->aliases; a; a = a->next)
			if (strncmp(a->name, pre, pl) == 0)
				strv_add(&names, xstrdup(a->name));
		if (names.n > 1)
			qsort(names.v, names.n, sizeof(char *), cmp_strp);
		for (size_t k = 0; k < names.n; k++)
			strv_add(&out, names.v[k]);
		free(names.v);
	}
	if (bins) {
		struct strv names = {0};
		for (const struct sh_builtin *b = builtins; b->name; b++)
			if (strncmp(b->name, pre, pl) == 0)
				strv_add(&names, xstrdup(b->name));
		if (names.n > 1)
			qsort(names.v, names.n, sizeof(char *), cmp_strp);
		for (size_t k = 0; k < names.n; k++)
			strv_add(&out, names.v[k]);
		free(names.v);
	}
	if (kws)
		for (int k = 0; kw_names[k]; k++)
			if (strncmp(kw_names[k], pre, pl) == 0)
				strv_add(&out, xstrdup(kw_names[k]));
	if (words) {
		/* split at IFS's characters (blanks by default), no expansion */
		const char *ifs = var_value(sh, "IFS");
		if (!ifs)
			ifs = " \t\n";
		const char *p = words;
		while (*p) {
			size_t n = strcspn(p, ifs);
			if (n && n >= pl && strncmp(p, pre, pl) == 0)
				strv_add(&out, xstrndup(p, n));
			p += n;
			if (*p)
				p++;
		}
	}
	struct sbuf b = {0};
	for (size_t k = 0; k < out.n; k++) {
		sb_adds(&b, out.v[k]);
		sb_addc(&b, '\n');
	}
	if (b.len)
		bi_out(1, b.s, b.len);
	sb_free(&b);
	int st = out.n ? 0 : 1;
	strv_free(&out);
	return st;
}

static int
b_complete(struct sh_shell *sh, int argc, char **argv)
{
	return 0;
}

static const struct sh_builtin builtins[] = {
	{":", b_true, true},         {".", b_source, true},      {"[", b_test, false},
	{"alias", b_alias, false},   {"bash", b_nested, false},  {"break", b_break, true},
	{"builtin", b_builtin, false}, {"cd", b_cd, false}, {"dirs", b_dirs, false}, {"compgen", b_compgen, false}, {"complete", b_complete, false}, {"hash", b_hash, false}, {"pushd", b_pushd, false}, {"popd", b_popd, false},      {"command", b_command, false},
	{"continue", b_break, true}, {"dash", b_nested, false},  {"declare", b_declare, false},
	{"echo", b_echo, false},     {"eval", b_eval, true},     {"exec", b_exec, true},
	{"exit", b_exit, true},      {"export", b_export, true}, {"false", b_false, false},
	{"getopts", b_getopts, false}, {"kill", b_kill, false},  {"let", b_let, false},
	{"local", b_declare, false}, {"mapfile", b_mapfile, false}, {"readarray", b_mapfile, false},
	{"printf", b_printf, false}, {"pwd", b_pwd, false},
	{"read", b_read, false},     {"readonly", b_export, true}, {"return", b_return, true},
	{"set", b_set, true},        {"sh", b_nested, false},    {"shift", b_shift, true},
	{"shopt", b_shopt, false},   {"source", b_source, false}, {"test", b_test, false},
	{"times", b_times, true},    {"trap", b_trap, true},     {"true", b_true, false},
	{"type", b_type, false},     {"typeset", b_declare, false}, {"umask", b_umask, false},
	{"unalias", b_unalias, false}, {"unset", b_unset, true}, {"wait", b_wait, false},
	{"jobs", b_jobs, false},     {"fg", b_fg, false},        {"bg", b_bg, false},
	{"disown", b_disown, false},
	{NULL, NULL, false},
};

/* The builtins' names, one by one (NULL past the last): the line editor's completion. */
const char *
builtin_name(size_t i)
{
	return i < sizeof(builtins) / sizeof(*builtins) ? builtins[i].name : NULL;
}

/*
 * `/bin/sh`, `/usr/bin/bash` …: in a box these paths are box's shell alias
 * (docs/box-shell.8.md), so a shell named by its path runs as the interpreter
 * itself, as `sh` does, and is never looked up as a host program (no [tool]
 * could start the alias). The shell names the nested builtin takes.
 */
static const char *
shell_by_path(const char *name)
{
	static const char *const dirs[] = { "/bin/", "/usr/bin/" };
	static const char *const shells[] = { "sh", "bash", "dash" };

	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		size_t l = strlen(dirs[d]);
		if (strncmp(name, dirs[d], l) != 0)
			continue;
		for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++)
			if (strcmp(name + l, shells[i]) == 0)
				return shells[i];
	}
	return NULL;
}

const struct sh_builtin *
builtin_find(const char *name)
{
	const char *shell = shell_by_path(name);
	if (shell)
		name = shell;
	/* a small linear table: the names are short; first letters filter */
	for (const struct sh_builtin *b = builtins; b->name; b++)
		if (b->name[0] == name[0] && strcmp(b->name, name) == 0)
			return b;
	static struct sh_builtin w;
	sh_builtin_fn fn;
	if (wrappers_find(name, &fn)) {
		w.name = name;
		w.fn = fn;
		w.special = false;
		return &w;
	}
	return NULL;
}
