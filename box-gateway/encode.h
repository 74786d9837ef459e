/* SPDX-License-Identifier: Apache-2.0 */
/*
 * encode.h — the byte encodings box-gateway writes a credential in and reads
 * a placeholder out of: base64 (RFC 4648, standard and URL-safe), percent-
 * encoding (RFC 3986) and JSON string escaping (RFC 8259). cred.c rewrites
 * requests with them; redact.c spells a secret every way they can.
 * No I/O, nothing here logs; every result is a malloc'd NUL-terminated string
 * (NULL: out of memory) whose length is returned in *out_n.
 */
#ifndef BOX_GATEWAY_ENCODE_H
#define BOX_GATEWAY_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum enc_b64_alphabet { ENC_B64_STD, ENC_B64_URL }; /* "+/" or "-_" for 62, 63 */

char *enc_b64(const uint8_t *in, size_t n, enum enc_b64_alphabet a, bool pad, size_t *out_n);
/* Strict padded standard base64 (what every HTTP Basic client sends); NULL when malformed
 * or out of memory (either way: not a credential the gateway can read). */
char *enc_b64_decode(const char *in, size_t *out_n);

/* Every byte outside RFC 3986 unreserved as %XX, the hex digits in upper or lower case. */
char *enc_pct(const uint8_t *in, size_t n, bool upper, size_t *out_n);
/* s[0..n) percent-decoded; a '%' not followed by two hex digits is kept as it is (lenient:
 * for searching and comparing, never for forwarding). */
char *enc_pct_decode(const char *s, size_t n, size_t *out_n);
bool enc_is_unreserved(uint8_t c);
int enc_hex_value(char c); /* 0-15, or -1 */
/* One UTF-8 character at in[0..n): its length and code point, or 0 when not UTF-8
 * (overlong forms, surrogates and values above U+10FFFF are not). */
size_t enc_utf8_char(const uint8_t *in, size_t n, uint32_t *cp);

/*
 * The inside of a JSON string: '"' and '\' escaped, \b \f \n \r \t, other control bytes as
 * \u00XX; what differs between encoders is chosen by flags. -EILSEQ with ENC_JSON_ASCII when
 * in is not UTF-8 (no encoder would write it so), -ENOMEM.
 */
#define ENC_JSON_SLASH 1u  /* '/' as "\/" (PHP, some Java and .NET encoders) */
#define ENC_JSON_ASCII 2u  /* every non-ASCII character as \uXXXX, UTF-16 (Python's default) */
#define ENC_JSON_HTML 4u   /* '<' '>' '&' as \u003c \u003e \u0026 (Go's default) */
#define ENC_JSON_UPPER 8u  /* the hex digits of \u escapes in upper case */
#define ENC_JSON_FLAGS 16u /* every combination of the above is < this */
int enc_json(const uint8_t *in, size_t n, unsigned flags, char **out, size_t *out_n);

#endif
