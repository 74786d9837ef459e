/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_plan.c — box-trampoline's input: the plan decoder and validator
 * (box_plan_decode) and boxd's: the status decoder (box_status_decode).
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto/plan_validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	Box__Plan *p = NULL;
	if (box_plan_decode(data, size, &p, why, sizeof(why)) == 0) {
		/* A valid plan re-validates and survives a round trip. */
		if (box_plan_validate(p, why, sizeof(why)) != 0)
			__builtin_trap();
		box__plan__free_unpacked(p, NULL);
	}
	Box__TrampolineStatus *s = NULL;
	if (box_status_decode(data, size, &s, why, sizeof(why)) == 0)
		box__trampoline_status__free_unpacked(s, NULL);
	return 0;
}
