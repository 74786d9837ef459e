/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_plan.h — the trampoline protocol: boxd -> box-trampoline's plan on
 * fd 3, box-trampoline -> boxd's status on fd 4 (plan.proto).
 *
 * Neither channel has an envelope: each carries bare packets whose type the
 * fd implies, decoded with the row of this table by box_plan_decode() and
 * box_status_decode() (plan_validate.h) through the one walker (walk.h).
 * Roles: boxd, the trampoline. States:
 *   setup   the plan (fd 3, exactly one packet) and the status messages in
 *           setup order (fd 4)
 *   failed  a SetupError passed: the status channel carries nothing more
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_PLAN_H
#define BOX_PROTO_PLAN_H

#include "ipc.h"
#include "plan.pb-c.h"

enum box_plan_role {
	BOX_PLAN_ROLE_BOXD,
	BOX_PLAN_ROLE_TRAMPOLINE,
	BOX_PLAN_N_ROLES,
};

enum box_plan_state {
	BOX_PLAN_SETUP,
	BOX_PLAN_FAILED,
	BOX_PLAN_N_STATES,
};

extern const struct box_ipc_protocol box_proto_plan;

#endif
