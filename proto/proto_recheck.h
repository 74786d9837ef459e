/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_recheck.h — the recheck protocol: boxd <-> box-recheck
 * (recheck.proto), one exchange on box-recheck's fd 3.
 *
 * The table (proto_recheck.c) is the receiver's rules; proto/README.md is the
 * human version. Roles: boxd, box-recheck. States of the channel:
 *   asked    nothing exchanged: only RecheckRequest (boxd sends it once)
 *   checking the request passed: only RecheckReply
 *   done     the reply passed: nothing more (box-recheck exits)
 * A second request, or a reply before the request, is a protocol error.
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_RECHECK_H
#define BOX_PROTO_RECHECK_H

#include "ipc.h"
#include "recheck.pb-c.h"

enum box_recheck_role {
	BOX_RECHECK_ROLE_BOXD,
	BOX_RECHECK_ROLE_RECHECK,
	BOX_RECHECK_N_ROLES,
};

enum box_recheck_state {
	BOX_RECHECK_ASKED,
	BOX_RECHECK_CHECKING,
	BOX_RECHECK_DONE,
	BOX_RECHECK_N_STATES,
};

extern const struct box_ipc_protocol box_proto_recheck;

#endif
