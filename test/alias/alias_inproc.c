/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alias_inproc.c — the alias run in-process with a -c text longer than
 * execve(2) lets one argument be (128 KiB), for test/alias/t-alias.sh:
 *
 *   box-test-alias-inproc NAME SIZE
 *
 * runs alias_main({NAME, "-c", TEXT}) where TEXT is "echo " followed by the
 * alphabet repeated, SIZE bytes in all, and exits with its status.
 * Trusts: nothing; it is test code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alias.h"

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s NAME SIZE\n", argv[0]);
		return 2;
	}
	size_t size = strtoul(argv[2], NULL, 10);
	if (size < 5)
		return 2;
	char *text = malloc(size + 1);
	if (!text)
		return 2;
	memcpy(text, "echo ", 5);
	for (size_t i = 5; i < size; i++)
		text[i] = (char)('a' + (i - 5) % 26);
	text[size] = 0;
	char *av[] = { argv[1], "-c", text, NULL };
	int status = alias_main(3, av, environ);
	free(text);
	return status;
}
