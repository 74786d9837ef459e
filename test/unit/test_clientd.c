/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_clientd.c — box-clientd's judgement of client packets
 * (box-clientd/forward.c) on the committed seeds of test/fuzz/corpus/clientd:
 * real boxctl requests are passed on, refusals are refused with the code
 * boxd gave before, a valid but non-canonical encoding (envelope fields
 * reordered, a small message sent as fragments) reaches boxd as exactly
 * the packet boxctl would have sent, and the fds of a RunRequest travel with
 * its last packet.
 * Trusts: nothing; it is test code.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "box-clientd/clientd.h"
#include "ipc.h"
#include "tap.h"

#define CORPUS "test/fuzz/corpus/clientd"

struct out {
	uint8_t pkt[8][4096];
	size_t len[8];
	unsigned n_fds[8];
	unsigned n;
};

static int
collect(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct out *o = userdata;
	(void)fds;
	if (o->n >= 8 || len > sizeof(o->pkt[0]))
		return -E2BIG;
	memcpy(o->pkt[o->n], pkt, len);
	o->len[o->n] = len;
	o->n_fds[o->n] = n_fds;
	o->n++;
	return 0;
}

/*
 * Feed seed NAME packet by packet (fd counts: /dev/null). Returns the first
 * error or the number of messages passed on; their packets are in *o.
 */
static int
feed_seed(const char *name, struct out *o)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", CORPUS, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	uint8_t buf[65536];
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);

	struct box_ipc_chan *c = clientd_chan_new(-1);
	int msgs = 0;
	memset(o, 0, sizeof(*o));
	for (size_t off = 0; off + 3 <= len;) {
		size_t l = buf[off] | (size_t)buf[off + 1] << 8;
		unsigned nf = buf[off + 2] & 3u;
		off += 3;
		if (l > len - off) {
			msgs = -EINVAL;
			break;
		}
		int fds[3];
		for (unsigned i = 0; i < nf; i++)
			fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int r = clientd_forward(c, buf + off, l, fds, nf, collect, o);
		off += l;
		if (r < 0) {
			msgs = r;
			break;
		}
		msgs += r;
	}
	box_ipc_chan_free(c);
	return msgs;
}

static void
test_seeds(void)
{
	struct dirent **names;
	int n = scandir(CORPUS, &names, NULL, alphasort);
	if (n < 0) {
		SKIP("no corpus directory (run from the source tree)");
		return;
	}
	int ok = 0, bad = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		struct out o;
		if (strncmp(nm, "ok-", 3) == 0) {
			int r = feed_seed(nm, &o);
			if (r < 1)
				printf("#   %s: %d messages passed on (%s)\n", nm, r,
				       r < 0 ? strerror(-r) : "none");
			CHECK(r >= 1);
			ok++;
		} else if (strncmp(nm, "bad-", 4) == 0) {
			int r = feed_seed(nm, &o);
			if (r >= 0)
				printf("#   %s: not refused\n", nm);
			CHECK(r < 0);
			CHECK_INT(o.n, 0);
			bad++;
		}
		free(names[i]);
	}
	free(names);
	CHECK(ok >= 6);
	CHECK(bad >= 5);
}

static void
test_refusal_codes(void)
{
	struct out o;
	CHECK_INT(feed_seed("bad-ps-request-unknown-field", &o), -EBADMSG);
	CHECK_INT(feed_seed("bad-ps-request-with-fd", &o), -EBADMSG);
	CHECK_INT(feed_seed("bad-run-reply-from-client", &o), -EPERM);
	CHECK_INT(feed_seed("bad-version", &o), -EPROTONOSUPPORT);
}

/* The first packet of a seed as it is on file (the canonical packet boxctl sent). */
static size_t
seed_packet(const char *name, uint8_t *pkt, size_t room)
{
	char path[512];
	uint8_t hdr[3];
	snprintf(path, sizeof(path), "%s/%s", CORPUS, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t l = 0;
	if (fread(hdr, 1, 3, f) == 3) {
		l = hdr[0] | (size_t)hdr[1] << 8;
		if (l > room || fread(pkt, 1, l, f) != l)
			l = 0;
	}
	fclose(f);
	return l;
}

static void
test_canonical(void)
{
	uint8_t want[4096];
	struct out o;

	/* Envelope fields in another order: boxd gets boxctl's own bytes. */
	size_t wl = seed_packet("ok-ps-request", want, sizeof(want));
	CHECK(wl > 0);
	CHECK_INT(feed_seed("ok-ps-request-fields-reordered", &o), 1);
	CHECK_INT(o.n, 1);
	CHECK(o.len[0] == wl && memcmp(o.pkt[0], want, wl) == 0);

	/* A small RunRequest in three fragments: boxd gets one packet, boxctl's. */
	wl = seed_packet("ok-run-request-detached", want, sizeof(want));
	CHECK(wl > 0);
	CHECK_INT(feed_seed("ok-run-request-fragmented", &o), 1);
	CHECK_INT(o.n, 1);
	CHECK(o.len[0] == wl && memcmp(o.pkt[0], want, wl) == 0);

	/* What boxctl sent already is canonical: passed on byte for byte. */
	CHECK_INT(feed_seed("ok-run-request-detached", &o), 1);
	CHECK(o.n == 1 && o.len[0] == wl && memcmp(o.pkt[0], want, wl) == 0);
}

static void
test_fds_travel(void)
{
	struct out o;
	/* An attached run: RunRequest with boxctl's 3 stdio fds, then a RunControl. */
	CHECK_INT(feed_seed("ok-run-request-attached-then-control", &o), 2);
	CHECK_INT(o.n, 2);
	CHECK_INT(o.n_fds[0], 3);
	CHECK_INT(o.n_fds[1], 0);
}

int
main(void)
{
	RUN(test_seeds);
	RUN(test_refusal_codes);
	RUN(test_canonical);
	RUN(test_fds_travel);
	return tap_done();
}
