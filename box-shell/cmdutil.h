/*
 * cmdutil.h — helpers the own commands share beyond cmd.h (cmdutil.c):
 * sh_out set-up and release, the command's name for messages.
 * Trusts: nothing.
 */
#ifndef BOX_SHELL_CMDUTIL_H
#define BOX_SHELL_CMDUTIL_H

#include <stdarg.h>

#include "cmd.h"

/* An empty output on fd; the 64 KiB buffer is malloc'd on first write. */
void sh_out_init(struct sh_out *o, int fd);
/* Flush, then free the buffer (malloc'd by sh_out or by the caller). Returns
 * the flush's result (the sticky error, if any). */
int sh_out_release(struct sh_out *o);
int sh_out_vprintf(struct sh_out *o, const char *fmt, va_list ap);

/* The name messages start with: c->fs->cmd_name, else "box-shell". */
const char *sh_cmd_name(const struct sh_cmd *c);

#endif
