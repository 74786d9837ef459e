/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_text.h — the text commands' entry points (cmd_*.c), gathered into
 * sh_text_commands[] by cmd_text.c. Private to box-shell.
 */
#ifndef BOX_SHELL_CMD_TEXT_H
#define BOX_SHELL_CMD_TEXT_H

#include <stdbool.h>

#include "cmd.h"

#define SH_TEXT_CMD(name) int sh_cmd_##name(struct sh_cmd *c, int argc, char **argv)
SH_TEXT_CMD(cat);
SH_TEXT_CMD(head);
SH_TEXT_CMD(tail);
SH_TEXT_CMD(wc);
SH_TEXT_CMD(tee);
SH_TEXT_CMD(tac);
SH_TEXT_CMD(basename);
SH_TEXT_CMD(dirname);
SH_TEXT_CMD(seq);
SH_TEXT_CMD(grep);
SH_TEXT_CMD(sed);
SH_TEXT_CMD(sort);
SH_TEXT_CMD(uniq);
SH_TEXT_CMD(cut);
SH_TEXT_CMD(tr);
SH_TEXT_CMD(nl);
SH_TEXT_CMD(paste);
SH_TEXT_CMD(comm);
SH_TEXT_CMD(join);
SH_TEXT_CMD(split);
SH_TEXT_CMD(od);
SH_TEXT_CMD(base64);
SH_TEXT_CMD(sha256sum);
SH_TEXT_CMD(md5sum);
SH_TEXT_CMD(diff);

/* The longest literal (>= 2 bytes) every match of the BRE/ERE must contain
 * (outside groups, brackets, alternation and quantifiers), malloc'd, or NULL:
 * a memmem prefilter before regexec (cmd_grep.c). */
char *sh_regex_required_literal(const char *pat, bool ere);

/* Print "NAME: FILE: strerror" (GNU's quotef style) and return 1. */
int sh_text_file_error(struct sh_cmd *c, const char *file, int err);

#endif
