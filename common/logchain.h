/* SPDX-License-Identifier: Apache-2.0 */
/*
 * logchain.h — the hash chain of a box's decisions.jsonl (docs/boxctl.1.md "The
 * chain") and the record boxd keeps of its head.
 *
 * Every line box-policyd writes ends with "seq":N,"prev":"HEX": N counts the lines of
 * the box's chain (1, 2, …, across runs and rotations) and HEX is the SHA-256 of the
 * previous line's bytes without its newline; the first line ever has prev =
 * LOGCHAIN_GENESIS_HEX (64 zeros, seq 0 before it). The head is the SHA-256 of the
 * last line. boxd keeps a record of it (the head box-policyd last reported, whether
 * its run ended with a seal line, the last two rotation points), in a file the box's
 * owner cannot write when boxd runs as root (LOGCHAIN_SERVICE_DIR/UID/KEY, KEY the
 * SHA-256 of the state dir's path), else in the state dir (LOGCHAIN_STATE_FILE),
 * where it proves nothing against the owner.
 *
 * The record is text, one "key value" a line:
 *   box-log-chain 1
 *   seq N
 *   head HEX
 *   sealed 0|1
 *   rotations N        (how many times the log was rotated, ever)
 *   rotated SEQ HEX    (0 to 2 lines, older first: the last line of each rotated file)
 *
 * Library code: negative errno, never logs.
 * Trusts: nothing in a record's text (parsed whole, every number through parse.h).
 */
#ifndef BOX_LOGCHAIN_H
#define BOX_LOGCHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGCHAIN_HASH_LEN 32
#define LOGCHAIN_HEX_LEN 64
#define LOGCHAIN_GENESIS_HEX "0000000000000000000000000000000000000000000000000000000000000000"
/* A root boxd's records: LOGCHAIN_SERVICE_DIR/UID/KEY (root-owned, the owner's group may read). */
#define LOGCHAIN_SERVICE_DIR "/var/lib/box/chain"
/* An unprivileged boxd's record, in the box's state dir. */
#define LOGCHAIN_STATE_FILE "decisions.chain"
/* A record is never longer. */
#define LOGCHAIN_RECORD_MAX 512

struct logchain_point {
	uint64_t seq; /* 0: genesis */
	uint8_t head[LOGCHAIN_HASH_LEN];
};

struct logchain_record {
	struct logchain_point head;
	bool sealed;
	uint64_t rotations;
	struct logchain_point rotated[2]; /* older first */
	size_t n_rotated;
};

/* HASH as 64 lowercase hex digits and a NUL. */
void logchain_hex(const uint8_t hash[LOGCHAIN_HASH_LEN], char out[LOGCHAIN_HEX_LEN + 1]);
/* 64 hex digits (lower case) at S: 0, or -EINVAL. */
int logchain_unhex(const char *s, size_t n, uint8_t hash[LOGCHAIN_HASH_LEN]);
/* The record as text into BUF (LOGCHAIN_RECORD_MAX is enough): its length, or -ENOSPC. */
int logchain_record_format(const struct logchain_record *r, char *buf, size_t len);
/* TEXT (LEN bytes): 0 with *R, or -EINVAL (anything but the format above). */
int logchain_record_parse(const char *text, size_t len, struct logchain_record *r);
/* The log was rotated after P: count it, keep P as the newest rotation point. */
void logchain_record_rotated(struct logchain_record *r, const struct logchain_point *p);
/* KEY of a root boxd's record for STATE_DIR: SHA-256 of the path, in hex. */
void logchain_key(const char *state_dir, char out[LOGCHAIN_HEX_LEN + 1]);
/* SHA-256 of LEN bytes at DATA. */
void logchain_sha256(const void *data, size_t len, uint8_t out[LOGCHAIN_HASH_LEN]);

#endif
