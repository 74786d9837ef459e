/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history.c — the append-only, checksummed event history (history.h).
 *
 * Appends are one pwrite() of a whole frame at the end of the file, so a
 * crash leaves at most one torn record, at the end; recovery tells that
 * apart from damage anywhere else (history.h). Durability is the caller's
 * choice (history_sync: per decision, batched, or never).
 * Trusts: nothing in the file. Opens nothing except relative to the
 * directory fd it is given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "history.h"

#define HISTORY_MAGIC "box-history 1"
#define READ_CHUNK (HISTORY_RECORD_MAX + HISTORY_FRAME_HEADER)
#define NAME_MAX_LEN 64

struct history {
	int dirfd; /* borrowed */
	int fd;
	char name[NAME_MAX_LEN];
	uint64_t size;
	uint64_t recovered;
	uint64_t dropped;
	uint64_t syncs; /* fdatasync calls made by history_sync */
	bool dirty;
	bool failed;
};

/* ---- CRC-32C ----------------------------------------------------------- */

static uint32_t crc_table[256];
static bool crc_ready;

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[i] = c;
	}
	crc_ready = true;
}

uint32_t
history_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!crc_ready)
		crc_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- framing ----------------------------------------------------------- */

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Frame TYPE+DATA into a new buffer; *ret_len its size. */
static uint8_t *
frame(uint8_t type, const void *data, size_t len, size_t *ret_len)
{
	size_t plen = len + 1;
	uint8_t *b = malloc(HISTORY_FRAME_HEADER + plen);

	if (!b)
		return NULL;
	b[HISTORY_FRAME_HEADER] = type;
	if (len)
		memcpy(b + HISTORY_FRAME_HEADER + 1, data, len);
	put32(b, (uint32_t)plen);
	put32(b + 4, history_crc32c(0, b + HISTORY_FRAME_HEADER, plen));
	put32(b + 8, history_crc32c(0, b, 8));
	*ret_len = HISTORY_FRAME_HEADER + plen;
	return b;
}

static int
pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int
write_frame(int fd, uint8_t type, const void *data, size_t len, uint64_t off, size_t *ret_n)
{
	size_t n;
	_cleanup_free_ uint8_t *b = frame(type, data, len, &n);

	if (!b)
		return -ENOMEM;
	int r = pwrite_full(fd, b, n, off);
	if (r < 0)
		return r;
	*ret_n = n;
	return 0;
}

/* ---- recovery ---------------------------------------------------------- */

static void
say(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || why_len == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* A buffered reader over the file, refilled so a whole frame is in memory. */
struct reader {
	int fd;
	uint64_t file_size;
	uint8_t *buf;
	uint64_t buf_off; /* file offset of buf[0] */
	size_t buf_len;
};

/* Make [off, off+n) available (n <= READ_CHUNK and within the file). */
static int
reader_need(struct reader *rd, uint64_t off, size_t n, const uint8_t **ret)
{
	if (off >= rd->buf_off && off + n <= rd->buf_off + rd->buf_len) {
		*ret = rd->buf + (off - rd->buf_off);
		return 0;
	}
	uint64_t want = rd->file_size - off;
	if (want > READ_CHUNK)
		want = READ_CHUNK;
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(rd->fd, rd->buf + got, (size_t)want - got, (off_t)(off + got));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO; /* the file shrank under us */
		got += (size_t)k;
	}
	rd->buf_off = off;
	rd->buf_len = got;
	if (n > got)
		return -EIO;
	*ret = rd->buf;
	return 0;
}

static int
all_zero_from(struct reader *rd, uint64_t off, bool *ret)
{
	while (off < rd->file_size) {
		uint64_t n = rd->file_size - off;
		if (n > READ_CHUNK)
			n = READ_CHUNK;
		const uint8_t *p;
		int r = reader_need(rd, off, (size_t)n, &p);
		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++)
			if (p[i]) {
				*ret = false;
				return 0;
			}
		off += n;
	}
	*ret = true;
	return 0;
}

/*
 * Walk the records. Returns 0 with *good_end = where the intact records
 * end (anything after it is a torn last record), or -EBADMSG with why.
 */
static int
recover(struct history *h, history_record_fn cb, void *userdata, uint64_t *good_end, char *why,
	size_t why_len)
{
	struct reader rd = { .fd = h->fd, .file_size = h->size };
	_cleanup_free_ uint8_t *buf = malloc(READ_CHUNK);
	uint64_t off = 0;
	bool seen_header = false;
	int r;

	if (!buf)
		return -ENOMEM;
	rd.buf = buf;
	while (off < h->size) {
		uint64_t left = h->size - off;
		const uint8_t *p;
		bool zero;

		if (left < HISTORY_FRAME_HEADER)
			break; /* a header cut short: torn */
		r = reader_need(&rd, off, HISTORY_FRAME_HEADER, &p);
		if (r < 0)
			return r;
		uint32_t len = get32(p), pcrc = get32(p + 4), hcrc = get32(p + 8);
		if (history_crc32c(0, p, 8) != hcrc) {
			r = all_zero_from(&rd, off, &zero);
			if (r < 0)
				return r;
			if (zero)
				break; /* a zero-filled tail: torn */
			say(why, why_len, "bad frame checksum at byte %llu", (unsigned long long)off);
			return -EBADMSG;
		}
		if (len == 0 || len > HISTORY_RECORD_MAX) {
			say(why, why_len, "bad record length %u at byte %llu", len,
			    (unsigned long long)off);
			return -EBADMSG;
		}
		if (left < HISTORY_FRAME_HEADER + (uint64_t)len)
			break; /* runs past the end: torn */
		r = reader_need(&rd, off, HISTORY_FRAME_HEADER + len, &p);
		if (r < 0)
			return r;
		const uint8_t *payload = p + HISTORY_FRAME_HEADER;
		bool last = left == HISTORY_FRAME_HEADER + (uint64_t)len;
		if (history_crc32c(0, payload, len) != pcrc) {
			if (last)
				break; /* the last write did not fully land: torn */
			say(why, why_len, "bad record checksum at byte %llu",
			    (unsigned long long)off);
			return -EBADMSG;
		}
		if (!seen_header) {
			if (payload[0] != 0 || len - 1 != strlen(HISTORY_MAGIC) ||
			    memcmp(payload + 1, HISTORY_MAGIC, len - 1) != 0) {
				say(why, why_len, "not a box history (unknown header)");
				return -EBADMSG;
			}
			seen_header = true;
		} else if (payload[0] == 0) {
			say(why, why_len, "unexpected header record at byte %llu",
			    (unsigned long long)off);
			return -EBADMSG;
		} else {
			if (cb) {
				r = cb(payload[0], payload + 1, len - 1, off, userdata);
				if (r < 0) {
					say(why, why_len, "unreadable record at byte %llu",
					    (unsigned long long)off);
					return r;
				}
			}
			h->recovered++;
		}
		off += HISTORY_FRAME_HEADER + len;
	}
	*good_end = seen_header ? off : 0;
	return 0;
}

int
history_open(int dirfd, const char *name, history_record_fn cb, void *userdata,
	     struct history **ret, char *why, size_t why_len)
{
	struct stat st;
	uint64_t good_end = 0;
	bool created = false;
	int r;

	if (!name || strlen(name) >= NAME_MAX_LEN || strchr(name, '/'))
		return -EINVAL;
	_cleanup_free_ struct history *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->dirfd = dirfd;
	h->fd = -1;
	(void)snprintf(h->name, sizeof(h->name), "%s", name);

	_cleanup_close_ int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
					0600);
	if (fd >= 0)
		created = true;
	else if (errno == EEXIST)
		fd = openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		r = -errno;
		say(why, why_len, "cannot open the history: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		say(why, why_len, "the history is not a regular file");
		return -EBADMSG;
	}
	h->fd = fd;
	h->size = (uint64_t)st.st_size;
	r = recover(h, cb, userdata, &good_end, why, why_len);
	if (r < 0) {
		h->fd = -1;
		return r;
	}
	if (good_end < h->size) {
		/* Drop the torn last record so new records follow intact ones. */
		h->dropped = h->size - good_end;
		if (ftruncate(fd, (off_t)good_end) < 0 || fdatasync(fd) < 0) {
			r = -errno;
			h->fd = -1;
			say(why, why_len, "cannot drop the torn last record: %s", strerror(-r));
			return r;
		}
		h->size = good_end;
	}
	if (h->size == 0) {
		size_t n;
		r = write_frame(fd, 0, HISTORY_MAGIC, strlen(HISTORY_MAGIC), 0, &n);
		if (r < 0 || fdatasync(fd) < 0) {
			r = r < 0 ? r : -errno;
			h->fd = -1;
			say(why, why_len, "cannot write the history: %s", strerror(-r));
			return r;
		}
		h->size = n;
	}
	if (created && fsync(dirfd) < 0) {
		r = -errno;
		h->fd = -1;
		say(why, why_len, "cannot sync the state directory: %s", strerror(-r));
		return r;
	}
	h->fd = TAKE_FD(fd);
	*ret = TAKE_PTR(h);
	return 0;
}

struct history *
history_free(struct history *h)
{
	if (!h)
		return NULL;
	safe_close(h->fd);
	free(h);
	return NULL;
}

int
history_append(struct history *h, uint8_t type, const void *data, size_t len,
	       uint64_t *ret_offset)
{
	size_t n;

	if (type == 0 || len + 1 > HISTORY_RECORD_MAX)
		return -EINVAL;
	if (h->failed)
		return -EIO;
	int r = write_frame(h->fd, type, data, len, h->size, &n);
	if (r < 0) {
		/* Cut a partial frame off so the file stays readable; stay failed. */
		if (ftruncate(h->fd, (off_t)h->size) < 0)
			(void)0; /* keep the write's error; the file is poisoned anyway */
		h->failed = true;
		return r;
	}
	if (ret_offset)
		*ret_offset = h->size;
	h->size += n;
	h->dirty = true;
	return 0;
}

int
history_sync(struct history *h)
{
	if (h->failed)
		return -EIO;
	if (!h->dirty)
		return 0;
	h->syncs++;
	if (fdatasync(h->fd) < 0) {
		/* After a failed fsync the page cache state is unknown: stop writing. */
		h->failed = true;
		return -errno;
	}
	h->dirty = false;
	return 0;
}

bool
history_dirty(const struct history *h)
{
	return h->dirty;
}

bool
history_failed(const struct history *h)
{
	return h->failed;
}

uint64_t
history_size(const struct history *h)
{
	return h->size;
}

uint64_t
history_syncs(const struct history *h)
{
	return h->syncs;
}

uint64_t
history_recovered(const struct history *h)
{
	return h->recovered;
}

uint64_t
history_dropped_bytes(const struct history *h)
{
	return h->dropped;
}

void
history_poison(struct history *h)
{
	h->failed = true;
}

/* Copy [from, to) of fd_in to fd_out at out_off. */
static int
copy_range(int fd_in, uint64_t from, uint64_t to, int fd_out, uint64_t out_off)
{
	_cleanup_free_ uint8_t *buf = malloc(1u << 16);

	if (!buf)
		return -ENOMEM;
	while (from < to) {
		size_t want = to - from > (1u << 16) ? (1u << 16) : (size_t)(to - from);
		ssize_t k = pread(fd_in, buf, want, (off_t)from);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		int r = pwrite_full(fd_out, buf, (size_t)k, out_off);
		if (r < 0)
			return r;
		from += (uint64_t)k;
		out_off += (uint64_t)k;
	}
	return 0;
}

int
history_compact(struct history *h, const struct history_rec *head, size_t n_head,
		uint64_t keep_from)
{
	char tmp[NAME_MAX_LEN + 8];
	uint64_t off = 0;
	size_t n;
	int r;

	if (h->failed)
		return -EIO;
	if (keep_from > h->size)
		return -EINVAL;
	(void)snprintf(tmp, sizeof(tmp), "%s.new", h->name);
	(void)unlinkat(h->dirfd, tmp, 0);
	_cleanup_close_ int fd =
		openat(h->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	r = write_frame(fd, 0, HISTORY_MAGIC, strlen(HISTORY_MAGIC), 0, &n);
	if (r < 0)
		goto fail;
	off = n;
	for (size_t i = 0; i < n_head; i++) {
		if (head[i].type == 0 || head[i].len + 1 > HISTORY_RECORD_MAX) {
			r = -EINVAL;
			goto fail;
		}
		r = write_frame(fd, head[i].type, head[i].data, head[i].len, off, &n);
		if (r < 0)
			goto fail;
		off += n;
	}
	r = copy_range(h->fd, keep_from, h->size, fd, off);
	if (r < 0)
		goto fail;
	off += h->size - keep_from;
	if (fdatasync(fd) < 0 || renameat(h->dirfd, tmp, h->dirfd, h->name) < 0) {
		r = -errno;
		goto fail;
	}
	/* The rename is done: the new file is the history from here on. */
	safe_close(h->fd);
	h->fd = TAKE_FD(fd);
	h->size = off;
	h->dirty = false;
	if (fsync(h->dirfd) < 0) {
		h->failed = true;
		return -errno;
	}
	return 0;
fail:
	(void)unlinkat(h->dirfd, tmp, 0);
	return r;
}
