/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request_field.c — a request's context.input field by atom. A leaf of
 * libboxpolicy (it calls nothing else here), so the evaluator, the message
 * formatter, the request API and the temporal monitor all read fields
 * without depending on each other.
 * Trusts: the request was built through the bp_request_* API.
 */
#include "internal.h"

const struct val *
request_field(const struct bp_request *r, uint32_t atom)
{
	for (size_t i = 0; i < r->n_fields; i++)
		if (r->fields[i].atom == atom)
			return &r->fields[i].v;
	return NULL;
}
