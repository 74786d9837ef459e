/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policyd_history.c — box-policyd's history file alone: framing, CRC,
 * recovery of a torn last record at every byte offset, refusal of damage
 * anywhere else, poisoning, compaction.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box-policyd/history.h"
#include "cleanup.h"
#include "tap.h"

static char dir[] = "/tmp/box-test-history-XXXXXX";
static int dirfd_ = -1;

struct seen {
	unsigned n;
	uint8_t types[64];
	char data[64][64];
	uint64_t offsets[64];
};

static int
collect(uint8_t type, const uint8_t *data, size_t len, uint64_t offset, void *userdata)
{
	struct seen *s = userdata;
	if (s->n >= 64 || len >= 64)
		return -E2BIG;
	s->types[s->n] = type;
	memcpy(s->data[s->n], data, len);
	s->data[s->n][len] = '\0';
	s->offsets[s->n] = offset;
	s->n++;
	return 0;
}

static void
reset(void)
{
	(void)unlinkat(dirfd_, HISTORY_FILE, 0);
	(void)unlinkat(dirfd_, HISTORY_FILE ".new", 0);
	(void)unlinkat(dirfd_, HISTORY_FILE, AT_REMOVEDIR);
}

/* A file with records "alpha", "beta", "gamma" (types 1, 2, 1); offsets out. */
static void
make_three(uint64_t off[3], uint64_t *size)
{
	struct history *h = NULL;
	reset();
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, NULL, 0), 0);
	if (!h)
		return;
	CHECK_INT(history_append(h, 1, "alpha", 5, &off[0]), 0);
	CHECK_INT(history_append(h, 2, "beta", 4, &off[1]), 0);
	CHECK_INT(history_append(h, 1, "gamma", 5, &off[2]), 0);
	CHECK(history_dirty(h));
	CHECK_INT(history_sync(h), 0);
	CHECK(!history_dirty(h));
	*size = history_size(h);
	history_free(h);
}

static void
flip_byte(uint64_t at)
{
	int fd = openat(dirfd_, HISTORY_FILE, O_RDWR | O_CLOEXEC);
	uint8_t b;
	CHECK(fd >= 0);
	CHECK_INT(pread(fd, &b, 1, (off_t)at), 1);
	b ^= 0x40;
	CHECK_INT(pwrite(fd, &b, 1, (off_t)at), 1);
	close(fd);
}

static off_t
file_size(void)
{
	struct stat st;
	if (fstatat(dirfd_, HISTORY_FILE, &st, 0) < 0)
		return -1;
	return st.st_size;
}

static void
test_crc32c(void)
{
	CHECK_INT(history_crc32c(0, "123456789", 9), 0xe3069283u);
	CHECK_INT(history_crc32c(0, "", 0), 0);
}

static void
test_round_trip(void)
{
	uint64_t off[3], size = 0;
	struct seen s = { 0 };
	struct history *h = NULL;

	make_three(off, &size);
	CHECK(off[0] > 0 && off[0] < off[1] && off[1] < off[2] && off[2] < size);
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s, &h, NULL, 0), 0);
	CHECK_INT(s.n, 3);
	CHECK_STR(s.data[0], "alpha");
	CHECK_STR(s.data[1], "beta");
	CHECK_STR(s.data[2], "gamma");
	CHECK_INT(s.types[1], 2);
	CHECK_INT(s.offsets[2], off[2]);
	CHECK_INT(history_recovered(h), 3);
	CHECK_INT(history_dropped_bytes(h), 0);
	CHECK_INT(history_size(h), size);
	history_free(h);
}

static void
test_refuses_bad_args(void)
{
	struct history *h = NULL;
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, NULL, 0), 0);
	if (!h)
		return;
	CHECK_INT(history_append(h, 0, "x", 1, NULL), -EINVAL);
	static char big[HISTORY_RECORD_MAX];
	CHECK_INT(history_append(h, 1, big, sizeof(big), NULL), -EINVAL);
	CHECK_INT(history_append(h, 1, big, sizeof(big) - 1, NULL), 0);
	history_free(h);
	CHECK_INT(history_open(dirfd_, "a/b", NULL, NULL, &h, NULL, 0), -EINVAL);
}

/* Truncating inside the last record at every byte: it is dropped, the rest kept. */
static void
test_torn_every_offset(void)
{
	uint64_t off[3], size = 0;
	unsigned bad = 0;

	make_three(off, &size);
	for (uint64_t cut = off[2]; cut < size; cut++) {
		struct seen s = { 0 };
		struct history *h = NULL;
		char why[256] = "";

		make_three(off, &size);
		int fd = openat(dirfd_, HISTORY_FILE, O_RDWR | O_CLOEXEC);
		CHECK_INT(ftruncate(fd, (off_t)cut), 0);
		close(fd);
		int r = history_open(dirfd_, HISTORY_FILE, collect, &s, &h, why, sizeof(why));
		if (r != 0 || s.n != 2 || !h || history_dropped_bytes(h) != cut - off[2] ||
		    history_size(h) != off[2] || file_size() != (off_t)off[2]) {
			printf("#   cut at %llu: r=%d n=%u why=%s\n", (unsigned long long)cut, r, s.n,
			       why);
			bad++;
		}
		/* New records follow the intact ones, and survive another recovery. */
		if (h) {
			CHECK_INT(history_append(h, 3, "delta", 5, NULL), 0);
			history_free(h);
			struct seen s2 = { 0 };
			h = NULL;
			CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s2, &h, NULL, 0), 0);
			CHECK_INT(s2.n, 3);
			CHECK_STR(s2.data[2], "delta");
			history_free(h);
		}
	}
	CHECK_INT(bad, 0);
}

/* A file cut inside its header record (crash right after creation) starts empty. */
static void
test_torn_header(void)
{
	uint64_t off[3], size = 0;
	make_three(off, &size);
	for (uint64_t cut = 1; cut < off[0]; cut++) {
		make_three(off, &size);
		int fd = openat(dirfd_, HISTORY_FILE, O_RDWR | O_CLOEXEC);
		CHECK_INT(ftruncate(fd, (off_t)cut), 0);
		close(fd);
		struct seen s = { 0 };
		struct history *h = NULL;
		CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s, &h, NULL, 0), 0);
		CHECK_INT(s.n, 0);
		if (h)
			CHECK_INT(history_size(h), off[0]);
		history_free(h);
	}
}

static void
test_zero_tail(void)
{
	uint64_t off[3], size = 0;
	make_three(off, &size);
	int fd = openat(dirfd_, HISTORY_FILE, O_RDWR | O_CLOEXEC);
	CHECK_INT(ftruncate(fd, (off_t)size + 4096), 0);
	close(fd);
	struct seen s = { 0 };
	struct history *h = NULL;
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s, &h, NULL, 0), 0);
	CHECK_INT(s.n, 3);
	CHECK_INT(history_dropped_bytes(h), 4096);
	history_free(h);
}

/* Damage before the last record refuses, says where, and leaves the file alone. */
static void
test_corrupt_middle(void)
{
	uint64_t off[3], size = 0;
	uint64_t spots[] = { 0, 5, 11, 12 };
	for (size_t k = 0; k < ELEMENTSOF(spots); k++) {
		for (int rec = 0; rec < 2; rec++) {
			struct history *h = NULL;
			char why[256] = "";
			make_three(off, &size);
			flip_byte(off[rec] + spots[k]);
			int r = history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, why, sizeof(why));
			CHECK_INT(r, -EBADMSG);
			CHECK(h == NULL);
			CHECK(strstr(why, "at byte") != NULL);
			CHECK_INT(file_size(), size);
		}
	}
	/* The header record too. */
	make_three(off, &size);
	flip_byte(14);
	struct history *h = NULL;
	char why[256] = "";
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, why, sizeof(why)), -EBADMSG);
	/* A payload flip in the very last record is a torn write: dropped. */
	make_three(off, &size);
	flip_byte(size - 1);
	struct seen s = { 0 };
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s, &h, why, sizeof(why)), 0);
	CHECK_INT(s.n, 2);
	history_free(h);
	/* Garbage that is not zeros after the last record is not a torn tail. */
	make_three(off, &size);
	int fd = openat(dirfd_, HISTORY_FILE, O_RDWR | O_CLOEXEC);
	CHECK_INT(pwrite(fd, "garbage!garbage!", 16, (off_t)size), 16);
	close(fd);
	h = NULL;
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, why, sizeof(why)), -EBADMSG);
	CHECK(h == NULL);
}

static void
test_not_a_history(void)
{
	struct history *h = NULL;
	char why[256] = "";
	reset();
	int fd = openat(dirfd_, HISTORY_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	CHECK_INT(write(fd, "hello world, this is text\n", 26), 26);
	close(fd);
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, why, sizeof(why)), -EBADMSG);
	reset();
	CHECK_INT(mkdirat(dirfd_, HISTORY_FILE, 0700), 0);
	CHECK(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, why, sizeof(why)) < 0);
	CHECK(h == NULL);
	reset();
	CHECK_INT(symlinkat("/etc/passwd", dirfd_, HISTORY_FILE), 0);
	CHECK(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, why, sizeof(why)) < 0);
	CHECK(h == NULL);
	reset();
}

static int
fail_cb(uint8_t type, const uint8_t *data, size_t len, uint64_t offset, void *userdata)
{
	return -EINVAL;
}

static void
test_callback_error(void)
{
	uint64_t off[3], size = 0;
	struct history *h = NULL;
	char why[256] = "";
	make_three(off, &size);
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, fail_cb, NULL, &h, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "unreadable record") != NULL);
}

static void
test_poison(void)
{
	struct history *h = NULL;
	reset();
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, NULL, 0), 0);
	if (!h)
		return;
	CHECK(!history_failed(h));
	history_poison(h);
	CHECK(history_failed(h));
	CHECK_INT(history_append(h, 1, "x", 1, NULL), -EIO);
	CHECK_INT(history_sync(h), -EIO);
	history_free(h);
}

static void
test_compact(void)
{
	uint64_t off[3], size = 0;
	struct history *h = NULL;
	struct seen s = { 0 };

	make_three(off, &size);
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, NULL, NULL, &h, NULL, 0), 0);
	if (!h)
		return;
	struct history_rec head[] = { { 7, "epoch", 5 } };
	CHECK_INT(history_compact(h, head, 1, off[1]), 0);
	/* Appends go to the new file. */
	CHECK_INT(history_append(h, 1, "omega", 5, NULL), 0);
	history_free(h);
	h = NULL;
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s, &h, NULL, 0), 0);
	CHECK_INT(s.n, 4);
	CHECK_STR(s.data[0], "epoch");
	CHECK_INT(s.types[0], 7);
	CHECK_STR(s.data[1], "beta");
	CHECK_STR(s.data[2], "gamma");
	CHECK_STR(s.data[3], "omega");
	CHECK(faccessat(dirfd_, HISTORY_FILE ".new", F_OK, 0) < 0);
	/* Compacting everything away. */
	CHECK_INT(history_compact(h, NULL, 0, history_size(h)), 0);
	history_free(h);
	h = NULL;
	memset(&s, 0, sizeof(s));
	CHECK_INT(history_open(dirfd_, HISTORY_FILE, collect, &s, &h, NULL, 0), 0);
	CHECK_INT(s.n, 0);
	CHECK_INT(history_compact(h, NULL, 0, history_size(h) + 1), -EINVAL);
	history_free(h);
}

int
main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	dirfd_ = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	RUN(test_crc32c);
	RUN(test_round_trip);
	RUN(test_refuses_bad_args);
	RUN(test_torn_every_offset);
	RUN(test_torn_header);
	RUN(test_zero_tail);
	RUN(test_corrupt_middle);
	RUN(test_not_a_history);
	RUN(test_callback_error);
	RUN(test_poison);
	RUN(test_compact);
	reset();
	close(dirfd_);
	(void)rmdir(dir);
	return tap_done();
}
