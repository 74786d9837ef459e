/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_otlp_json.c — the OTLP receiver's decoders on arbitrary bytes
 * (proto/otlp_json.c, proto/otlp_tag.c): an agent controls every byte of
 * what it POSTs to /v1/logs, /v1/traces and /v1/metrics.
 * Input: the first byte picks the request (its value mod 3: logs, traces,
 * metrics) and, bit 2, the encoding (set: binary protobuf, else OTLP/JSON);
 * the rest is the body.
 * Properties (abort() on violation): a parse returns 0 or -EBADMSG / -E2BIG
 * (never anything else, never a half-made message); a parsed request is
 * re-tagged (box.name, box.id, box.source, no other box.*), printed, and the
 * printed text parses again and prints the same (a fixed point); a binary
 * body goes through otlp_pb_unpack (nesting checked, then protobuf-c with a
 * capped allocator).
 * Seeds: test/fuzz/corpus/otlp_json.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUDGET (4u << 20)
#define PRINT_MAX (64u << 20)

static const ProtobufCMessageDescriptor *const descs[3] = {
	&box__otlp__export_logs_service_request__descriptor,
	&box__otlp__export_trace_service_request__descriptor,
	&box__otlp__export_metrics_service_request__descriptor,
};

static void
check_printed(const ProtobufCMessage *m)
{
	char *a = NULL, *b = NULL;
	size_t al, bl;
	ProtobufCMessage *again = NULL;

	if (otlp_json_print(m, PRINT_MAX, &a, &al) != 0)
		abort();
	/* What box prints, box parses: the budget is what the printed size can need. */
	if (otlp_json_parse(m->descriptor, a, al, (size_t)-1, &again) != 0)
		abort();
	if (otlp_json_print(again, PRINT_MAX, &b, &bl) != 0 || al != bl || memcmp(a, b, al) != 0)
		abort();
	protobuf_c_message_free_unpacked(again, NULL);
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ProtobufCMessage *m = NULL;

	if (size < 1)
		return 0;
	const ProtobufCMessageDescriptor *d = descs[data[0] % 3];
	bool binary = data[0] & 4;
	data++;
	size--;
	if (binary) {
		int r = otlp_pb_unpack(d, data, size, &m);
		if (r != 0 && r != -EBADMSG && r != -E2BIG)
			abort();
		if ((r == 0) != (m != NULL))
			abort();
		if (r != 0)
			return 0;
	} else {
		int r = otlp_json_parse(d, (const char *)data, size, BUDGET, &m);
		if (r != 0 && r != -EBADMSG && r != -E2BIG)
			abort();
		if ((r == 0) != (m != NULL))
			abort();
		if (r != 0)
			return 0;
	}
	if (otlp_tag_agent(m, "fuzz", "0123456789ab") != 0)
		abort();
	check_printed(m);
	protobuf_c_message_free_unpacked(m, NULL);
	return 0;
}
