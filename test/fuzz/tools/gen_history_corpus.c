/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_history_corpus.c — writes the seed corpus of fuzz_history with the real
 * writers: box-policyd's engine (epoch and event records through
 * engine_decide) and history_append, then cut and damaged copies of them.
 *
 *   make build/test/fuzz/gen_history_corpus && \
 *     build/test/fuzz/gen_history_corpus test/fuzz/corpus/history
 *
 * Not part of `make check` (the corpus it writes is committed and replayed).
 * Trusts: nothing; it only writes into the directory it is given.
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
#include "fdutil.h"

static const char policy[] =
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

static char work[] = "/tmp/box-gen-history-XXXXXX";
static int workfd = -1;
static int outfd = -1;

static void
die(const char *what)
{
	fprintf(stderr, "gen_history_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
put(const char *name, const void *data, size_t len)
{
	int fd = openat(outfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		die(name);
	close(fd);
}

static char *
take(size_t *len)
{
	char *buf = NULL;
	unsigned long n = 0;
	if (fd_read_file(workfd, HISTORY_FILE, 1 << 20, &buf, &n) < 0)
		die("read history");
	*len = n;
	return buf;
}

/* A history written by the engine: its epoch record and N fs:write events. */
static char *
engine_history(int n, size_t *len)
{
	(void)unlinkat(workfd, HISTORY_FILE, 0);
	struct engine *e = NULL;
	char why[256];
	struct engine_opts o = {.text = policy, .len = sizeof(policy) - 1, .home = "/home/u",
				.sync = ENGINE_SYNC_ALWAYS, .dirfd = workfd,
				.now_ns = INT64_C(1700000000000000000)};
	if (engine_new(&o, &e, why, sizeof(why)) < 0) {
		fprintf(stderr, "engine_new: %s\n", why);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		char path[32];
		snprintf(path, sizeof(path), "~/f%d", i);
		Box__PolicyValue v = BOX__POLICY_VALUE__INIT, op = BOX__POLICY_VALUE__INIT;
		Box__PolicyValue done = BOX__POLICY_VALUE__INIT;
		v.kind_case = op.kind_case = done.kind_case = BOX__POLICY_VALUE__KIND_STR;
		v.str = path;
		op.str = "write_content";
		done.str = "completed";
		Box__PolicyField f = BOX__POLICY_FIELD__INIT, fo = BOX__POLICY_FIELD__INIT;
		Box__PolicyField fr = BOX__POLICY_FIELD__INIT;
		f.name = "path";
		f.value = &v;
		fo.name = "operation";
		fo.value = &op;
		fr.name = "result";
		fr.value = &done;
		Box__PolicyField *in[2] = {&f, &fo}, *out[1] = {&fr};
		Box__DecideRequest m = BOX__DECIDE_REQUEST__INIT;
		m.action = "fs:write";
		m.input = in;
		m.n_input = 2;
		int64_t t = INT64_C(1700000000000000000) + (i + 1) * INT64_C(1000000000);
		struct engine_result res;
		if (engine_decide(e, &m, t, &res) < 0)
			die("engine_decide");
		Box__RecordRequest rec = BOX__RECORD_REQUEST__INIT;
		rec.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
		rec.action = "fs:write";
		rec.input = in;
		rec.n_input = 2;
		rec.output = out;
		rec.n_output = 1;
		int64_t rec_t;
		if (engine_record(e, &rec, t + 1000, &rec_t) < 0)
			die("engine_record");
		if (getenv("GEN_DEBUG"))
			fprintf(stderr, "decide %d: permit %d cause %d err %d msg %s\n", i, res.permit,
				res.cause, res.history_error, res.message ? res.message : "");
	}
	(void)engine_sync(e);
	engine_free(e);
	return take(len);
}

/* A history of plain records written by history_append. */
static char *
plain_history(size_t *len)
{
	(void)unlinkat(workfd, HISTORY_FILE, 0);
	struct history *h = NULL;
	if (history_open(workfd, HISTORY_FILE, NULL, NULL, &h, NULL, 0) < 0)
		die("history_open");
	if (history_append(h, 1, "alpha", 5, NULL) < 0 || history_append(h, 2, "beta", 4, NULL) < 0 ||
	    history_append(h, 3, "", 0, NULL) < 0 || history_sync(h) < 0)
		die("history_append");
	history_free(h);
	return take(len);
}

static void
variants(const char *stem, const char *buf, size_t len)
{
	char name[64];
	char *copy = malloc(len + 64);
	if (!copy)
		die("malloc");

	snprintf(name, sizeof(name), "%s-valid", stem);
	put(name, buf, len);
	/* Torn: cut in the last record's payload, in its frame header, one byte short. */
	snprintf(name, sizeof(name), "%s-torn-payload", stem);
	put(name, buf, len - 2);
	snprintf(name, sizeof(name), "%s-torn-one-byte", stem);
	put(name, buf, len - 1);
	/* Zero-filled tail (a crash after the size grew, before the data). */
	memcpy(copy, buf, len);
	memset(copy + len, 0, 40);
	snprintf(name, sizeof(name), "%s-zero-tail", stem);
	put(name, copy, len + 40);
	/* The last record's payload checksum fails: torn, dropped. */
	memcpy(copy, buf, len);
	copy[len - 1] ^= 0x40;
	snprintf(name, sizeof(name), "%s-last-crc", stem);
	put(name, copy, len);
	/* Damage before the last record: refused. */
	memcpy(copy, buf, len);
	copy[30] ^= 0x01;
	snprintf(name, sizeof(name), "%s-middle-flip", stem);
	put(name, copy, len);
	/* The header's magic changed: refused. */
	memcpy(copy, buf, len);
	copy[HISTORY_FRAME_HEADER + 3] ^= 0x20;
	snprintf(name, sizeof(name), "%s-bad-magic", stem);
	put(name, copy, len);
	/* A huge length in the second frame. */
	memcpy(copy, buf, len);
	memset(copy + 26, 0xff, 4);
	snprintf(name, sizeof(name), "%s-huge-length", stem);
	put(name, copy, len);
	free(copy);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_history_corpus DIR\n");
		return 2;
	}
	outfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (outfd < 0)
		die(argv[1]);
	if (!mkdtemp(work))
		die("mkdtemp");
	workfd = open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (workfd < 0)
		die(work);

	size_t len;
	char *b = engine_history(5, &len);
	variants("engine", b, len);
	free(b);
	b = engine_history(0, &len);
	put("engine-epoch-only", b, len);
	put("header-cut", b, 7);
	free(b);
	b = plain_history(&len);
	variants("plain", b, len);
	free(b);
	put("empty", "", 0);

	(void)unlinkat(workfd, HISTORY_FILE, 0);
	(void)unlinkat(workfd, HISTORY_FILE ".new", 0);
	close(workfd);
	(void)rmdir(work);
	return 0;
}
