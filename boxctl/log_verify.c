/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log_verify.c — `boxctl log --verify NAME|ID`: check a box's decision log chain
 * (docs/boxctl.1.md "The chain", common/logchain.h) across rotation, against the
 * head boxd kept, and name the first line that fails.
 *
 * The files are the ones `boxctl log` reads (boxlog_open: a running box's from its
 * boxd, an ended box's from its state dir): decisions.jsonl.1, then decisions.jsonl,
 * one chain. Each line's "prev" must be the SHA-256 of the line before it (without
 * its newline) and its "seq" one more; the first chained line must follow genesis
 * or the rotation point boxd kept for the oldest file; a line whose seq is a head
 * boxd kept must hash to it; the last line must be boxd's last kept head (a running
 * box's may be up to a second ahead). The record is a root boxd's
 * (LOGCHAIN_SERVICE_DIR/UID/KEY, which the owner cannot write) when there is one,
 * else the state dir's (an unprivileged boxd's: its owner could rewrite it, which
 * the output says).
 * Trusts: nothing in the files or the record (both parsed whole; a line is hashed as
 * the bytes read).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "boxlog.h"
#include "cleanup.h"
#include "commands.h"
#include "logchain.h"

/* A file bigger than this is not one of box's logs (boxd rotates at 64 MiB). */
#define VERIFY_FILE_MAX (1ull << 30)

struct vline {
	int file; /* 0: decisions.jsonl.1, 1: decisions.jsonl */
	unsigned lineno;
	const char *text;
	size_t len;
	bool has_nl;
};

struct verify {
	const char *names[2];
	struct vline *lines;
	size_t n_lines;
	struct logchain_record rec;
	int have_rec; /* 0 none, 1 a root boxd's, 2 the state dir's */
	bool running;
	bool chained;
	uint64_t seq, first_seq, n_chained;
	uint8_t head[LOGCHAIN_HASH_LEN];
	const struct vline *last;
	unsigned unchained;
	bool failed;
};

static void __attribute__((format(printf, 2, 3))) fail(struct verify *v, const char *fmt, ...)
{
	va_list ap;

	if (v->failed)
		return;
	v->failed = true;
	printf("FAILED: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void __attribute__((format(printf, 2, 3))) note(struct verify *v, const char *fmt, ...)
{
	va_list ap;

	printf("note: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* FD's whole text (malloc'd, NUL-terminated) in *RET, *LEN. */
static int
slurp_fd(int fd, char **ret, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > VERIFY_FILE_MAX)
		return -EFBIG;
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
		free(buf);
		return -errno;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= VERIFY_FILE_MAX) {
				free(buf);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(buf);
			return -errno;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*ret = buf;
	*len = n;
	return 0;
}

static int
add_lines(struct verify *v, int file, const char *buf, size_t len, size_t *cap)
{
	unsigned lineno = 0;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
		if (v->n_lines == *cap) {
			size_t nc = *cap ? *cap * 2 : 1024;
			struct vline *p = realloc(v->lines, nc * sizeof(*p));
			if (!p)
				return -ENOMEM;
			v->lines = p;
			*cap = nc;
		}
		v->lines[v->n_lines++] = (struct vline){.file = file,
							.lineno = ++lineno,
							.text = buf + off,
							.len = n,
							.has_nl = nl != NULL};
		off += n + 1;
	}
	return 0;
}

/* The record boxd keeps for STATE_DIR: a root boxd's first, else the state dir's. */
static void
record_load(struct verify *v, const char *state_dir)
{
	char key[LOGCHAIN_HEX_LEN + 1], path[4096 + 128], buf[LOGCHAIN_RECORD_MAX + 1];

	logchain_key(state_dir, key);
	for (int k = 1; k <= 2; k++) {
		if (k == 1)
			(void)snprintf(path, sizeof(path), "%s/%u/%s", LOGCHAIN_SERVICE_DIR,
				       (unsigned)getuid(), key);
		else
			(void)snprintf(path, sizeof(path), "%s/%s", state_dir, LOGCHAIN_STATE_FILE);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		/* a root boxd's record is root's: anything else there is not one */
		if (k == 1 && st.st_uid != 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 || (size_t)n > LOGCHAIN_RECORD_MAX ||
		    logchain_record_parse(buf, (size_t)n, &v->rec) < 0) {
			note(v, "%s is not a record of the chain's head; not used", path);
			continue;
		}
		v->have_rec = k;
		return;
	}
}

static const char *
fname(const struct verify *v, const struct vline *l)
{
	return v->names[l->file];
}

/* The first chained line L (SEQ, PREV): where may it begin? */
static void
anchor(struct verify *v, const struct vline *l, uint64_t seq, const uint8_t prev[32], bool have_old)
{
	static const uint8_t zero[LOGCHAIN_HASH_LEN];
	bool genesis = seq == 1 && memcmp(prev, zero, sizeof(zero)) == 0;

	if (!v->have_rec) {
		if (!genesis)
			note(v,
			     "the log begins at seq %llu (%s:%u): no kept head says where the "
			     "lines before it went",
			     (unsigned long long)seq, fname(v, l), l->lineno);
		return;
	}
	const struct logchain_record *r = &v->rec;
	if (r->rotations >= 1 && !have_old) {
		fail(v,
		     "decisions.jsonl.1 is missing: boxd rotated the log %llu time%s, the "
		     "last time after seq %llu; the lines before %s:%u (seq %llu) are gone",
		     (unsigned long long)r->rotations, r->rotations == 1 ? "" : "s",
		     (unsigned long long)r->rotated[r->n_rotated - 1].seq, fname(v, l), l->lineno,
		     (unsigned long long)seq);
		return;
	}
	/* The oldest file there begins after the second-to-last rotation (or at genesis). */
	const struct logchain_point *want = NULL;
	if (r->rotations >= 2)
		want = r->n_rotated >= 2 ? &r->rotated[r->n_rotated - 2] : NULL;
	struct logchain_point g = {0};
	if (r->rotations < 2)
		want = &g;
	if (!want) {
		note(v, "the kept record lacks the rotation the oldest file begins after");
		return;
	}
	if (seq == want->seq + 1 && memcmp(prev, want->head, LOGCHAIN_HASH_LEN) == 0) {
		if (want->seq > 0)
			note(v,
			     "lines seq 1 to %llu were rotated away (boxd rotated the log %llu "
			     "times and keeps one old file; the chain begins after the rotation "
			     "point boxd kept)",
			     (unsigned long long)want->seq, (unsigned long long)r->rotations);
		return;
	}
	if (want->seq == 0)
		fail(v,
		     "%s:%u (seq %llu) is the first line, but the chain began at genesis "
		     "(seq 1): the lines before it were removed",
		     fname(v, l), l->lineno, (unsigned long long)seq);
	else
		fail(v,
		     "%s:%u (seq %llu) is the first line, but the oldest file must begin "
		     "after seq %llu (boxd's rotation point): lines were removed",
		     fname(v, l), l->lineno, (unsigned long long)seq,
		     (unsigned long long)want->seq);
}

/* Line I against the chain so far. */
static void
step(struct verify *v, size_t i, bool have_old)
{
	const struct vline *l = &v->lines[i];
	uint8_t prev[LOGCHAIN_HASH_LEN];
	json_error_t je;

	if (!l->has_nl) {
		fail(v, "%s:%u: the last line is cut short (no newline): the file was truncated",
		     fname(v, l), l->lineno);
		return;
	}
	json_t *o = json_loadb(l->text, l->len, 0, &je);
	json_t *js = json_object_get(o, "seq"), *jp = json_object_get(o, "prev");
	const char *ps = json_string_value(jp);
	bool ok = json_is_integer(js) && json_integer_value(js) > 0 && ps &&
		  logchain_unhex(ps, strlen(ps), prev) == 0;
	uint64_t seq = ok ? (uint64_t)json_integer_value(js) : 0;
	bool no_chain = json_is_object(o) && !js && !jp;
	json_decref(o);
	if (!ok) {
		if (no_chain && !v->chained) {
			v->unchained++; /* written before the chain (an older box) */
			return;
		}
		fail(v, "%s:%u: %s", fname(v, l), l->lineno,
		     no_chain ? "a line without \"seq\" and \"prev\" inside the chain (inserted)"
			      : "not a chained line (no JSON object with \"seq\" and \"prev\")");
		return;
	}
	if (!v->chained) {
		anchor(v, l, seq, prev, have_old);
		v->chained = true;
		v->first_seq = seq;
	} else if (seq != v->seq + 1 || memcmp(prev, v->head, sizeof(prev)) != 0) {
		const struct vline *p = v->last;
		const struct vline *n = i + 1 < v->n_lines ? &v->lines[i + 1] : NULL;
		uint64_t nseq = 0;
		if (n) {
			json_t *no = json_loadb(n->text, n->len, 0, &je);
			json_t *ns = json_object_get(no, "seq");
			nseq = json_is_integer(ns) ? (uint64_t)json_integer_value(ns) : 0;
			json_decref(no);
		}
		if (seq == v->seq + 1)
			fail(v,
			     "%s:%u (seq %llu) was changed: the prev of %s:%u is not its SHA-256",
			     fname(v, p), p->lineno, (unsigned long long)v->seq, fname(v, l),
			     l->lineno);
		else if (seq == v->seq + 2 && nseq == v->seq + 1)
			fail(v,
			     "%s:%u (seq %llu) and the line after it (seq %llu) are out of order",
			     fname(v, l), l->lineno, (unsigned long long)seq,
			     (unsigned long long)nseq);
		else if (seq == v->seq + 2)
			fail(v,
			     "%s:%u (seq %llu): the line seq %llu before it is missing (deleted)",
			     fname(v, l), l->lineno, (unsigned long long)seq,
			     (unsigned long long)(v->seq + 1));
		else if (seq > v->seq + 2)
			fail(v,
			     "%s:%u (seq %llu): the lines seq %llu to %llu before it are missing "
			     "(deleted)",
			     fname(v, l), l->lineno, (unsigned long long)seq,
			     (unsigned long long)(v->seq + 1), (unsigned long long)(seq - 1));
		else
			fail(v, "%s:%u (seq %llu) follows seq %llu: a line repeated or moved",
			     fname(v, l), l->lineno, (unsigned long long)seq,
			     (unsigned long long)v->seq);
		return;
	}
	logchain_sha256(l->text, l->len, v->head);
	v->seq = seq;
	v->last = l;
	v->n_chained++;
	if (!v->have_rec)
		return;
	/* A head boxd kept (the last one, a rotation point) must be this very line. */
	const struct logchain_record *r = &v->rec;
	const struct logchain_point *kept = r->head.seq == seq ? &r->head : NULL;
	for (size_t k = 0; !kept && k < r->n_rotated; k++)
		if (r->rotated[k].seq == seq)
			kept = &r->rotated[k];
	if (kept && memcmp(kept->head, v->head, LOGCHAIN_HASH_LEN) != 0)
		fail(v,
		     "%s:%u (seq %llu) is not the line boxd kept the head of: it or a line "
		     "before it was changed and the chain written again",
		     fname(v, l), l->lineno, (unsigned long long)seq);
}

/* After the last line: does the log end where boxd's kept head says? */
static void
tail(struct verify *v)
{
	const struct logchain_record *r = &v->rec;

	if (!v->have_rec || v->failed)
		return;
	if (!v->chained) {
		if (r->head.seq > 0)
			fail(v,
			     "the log holds no chained line, but boxd kept seq %llu: every line "
			     "was removed",
			     (unsigned long long)r->head.seq);
		return;
	}
	const struct vline *l = v->last;
	if (r->head.seq > v->seq) {
		fail(v,
		     "the log ends at %s:%u (seq %llu), but boxd kept seq %llu: the last "
		     "%llu line%s were removed (truncated)",
		     fname(v, l), l->lineno, (unsigned long long)v->seq,
		     (unsigned long long)r->head.seq, (unsigned long long)(r->head.seq - v->seq),
		     r->head.seq - v->seq == 1 ? "" : "s");
		return;
	}
	if (r->head.seq < v->seq) {
		uint64_t after = v->seq - r->head.seq;
		if (v->running)
			note(v,
			     "%llu line%s after the head boxd kept: the box runs (boxd keeps its "
			     "head within a second and at its end)",
			     (unsigned long long)after, after == 1 ? "" : "s");
		else
			fail(v,
			     "%llu line%s up to %s:%u (seq %llu) come%s after the head boxd "
			     "kept (seq %llu)%s: added later",
			     (unsigned long long)after, after == 1 ? "" : "s", fname(v, l),
			     l->lineno, (unsigned long long)v->seq, after == 1 ? "s" : "",
			     (unsigned long long)r->head.seq,
			     r->sealed ? " when the box ended" : "");
	}
}

int
log_verify(const char *what)
{
	struct boxlog_files f;
	char *err = NULL;
	char *text[2] = {NULL, NULL};
	size_t len[2] = {0, 0}, cap = 0;
	struct verify v = {.names = {"decisions.jsonl.1", "decisions.jsonl"}};
	int ret = BOXCTL_EXIT_FAILURE;

	int r = boxlog_open(what, &f, &err);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: log %s: %s\n", what,
			err	       ? err
			: r == -ENOENT ? "no decision log of this box found"
				       : strerror(-r));
		free(err);
		return BOXCTL_EXIT_FAILURE;
	}
	v.running = f.running;
	/* The state dir: where decisions.jsonl (or .1) is. */
	char dir[PATH_MAX];
	(void)snprintf(dir, sizeof(dir), "%s", f.fd[1] >= 0 || f.fd[0] < 0 ? f.path[1] : f.path[0]);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	/*
	 * The record first: boxd writes a head only after the lines it covers, so the
	 * files read next hold at least those (a running box's may hold more).
	 */
	record_load(&v, dir);
	for (int i = 0; i < 2; i++) {
		if (f.fd[i] < 0)
			continue;
		if ((r = slurp_fd(f.fd[i], &text[i], &len[i])) < 0 ||
		    (r = add_lines(&v, i, text[i], len[i], &cap)) < 0) {
			fprintf(stderr, "boxctl: error: %s: %s\n", f.path[i], strerror(-r));
			goto out;
		}
	}
	for (size_t i = 0; i < v.n_lines && !v.failed; i++)
		step(&v, i, f.fd[0] >= 0);
	tail(&v);
	if (v.unchained)
		note(&v,
		     "%u line%s before the chain began (written by an older box) are not "
		     "covered",
		     v.unchained, v.unchained == 1 ? "" : "s");
	if (v.have_rec == 2)
		note(&v,
		     "the head was kept in the state dir (%s/%s) by an unprivileged boxd: the "
		     "box's owner can rewrite it and the log alike, so against the owner this "
		     "proves nothing without a telemetry export target",
		     dir, LOGCHAIN_STATE_FILE);
	else if (!v.have_rec)
		note(&v, "no head of this log was kept: the chain is checked against itself only");
	if (!v.failed) {
		printf("ok: %s: %llu chained line%s (seq %llu to %llu)%s\n", what,
		       (unsigned long long)v.n_chained, v.n_chained == 1 ? "" : "s",
		       (unsigned long long)(v.chained ? v.first_seq : 0), (unsigned long long)v.seq,
		       v.have_rec == 1	 ? ", ending at the head boxd kept"
		       : v.have_rec == 2 ? ", ending at the head kept in the state dir"
					 : "");
		ret = BOXCTL_EXIT_OK;
	}
out:
	fflush(stdout);
	free(v.lines);
	free(text[0]);
	free(text[1]);
	boxlog_close(&f);
	return ret;
}
