/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_recheck_reply.c — boxd's intake of box-recheck's answer on arbitrary
 * bytes: one packet fed to a recheck channel as boxd's end sees it (role
 * box-recheck, state "checking", only RecheckReply allowed: common/ipc.c
 * with proto/proto_recheck.c's table and box_validate_recheck_reply), then
 * boxd's record parser (boxd/recheck_parse.c) into a struct recheck_result.
 *
 * Input: byte 0 = the fds that travel with the packet (bits 0-2, mod 6:
 * that many /dev/null descriptors) and detach (bit 3); the rest is the
 * packet. Properties: an accepted reply without problems has argv0,
 * program and workspace, every path (records, masks, via, interpreters,
 * deny dirs, sockets) is absolute and clean, masks and named sockets are
 * within RECHECK_MASKS_MAX / RECHECK_SOCKETS_SHOWN, scan_cut is "time" or
 * "entries", and exactly the 5 (6 with detach) state fds were taken; a
 * refused reply takes no fd; whatever happens, after recheck_result_clear
 * the result is empty and every fd given with the packet is closed.
 * Seeds (test/fuzz/corpus/recheck_reply) are the real replies of
 * box-recheck recorded by test/unit/test_recheck.c
 * (BOX_RECHECK_WRITE_CORPUS=DIR build/test/unit/test_recheck).
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxd/boxd.h"
#include "boxd/recheck_parse.h"
#include "ipc.h"
#include "proto/proto_recheck.h"
#include "proto/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_path(const char *p)
{
	if (!p || !box_valid_path(p))
		abort();
}

static void
check_paths(char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_path(v[i]);
}

static void
check_cleared(const struct recheck_result *res)
{
	if (res->argv0 || res->program || res->workspace || res->state_dir || res->masks ||
	    res->mask_via || res->mask_is_dir || res->sockets || res->interpreters ||
	    res->deny_dirs || res->scan_cut || res->problems || res->n_masks || res->n_sockets ||
	    res->n_problems || res->n_interpreters || res->n_deny_dirs || res->sockets_total)
		abort();
	if (res->state_dirfd != -1 || res->lock_fd != -1 || res->log_fd != -1 ||
	    res->policy_dirfd != -1 || res->decisions_fd != -1 || res->ca_fd != -1)
		abort();
}

/* What an accepted reply must look like in boxd's hands. */
static void
check_accepted(const struct recheck_result *res, const Box__RecheckReply *rep, bool detach)
{
	int fds[] = { res->state_dirfd, res->lock_fd, res->policy_dirfd, res->decisions_fd,
		      res->ca_fd };

	if (res->n_problems != rep->n_problems)
		abort();
	if (res->n_problems) {
		/* refused: no state file taken */
		for (size_t i = 0; i < 5; i++)
			if (fds[i] != -1)
				abort();
		if (res->log_fd != -1)
			abort();
		for (size_t i = 0; i < res->n_problems; i++)
			if (!res->problems[i] || !res->problems[i]->message)
				abort();
	} else {
		check_path(res->argv0);
		check_path(res->program);
		check_path(res->workspace);
		for (size_t i = 0; i < 5; i++)
			if (fds[i] < 0 || fcntl(fds[i], F_GETFD) < 0)
				abort();
		if ((res->log_fd >= 0) != detach)
			abort();
	}
	check_paths(res->interpreters, res->n_interpreters);
	check_paths(res->deny_dirs, res->n_deny_dirs);
	check_paths(res->masks, res->n_masks);
	for (size_t i = 0; i < res->n_masks; i++)
		if (res->mask_via[i])
			check_path(res->mask_via[i]);
	check_paths(res->sockets, res->n_sockets);
	if (res->n_masks > RECHECK_MASKS_MAX || res->n_sockets > RECHECK_SOCKETS_SHOWN)
		abort();
	if (res->scan_cut && strcmp(res->scan_cut, "time") != 0 &&
	    strcmp(res->scan_cut, "entries") != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t allowed = BOX__MSG_TYPE__MSG_RECHECK_REPLY;
	struct recheck_result res;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int fds[RECHECK_FDS_MAX], given[RECHECK_FDS_MAX];
	unsigned n_fds;
	bool detach;

	if (size < 1)
		return 0;
	n_fds = (data[0] & 7) % (RECHECK_FDS_MAX + 1);
	detach = data[0] & 8;
	for (unsigned i = 0; i < n_fds; i++) {
		fds[i] = given[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			abort();
	}
	/* boxd's b->rc before a recheck: zeroed, no fd (recheck_result_clear's resting state) */
	memset(&res, 0, sizeof(res));
	res.state_dirfd = res.lock_fd = res.log_fd = res.policy_dirfd = res.decisions_fd = res.ca_fd = -1;

	struct box_ipc_chan *c = box_ipc_chan_new(-1, &box_proto_recheck, BOX_RECHECK_ROLE_RECHECK);
	if (!c || box_ipc_chan_set_state(c, BOX_RECHECK_CHECKING) < 0 ||
	    box_ipc_chan_allow(c, &allowed, 1) < 0)
		abort();
	/* The channel owns the fds from here on, whatever the outcome. */
	int r = box_ipc_chan_feed(c, data + 1, size - 1, fds, n_fds, &m);
	if (r == 1) {
		const Box__RecheckReply *rep = (const Box__RecheckReply *)m.msg;
		if (m.type != BOX__MSG_TYPE__MSG_RECHECK_REPLY || m.n_fds != rep->n_fds)
			abort();
		if (recheck_parse_reply(&res, rep, &m, detach) == 0)
			check_accepted(&res, rep, detach);
	}
	recheck_result_clear(&res);
	check_cleared(&res);
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
	/* Not one of the given fds is left open (taken or not). */
	for (unsigned i = 0; i < n_fds; i++)
		if (fcntl(given[i], F_GETFD) >= 0)
			abort();
	return 0;
}
