/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_permits.c — a channel's permitted Decides without an outcome yet
 * (policy_permits.h).
 *
 * Each permit is its packed DecideRequest, on a list from oldest to newest
 * (what the bounds forget first) and in two hash tables: by id (a Record
 * names one) and by content (a peer finds the id of what it decided). The
 * tables grow with the set, so an idle channel costs a few words. Both
 * chains are doubly linked, so taking a permit out costs the same whatever
 * the set holds: a peer that asks the same thing over and over fills one
 * content chain with equal permits, and the bounds forget its oldest on
 * every Decide once the set is full. A content chain is circular and kept
 * oldest first (a new permit joins at its tail), so the first equal permit
 * on it is the oldest. The content table is made by the first
 * policy_permits_take_match and kept from then on: box-policyd, which only
 * takes by id, never hashes what it keeps.
 * Trusts: nothing in the ids (every lookup is checked); the kept
 * DecideRequests were validated by the caller.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy_permits.h"

struct permit {
	struct permit *older, *newer; /* the age list */
	struct permit *next_id, **pprev_id;         /* the id chain (NULL-terminated) */
	struct permit *next_content, *prev_content; /* the content chain (circular) */
	uint64_t id;
	uint64_t content_hash;
	size_t len;                   /* bytes of the packed DecideRequest */
	char *action;                 /* in data, after the packed bytes */
	uint8_t data[];
};

struct policy_permits {
	struct permit *oldest, *newest;
	struct permit **by_id, **by_content; /* by_content: NULL until the first match */
	size_t n_buckets; /* a power of two, or 0 before the first permit */
	size_t count, bytes;
	uint64_t last_id;   /* the highest id a Decide of the channel had */
	bool have_last;
	uint64_t forgotten; /* the highest id the bounds forgot */
	bool have_forgotten;
};

bool
policy_permits_outcome_owed(const Box__DecideRequest *req)
{
	if (!req->action || strcmp(req->action, "net:connect") != 0)
		return true;
	for (size_t i = 0; i < req->n_input; i++)
		if (req->input[i] && req->input[i]->name && strcmp(req->input[i]->name, "ip") == 0)
			return false;
	return true;
}

#define BUCKETS_MIN 16u
#define BUCKETS_MAX 65536u

static uint64_t
id_hash(uint64_t x)
{
	/* splitmix64's finalizer: ids are sequential, buckets must not be */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * The bytes eight at a time (a multiply and a shift each; a byte at a time cost a
 * box-shell loop's [ more than its decision did), the tail zero-padded, the length
 * mixed in. Only a peer's own permits are hashed (box-policyd never hashes), so a
 * collision costs that peer a longer chain, never a wrong match (memcmp decides).
 */
static uint64_t
content_hash(const uint8_t *p, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = 0xcbf29ce484222325ULL ^ (n * k);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (i < n) {
		uint64_t w = 0;
		memcpy(&w, p + i, n - i);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	return id_hash(h);
}

struct policy_permits *
policy_permits_new(void)
{
	return calloc(1, sizeof(struct policy_permits));
}

void
policy_permits_free(struct policy_permits *s)
{
	if (!s)
		return;
	for (struct permit *p = s->oldest, *n; p; p = n) {
		n = p->newer;
		free(p);
	}
	free(s->by_id);
	free(s->by_content);
	free(s);
}

int
policy_permits_next(struct policy_permits *s, uint64_t first, size_t n)
{
	if (n == 0 || (s->have_last && first <= s->last_id) || first > UINT64_MAX - (n - 1))
		return -EPROTO;
	s->last_id = first + (n - 1);
	s->have_last = true;
	return 0;
}

static void
content_insert(struct policy_permits *s, struct permit *p)
{
	/* At the tail of its content chain: the chain stays oldest first. */
	struct permit **c = &s->by_content[p->content_hash & (s->n_buckets - 1)];
	if (!*c) {
		p->next_content = p->prev_content = p;
		*c = p;
	} else {
		struct permit *head = *c, *tail = head->prev_content;
		p->prev_content = tail;
		p->next_content = head;
		tail->next_content = p;
		head->prev_content = p;
	}
}

static void
chains_insert(struct policy_permits *s, struct permit *p)
{
	struct permit **a = &s->by_id[id_hash(p->id) & (s->n_buckets - 1)];
	p->next_id = *a;
	if (*a)
		(*a)->pprev_id = &p->next_id;
	p->pprev_id = a;
	*a = p;
	if (s->by_content)
		content_insert(s, p);
}

/* Room for one more in the tables (growing them as the set grows). */
static int
tables_room(struct policy_permits *s)
{
	size_t want = s->n_buckets ? s->n_buckets : BUCKETS_MIN;
	while (s->count + 1 > 2 * want && want < BUCKETS_MAX)
		want *= 2;
	if (want == s->n_buckets)
		return 0;
	struct permit **ids = calloc(want, sizeof(*ids));
	struct permit **contents = s->by_content ? calloc(want, sizeof(*contents)) : NULL;
	if (!ids || (s->by_content && !contents)) {
		free(ids);
		free(contents);
		return s->n_buckets ? 0 : -ENOMEM; /* longer chains, still correct */
	}
	free(s->by_id);
	free(s->by_content);
	s->by_id = ids;
	s->by_content = contents;
	s->n_buckets = want;
	for (struct permit *p = s->oldest; p; p = p->newer)
		chains_insert(s, p);
	return 0;
}

/* The content table, made once (every permit hashed, oldest first). 0 or -ENOMEM. */
static int
content_index(struct policy_permits *s)
{
	if (s->by_content)
		return 0;
	s->by_content = calloc(s->n_buckets, sizeof(*s->by_content));
	if (!s->by_content)
		return -ENOMEM;
	for (struct permit *p = s->oldest; p; p = p->newer) {
		p->content_hash = content_hash(p->data, p->len);
		content_insert(s, p);
	}
	return 0;
}

static void
remove_permit(struct policy_permits *s, struct permit *p)
{
	*p->pprev_id = p->next_id;
	if (p->next_id)
		p->next_id->pprev_id = p->pprev_id;
	struct permit **c =
		s->by_content ? &s->by_content[p->content_hash & (s->n_buckets - 1)] : NULL;
	if (!c) {
		/* no content table yet */
	} else if (p->next_content == p) {
		*c = NULL;
	} else {
		p->prev_content->next_content = p->next_content;
		p->next_content->prev_content = p->prev_content;
		if (*c == p)
			*c = p->next_content;
	}
	if (p->older)
		p->older->newer = p->newer;
	else
		s->oldest = p->newer;
	if (p->newer)
		p->newer->older = p->older;
	else
		s->newest = p->older;
	s->count--;
	s->bytes -= p->len;
	free(p);
}

static struct permit *
lookup(const struct policy_permits *s, uint64_t id)
{
	if (!s->n_buckets)
		return NULL;
	struct permit *p = s->by_id[id_hash(id) & (s->n_buckets - 1)];
	while (p && p->id != id)
		p = p->next_id;
	return p;
}

/* Keep the packed DecideRequest DATA (PACK: pack REQ there instead) whose action is ACTION. */
static int
add(struct policy_permits *s, uint64_t id, const char *action, const uint8_t *data, size_t len,
    const Box__DecideRequest *pack)
{
	if (lookup(s, id))
		return -EEXIST;
	size_t alen = strlen(action) + 1;
	if (len > SIZE_MAX - sizeof(struct permit) - alen)
		return -ENOMEM;
	struct permit *p = malloc(sizeof(*p) + len + alen);
	if (!p)
		return -ENOMEM;
	if (tables_room(s) < 0) {
		free(p);
		return -ENOMEM;
	}
	*p = (struct permit){ .id = id, .len = len };
	if (pack)
		(void)protobuf_c_message_pack(&pack->base, p->data);
	else
		memcpy(p->data, data, len);
	p->action = (char *)p->data + len;
	memcpy(p->action, action, alen);
	if (s->by_content)
		p->content_hash = content_hash(p->data, len);
	p->older = s->newest;
	if (s->newest)
		s->newest->newer = p;
	else
		s->oldest = p;
	s->newest = p;
	chains_insert(s, p);
	s->count++;
	s->bytes += len;
	/* The bounds: the oldest go first (the new one stays, even alone over the bytes). */
	while (s->oldest != p &&
	       (s->count > BOX_POLICY_PERMITS_MAX || s->bytes > BOX_POLICY_PERMIT_BYTES_MAX)) {
		struct permit *o = s->oldest;
		if (!s->have_forgotten || o->id > s->forgotten)
			s->forgotten = o->id;
		s->have_forgotten = true;
		remove_permit(s, o);
	}
	return 0;
}

int
policy_permits_add(struct policy_permits *s, uint64_t id, const Box__DecideRequest *req)
{
	return add(s, id, req->action, NULL, protobuf_c_message_get_packed_size(&req->base), req);
}

uint8_t *
policy_permits_pack(const Box__DecideRequest *req, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(&req->base);
	uint8_t *p = malloc(*len ? *len : 1);
	if (p)
		(void)protobuf_c_message_pack(&req->base, p);
	return p;
}

int
policy_permits_add_packed(struct policy_permits *s, uint64_t id, const uint8_t *data,
			  size_t len)
{
	/* Its action, from the bytes themselves (policy_permits_pack made them: they unpack). */
	Box__DecideRequest *m = box__decide_request__unpack(NULL, len, data);
	if (!m)
		return -ENOMEM;
	int r = add(s, id, m->action, data, len, NULL);
	box__decide_request__free_unpacked(m, NULL);
	return r;
}

int
policy_permits_add_bytes(struct policy_permits *s, uint64_t id, const char *action,
			 const uint8_t *data, size_t len)
{
	return add(s, id, action, data, len, NULL);
}

int
policy_permits_find(struct policy_permits *s, uint64_t id, const char **action)
{
	const struct permit *p = lookup(s, id);
	if (p) {
		if (action)
			*action = p->action;
		return 0;
	}
	return s->have_forgotten && id <= s->forgotten ? -ESTALE : -ENOENT;
}

int
policy_permits_take(struct policy_permits *s, uint64_t id, Box__DecideRequest **out)
{
	*out = NULL;
	int r = policy_permits_find(s, id, NULL);
	if (r < 0)
		return r;
	struct permit *p = lookup(s, id);
	Box__DecideRequest *m = box__decide_request__unpack(NULL, p->len, p->data);
	if (!m)
		return -ENOMEM; /* (it was packed here: only memory can fail) */
	remove_permit(s, p);
	*out = m;
	return 0;
}

int
policy_permits_drop(struct policy_permits *s, uint64_t id)
{
	int r = policy_permits_find(s, id, NULL);
	if (r < 0)
		return r;
	remove_permit(s, lookup(s, id));
	return 0;
}

int
policy_permits_take_match(struct policy_permits *s, const char *action,
			  Box__PolicyField *const *in, size_t n, uint64_t *id)
{
	if (!s->count)
		return -ENOENT;
	if (content_index(s) < 0)
		return -ENOMEM;
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)action;
	req.input = (Box__PolicyField **)in;
	req.n_input = n;
	size_t len = protobuf_c_message_get_packed_size(&req.base);
	uint8_t stack[1024], *buf = len <= sizeof(stack) ? stack : malloc(len);
	if (!buf)
		return -ENOMEM;
	(void)protobuf_c_message_pack(&req.base, buf);
	uint64_t h = content_hash(buf, len);
	/* The chain is oldest first: the first equal permit is the one. */
	struct permit *head = s->by_content[h & (s->n_buckets - 1)], *best = NULL;
	for (struct permit *p = head; p && !best;
	     p = p->next_content == head ? NULL : p->next_content)
		if (p->content_hash == h && p->len == len && memcmp(p->data, buf, len) == 0)
			best = p;
	if (buf != stack)
		free(buf);
	if (!best)
		return -ENOENT;
	*id = best->id;
	remove_permit(s, best);
	return 0;
}

int
policy_permits_take_like(struct policy_permits *s, uint64_t like, const char *action,
			 uint64_t *id)
{
	struct permit *p = lookup(s, like);
	if (!p || strcmp(p->action, action) != 0)
		return -ENOENT;
	if (content_index(s) < 0)
		return -ENOMEM;
	/* The chain is oldest first: the first equal permit is the one (p at the latest). */
	struct permit *head = s->by_content[p->content_hash & (s->n_buckets - 1)], *best = NULL;
	for (struct permit *q = head; q && !best;
	     q = q->next_content == head ? NULL : q->next_content)
		if (q == p || (q->content_hash == p->content_hash && q->len == p->len &&
			       memcmp(q->data, p->data, p->len) == 0))
			best = q;
	if (!best)
		return -ENOENT; /* (p is on its chain: not reached) */
	*id = best->id;
	remove_permit(s, best);
	return 0;
}

size_t
policy_permits_count(const struct policy_permits *s)
{
	return s->count;
}

size_t
policy_permits_bytes(const struct policy_permits *s)
{
	return s->bytes;
}
