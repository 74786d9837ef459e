/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vars.c — the shell's state: variables (scalars, indexed and associative arrays, with
 * export/readonly/integer flags), function-local scopes (bash's dynamic
 * scoping: `local` saves the caller's variable and the return restores it),
 * positional parameters, functions and aliases; small string helpers.
 *
 * Trusts: nothing in names or values (they come from the script); a value
 * longer than SH_MAX_VALUE and an array index above SH_MAX_ARRAY are refused.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sh.h"

struct sh_shell *sh_current;

/* Characters are bytes unless the locale names UTF-8 (as bash under LC_ALL=C). */
bool
sh_utf8_locale(struct sh_shell *sh)
{
	static const char *const names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
	for (int i = 0; i < 3; i++) {
		const char *v = var_value(sh, names[i]);
		if (v && *v)
			return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
	}
	return false;
}

/* ---- the stack ---- */

/*
 * The caps on nesting count levels (1000 function calls, 1000 nested
 * compound commands...), but what a level costs on the stack depends on
 * what it nests (a function whose body is a case in an if in a while) and
 * on the build (a sanitizer's frames are twice as large): 1000 such calls
 * overflowed 8 MiB. So every recursion also checks the stack itself: below
 * SH_STACK_RESERVE of the end of this thread's stack, the script ends with
 * an error instead of the process with SIGSEGV. The reserve covers what may
 * run below a check (a command substitution's 64 KiB buffer, libc, a
 * sanitizer's report).
 */
#define SH_STACK_RESERVE (512u << 10)

/*
 * The main thread's stack, when FRAME is on it, without /proc/self/maps (glibc's
 * pthread_getattr_np reads and parses it for the main thread: a tenth of `box-sh -c
 * true`): *LO, the lowest address it may grow to, and *SIZE. The kernel puts the
 * executable's name (AT_EXECFN) at the top of that stack, so the stack ends on the page
 * boundary right above it, and it may grow to RLIMIT_STACK below its end. False: not
 * known here (no AT_EXECFN, an unlimited stack, FRAME on another thread's stack).
 */
static bool
main_stack(uintptr_t frame, uintptr_t *lo, size_t *size)
{
	const char *name = (const char *)getauxval(AT_EXECFN);
	uintptr_t page = getauxval(AT_PAGESZ);
	struct rlimit rl;
	if (!name || !page || (page & (page - 1)) || getrlimit(RLIMIT_STACK, &rl) < 0 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return false;
	uintptr_t end = ((uintptr_t)name + strlen(name) + 1 + page - 1) & ~(page - 1);
	if (rl.rlim_cur >= end || frame >= end || frame < end - rl.rlim_cur)
		return false;
	*lo = end - rl.rlim_cur;
	*size = rl.rlim_cur;
	return true;
}

bool
sh_stack_low(void)
{
	static __thread uintptr_t floor_; /* lowest address a check accepts; 1: unknown */
	if (!floor_) {
		uintptr_t lo = 0;
		size_t size = 0;
		floor_ = 1;
		if (!main_stack((uintptr_t)__builtin_frame_address(0), &lo, &size)) {
			/* another thread's stack (or an unlimited one): glibc knows it */
			pthread_attr_t at;
			void *p = NULL;
			if (pthread_getattr_np(pthread_self(), &at) == 0) {
				if (pthread_attr_getstack(&at, &p, &size) == 0)
					lo = (uintptr_t)p;
				else
					size = 0;
				pthread_attr_destroy(&at);
			}
		}
		if (size > 2 * SH_STACK_RESERVE)
			floor_ = lo + SH_STACK_RESERVE;
	}
	/* the frame itself: a sanitizer's fake stack may hold the locals */
	return (uintptr_t)__builtin_frame_address(0) < floor_;
}

bool
sh_stack_exhausted(struct sh_shell *sh)
{
	if (!sh_stack_low())
		return false;
	if (sh->jump != J_EXIT)
		sh_err(sh, "maximum nesting level exceeded: the stack is used up");
	sh->jump = J_EXIT;
	sh->jump_n = 1;
	return true;
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		static const char m[] = "box-shell: out of memory\n";
		(void)!write(2, m, sizeof m - 1);
		_exit(125);
	}
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		static const char m[] = "box-shell: out of memory\n";
		(void)!write(2, m, sizeof m - 1);
		_exit(125);
	}
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void
sb_addn(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap * 2 : 64;
		while (c < b->len + n + 1)
			c *= 2;
		b->s = xrealloc(b->s, c);
		b->cap = c;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void
sb_adds(struct sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

void
sb_addc(struct sbuf *b, char c)
{
	if (b->len + 2 > b->cap) {
		size_t cc = b->cap ? b->cap * 2 : 64;
		b->s = xrealloc(b->s, cc);
		b->cap = cc;
	}
	b->s[b->len++] = c;
	b->s[b->len] = 0;
}

char *
sb_take(struct sbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void
sb_free(struct sbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

void
strv_add(struct strv *a, char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 8;
		a->v = xrealloc(a->v, a->cap * sizeof(char *));
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void
strv_free(struct strv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

static unsigned
hash(const char *s, size_t n)
{
	unsigned h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + (unsigned char)s[i];
	return h;
}

struct var *
var_getn(struct sh_shell *sh, const char *name, size_t n)
{
	for (struct var *v = sh->vars[hash(name, n) & 255]; v; v = v->next)
		if (strncmp(v->name, name, n) == 0 && v->name[n] == 0)
			return v;
	return NULL;
}

struct var *
var_get(struct sh_shell *sh, const char *name)
{
	return var_getn(sh, name, strlen(name));
}

static struct var *
var_create(struct sh_shell *sh, const char *name)
{
	struct var *v = var_get(sh, name);
	if (v)
		return v;
	v = xmalloc(sizeof *v);
	memset(v, 0, sizeof *v);
	v->name = xstrdup(name);
	v->seq = ++sh->var_seq;
	unsigned h = hash(name, strlen(name)) & 255;
	v->next = sh->vars[h];
	sh->vars[h] = v;
	return v;
}

/* ---- associative arrays (bash's hash table, for bash's order) ---- */

static unsigned
assoc_hash(const char *s)
{
	unsigned h = 2166136261u; /* FNV-1, 32 bits: bash's hash_string */
	for (; *s; s++) {
		h *= 16777619u;
		h ^= (unsigned)(unsigned char)*s;
	}
	return h;
}

static struct assoc *
assoc_new(void)
{
	struct assoc *a = xmalloc(sizeof *a);
	a->nb = 1024;
	a->n = 0;
	a->b = xmalloc(a->nb * sizeof *a->b);
	memset(a->b, 0, a->nb * sizeof *a->b);
	return a;
}

static void
assoc_free(struct assoc *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nb; i++)
		for (struct assoc_ent *e = a->b[i], *nx; e; e = nx) {
			nx = e->next;
			free(e->key);
			free(e->val);
			free(e);
		}
	free(a->b);
	free(a);
}

static struct assoc_ent *
assoc_find(const struct assoc *a, const char *key)
{
	if (!a)
		return NULL;
	for (struct assoc_ent *e = a->b[assoc_hash(key) & (a->nb - 1)]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* KEY (new) at the head of its bucket, VAL owned; four times the buckets once
 * there are twice as many keys (each moved to the head of its new bucket,
 * walking the old ones in order, as bash). */
static void
assoc_insert(struct assoc *a, char *key, char *val)
{
	struct assoc_ent *e = xmalloc(sizeof *e);
	size_t bi = assoc_hash(key) & (a->nb - 1);
	*e = (struct assoc_ent){.next = a->b[bi], .key = key, .val = val};
	a->b[bi] = e;
	if (++a->n < a->nb * 2)
		return;
	size_t nb = a->nb * 4;
	struct assoc_ent **b = xmalloc(nb * sizeof *b);
	memset(b, 0, nb * sizeof *b);
	for (size_t i = 0; i < a->nb; i++)
		for (struct assoc_ent *x = a->b[i], *nx; x; x = nx) {
			nx = x->next;
			size_t j = assoc_hash(x->key) & (nb - 1);
			x->next = b[j];
			b[j] = x;
		}
	free(a->b);
	a->b = b;
	a->nb = nb;
}

static struct assoc *
assoc_copy(const struct assoc *a)
{
	if (!a)
		return NULL;
	struct assoc *c = xmalloc(sizeof *c);
	c->nb = a->nb;
	c->n = a->n;
	c->b = xmalloc(a->nb * sizeof *c->b);
	for (size_t i = 0; i < a->nb; i++) {
		struct assoc_ent **tail = &c->b[i];
		for (const struct assoc_ent *e = a->b[i]; e; e = e->next) {
			struct assoc_ent *x = xmalloc(sizeof *x);
			*x = (struct assoc_ent){.key = xstrdup(e->key), .val = xstrdup(e->val)};
			*tail = x;
			tail = &x->next;
		}
		*tail = NULL;
	}
	return c;
}

const char *
assoc_get(const struct var *v, const char *key)
{
	struct assoc_ent *e = (v->flags & V_ASSOC) ? assoc_find(v->as, key) : NULL;
	return e ? e->val : NULL;
}

bool
assoc_unset(struct var *v, const char *key)
{
	if (!(v->flags & V_ASSOC) || !v->as)
		return false;
	struct assoc *a = v->as;
	for (struct assoc_ent **pp = &a->b[assoc_hash(key) & (a->nb - 1)]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->key, key) == 0) {
			struct assoc_ent *e = *pp;
			*pp = e->next;
			free(e->key);
			free(e->val);
			free(e);
			a->n--;
			return true;
		}
	return false;
}

void
var_elems(const struct var *v, struct strv *keys, struct strv *vals)
{
	if (v->flags & V_ASSOC) {
		if (!v->as)
			return;
		for (size_t i = 0; i < v->as->nb; i++)
			for (const struct assoc_ent *e = v->as->b[i]; e; e = e->next) {
				if (keys)
					strv_add(keys, xstrdup(e->key));
				if (vals)
					strv_add(vals, xstrdup(e->val));
			}
		return;
	}
	if (!(v->flags & V_ARRAY)) {
		if (v->val) {
			if (keys)
				strv_add(keys, xstrdup("0"));
			if (vals)
				strv_add(vals, xstrdup(v->val));
		}
		return;
	}
	for (size_t i = 0; i < v->narr; i++)
		if (v->arr[i]) {
			if (keys) {
				char b[32];
				snprintf(b, sizeof b, "%zu", i);
				strv_add(keys, xstrdup(b));
			}
			if (vals)
				strv_add(vals, xstrdup(v->arr[i]));
		}
}

static void
var_clear_value(struct var *v)
{
	assoc_free(v->as);
	v->as = NULL;
	free(v->val);
	v->val = NULL;
	for (size_t i = 0; i < v->narr; i++)
		free(v->arr[i]);
	free(v->arr);
	v->arr = NULL;
	v->narr = 0;
}

/* Dynamic variables. */
static char dynbuf[64];

const char *
var_value(struct sh_shell *sh, const char *name)
{
	struct var *v = var_get(sh, name);
	if (!v) {
		if (strcmp(name, "RANDOM") == 0) {
			sh->random_state = sh->random_state * 1103515245u + 12345u;
			snprintf(dynbuf, sizeof dynbuf, "%u", (sh->random_state >> 16) & 0x7fff);
			return dynbuf;
		}
		if (strcmp(name, "LINENO") == 0) {
			snprintf(dynbuf, sizeof dynbuf, "%d", sh->lineno);
			return dynbuf;
		}
		if (strcmp(name, "SECONDS") == 0) {
			snprintf(dynbuf, sizeof dynbuf, "%ld", (long)(time(NULL) - (time_t)sh->start_time));
			return dynbuf;
		}
		if (strcmp(name, "BASHPID") == 0) {
			snprintf(dynbuf, sizeof dynbuf, "%ld", (long)getpid());
			return dynbuf;
		}
		if (strcmp(name, "EPOCHSECONDS") == 0 || strcmp(name, "EPOCHREALTIME") == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			if (name[5] == 'S')
				snprintf(dynbuf, sizeof dynbuf, "%lld", (long long)ts.tv_sec);
			else
				snprintf(dynbuf, sizeof dynbuf, "%lld.%06ld", (long long)ts.tv_sec,
					 ts.tv_nsec / 1000);
			return dynbuf;
		}
		if (strcmp(name, "BASH_ARGV0") == 0)
			return sh->arg0;
		if (strcmp(name, "BASH_COMMAND") == 0)
			return sh->bash_command ? sh->bash_command : "";
		return NULL;
	}
	if (v->flags & V_ASSOC)
		return assoc_get(v, "0");
	if (v->flags & V_ARRAY)
		return v->narr > 0 ? v->arr[0] : NULL;
	if (!v->val && name[0] == 'B' && strcmp(name, "BASH_ARGV0") == 0)
		return sh->arg0; /* assigned: the value went to $0 */
	return v->val;
}

static int
check_len(struct sh_shell *sh, const char *name, const char *val)
{
	if (val && strlen(val) > SH_MAX_VALUE) {
		sh_err(sh, "%s: value too long (max %u bytes)", name, SH_MAX_VALUE);
		return -1;
	}
	return 0;
}


/*
 * VAL as variable V keeps it (malloc'd): evaluated for declare -i, cased for
 * declare -u -l -c (ASCII letters, as bash in the C locale). NULL: the
 * evaluation failed (its message printed).
 */
static char *
attr_value(struct sh_shell *sh, const struct var *v, const char *val)
{
	if (v->flags & V_INTEGER) {
		intmax_t r;
		if (arith_eval(sh, val, &r) < 0)
			return NULL;
		char b[32];
		snprintf(b, sizeof b, "%jd", r);
		return xstrdup(b);
	}
	char *nv = xstrdup(val);
	if (v->flags & V_CASE)
		for (char *p = nv; *p; p++) {
			unsigned char c = (unsigned char)*p;
			if (c >= 0x80)
				continue;
			if ((v->flags & V_UPPER) || ((v->flags & V_CAPCASE) && p == nv))
				*p = (char)toupper(c);
			else
				*p = (char)tolower(c);
		}
	return nv;
}

int
var_set(struct sh_shell *sh, const char *name, const char *val, int flags)
{
	struct var *v = var_get(sh, name);
	if (v && (v->flags & V_READONLY)) {
		sh_err(sh, "%s: readonly variable", name);
		if (sh->dash_errors) /* dash: a fatal error */
			sh_fatal(sh, SH_FATAL_ERROR);
		return -1;
	}
	if (check_len(sh, name, val) < 0)
		return -1;
	if (v && (v->flags & V_ASSOC)) { /* a=x on an associative array: a[0]=x */
		v->flags |= flags & (V_EXPORT | V_READONLY);
		return val ? assoc_set(sh, name, "0", val) : 0;
	}
	if (!v)
		v = var_create(sh, name);
	v->flags |= flags & V_INTEGER; /* declare -i n=2+3 evaluates */
	if (flags & V_CASE) /* declare -u n=x: the last of -u -l -c holds */
		v->flags = (v->flags & ~V_CASE) | (flags & V_CASE);
	char *nv = NULL;
	if (val) {
		if (!(nv = attr_value(sh, v, val)))
			return -1;
	}
	if (v->flags & V_ARRAY) {
		if (nv) {
			if (v->narr == 0) {
				v->arr = xmalloc(sizeof(char *));
				v->narr = 1;
			} else
				free(v->arr[0]);
			v->arr[0] = nv;
		}
	} else if (nv || !(flags & V_UNSET_PLACEHOLDER)) {
		if (nv || val) {
			free(v->val);
			v->val = nv;
		}
	}
	v->flags |= flags & (V_EXPORT | V_READONLY | V_INTEGER);
	if (!sh->importing)
		v->flags |= V_ASSIGNED;
	if (sh->opt_a)
		v->flags |= V_EXPORT;
	if (v->flags & V_EXPORT)
		sh->env_dirty = true;
	if (strcmp(name, "RANDOM") == 0 && val)
		sh->random_state = (unsigned)strtoul(val, NULL, 10);
	if (strcmp(name, "POSIXLY_CORRECT") == 0 && !sh->importing)
		sh->opt_posix = true; /* bash: assigning it turns posix mode on */
	if (strcmp(name, "BASH_ARGV0") == 0 && val) {
		/* bash: an assignment sets $0; the variable then reads $0 again */
		free(sh->arg0);
		sh->arg0 = xstrdup(val);
		var_clear_value(v);
	}
	if (strcmp(name, "OPTIND") == 0)
		sh->getopts_sub = 0; /* an assignment restarts getopts (bash) */
	return 0;
}

int
var_set_elem(struct sh_shell *sh, const char *name, size_t idx, const char *val)
{
	struct var *v = var_get(sh, name);
	if (v && (v->flags & V_READONLY)) {
		sh_err(sh, "%s: readonly variable", name);
		if (sh->dash_errors) /* dash: a fatal error */
			sh_fatal(sh, SH_FATAL_ERROR);
		return -1;
	}
	if (idx > SH_MAX_ARRAY) {
		sh_err(sh, "%s[%zu]: array index too large (max %u)", name, idx, SH_MAX_ARRAY);
		return -1;
	}
	if (check_len(sh, name, val) < 0)
		return -1;
	if (v && (v->flags & V_ASSOC)) {
		char k[32];
		snprintf(k, sizeof k, "%zu", idx);
		return assoc_set(sh, name, k, val);
	}
	if (!v)
		v = var_create(sh, name);
	if (!(v->flags & V_ARRAY)) {
		char *old = v->val;
		v->val = NULL;
		v->flags |= V_ARRAY;
		if (old) {
			v->arr = xmalloc(sizeof(char *));
			v->arr[0] = old;
			v->narr = 1;
		}
	}
	if (idx >= v->narr) {
		v->arr = xrealloc(v->arr, (idx + 1) * sizeof(char *));
		for (size_t i = v->narr; i <= idx; i++)
			v->arr[i] = NULL;
		v->narr = idx + 1;
	}
	char *nv;
	if (!(nv = attr_value(sh, v, val)))
		return -1;
	free(v->arr[idx]);
	v->arr[idx] = nv;
	if (v->flags & V_EXPORT)
		sh->env_dirty = true;
	return 0;
}

int
assoc_set(struct sh_shell *sh, const char *name, const char *key, const char *val)
{
	struct var *v = var_get(sh, name);
	if (v && (v->flags & V_READONLY)) {
		sh_err(sh, "%s: readonly variable", name);
		return -1;
	}
	if (check_len(sh, name, val) < 0)
		return -1;
	if (!v)
		v = var_create(sh, name);
	if (!(v->flags & V_ASSOC)) {
		var_clear_value(v);
		v->flags = (v->flags & ~V_ARRAY) | V_ASSOC;
	}
	char *nv;
	if (!(nv = attr_value(sh, v, val)))
		return -1;
	if (!v->as)
		v->as = assoc_new();
	struct assoc_ent *e = assoc_find(v->as, key);
	if (e) {
		free(e->val);
		e->val = nv;
	} else if (v->as->n >= SH_MAX_ARRAY) {
		sh_err(sh, "%s[%s]: too many elements (max %u)", name, key, SH_MAX_ARRAY);
		free(nv);
		return -1;
	} else
		assoc_insert(v->as, xstrdup(key), nv);
	if (!sh->importing)
		v->flags |= V_ASSIGNED;
	if (v->flags & V_EXPORT)
		sh->env_dirty = true;
	return 0;
}

int
var_set_empty_assoc(struct sh_shell *sh, const char *name, bool set)
{
	struct var *v = var_get(sh, name);
	if (v && (v->flags & V_READONLY)) {
		sh_err(sh, "%s: readonly variable", name);
		return -1;
	}
	if (!v)
		v = var_create(sh, name);
	var_clear_value(v);
	v->flags = (v->flags & ~V_ARRAY) | V_ASSOC;
	if (set)
		v->as = assoc_new();
	if (v->flags & V_EXPORT)
		sh->env_dirty = true;
	return 0;
}

size_t
var_array_count(const struct var *v)
{
	if (v->flags & V_ASSOC)
		return v->as ? v->as->n : 0;
	if (!(v->flags & V_ARRAY))
		return v->val ? 1 : 0;
	size_t c = 0;
	for (size_t i = 0; i < v->narr; i++)
		if (v->arr[i])
			c++;
	return c;
}

static void
var_destroy(struct sh_shell *sh, const char *name)
{
	unsigned h = hash(name, strlen(name)) & 255;
	for (struct var **pp = &sh->vars[h]; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) == 0) {
			struct var *v = *pp;
			*pp = v->next;
			if (v->flags & V_EXPORT)
				sh->env_dirty = true;
			var_clear_value(v);
			free(v->name);
			free(v);
			return;
		}
	}
}

/* bash's unbind_variable: getopts clears OPTARG so, readonly or not */
void
var_unbind(struct sh_shell *sh, const char *name)
{
	var_destroy(sh, name);
}

int
var_unset(struct sh_shell *sh, const char *name)
{
	struct var *v = var_get(sh, name);
	if (!v)
		return 0;
	if (v->flags & V_READONLY) {
		sh_err(sh, "unset: %s: cannot unset: readonly variable", name);
		if (sh->dash_errors) /* dash: a fatal error */
			sh_fatal(sh, SH_FATAL_ERROR);
		return -1;
	}
	/* In a function scope that saved it, keep a placeholder so that the
	 * caller's value comes back on return (var_destroy is enough: the saved
	 * copy is restored by frame_pop). */
	var_destroy(sh, name);
	return 0;
}

int
var_set_empty_array(struct sh_shell *sh, const char *name)
{
	struct var *v = var_get(sh, name);
	if (v && (v->flags & V_READONLY)) {
		sh_err(sh, "%s: readonly variable", name);
		return -1;
	}
	if (!v)
		v = var_create(sh, name);
	var_clear_value(v);
	v->flags |= V_ARRAY;
	if (v->flags & V_EXPORT)
		sh->env_dirty = true;
	return 0;
}

/* A deep copy: the copy shares no string or array with V (every field that
 * owns memory is set here, none is inherited from *v). */
static struct var *
var_copy(const struct var *v)
{
	struct var *c = xmalloc(sizeof *c);
	*c = (struct var){.flags = v->flags, .narr = v->narr};
	c->name = xstrdup(v->name);
	c->val = v->val ? xstrdup(v->val) : NULL;
	c->as = assoc_copy(v->as);
	if (v->narr) {
		c->arr = xmalloc(v->narr * sizeof(char *));
		for (size_t i = 0; i < v->narr; i++)
			c->arr[i] = v->arr[i] ? xstrdup(v->arr[i]) : NULL;
	}
	return c;
}

void
var_local(struct sh_shell *sh, const char *name)
{
	struct frame *f = sh->frame;
	if (!f)
		return;
	for (struct saved_var *s = f->saved; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return; /* already local here */
	struct saved_var *s = xmalloc(sizeof *s);
	s->name = xstrdup(name);
	struct var *v = var_get(sh, name);
	s->old = v ? var_copy(v) : NULL;
	s->next = f->saved;
	f->saved = s;
	if (v) {
		/* A local starts unset-with-no-value, keeping only export. */
		int keep = v->flags & V_EXPORT;
		var_clear_value(v);
		v->flags = keep;
	}
}

void
frame_push(struct sh_shell *sh)
{
	struct frame *f = xmalloc(sizeof *f);
	f->up = sh->frame;
	f->saved = NULL;
	f->getopts_sub = sh->getopts_sub;
	f->getopts_optind = sh->getopts_optind;
	sh->frame = f;
}

void
frame_pop(struct sh_shell *sh)
{
	struct frame *f = sh->frame;
	if (!f)
		return;
	sh->frame = f->up;
	while (f->saved) {
		struct saved_var *s = f->saved;
		f->saved = s->next;
		if (strcmp(s->name, "OPTIND") == 0) {
			sh->getopts_sub = f->getopts_sub;
			sh->getopts_optind = f->getopts_optind;
		}
		var_destroy(sh, s->name);
		if (s->old) {
			unsigned h = hash(s->name, strlen(s->name)) & 255;
			s->old->next = sh->vars[h];
			sh->vars[h] = s->old;
		}
		sh->env_dirty = true;
		free(s->name);
		free(s);
	}
	free(f);
}

/* Unlinks NAME's variable from the table (NULL when it has none). */
static struct var *
var_detach(struct sh_shell *sh, const char *name)
{
	unsigned h = hash(name, strlen(name)) & 255;
	for (struct var **pp = &sh->vars[h]; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) == 0) {
			struct var *v = *pp;
			*pp = v->next;
			v->next = NULL;
			return v;
		}
	}
	return NULL;
}

/* The table's NAME and the one a frame saved trade places. */
static void
var_swap_saved(struct sh_shell *sh, struct saved_var *s)
{
	struct var *visible = var_detach(sh, s->name);
	if (s->old) {
		unsigned h = hash(s->name, strlen(s->name)) & 255;
		s->old->next = sh->vars[h];
		sh->vars[h] = s->old;
	}
	s->old = visible;
	sh->env_dirty = true;
}

struct saved_var *
var_global_begin(struct sh_shell *sh, const char *name)
{
	/* the global value is the one the outermost frame that made NAME
	 * local saved */
	struct saved_var *outer = NULL;
	for (struct frame *f = sh->frame; f; f = f->up)
		for (struct saved_var *s = f->saved; s; s = s->next)
			if (strcmp(s->name, name) == 0)
				outer = s;
	if (outer)
		var_swap_saved(sh, outer);
	return outer;
}

void
var_global_end(struct sh_shell *sh, struct saved_var *slot)
{
	if (slot)
		var_swap_saved(sh, slot);
}

void
var_foreach(struct sh_shell *sh, void (*fn)(struct var *, void *), void *arg)
{
	/* sorted by name */
	size_t n = 0;
	for (int i = 0; i < 256; i++)
		for (struct var *v = sh->vars[i]; v; v = v->next)
			n++;
	struct var **a = xmalloc((n + 1) * sizeof *a);
	n = 0;
	for (int i = 0; i < 256; i++)
		for (struct var *v = sh->vars[i]; v; v = v->next)
			a[n++] = v;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(a[j - 1]->name, a[j]->name) > 0; j--) {
			struct var *t = a[j];
			a[j] = a[j - 1];
			a[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++)
		fn(a[i], arg);
	free(a);
}

char **
sh_assigned_environ(struct sh_shell *sh)
{
	size_t n = 0, cap = 8;
	char **e = xmalloc(cap * sizeof *e);
	for (int i = 0; i < 256; i++)
		for (struct var *v = sh->vars[i]; v; v = v->next) {
			if ((v->flags & (V_EXPORT | V_ASSIGNED)) != (V_EXPORT | V_ASSIGNED))
				continue;
			const char *val = (v->flags & V_ARRAY) ? (v->narr ? v->arr[0] : NULL) : v->val;
			if (!val)
				continue;
			if (n + 2 > cap) {
				cap *= 2;
				e = xrealloc(e, cap * sizeof *e);
			}
			size_t a = strlen(v->name), b = strlen(val);
			char *s = xmalloc(a + b + 2);
			memcpy(s, v->name, a);
			s[a] = '=';
			memcpy(s + a + 1, val, b + 1);
			e[n++] = s;
		}
	e[n] = NULL;
	return e;
}

void
strv_free_array(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/*
 * dash's environment order (the sh/dash dialect): dash lists its variables by its hash
 * table of 39 chains (hash: the first byte times 16 plus every byte of the name), each
 * chain its built-in variables first, then the others in the order they were made.
 */
static unsigned
dash_env_chain(const char *name)
{
	unsigned h = (unsigned)(unsigned char)name[0] << 4;
	for (const char *p = name; *p; p++)
		h += (unsigned char)*p;
	return h % 39;
}

static int
dash_builtin_rank(const char *name)
{
	static const char *const builtin[] = { "IFS", "MAIL", "MAILPATH", "PATH", "PS1",
					       "PS2", "PS4", "OPTIND", "LINENO" };
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (strcmp(name, builtin[i]) == 0)
			return (int)i;
	return -1;
}

static bool
dash_env_before(const struct var *a, const struct var *b)
{
	unsigned ca = dash_env_chain(a->name), cb = dash_env_chain(b->name);
	if (ca != cb)
		return ca < cb;
	int ra = dash_builtin_rank(a->name), rb = dash_builtin_rank(b->name);
	if (ra >= 0 || rb >= 0)
		return ra >= 0 && (rb < 0 || ra < rb);
	return a->seq < b->seq;
}

char **
sh_environ(struct sh_shell *sh)
{
	if (sh->envp_cache && !sh->env_dirty)
		return sh->envp_cache;
	if (sh->envp_cache) {
		for (char **e = sh->envp_cache; *e; e++)
			free(*e);
		free(sh->envp_cache);
	}
	size_t n = 0, cap = 32;
	struct var **vs = xmalloc(cap * sizeof *vs);
	for (int i = 0; i < 256; i++)
		for (struct var *v = sh->vars[i]; v; v = v->next) {
			const char *val = (v->flags & V_ARRAY) ? (v->narr ? v->arr[0] : NULL) : v->val;
			if (!(v->flags & V_EXPORT) || !val)
				continue;
			if (n + 1 > cap) {
				cap *= 2;
				vs = xrealloc(vs, cap * sizeof *vs);
			}
			vs[n++] = v;
		}
	if (sh->dash_errors) /* insertion sort: stable, no libc qsort (sysinfo) */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && dash_env_before(vs[j], vs[j - 1]); j--) {
				struct var *t = vs[j];
				vs[j] = vs[j - 1];
				vs[j - 1] = t;
			}
	char **e = xmalloc((n + 1) * sizeof *e);
	for (size_t i = 0; i < n; i++) {
		struct var *v = vs[i];
		const char *val = (v->flags & V_ARRAY) ? v->arr[0] : v->val;
		size_t a = strlen(v->name), b = strlen(val);
		char *s = xmalloc(a + b + 2);
		memcpy(s, v->name, a);
		s[a] = '=';
		memcpy(s + a + 1, val, b + 1);
		e[i] = s;
	}
	free(vs);
	e[n] = NULL;
	sh->envp_cache = e;
	sh->env_dirty = false;
	return e;
}

void
set_positional(struct sh_shell *sh, int argc, char **argv)
{
	char **nv = xmalloc((size_t)(argc + 1) * sizeof(char *));
	for (int i = 0; i < argc; i++)
		nv[i] = xstrdup(argv[i]);
	nv[argc] = NULL;
	for (int i = 0; i < sh->argc; i++)
		free(sh->argv[i]);
	free(sh->argv);
	sh->argv = nv;
	sh->argc = argc;
}

struct func *
func_get(struct sh_shell *sh, const char *name)
{
	for (struct func *f = sh->funcs[hash(name, strlen(name)) & 63]; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

void
func_set(struct sh_shell *sh, const char *name, struct node *body)
{
	struct func *f = func_get(sh, name);
	if (!f) {
		f = xmalloc(sizeof *f);
		memset(f, 0, sizeof *f);
		f->name = xstrdup(name);
		unsigned h = hash(name, strlen(name)) & 63;
		f->next = sh->funcs[h];
		sh->funcs[h] = f;
	}
	node_release(f->body);
	f->body = body;
}

void
func_unset(struct sh_shell *sh, const char *name)
{
	unsigned h = hash(name, strlen(name)) & 63;
	for (struct func **pp = &sh->funcs[h]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct func *f = *pp;
			*pp = f->next;
			node_release(f->body);
			free(f->name);
			free(f);
			return;
		}
}

const char *
alias_get(struct sh_shell *sh, const char *name)
{
	for (struct alias *a = sh->aliases; a; a = a->next)
		if (strcmp(a->name, name) == 0)
			return a->val;
	return NULL;
}

void
alias_set(struct sh_shell *sh, const char *name, const char *val)
{
	for (struct alias *a = sh->aliases; a; a = a->next)
		if (strcmp(a->name, name) == 0) {
			free(a->val);
			a->val = xstrdup(val);
			return;
		}
	struct alias *a = xmalloc(sizeof *a);
	a->name = xstrdup(name);
	a->val = xstrdup(val);
	/* keep sorted */
	struct alias **pp = &sh->aliases;
	while (*pp && strcmp((*pp)->name, name) < 0)
		pp = &(*pp)->next;
	a->next = *pp;
	*pp = a;
}

int
alias_unset(struct sh_shell *sh, const char *name)
{
	for (struct alias **pp = &sh->aliases; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct alias *a = *pp;
			*pp = a->next;
			free(a->name);
			free(a->val);
			free(a);
			return 0;
		}
	return -1;
}

struct sh_shell *
sh_new(struct sh_decider *d, char *const *envp, const char *arg0, int argc, char **argv)
{
	struct sh_shell *sh = xmalloc(sizeof *sh);
	memset(sh, 0, sizeof *sh);
	sh->decider = d;
	sh->root_fd = -1;
	/* a script starts with its stdin, stdout and stderr (fsops.h) */
	for (int fd = 0; fd <= 2; fd++)
		sh_fdset_put(&sh->script_fds, fd, true);
	sh->fs.script_fds = &sh->script_fds;
	sh->arg0 = xstrdup(arg0 ? arg0 : "box-sh");
	set_positional(sh, argc, argv);
	sh->rootpid = getpid();
	for (int s = 1; s < 65; s++) {
		struct sigaction sa;
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sh->ignored_at_entry |= 1ull << (s - 1);
	}
	sh->start_time = (double)time(NULL);
	sh->random_state = (unsigned)getpid() ^ (unsigned)time(NULL);
	sh->importing = true;
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || !is_name(*e, (size_t)(eq - *e)))
			continue;
		char *name = xstrndup(*e, (size_t)(eq - *e));
		var_set(sh, name, eq + 1, V_EXPORT);
		free(name);
	}
	sh->importing = false;
	if (!var_get(sh, "IFS"))
		var_set(sh, "IFS", " \t\n", 0);
	if (!var_get(sh, "PS4"))
		var_set(sh, "PS4", "+ ", 0);
	if (!var_get(sh, "OPTIND"))
		var_set(sh, "OPTIND", "1", 0);
	char buf[32];
	snprintf(buf, sizeof buf, "%ld", (long)getppid());
	var_set(sh, "PPID", buf, 0);
	/* bash's UID and EUID: set by the shell (not taken from the environment), readonly */
	snprintf(buf, sizeof buf, "%lu", (unsigned long)getuid());
	var_unset(sh, "UID");
	var_set(sh, "UID", buf, V_READONLY);
	snprintf(buf, sizeof buf, "%lu", (unsigned long)geteuid());
	var_unset(sh, "EUID");
	var_set(sh, "EUID", buf, V_READONLY);
	sh->env_dirty = true;
	return sh;
}

void
sh_fatal(struct sh_shell *sh, enum sh_fatal kind)
{
	sh->jump = J_EXIT;
	if (sh->dash_errors)
		sh->jump_n = 2;
	else if (kind == SH_FATAL_UNSET && sh->command_string && !sh->in_subshell)
		sh->jump_n = 127;
	else
		sh->jump_n = 1;
}

void
sh_free(struct sh_shell *sh)
{
	if (!sh)
		return;
	if (sh->dirstack) {
		strv_free(sh->dirstack);
		free(sh->dirstack);
	}
	for (int i = 0; i < 256; i++)
		while (sh->vars[i]) {
			struct var *v = sh->vars[i];
			sh->vars[i] = v->next;
			var_clear_value(v);
			free(v->name);
			free(v);
		}
	for (int i = 0; i < 64; i++)
		while (sh->funcs[i]) {
			struct func *f = sh->funcs[i];
			sh->funcs[i] = f->next;
			node_release(f->body);
			free(f->name);
			free(f);
		}
	while (sh->aliases) {
		struct alias *a = sh->aliases;
		sh->aliases = a->next;
		free(a->name);
		free(a->val);
		free(a);
	}
	while (sh->frame)
		frame_pop(sh);
	for (int i = 0; i < sh->argc; i++)
		free(sh->argv[i]);
	free(sh->argv);
	free(sh->arg0);
	free(sh->bash_command);
	for (int i = 0; i < SH_NTRAP; i++)
		free(sh->traps[i]);
	for (int i = 0; i < sh->nfunc_names; i++)
		free(sh->func_names[i]);
	free(sh->func_names);
	if (sh->envp_cache) {
		for (char **e = sh->envp_cache; *e; e++)
			free(*e);
		free(sh->envp_cache);
	}
	while (sh->jobs) {
		struct bgjob *j = sh->jobs;
		sh->jobs = j->next;
		free(j);
	}
	free(sh->pipestatus);
	free(sh->cwd);
	free(sh->home);
	free(sh);
}
