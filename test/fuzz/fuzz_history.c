/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_history.c — box-policyd's history recovery (box-policyd/history.c and
 * the engine's two recovery passes in engine.c), fed arbitrary bytes as the
 * STATE/policy/history file.
 *
 * Each input is written as "history" in a private temporary directory, then:
 *   1. history_open() alone: it either recovers (a torn last record dropped —
 *      what is kept is a prefix of the input, the kept and dropped bytes add
 *      up to the input, every record is in bounds) or refuses with -EBADMSG
 *      and a reason, leaving the file byte for byte as it was. A recovered
 *      file takes one more record and then reopens with nothing dropped and
 *      one record more (recovery is idempotent).
 *   2. the input again, through engine_new() with a temporal policy: every
 *      record is replayed into the monitor, or the engine refuses with a
 *      message. Either way no crash, no leak (ASan), memory bounded by the
 *      input (records are capped at HISTORY_RECORD_MAX).
 * Seeds (test/fuzz/corpus/history/) come from the real writer
 * (test/fuzz/tools/gen_history_corpus.c), then cut and damaged.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box-policyd/engine.h"
#include "box-policyd/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The policy the engine pass loads: one temporal rule, so the history is replayed. */
static const char fuzz_policy[] =
	"permit (principal, action, resource);\n"
	"@id(\"write_budget\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal {\n"
	"    exists (total: Long). (\n"
	"        (count for (t: Timepoint). where (\n"
	"            formerly within 60s (\n"
	"                Box::Action::\"fs:write\"::response{ input.path: _ } && tp(t)\n"
	"            )\n"
	"        )) == total\n"
	"        && total >= 3\n"
	"    )\n"
	"};\n";

static char dir[] = "/tmp/box-fuzz-history-XXXXXX";
static int dirfd_ = -1;

static void
dir_remove(void)
{
	if (dirfd_ < 0)
		return;
	(void)unlinkat(dirfd_, HISTORY_FILE, 0);
	(void)unlinkat(dirfd_, HISTORY_FILE ".new", 0);
	close(dirfd_);
	(void)rmdir(dir);
}

static void
dir_setup(void)
{
	if (dirfd_ >= 0)
		return;
	if (!mkdtemp(dir))
		abort();
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0)
		abort();
	atexit(dir_remove);
}

static void
file_put(const uint8_t *data, size_t size)
{
	(void)unlinkat(dirfd_, HISTORY_FILE ".new", 0);
	int fd = openat(dirfd_, HISTORY_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			0600);
	if (fd < 0)
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	close(fd);
}

/* The file now, exactly; *len its size. Caller frees. */
static uint8_t *
file_get(size_t *len)
{
	struct stat st;
	int fd = openat(dirfd_, HISTORY_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0)
		abort();
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		abort();
	size_t off = 0;
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	close(fd);
	*len = off;
	return buf;
}

struct seen {
	uint64_t records;
	uint64_t file_size;
};

static int
on_record(uint8_t type, const uint8_t *rec, size_t len, uint64_t offset, void *userdata)
{
	struct seen *s = userdata;
	/* In bounds: the record lies inside the file, its type is not the header's. */
	if (type == 0 || len + 1 > HISTORY_RECORD_MAX ||
	    offset + HISTORY_FRAME_HEADER + 1 + len > s->file_size)
		__builtin_trap();
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < len; i++)
		sink ^= rec[i]; /* ASan: every byte readable */
	(void)sink;
	s->records++;
	return 0;
}

static void
check_history_layer(const uint8_t *data, size_t size)
{
	struct history *h = NULL;
	struct seen s = {.file_size = size};
	char why[256] = "";

	file_put(data, size);
	int r = history_open(dirfd_, HISTORY_FILE, on_record, &s, &h, why, sizeof(why));
	if (r < 0) {
		/* Refused: a reason, and the file untouched. */
		if (r != -EBADMSG || !why[0])
			__builtin_trap();
		size_t n;
		uint8_t *now = file_get(&n);
		if (n != size || (size && memcmp(now, data, size) != 0))
			__builtin_trap();
		free(now);
		return;
	}
	uint64_t kept = size - history_dropped_bytes(h);
	if (history_dropped_bytes(h) > size || history_recovered(h) != s.records)
		__builtin_trap();
	/* What is kept is a prefix of the input (a fresh header if nothing was). */
	size_t n;
	uint8_t *now = file_get(&n);
	if (n != history_size(h) || (kept && (kept != n || memcmp(now, data, kept) != 0)))
		__builtin_trap();
	free(now);

	/* One more record, then recovery again: nothing dropped, one more record. */
	uint64_t before = s.records;
	if (history_append(h, 1, "fuzz", 4, NULL) < 0)
		__builtin_trap();
	uint64_t size2 = history_size(h);
	history_free(h);
	h = NULL;
	struct seen s2 = {.file_size = size2};
	r = history_open(dirfd_, HISTORY_FILE, on_record, &s2, &h, why, sizeof(why));
	if (r < 0 || history_dropped_bytes(h) != 0 || s2.records != before + 1 ||
	    history_size(h) != size2)
		__builtin_trap();
	history_free(h);
}

static void
check_engine_layer(const uint8_t *data, size_t size)
{
	struct engine *e = NULL;
	char why[512] = "";

	file_put(data, size);
	struct engine_opts o = {
		.text = fuzz_policy,
		.len = sizeof(fuzz_policy) - 1,
		.home = "/home/fuzz",
		.sync = ENGINE_SYNC_OFF,
		.dirfd = dirfd_,
		.now_ns = INT64_C(1700000000000000000),
	};
	int r = engine_new(&o, &e, why, sizeof(why));
	if (r < 0) {
		if (!why[0])
			__builtin_trap(); /* a refusal always says why */
		return;
	}
	struct engine_stats st;
	engine_stats(e, &st);
	if (st.temporal_rules != 1 || st.dropped_bytes > size)
		__builtin_trap();
	engine_free(e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dir_setup();
	check_history_layer(data, size);
	check_engine_layer(data, size);
	return 0;
}
