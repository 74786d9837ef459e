/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net.c — step 3: the box's own network namespace.
 *
 * PID 1 brings `lo` up with two ioctls (no netlink library) and, for a
 * sandbox that reaches the gateway, listens on 127.0.0.1:<gateway port>
 * inside the namespace and sends that fd to boxd on fd 4 (SCM_RIGHTS); then
 * the same for the OTLP receiver's port when the plan has one.
 * Nothing else exists: no other interface, no route.
 * Trusts: the validated plan (port 1..65535).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "plan_validate.h"
#include "trampoline.h"

static int
loopback_up(void)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return -errno;
	return 0;
}

static int
listener_open(uint16_t port)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	int one = 1;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		return -errno;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -errno;
	if (listen(s, 128) < 0)
		return -errno;
	return TAKE_FD(s);
}

/* Listen on 127.0.0.1:PORT in the namespace and send the socket to boxd on fd 4. */
static void
listener_send(struct tramp *t, uint32_t port)
{
	int r;
	_cleanup_close_ int l = listener_open((uint16_t)port);
	if (l < 0)
		tramp_fail(t, STEP_NETWORK, -l, "listening on 127.0.0.1:%u", port);

	Box__ListenerFd lf = BOX__LISTENER_FD__INIT;
	lf.port = port;
	Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_LISTENER;
	s.listener = &lf;
	uint8_t buf[64];
	size_t len = box__trampoline_status__get_packed_size(&s);
	if (len > sizeof(buf))
		tramp_fail(t, STEP_NETWORK, EMSGSIZE, "listener message");
	box__trampoline_status__pack(&s, buf);
	r = status_send_fd(t->status_fd, buf, len, l);
	if (r < 0)
		tramp_fail(t, STEP_NETWORK, -r, "sending the listener on fd 4");
}

void
network_setup(struct tramp *t)
{
	const Box__Plan *p = t->plan;

	if (!p->contain_egress)
		return;
	int r = loopback_up();
	if (r < 0)
		tramp_fail(t, STEP_NETWORK, -r, "bringing lo up");
	if (!p->has_gateway_port)
		return;
	listener_send(t, p->gateway_port);
	/* the agent's OTLP receiver (docs/box.ini.5.md [telemetry.NAME]), served by the gateway too */
	if (p->has_otlp_port)
		listener_send(t, p->otlp_port);
}
