/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxpolicy_proto.h — a request of box-policyd's protocol (proto/policy.proto: an
 * action and its PolicyField list) as a libboxpolicy request. One conversion for
 * every program that decides such a request: box-policyd, and box-shell when it
 * decides in process the actions box-policyd said need no history
 * (docs/box-policy.5.md, "Decisions without a round trip"), so both evaluate the
 * same bytes the same way.
 * Trusts: the fields were validated by proto/policy_validate.c (names, caps, UTF-8).
 */
#ifndef BOXPOLICY_PROTO_H
#define BOXPOLICY_PROTO_H

#include <stddef.h>

#include "boxpolicy.h"
#include "policy.pb-c.h"

/*
 * Set R's action and input from ACTION and F[0..N). A field the schema refuses
 * leaves its reason in bp_request_problem(), which makes the decision a deny with
 * cause error; only -ENOMEM is returned.
 */
int bp_request_fill_proto(struct bp_request *r, const char *action, Box__PolicyField *const *f,
			  size_t n);

#endif
