/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-alias, the shell alias program (alias.h, README.md).
 * Trusts: see alias.c.
 */
#include <unistd.h>

#include "alias.h"

int
main(int argc, char **argv)
{
	return alias_main(argc, argv, environ);
}
