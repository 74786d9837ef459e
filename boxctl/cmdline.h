/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmdline.h — the `command` argv syntax of box.ini (docs/box.ini.5.md) and its re-quoting.
 *
 * Words are split on blanks (space, tab); "…" and '…' group; a backslash
 * escapes the next character inside "…" and outside quotes (inside '…' it is
 * literal). Quotes do not span lines: each continuation line of `command` is
 * split on its own and its words are appended.
 * Re-quoting writes a word bare when it reads back unchanged, else in double
 * quotes with `"`, `\` and `;` escaped (inih takes ` ;` as a comment even
 * inside quotes, so a `;` is always escaped inside quotes).
 * Pure string code; negative errno. Trusts: nothing.
 */
#ifndef BOXCTL_CMDLINE_H
#define BOXCTL_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Split `s` and append its words to the NULL-terminated vector *argv of
 * *argc words (both may start NULL/0). On -EINVAL, *err names the problem
 * (a static string) and *argv keeps the words appended before the error.
 * -ENOMEM on allocation failure.
 */
int cmdline_split(const char *s, char ***argv, size_t *argc, const char **err);

/* Does `w` need double quotes to read back as one word equal to itself? */
bool cmdline_word_needs_quotes(const char *w);

/* `w` quoted as needed (allocated; NULL on ENOMEM). */
char *cmdline_quote(const char *w);

/* Free a NULL-terminated vector and its words. */
void cmdline_free(char **argv);

#endif
