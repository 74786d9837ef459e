/* SPDX-License-Identifier: Apache-2.0 */
/*
 * telemetry_validate.c — the telemetry protocol's validator
 * (proto_telemetry.h): what the walker cannot check of a TelemetryRecords.
 * The request's content is the gateway's to decode (otlp_pb_unpack, bounded).
 * Trusts: nothing.
 */
#include <errno.h>

#include "proto_telemetry.h"
#include "validate.h"
#include "validate_macros.h"

int
box_validate_telemetry_records(const Box__TelemetryRecords *m)
{
	REQUIRE(m->target < BOX_TELEMETRY_TARGETS_MAX, -ERANGE);
	REQUIRE(m->records >= 1 && m->records <= BOX_TELEMETRY_BATCH_MAX, -ERANGE);
	REQUIRE(m->logs.len >= 2 && m->logs.len <= BOX_TELEMETRY_REQUEST_MAX, -E2BIG);
	return 0;
}
