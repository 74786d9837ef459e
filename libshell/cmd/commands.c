/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.c — every own-command table (cmd.h), as one list for a program's
 * host table (libshell/host.h): box-sh's and the box-shell daemon's name it,
 * which links the commands in; a program whose table does not has none.
 * Trusts: nothing.
 */
#include <stddef.h>

#include "cmd.h"

const struct sh_cmd_def *const sh_own_commands[] = {
	sh_text_commands,
	sh_file_commands,
	NULL,
};
