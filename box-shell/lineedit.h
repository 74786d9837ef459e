/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lineedit.h — the interactive shell's line editor (lineedit.c: libedit,
 * history, Tab completion). The box-shell daemon's interactive loop
 * (invocation.c) is its only user. Trusts: the caller's flags and shell.
 */
#ifndef BOX_SHELL_LINEEDIT_H
#define BOX_SHELL_LINEEDIT_H

#include <signal.h>
#include <stddef.h>

struct sh_shell;
struct sbuf;
struct sh_lineedit;

/*
 * An editor on fd 0 (input) and fd 2 (prompt and echo), or NULL when either
 * is no terminal or libedit cannot start. intr: set by the SIGINT handler
 * (a read gives up); winch: set by the SIGWINCH handler (cleared here, and
 * resized called).
 */
struct sh_lineedit *lineedit_open(struct sh_shell *sh, const volatile sig_atomic_t *intr,
				  volatile sig_atomic_t *winch,
				  void (*resized)(struct sh_shell *sh));
/* One edited line, with its newline, into line: 1 a line, 0 end of input, -1 interrupted. */
int lineedit_read(struct sh_lineedit *le, const char *prompt, struct sbuf *line);
/* Keep TEXT (one command, possibly of several lines) in the history. */
void lineedit_remember(struct sh_lineedit *le, const char *text, size_t len);

#endif
