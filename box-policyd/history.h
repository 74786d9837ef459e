/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history.h — box-policyd's durable event history: an append-only file of
 * framed records in the STATE/policy/ directory boxd passes (docs/design.md).
 *
 * Frame: u32 len | u32 crc32c(payload) | u32 crc32c(the 8 bytes before) |
 * payload (len bytes: u8 type, then the record's bytes), little-endian. The
 * first record of every file is a header (type 0, "box-history 1").
 *
 * Recovery reads every record in order. Only the last record can be torn (a
 * crash in the middle of an append): a frame that runs past the end of the
 * file, a header cut short, a zero-filled tail, or a last record whose
 * payload checksum fails is dropped and the file truncated before it. Any
 * other damage (a bad checksum or length anywhere before the last record, an
 * unknown header) is corruption: history_open() fails with -EBADMSG and a
 * message saying where, and the caller refuses to start — never an empty
 * history in silence.
 *
 * The file is opened only relative to the directory fd (openat, O_NOFOLLOW);
 * nothing here opens a path. After a failed write the history is poisoned:
 * every later append fails (the caller denies).
 * Trusts: nothing in the file; every record is checked.
 */
#ifndef BOX_POLICYD_HISTORY_H
#define BOX_POLICYD_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_FILE "history"
#define HISTORY_FRAME_HEADER 12u
#define HISTORY_RECORD_MAX (1u << 20) /* payload bytes of one record */

struct history;

/* Called for every intact record (not the file header) during recovery. */
typedef int (*history_record_fn)(uint8_t type, const uint8_t *data, size_t len, uint64_t offset,
				 void *userdata);

/*
 * Open (creating, mode 0600) NAME in DIRFD and recover it. Returns 0 and
 * *ret, or negative errno: -EBADMSG corruption (why says where), -ENOTDIR,
 * -ELOOP, -EIO... or the callback's error. `why` may be NULL.
 */
int history_open(int dirfd, const char *name, history_record_fn cb, void *userdata,
		 struct history **ret, char *why, size_t why_len);
/* Close. NULL-tolerant; returns NULL. */
struct history *history_free(struct history *h);

/*
 * Append one record (type 1..255, 0 < len + 1 <= HISTORY_RECORD_MAX) with a
 * single write at the end of the file; *ret_offset (may be NULL) receives its
 * offset. Not synced: call history_sync(). On failure the file is cut back
 * to its last good size when possible and the history is poisoned.
 */
int history_append(struct history *h, uint8_t type, const void *data, size_t len,
		   uint64_t *ret_offset);
/* fdatasync when something was appended since the last sync; poisons on failure. */
int history_sync(struct history *h);
bool history_dirty(const struct history *h);
/* How many fdatasync calls history_sync has made (for the exit summary and tests). */
uint64_t history_syncs(const struct history *h);
bool history_failed(const struct history *h);
uint64_t history_size(const struct history *h);
/* Records recovered by history_open (header excluded). */
uint64_t history_recovered(const struct history *h);
/* Bytes of a torn last record dropped by history_open. */
uint64_t history_dropped_bytes(const struct history *h);
/* Force failures, for tests: every later write fails with -EIO. */
void history_poison(struct history *h);

/* One record for history_compact's new head. */
struct history_rec {
	uint8_t type;
	const void *data;
	size_t len;
};

/*
 * Rewrite the file atomically as: header, the HEAD records, then the bytes
 * of the current file from KEEP_FROM (a record offset, or history_size() for
 * none) to its end. Written to NAME.new, synced, renamed over NAME, the
 * directory synced. On failure the old file stays in use (and not poisoned).
 */
int history_compact(struct history *h, const struct history_rec *head, size_t n_head,
		    uint64_t keep_from);

/* CRC-32C (Castagnoli), exported for tests. */
uint32_t history_crc32c(uint32_t crc, const void *data, size_t len);

#endif
