/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.h — checked parsers for numbers, durations, sizes, booleans and ports;
 * a comma-list lookup.
 *
 * Every parser takes the whole string (no leading or trailing blanks, no sign
 * unless stated), refuses overflow, and writes its output only on success.
 * Returns 0, or -EINVAL (malformed) / -ERANGE (out of range).
 * Trusts: nothing; input comes from users and peers.
 */
#ifndef BOX_PARSE_H
#define BOX_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal digits only, value <= max. */
int parse_u64(const char *s, uint64_t max, uint64_t *ret);
/* Optional leading '-', decimal digits, fits int64_t. */
int parse_i64(const char *s, int64_t *ret);
/* "true" or "false". */
int parse_bool(const char *s, bool *ret);
/* An integer with a required unit ms, s, m or h; result in milliseconds. */
int parse_duration_ms(const char *s, uint64_t *ret_ms);
/* An integer with optional binary suffix K, M or G (1K = 1024); result in bytes. */
int parse_size(const char *s, uint64_t *ret_bytes);
/* 1..65535. */
int parse_port(const char *s, uint16_t *ret);
/* A count: integer >= 1 and <= max. */
int parse_count(const char *s, uint64_t max, uint64_t *ret);

/*
 * Comma lists ("a,b,c"; NULL or "": no items; "a,,b" has an empty item).
 * list_next_word: the item at *CURSOR as *WORD and *LEN (not NUL-terminated),
 * advancing *CURSOR past it; false when no item is left (*CURSOR NULL).
 * Start with *CURSOR = LIST.
 */
bool list_next_word(const char **cursor, const char **word, size_t *len);
/* Is WORD one of the items of LIST? */
bool list_has_word(const char *list, const char *word);

/* Format helpers for normalized output: "1500ms", "4194304". */
void format_duration_ms(uint64_t ms, char buf[static 32]);

#endif
