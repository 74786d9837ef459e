/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_telemetry.h — the telemetry protocol: box-policyd -> box-gateway
 * (telemetry.proto), on the channel boxd makes for a box with a
 * [telemetry.NAME] kind = otlp target.
 *
 * The table (proto_telemetry.c) is the receiver's rules; proto/README.md is
 * the human version. Roles: box-policyd, box-gateway. One state, open:
 * TelemetryRecords from box-policyd, any number; nothing the other way.
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_TELEMETRY_H
#define BOX_PROTO_TELEMETRY_H

#include "ipc.h"
#include "telemetry.pb-c.h"

enum box_telemetry_role {
	BOX_TELEMETRY_ROLE_POLICYD,
	BOX_TELEMETRY_ROLE_GATEWAY,
	BOX_TELEMETRY_N_ROLES,
};

enum box_telemetry_state {
	BOX_TELEMETRY_OPEN,
	BOX_TELEMETRY_N_STATES,
};

/* Caps (docs/box.ini.5.md [telemetry.NAME]): records a batch, bytes of its request. */
#define BOX_TELEMETRY_BATCH_MAX 512u
#define BOX_TELEMETRY_REQUEST_MAX (4u << 20)

extern const struct box_ipc_protocol box_proto_telemetry;

int box_validate_telemetry_records(const Box__TelemetryRecords *m);

#endif
