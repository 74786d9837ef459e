/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan_validate.h — decode and check the sandbox plan (plan.proto) and the
 * trampoline's status messages.
 *
 * box-trampoline runs every step of docs/sandbox.md with what the plan says, so
 * it re-checks every field here before any step: absolute clean paths,
 * ranges, counts, combinations. Unknown fields (at any depth) are an error.
 * Returns 0 or a negative errno (-EINVAL bad value, -ERANGE number out of
 * range, -E2BIG too many or too long, -EBADMSG undecodable); `why` (may be
 * NULL) receives a short reason naming the field. Pure; no logging.
 * Trusts: nothing; the bytes came from a peer.
 */
#ifndef BOX_PLAN_VALIDATE_H
#define BOX_PLAN_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "plan.pb-c.h"

/* One SOCK_SEQPACKET packet of a plan or a status message, at most. */
#define BOX_PLAN_BYTES_MAX (64u << 10)
#define BOX_PLAN_VIEW_MAX 512
#define BOX_PLAN_ARGV_MAX 1024
#define BOX_PLAN_ENV_MAX 1024
#define BOX_PLAN_GROUPS_MAX 256
#define BOX_PLAN_CGROUPS_MAX 8
#define BOX_PLAN_NOFILE_MAX (1u << 20)
#define BOX_PLAN_NPROC_MAX (1u << 22)
#define BOX_PLAN_REASON_MAX 1024
/* SANDBOX_SHELL: trampoline fds 5.. become the workload's fds 3.. (plan.proto pass_fds). */
#define BOX_PLAN_PASS_FDS_MAX 3
#define BOX_PLAN_PASS_FD_FIRST 5
/* A supervised tool plan (plan.supervise): the trampoline's fd 5 is the supervisor's box-policyd channel. */
#define BOX_PLAN_SUPERVISE_FD 5

/* Unpack `len` bytes into a Plan and validate it. Caller frees with
 * box__plan__free_unpacked(*ret, NULL). */
int box_plan_decode(const uint8_t *buf, size_t len, Box__Plan **ret, char *why, size_t why_len);
/* Validate an unpacked plan (also usable by boxd before sending). */
int box_plan_validate(const Box__Plan *p, char *why, size_t why_len);
/* Validate an unpacked status message. */
int box_status_validate(const Box__TrampolineStatus *s, char *why, size_t why_len);
/* Unpack and validate one status message. */
int box_status_decode(const uint8_t *buf, size_t len, Box__TrampolineStatus **ret, char *why,
		      size_t why_len);
/* Is this a step name a SetupError may carry? */
int box_plan_step_is_known(const char *step);

#endif
