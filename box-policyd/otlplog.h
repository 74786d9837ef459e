/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlplog.h — box's own records as OTLP log records in the OTLP/JSON encoding
 * (docs/box.ini.5.md [telemetry.NAME]): one decision (event name
 * box.policy.decision) or one control event (box.control), each a LogRecord
 * object appended to a batch; a batch becomes one ExportLogsServiceRequest
 * line with the box.name / box.id resource and the scope "box" (a file
 * target's), or one such request in the binary protobuf encoding (an otlp
 * target's: box-gateway sends it on as it is).
 * Trusts: its strings were validated as UTF-8 by the IPC layer (a string that
 * is not fails the record whole, never half a record).
 */
#ifndef BOX_POLICYD_OTLPLOG_H
#define BOX_POLICYD_OTLPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "declog.h"
#include "jsonl.h"

/*
 * A batch of LogRecord objects, comma-separated, for one target; with pb set
 * (before its first record) LogRecords in the binary encoding instead.
 */
struct otlplog_batch {
	struct jsonl j;
	size_t n;            /* records in it */
	struct jsonl line;   /* otlplog_line's result, its buffer kept between batches */
	bool pb;             /* the binary protobuf encoding (otlplog_request), not OTLP/JSON */
};

/* Append decision E as a LogRecord (seq: its number in this run). 0 or negative errno. */
int otlplog_decision(struct otlplog_batch *b, const struct declog_entry *e, uint64_t seq);
/*
 * Append a control record: EVENT ("policy.loaded", "box.stopped"), a human
 * MESSAGE, and up to N_ATTRS extra string attributes KEYS[i] = VALUES[i].
 */
int otlplog_control(struct otlplog_batch *b, int64_t time_ns, const char *event,
		    const char *message, const char *const *keys, const char *const *values,
		    size_t n_attrs);
/* Append a kernel refusal record (event box.kernel.refusal, WARN): N_ATTRS string attributes. */
int otlplog_kernel(struct otlplog_batch *b, int64_t time_ns, const char *const *keys,
		   const char *const *values, size_t n_attrs);
/*
 * The batch as one ExportLogsServiceRequest line ("\n" ended) for box BOX
 * (id ID): *OUT (*LEN bytes) is the batch's own buffer, valid until its next
 * otlplog_line or otlplog_batch_free; the batch is emptied. 0, or -ENOMEM /
 * -EINVAL (box or id not UTF-8, or a pb batch); -ENODATA when the batch is empty.
 */
int otlplog_line(struct otlplog_batch *b, const char *box, const char *id, char **out,
		 size_t *len);
/*
 * A pb batch as one ExportLogsServiceRequest in the binary protobuf encoding,
 * the same resource and scope: *OUT (*LEN bytes) points into the batch's
 * buffer, valid until its next record or otlplog_batch_free; the batch is
 * emptied. 0, or -ENOMEM / -EINVAL (not a pb batch, or box or id not
 * UTF-8); -ENODATA when the batch is empty.
 */
int otlplog_request(struct otlplog_batch *b, const char *box, const char *id, uint8_t **out,
		    size_t *len);
/* The bytes of the records in B so far. */
size_t otlplog_batch_bytes(const struct otlplog_batch *b);
void otlplog_batch_free(struct otlplog_batch *b);

#endif
