/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_proto_telemetry.c — the telemetry protocol (proto/telemetry_validate.c,
 * proto/proto_telemetry.c) and what the init messages carry for an otlp
 * [telemetry.NAME] target: GatewayInit's GatewayTelemetryTarget and its fd
 * rule (proto/gateway_validate.c, proto/proto_gateway.c), PolicyInit's
 * otlp_include (proto/policy_validate.c) — good and hostile values, and the
 * table's sender and reassembly on a real socketpair.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"
#include "proto/policy_validate.h"
#include "proto/proto_gateway.h"
#include "proto/proto_telemetry.h"
#include "tap.h"

static void
test_records(void)
{
	Box__TelemetryRecords m = BOX__TELEMETRY_RECORDS__INIT;
	m.target = 0;
	m.records = 1;
	m.logs.data = (uint8_t *)"{}";
	m.logs.len = 2;
	CHECK_INT(box_validate_telemetry_records(&m), 0);
	m.target = 15;
	m.records = 512;
	CHECK_INT(box_validate_telemetry_records(&m), 0);
	m.target = 16;
	CHECK_INT(box_validate_telemetry_records(&m), -ERANGE);
	m.target = 0;
	m.records = 0;
	CHECK_INT(box_validate_telemetry_records(&m), -ERANGE);
	m.records = 513;
	CHECK_INT(box_validate_telemetry_records(&m), -ERANGE);
	m.records = 1;
	m.logs.len = 1;
	CHECK_INT(box_validate_telemetry_records(&m), -E2BIG);
	m.logs.len = BOX_TELEMETRY_REQUEST_MAX + 1;
	CHECK_INT(box_validate_telemetry_records(&m), -E2BIG);
}

/* A GatewayInit that passes, with one otlp target T. */
static void
init_with(Box__GatewayInit *in, Box__GatewayTelemetryTarget *t, Box__GatewayTelemetryTarget **v)
{
	box__gateway_init__init(in);
	in->box_name = "demo";
	in->box_id = "0123456789ab";
	in->port = 3128;
	in->connect_timeout_ms = 10000;
	in->idle_timeout_ms = 300000;
	in->max_connections = 1024;
	in->max_request_body = 1 << 20;
	box__gateway_telemetry_target__init(t);
	t->name = "otel";
	t->host = "collector.example.com";
	t->port = 4318;
	t->path = "";
	t->include = 31;
	v[0] = t;
	in->telemetry_targets = v;
	in->n_telemetry_targets = 1;
}

static void
test_target(void)
{
	Box__GatewayInit in;
	Box__GatewayTelemetryTarget t, *v[1];

	init_with(&in, &t, v);
	CHECK_INT(box_validate_gateway_init(&in), 0);
	t.path = "/otlp/base";
	t.tls = true;
	t.json = true;
	CHECK_INT(box_validate_gateway_init(&in), 0);
	t.path = "/otlp/";
	CHECK(box_validate_gateway_init(&in) < 0); /* boxd drops the trailing '/' */
	t.path = "otlp";
	CHECK(box_validate_gateway_init(&in) < 0);
	t.path = "";
	t.host = "Collector.example.com";
	CHECK(box_validate_gateway_init(&in) < 0);
	t.host = "a b";
	CHECK(box_validate_gateway_init(&in) < 0);
	t.host = "127.0.0.1";
	t.port = 0;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.port = 65536;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.port = 4318;
	t.include = 0;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.include = 32;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.include = 7;
	t.name = "no/slash";
	CHECK(box_validate_gateway_init(&in) < 0);
	t.name = "otel";

	/* The credential: a header (token name, prefix without CR/LF) or basic_auth. */
	t.has_secret = 1;
	t.secret.data = (uint8_t *)"s3cret";
	t.secret.len = 6;
	CHECK(box_validate_gateway_init(&in) < 0); /* no placement */
	t.has_placement = 1;
	t.placement = BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_HEADER;
	t.header = "Authorization";
	t.prefix = "Bearer ";
	CHECK_INT(box_validate_gateway_init(&in), 0);
	t.prefix = "Bearer\r\nX-Evil: 1";
	CHECK(box_validate_gateway_init(&in) < 0);
	t.prefix = "";
	t.header = "Bad Header";
	CHECK(box_validate_gateway_init(&in) < 0);
	t.header = NULL;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.placement = BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH;
	t.prefix = NULL;
	CHECK_INT(box_validate_gateway_init(&in), 0);
	t.placement = BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_QUERY_PARAM;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.placement = BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH;
	t.secret.data = (uint8_t *)"a\nb";
	t.secret.len = 3;
	CHECK(box_validate_gateway_init(&in) < 0);
	t.has_secret = 0;
	CHECK(box_validate_gateway_init(&in) < 0); /* a placement without a secret */
	t.has_placement = 0;
	CHECK_INT(box_validate_gateway_init(&in), 0);

	/* At most BOX_TELEMETRY_TARGETS_MAX. */
	Box__GatewayTelemetryTarget *many[17];
	for (int i = 0; i < 17; i++)
		many[i] = &t;
	in.telemetry_targets = many;
	in.n_telemetry_targets = 16;
	CHECK_INT(box_validate_gateway_init(&in), 0);
	in.n_telemetry_targets = 17;
	CHECK(box_validate_gateway_init(&in) < 0);
}

static void
test_policy_init(void)
{
	Box__PolicyInit in = BOX__POLICY_INIT__INIT;
	uint32_t inc[17];
	in.box_name = "demo";
	in.box_id = "0123456789ab";
	in.home = "/home/me";
	for (int i = 0; i < 17; i++)
		inc[i] = 7;
	in.otlp_include = inc;
	in.n_otlp_include = 2;
	CHECK_INT(box_validate_policy_init(&in), 0);
	inc[1] = 32;
	CHECK(box_validate_policy_init(&in) < 0);
	inc[1] = 7;
	in.n_otlp_include = 17;
	CHECK(box_validate_policy_init(&in) < 0);
}

struct pair {
	int sv[2];
	struct box_ipc_chan *c[2];
};

/* [0] box-policyd's end (its peer the gateway), [1] box-gateway's (its peer policyd). */
static void
pair_open(struct pair *p)
{
	if (box_ipc_socketpair(p->sv, true) < 0)
		abort();
	p->c[0] = box_ipc_chan_new(p->sv[0], &box_proto_telemetry, BOX_TELEMETRY_ROLE_GATEWAY);
	p->c[1] = box_ipc_chan_new(p->sv[1], &box_proto_telemetry, BOX_TELEMETRY_ROLE_POLICYD);
	if (!p->c[0] || !p->c[1])
		abort();
}

static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		box_ipc_chan_free(p->c[i]);
		close(p->sv[i]);
	}
}

static void
test_table(void)
{
	struct pair p;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	Box__TelemetryRecords r = BOX__TELEMETRY_RECORDS__INIT;
	size_t big = 100u << 10; /* fragmented: over one packet, within the socket buffer */
	char *req = malloc(big);
	if (!req)
		abort();
	memset(req, 'x', big);
	r.target = 3;
	r.records = 512;
	r.logs.data = (uint8_t *)req;
	r.logs.len = big;

	pair_open(&p);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_TELEMETRY_RECORDS, 0, &r.base, NULL,
				    0),
		  0);
	CHECK_INT(box_ipc_recv_wait(p.c[1], &m, 2000), 1);
	CHECK(m.type == BOX__MSG_TYPE__MSG_TELEMETRY_RECORDS && m.msg &&
	      ((Box__TelemetryRecords *)m.msg)->logs.len == big &&
	      ((Box__TelemetryRecords *)m.msg)->target == 3);
	box_ipc_msg_done(&m);
	/* The gateway sends nothing on it: box-policyd's end refuses what comes. */
	r.logs.len = 2;
	(void)box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_TELEMETRY_RECORDS, 0, &r.base, NULL, 0);
	CHECK_INT(box_ipc_recv_wait(p.c[0], &m, 2000), -EPERM);
	box_ipc_msg_done(&m);
	/* A record count the validator refuses is refused by the receiver. */
	r.records = 513;
	r.logs.len = 2;
	(void)box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_TELEMETRY_RECORDS, 0, &r.base, NULL, 0);
	CHECK(box_ipc_recv_wait(p.c[1], &m, 2000) < 0);
	box_ipc_msg_done(&m);
	pair_close(&p);
	free(req);
}

/* GatewayInit's fds: the files, then the channel when there is a target. */
static void
test_gateway_fds(void)
{
	Box__GatewayInit in;
	Box__GatewayTelemetryTarget t, *v[1];
	init_with(&in, &t, v);
	int sv[2], fds[2];
	if (box_ipc_socketpair(sv, true) < 0)
		abort();
	fds[0] = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);
	fds[1] = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);
	struct box_ipc_chan *a = box_ipc_chan_new(sv[0], &box_proto_gateway, BOX_GATEWAY_ROLE_GATEWAY);
	struct box_ipc_chan *b = box_ipc_chan_new(sv[1], &box_proto_gateway, BOX_GATEWAY_ROLE_BOXD);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	/* one target, no file: exactly one fd */
	CHECK(box_ipc_chan_send(a, BOX__MSG_TYPE__MSG_GATEWAY_INIT, 1, &in.base, fds, 0) < 0);
	CHECK(box_ipc_chan_send(a, BOX__MSG_TYPE__MSG_GATEWAY_INIT, 1, &in.base, fds, 2) < 0);
	CHECK_INT(box_ipc_chan_send(a, BOX__MSG_TYPE__MSG_GATEWAY_INIT, 1, &in.base, fds, 1), 0);
	CHECK_INT(box_ipc_recv_wait(b, &m, 2000), 1);
	CHECK(m.n_fds == 1);
	box_ipc_msg_done(&m);
	box_ipc_chan_free(a);
	box_ipc_chan_free(b);
	close(sv[0]);
	close(sv[1]);
	close(fds[0]);
	close(fds[1]);
}

int
main(void)
{
	RUN(test_records);
	RUN(test_target);
	RUN(test_policy_init);
	RUN(test_table);
	RUN(test_gateway_fds);
	return tap_done();
}
