/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gw-fake.c — a stand-in for box-gateway that plays only boxd's side of the
 * protocol, for tests of boxd alone (never installed; the gateway tests run
 * the real box-gateway). Started by boxd as box-gateway would be: fd 3 =
 * boxd, fd 4 = its policyd channel. It reads GatewayInit, writes what it
 * received (names, destinations, placeholders, placements, sandboxes)
 * (and RLIMIT_NOFILE, fd 4; never a secret's bytes, only their count) to
 * its stderr, each line prefixed "gwfake: " (boxd confines box-gateway to a
 * minimal read-only root, docs/boxd.8.md: no file of the test's is there),
 * answers GatewayReady with a fixed CA certificate (ca_pem below), or ok=false with
 * BOX_TEST_GATEWAY_FAKE_REFUSE as the message (BOX_TEST_GATEWAY_FAKE_EXIT: it
 * exits instead; BOX_TEST_GATEWAY_FAKE_DELAY_MS: it answers that late), then
 * counts GatewayListener
 * / GatewayListenerClosed until boxd closes the channel.
 * Trusts: boxd; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc.h"
#include "proto_gateway.h"

/* A self-signed P-256 CA certificate (CN=gwb-fake, valid until 2126); boxd checks only its form. */
static const char ca_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBfjCCASOgAwIBAgIUIGNEbR+bW4I+f6rx0SoIrs/cIMYwCgYIKoZIzj0EAwIw\n"
	"EzERMA8GA1UEAwwIZ3diLWZha2UwIBcNMjYxMjA2MjM1OTE0WhgPMjEyNjExMTIy\n"
	"MzU5MTRaMBMxETAPBgNVBAMMCGd3Yi1mYWtlMFkwEwYHKoZIzj0CAQYIKoZIzj0D\n"
	"AQcDQgAEdTk0i4OXdYh46RIpvtlqQIwjcrX9DBZk9NJzxZ8NsPq4D8mjjezlp/5b\n"
	"i908Af22RxnJbkr3oTV5POb22dhEQKNTMFEwHQYDVR0OBBYEFFhyoMykDl0r1UrX\n"
	"vZgb3LUbW9G6MB8GA1UdIwQYMBaAFFhyoMykDl0r1UrXvZgb3LUbW9G6MA8GA1Ud\n"
	"EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAIWOgHkFfnYqBmdcZepDUlfD\n"
	"HXllwnrFLbN5rpKJAWeYAiEAkuk52qQQ+/jXvwJRV2DGEoO6hacxPTJngVcYZA0M\n"
	"QzM=\n"
	"-----END CERTIFICATE-----\n";

/* One line of what was received (literal formats: checked by the compiler). */
#define note(fmt, a, n)                                                          \
	do {                                                                     \
		fprintf(stderr, "gwfake: " fmt, a, (unsigned long long)(n));     \
		fflush(stderr);                                                  \
	} while (0)

int
main(void)
{
	struct box_ipc_chan *c = box_ipc_chan_new(3, &box_proto_gateway, BOX_GATEWAY_ROLE_BOXD);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	struct rlimit rl;
	int type = 0;
	socklen_t tl = sizeof(type);

	if (!c)
		return 2;
	getrlimit(RLIMIT_NOFILE, &rl);
	note("nofile %s%llu\n", "", (unsigned long long)rl.rlim_cur);
	note("nofile_max %s%llu\n", "", (unsigned long long)rl.rlim_max);
	note("fd4_seqpacket %s%llu\n", "",
	     getsockopt(4, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_SEQPACKET);
	if (box_ipc_recv_wait(c, &m, 10000) != 1)
		return 3;
	const Box__GatewayInit *in = (const Box__GatewayInit *)m.msg;
	note("port %s%llu\n", "", in->port);
	note("max_connections %s%llu\n", "", in->max_connections);
	note("allow_host_loopback %s%llu\n", "", in->allow_host_loopback);
	note("hosts_file_bytes %s%llu\n", "", in->has_hosts_file ? in->hosts_file.len : 0);
	note("upstream_ca_bytes %s%llu\n", "", in->has_upstream_ca_pem ? in->upstream_ca_pem.len : 0);
	for (size_t i = 0; i < in->n_passthrough; i++)
		note("passthrough %s %llu\n", in->passthrough[i]->host, in->passthrough[i]->port);
	if (in->resolver)
		note("resolver %s %llu\n", in->resolver, 0);
	note("timeouts %s%llu\n", "", in->connect_timeout_ms * 1000000ull + in->idle_timeout_ms);
	note("max_request_body %s%llu\n", "", in->max_request_body);
	for (size_t i = 0; i < in->n_credentials; i++) {
		const Box__GatewayCredential *cr = in->credentials[i];
		note("credential %s %llu\n", cr->name, cr->n_destinations);
		for (size_t k = 0; k < cr->n_destinations; k++) {
			const Box__GatewayDestination *d = cr->destinations[k];
			note("dest %s %llu\n", d->host, d->port + (d->wildcard ? 100000u : 0));
			if (d->path_prefix)
				note("path %s %llu\n", d->path_prefix, 0);
		}
		note("placeholder %s %llu\n", cr->placeholder, cr->placement);
		note("secret_bytes %s%llu\n", "", cr->secret.len);
		note("inject %s%llu\n", "", cr->inject);
		if (cr->header)
			note("header %s %llu\n", cr->header, 0);
		if (cr->prefix)
			note("prefix [%s] %llu\n", cr->prefix, 0);
		if (cr->param)
			note("param %s %llu\n", cr->param, 0);
		for (size_t k = 0; k < cr->n_sandboxes; k++)
			note("sandbox %s %llu\n", cr->sandboxes[k], 0);
	}
	box_ipc_msg_done(&m);

	/* Tests of boxd's waiting: exit instead of answering, or answer late. */
	if (getenv("BOX_TEST_GATEWAY_FAKE_EXIT"))
		return 7;
	const char *delay = getenv("BOX_TEST_GATEWAY_FAKE_DELAY_MS");
	if (delay) {
		note("delaying %s%llu\n", "", strtoull(delay, NULL, 10));
		usleep((useconds_t)strtoul(delay, NULL, 10) * 1000);
	}
	Box__GatewayReady r = BOX__GATEWAY_READY__INIT;
	const char *refuse = getenv("BOX_TEST_GATEWAY_FAKE_REFUSE");
	if (refuse) {
		r.ok = 0;
		r.message = (char *)refuse;
	} else {
		r.ok = 1;
		r.has_ca_cert_pem = 1;
		r.ca_cert_pem.data = (uint8_t *)ca_pem;
		r.ca_cert_pem.len = sizeof(ca_pem) - 1;
	}
	if (box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_GATEWAY_READY, 1, &r.base, NULL, 0) < 0)
		return 5;
	for (;;) {
		int k = box_ipc_recv_wait(c, &m, -1);
		if (k != 1)
			break;
		if (m.type == BOX__MSG_TYPE__MSG_GATEWAY_LISTENER)
			note("listener %s %llu\n", ((const Box__GatewayListener *)m.msg)->sandbox,
			     ((const Box__GatewayListener *)m.msg)->listener_id);
		else
			note("listener_closed %s%llu\n", "",
			     ((const Box__GatewayListenerClosed *)m.msg)->listener_id);
		box_ipc_msg_done(&m);
	}
	note("eof %s%llu\n", "", 0);
	return 0;
}
