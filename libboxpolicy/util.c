/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c — libboxpolicy's small building blocks: the arena, a growable
 * buffer, the atom table (interned names) and the diagnostics list.
 *
 * Trusts: nothing; callers pass sizes, every allocation is checked.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	max_align_t data[];
};

#define ARENA_CHUNK (64u * 1024u)

void *
arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15u) & ~(size_t)15u;
	if (n == 0)
		n = 16;
	struct arena_chunk *c = a->head;
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (a->cap && a->total + size > a->cap)
			return NULL;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
		a->total += size;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void
arena_reset(struct arena *a)
{
	struct arena_chunk *c = a->head;
	if (!c)
		return;
	/* Keep the oldest chunk (the last in the list): it is the common size. */
	while (c->next) {
		struct arena_chunk *next = c->next;
		a->total -= c->size;
		free(c);
		c = next;
	}
	c->used = 0;
	a->head = c;
}

void
arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->total = 0;
}

static bool
buf_grow(struct buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + n + 1) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void
buf_put(struct buf *b, const char *s, size_t n)
{
	if (!buf_grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void
buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

void
buf_putc(struct buf *b, char c)
{
	buf_put(b, &c, 1);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static uint32_t
hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

uint32_t
atom_find(const struct atoms *t, const char *s, size_t n)
{
	if (!t->n_slots)
		return UINT32_MAX;
	size_t mask = t->n_slots - 1;
	for (size_t i = hash_bytes(s, n) & mask;; i = (i + 1) & mask) {
		uint32_t slot = t->hash_slots[i];
		if (!slot)
			return UINT32_MAX;
		const char *name = t->names[slot - 1];
		if (strncmp(name, s, n) == 0 && name[n] == 0)
			return slot - 1;
	}
}

uint32_t
atom_intern(struct atoms *t, struct arena *ar, const char *s, size_t n)
{
	uint32_t found = atom_find(t, s, n);
	if (found != UINT32_MAX)
		return found;
	if (t->n >= UINT32_MAX / 4)
		return UINT32_MAX;
	if ((t->n + 1) * 2 > t->n_slots) {
		size_t slots = t->n_slots ? t->n_slots * 2 : 64;
		uint32_t *hs = calloc(slots, sizeof(*hs));
		if (!hs)
			return UINT32_MAX;
		for (size_t k = 0; k < t->n; k++) {
			const char *name = t->names[k];
			size_t i = hash_bytes(name, strlen(name)) & (slots - 1);
			while (hs[i])
				i = (i + 1) & (slots - 1);
			hs[i] = (uint32_t)k + 1;
		}
		free(t->hash_slots);
		t->hash_slots = hs;
		t->n_slots = slots;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		const char **names = realloc(t->names, cap * sizeof(*names));
		if (!names)
			return UINT32_MAX;
		t->names = names;
		t->cap = cap;
	}
	char *copy = arena_strndup(ar, s, n);
	if (!copy)
		return UINT32_MAX;
	t->names[t->n] = copy;
	size_t i = hash_bytes(s, n) & (t->n_slots - 1);
	while (t->hash_slots[i])
		i = (i + 1) & (t->n_slots - 1);
	t->hash_slots[i] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

void
diag_add(struct bp_diags *d, enum bp_severity sev, unsigned line, unsigned col,
	 const char *fmt, ...)
{
	if (!d)
		return;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct diag *nd = realloc(d->d, cap * sizeof(*nd));
		if (!nd)
			return;
		d->d = nd;
		d->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	d->d[d->n++] = (struct diag){ .sev = sev, .line = line, .col = col, .msg = msg };
	if (sev == BP_ERROR)
		d->n_err++;
	else
		d->n_warn++;
}

size_t
bp_diags_count(const struct bp_diags *d)
{
	return d ? d->n : 0;
}

size_t
bp_diags_errors(const struct bp_diags *d)
{
	return d ? d->n_err : 0;
}

size_t
bp_diags_warnings(const struct bp_diags *d)
{
	return d ? d->n_warn : 0;
}

const char *
bp_diag_message(const struct bp_diags *d, size_t i, enum bp_severity *severity, unsigned *line,
		unsigned *col)
{
	if (!d || i >= d->n)
		return NULL;
	if (severity)
		*severity = d->d[i].sev;
	if (line)
		*line = d->d[i].line;
	if (col)
		*col = d->d[i].col;
	return d->d[i].msg;
}

void
bp_diags_free(struct bp_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->d[i].msg);
	free(d->d);
	free(d);
}

/* Encode code point CP (<= 0x10FFFF) as UTF-8 at O (room for 4 bytes); returns the length. */
size_t
bp_utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}
