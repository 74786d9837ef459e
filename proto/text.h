/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text.h — the name, id, path and UTF-8 checks every validator of proto/
 * uses (and boxctl, boxd and box-policyd for the same rules).
 *
 * A leaf: text.c calls nothing else of proto/, so no validator file depends
 * on another one (validate.c, policy_validate.c and plan_validate.c each use
 * this file and nothing of each other). Pure; no logging.
 * Trusts: nothing; every string may come from a peer.
 */
#ifndef BOX_TEXT_H
#define BOX_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#define BOX_NAME_MAX 32 /* box, tool, egress, mcp names */
#define BOX_ID_LEN 12   /* lowercase hex */
#define BOX_STR_MAX 4096 /* a generic string field */
#define BOX_POLICY_TEXT_MAX (4u << 20) /* policy text in BoxSpec and PolicyInit */
#define BOX_ASK_INPUT_MAX (1u << 20)   /* a held request's input as JSON (AskEntry, PolicyAsk) */
/* [telemetry.NAME] kind = file targets per box: each is one more fd of RecheckReply and
 * PolicyInit, which carry at most BOX_IPC_MAX_FDS (8) with the state files. */
#define BOX_TELEMETRY_FILES_MAX 2

bool box_valid_name(const char *s);     /* 1-32 of [A-Za-z0-9_-] */
bool box_valid_box_id(const char *s);   /* 12 lowercase hex digits */
bool box_valid_env_name(const char *s); /* [A-Za-z_][A-Za-z0-9_]*, <= 255 */
bool box_valid_path(const char *s);     /* clean absolute, no glob, < 4096 */
bool box_valid_term(const char *s);     /* a TERM value: 1-64 of [A-Za-z0-9._+-] */
/* Valid UTF-8 of exactly len bytes, no NUL, no overlong form or surrogate. */
bool box_valid_utf8(const char *s, size_t len);

/* s is not NULL and has min..max bytes. */
bool box_text_len_ok(const char *s, size_t min, size_t max);
/* No ASCII control character (< 0x20, 0x7f). */
bool box_text_no_ctl(const char *s);
/* UTF-8, min..max bytes, no ASCII control character. */
bool box_text_utf8_ok(const char *s, size_t min, size_t max);
/* Only letters, digits and the characters of `extra`. */
bool box_text_all_in(const char *s, const char *extra);
/* n bytes of [a-z_] (lower_only) or of [A-Za-z0-9_]; n > 0. */
bool box_text_is_word(const char *s, size_t n, bool lower_only);

#endif
