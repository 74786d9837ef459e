/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_telemetry.c — the table of the telemetry protocol
 * (proto_telemetry.h): one row. Linked only into box-policyd and box-gateway.
 * Trusts: nothing; this is data the receiver enforces.
 */
#include "proto_telemetry.h"
#include "walk.h"

#define S(x) BOX_IPC_BIT(BOX_TELEMETRY_##x)
#define FROM(x) BOX_IPC_BIT(BOX_TELEMETRY_ROLE_##x)

static int
records_row(const ProtobufCMessage *m)
{
	return box_validate_telemetry_records((const Box__TelemetryRecords *)m);
}

static const struct box_ipc_type telemetry_types[] = {
	/* A batch's request is up to 4 MiB: fragmented. */
	{ BOX__MSG_TYPE__MSG_TELEMETRY_RECORDS, "TelemetryRecords",
	  &box__telemetry_records__descriptor, records_row, NULL, BOX_IPC_PAYLOAD_MAX, 0,
	  BOX_TELEMETRY_REQUEST_MAX + (64u << 10), FROM(POLICYD), S(OPEN), BOX_TELEMETRY_OPEN,
	  NULL },
};

static const char *const telemetry_roles[BOX_TELEMETRY_N_ROLES] = { "box-policyd",
								    "box-gateway" };
static const char *const telemetry_states[BOX_TELEMETRY_N_STATES] = { "open" };

const struct box_ipc_protocol box_proto_telemetry = {
	.name = "telemetry",
	.types = telemetry_types,
	.n_types = sizeof(telemetry_types) / sizeof(telemetry_types[0]),
	.role_names = telemetry_roles,
	.n_roles = BOX_TELEMETRY_N_ROLES,
	.state_names = telemetry_states,
	.n_states = BOX_TELEMETRY_N_STATES,
	.decode = box_proto_decode,
};
