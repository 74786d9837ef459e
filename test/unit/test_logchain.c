/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_logchain.c — the decision log chain's record and hashes (common/logchain.h)
 * and box-policyd's chaining of a line (box-policyd/declog.c declog_chain):
 * a record round-trips through its text; every other text is refused (each
 * key once, the version, 64 lower-case hex digits, at most two rotation
 * points in order and none past the head, a newline after every line); a
 * rotation keeps the last two points; a chained line ends with seq and prev
 * and its head is the SHA-256 of its bytes without the newline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box-policyd/declog.h"
#include "logchain.h"
#include "tap.h"

static void
test_hex(void)
{
	uint8_t h[LOGCHAIN_HASH_LEN], back[LOGCHAIN_HASH_LEN];
	char hex[LOGCHAIN_HEX_LEN + 1];

	/* SHA-256("abc"), FIPS 180-2's example */
	logchain_sha256("abc", 3, h);
	logchain_hex(h, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK_INT(logchain_unhex(hex, strlen(hex), back), 0);
	CHECK(memcmp(h, back, sizeof(h)) == 0);
	hex[5] = 'A'; /* upper case is not what the writers write */
	CHECK_INT(logchain_unhex(hex, strlen(hex), back), -EINVAL);
	CHECK_INT(logchain_unhex(hex, 63, back), -EINVAL);
	char key[LOGCHAIN_HEX_LEN + 1];
	logchain_key("abc", key);
	CHECK_STR(key, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void
test_record_round_trip(void)
{
	struct logchain_record r = {.head = {.seq = 537}, .sealed = true};
	char buf[LOGCHAIN_RECORD_MAX];

	memset(r.head.head, 0xcd, sizeof(r.head.head));
	for (uint64_t i = 1; i <= 3; i++) {
		struct logchain_point p = {.seq = 100 * i};
		memset(p.head, (int)i, sizeof(p.head));
		logchain_record_rotated(&r, &p);
	}
	CHECK_INT((int)r.rotations, 3);
	CHECK_INT((int)r.n_rotated, 2);
	CHECK_INT((int)r.rotated[0].seq, 200);
	CHECK_INT((int)r.rotated[1].seq, 300);
	int n = logchain_record_format(&r, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n < sizeof(buf));
	struct logchain_record back;
	CHECK_INT(logchain_record_parse(buf, (size_t)n, &back), 0);
	CHECK(back.head.seq == 537 && back.sealed && back.rotations == 3 && back.n_rotated == 2);
	CHECK(memcmp(&back.head, &r.head, sizeof(r.head)) == 0);
	CHECK(memcmp(back.rotated, r.rotated, sizeof(r.rotated)) == 0);
	CHECK_INT(logchain_record_format(&r, buf, 40), -ENOSPC);
}

static void
test_record_refused(void)
{
	static const char *const hx =
	    "0000000000000000000000000000000000000000000000000000000000000000";
	char good[512], bad[512];
	struct logchain_record r;

	(void)snprintf(good, sizeof(good),
		       "box-log-chain 1\nseq 5\nhead %s\nsealed 0\nrotations 1\nrotated 3 %s\n", hx,
		       hx);
	CHECK_INT(logchain_record_parse(good, strlen(good), &r), 0);
	const char *const cases[] = {
	    "box-log-chain 2\nseq 5\nhead H\nsealed 0\nrotations 0\n",	      /* version */
	    "box-log-chain 1\nseq 5\nseq 5\nhead H\nsealed 0\nrotations 0\n", /* twice */
	    "box-log-chain 1\nseq 5\nhead H\nrotations 0\n",		      /* no sealed */
	    "box-log-chain 1\nseq -5\nhead H\nsealed 0\nrotations 0\n",	      /* a sign */
	    "box-log-chain 1\nseq 5\nhead H\nsealed 2\nrotations 0\n",	      /* not 0/1 */
	    "box-log-chain 1\nseq 5\nhead H\nsealed 0\nrotations 0\nextra 1\n",
	    "box-log-chain 1\nseq 5\nhead H\nsealed 0\nrotations 0",		    /* torn */
	    "box-log-chain 1\nseq 5\nhead H\nsealed 0\nrotations 0\nrotated 3 H\n", /* > rotations
										     */
	    "box-log-chain 1\nseq 5\nhead H\nsealed 0\nrotations 5\nrotated 9 H\n", /* past head */
	    "box-log-chain 1\nseq 5\nhead H\nsealed 0\nrotations 5\nrotated 4 H\nrotated 3 H\n",
	    "box-log-chain 1\nseq 5\nhead H\nsealed 0\nrotations 5\nrotated 1 H\nrotated 2 H\n"
	    "rotated 3 H\n",
	    "box-log-chain 1\nseq 5\nhead 00\nsealed 0\nrotations 0\n", /* short hash */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* H: a valid hash, so that only the case's own fault is there */
		size_t o = 0;
		for (const char *p = cases[i]; *p && o + 70 < sizeof(bad); p++) {
			if (*p == 'H') {
				memcpy(bad + o, hx, 64);
				o += 64;
			} else {
				bad[o++] = *p;
			}
		}
		bad[o] = '\0';
		int rr = logchain_record_parse(bad, o, &r);
		CHECK_INT(rr, -EINVAL);
		if (rr != -EINVAL)
			printf("#   case %zu was taken\n", i);
	}
}

/* Two lines chained: seq and prev at their end, the head their SHA-256. */
static void
test_chain_lines(void)
{
	struct declog_chain c = {.seq = 0};
	char *buf = NULL;
	size_t len = 0, cap = 0;

	CHECK_INT(
	    declog_append_seal(1700000000000000000LL, "b", "0123456789ab", 0, &buf, &len, &cap), 0);
	CHECK_INT(declog_chain(&c, &buf, &len, &cap, 0), 0);
	size_t first = len;
	CHECK_INT(
	    declog_append_seal(1700000000000000000LL, "b", "0123456789ab", 1, &buf, &len, &cap), 0);
	CHECK_INT(declog_chain(&c, &buf, &len, &cap, first), 0);
	CHECK_INT((int)c.seq, 2);
	uint8_t h[LOGCHAIN_HASH_LEN];
	char hex[LOGCHAIN_HEX_LEN + 1], want[256];
	logchain_sha256(buf, first - 1, h);
	logchain_hex(h, hex);
	(void)snprintf(want, sizeof(want),
		       "{\"time\":\"2023-11-14T22:13:20.000Z\",\"time_ns\":1700000000000000000,"
		       "\"box\":\"b\",\"id\":\"0123456789ab\",\"seal\":\"end\",\"lines\":1,"
		       "\"seq\":2,\"prev\":\"%s\"}\n",
		       hex);
	CHECK_STR(buf + first, want);
	CHECK(strstr(buf, ",\"seq\":1,\"prev\":\"" LOGCHAIN_GENESIS_HEX "\"}\n") ==
	      buf + first - 84);
	logchain_sha256(buf + first, len - first - 1, h);
	CHECK(memcmp(h, c.head, sizeof(h)) == 0);
	/* not a line there: refused, nothing changes */
	CHECK_INT(declog_chain(&c, &buf, &len, &cap, len), -EINVAL);
	CHECK_INT((int)c.seq, 2);
	free(buf);
}

int
main(void)
{
	RUN(test_hex);
	RUN(test_record_round_trip);
	RUN(test_record_refused);
	RUN(test_chain_lines);
	return tap_done();
}
