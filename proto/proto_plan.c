/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_plan.c — the table of the trampoline protocol (proto_plan.h) and
 * the decoders of its two bare-packet channels (plan_validate.h): the row's
 * cap, the one walker (walk.h), then the validator with its reason. Linked
 * only into boxd and box-trampoline (test/layering/symbols.sh checks).
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "plan_validate.h"
#include "proto_plan.h"
#include "walk.h"

static int
plan_row(const ProtobufCMessage *m)
{
	return box_plan_validate((const Box__Plan *)m, NULL, 0);
}

static int
status_row(const ProtobufCMessage *m)
{
	return box_status_validate((const Box__TrampolineStatus *)m, NULL, 0);
}

static bool
status_is_error(const ProtobufCMessage *m)
{
	return ((const Box__TrampolineStatus *)m)->msg_case == BOX__TRAMPOLINE_STATUS__MSG_ERROR;
}

static const struct box_ipc_type plan_types[] = {
	/* The one packet on fd 3; no fd may come with it. */
	{ BOX__MSG_TYPE__MSG_PLAN, "Plan", &box__plan__descriptor, plan_row, NULL,
	  BOX_PLAN_BYTES_MAX, 0, 0, BOX_IPC_BIT(BOX_PLAN_ROLE_BOXD), BOX_IPC_BIT(BOX_PLAN_SETUP),
	  BOX_IPC_STATE_SAME, NULL },
	/* fd 4: ListenerFd and PtyMaster carry their fd; a SetupError ends the channel. */
	{ BOX__MSG_TYPE__MSG_TRAMPOLINE_STATUS, "TrampolineStatus",
	  &box__trampoline_status__descriptor, status_row, NULL, BOX_PLAN_BYTES_MAX, 1, 0,
	  BOX_IPC_BIT(BOX_PLAN_ROLE_TRAMPOLINE), BOX_IPC_BIT(BOX_PLAN_SETUP), BOX_PLAN_FAILED,
	  status_is_error },
};

static const char *const plan_roles[BOX_PLAN_N_ROLES] = { "boxd", "box-trampoline" };
static const char *const plan_states[BOX_PLAN_N_STATES] = { "setup", "failed" };

const struct box_ipc_protocol box_proto_plan = {
	.name = "plan",
	.types = plan_types,
	.n_types = sizeof(plan_types) / sizeof(plan_types[0]),
	.role_names = plan_roles,
	.n_roles = BOX_PLAN_N_ROLES,
	.state_names = plan_states,
	.n_states = BOX_PLAN_N_STATES,
	.decode = box_proto_decode,
};

static int __attribute__((format(printf, 4, 5)))
fail(char *why, size_t why_len, int err, const char *fmt, ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/*
 * The row of `type` in this table (looked up here, not with
 * box_ipc_type_lookup: the trampoline links no IPC framing).
 */
static const struct box_ipc_type *
row_of(uint32_t type)
{
	for (unsigned i = 0; i < box_proto_plan.n_types; i++)
		if (box_proto_plan.types[i].type == type)
			return &box_proto_plan.types[i];
	return NULL;
}

int
box_plan_decode(const uint8_t *buf, size_t len, Box__Plan **ret, char *why, size_t why_len)
{
	*ret = NULL;
	if (len == 0 || len > BOX_PLAN_BYTES_MAX)
		return fail(why, why_len, -E2BIG, "plan: %zu bytes (max %u)", len,
			    BOX_PLAN_BYTES_MAX);
	ProtobufCMessage *m = NULL;
	int r = box_proto_unpack(row_of(BOX__MSG_TYPE__MSG_PLAN), buf, len, &m);
	if (r < 0)
		return fail(why, why_len, r, r == -EBADMSG ? "plan: undecodable or unknown field"
							   : "plan: over the decoder's budget");
	Box__Plan *p = (Box__Plan *)m;
	r = box_plan_validate(p, why, why_len);
	if (r < 0) {
		box__plan__free_unpacked(p, NULL);
		return r;
	}
	*ret = p;
	return 0;
}

int
box_status_decode(const uint8_t *buf, size_t len, Box__TrampolineStatus **ret, char *why,
		  size_t why_len)
{
	*ret = NULL;
	if (len == 0 || len > BOX_PLAN_BYTES_MAX)
		return fail(why, why_len, -E2BIG, "status: bad size %zu", len);
	ProtobufCMessage *m = NULL;
	int r = box_proto_unpack(row_of(BOX__MSG_TYPE__MSG_TRAMPOLINE_STATUS), buf, len, &m);
	if (r < 0)
		return fail(why, why_len, r, r == -EBADMSG ? "status: undecodable or unknown field"
							   : "status: over the decoder's budget");
	Box__TrampolineStatus *s = (Box__TrampolineStatus *)m;
	r = box_status_validate(s, why, why_len);
	if (r < 0) {
		box__trampoline_status__free_unpacked(s, NULL);
		return r;
	}
	*ret = s;
	return 0;
}
