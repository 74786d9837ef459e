/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gw_redact_ref.h — the naive reference the tests of box-gateway/redact.c
 * compare the streaming redactor with (test_gw_redact.c, fuzz_gw_redact.c):
 * the whole text at once, at each position the longest spelling that matches
 * wholly becomes "[REDACTED]". out needs room for 10 * n bytes.
 * Trusts: nothing; it is test code.
 */
#ifndef BOX_TEST_GW_REDACT_REF_H
#define BOX_TEST_GW_REDACT_REF_H

#include <string.h>

#include "redact.h"

static inline size_t
reference_redact(const struct cred_spellings *sp, const uint8_t *in, size_t n, uint8_t *out,
		 size_t *count)
{
	size_t o = 0;
	*count = 0;
	for (size_t i = 0; i < n;) {
		size_t best = 0;
		for (size_t k = 0; k < sp->n; k++)
			if (sp->len[k] <= n - i && sp->len[k] > best &&
			    memcmp(in + i, sp->pat[k], sp->len[k]) == 0)
				best = sp->len[k];
		if (best) {
			memcpy(out + o, CRED_REDACTED, sizeof(CRED_REDACTED) - 1);
			o += sizeof(CRED_REDACTED) - 1;
			i += best;
			(*count)++;
		} else {
			out[o++] = in[i++];
		}
	}
	return o;
}

#endif
