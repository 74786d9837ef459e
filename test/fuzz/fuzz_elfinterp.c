/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_elfinterp.c — common/elfinterp.c on arbitrary images: it must never read
 * past what it was given, and whatever it returns as an interpreter is an
 * absolute path that fits the output, with no NUL inside.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "elfinterp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[64];

	if (elf_interp(data, size, out, sizeof(out)) == 0 &&
	    (out[0] != '/' || strnlen(out, sizeof(out)) >= sizeof(out)))
		__builtin_trap();
	return 0;
}
