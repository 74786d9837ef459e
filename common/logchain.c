/* SPDX-License-Identifier: Apache-2.0 */
/*
 * logchain.c — the decision log chain's record and hashes (logchain.h).
 * SHA-256 is BoringSSL's (libcrypto from android-libboringssl-dev): a program
 * that uses this file links it (boxd, boxctl, box-policyd; never OpenSSL).
 * Trusts: nothing in a record's text.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "logchain.h"
#include "parse.h"

void
logchain_sha256(const void *data, size_t len, uint8_t out[LOGCHAIN_HASH_LEN])
{
	SHA256(data, len, out);
}

void
logchain_hex(const uint8_t hash[LOGCHAIN_HASH_LEN], char out[LOGCHAIN_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < LOGCHAIN_HASH_LEN; i++) {
		out[2 * i] = digits[hash[i] >> 4];
		out[2 * i + 1] = digits[hash[i] & 15];
	}
	out[LOGCHAIN_HEX_LEN] = '\0';
}

static int
nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
logchain_unhex(const char *s, size_t n, uint8_t hash[LOGCHAIN_HASH_LEN])
{
	if (!s || n != LOGCHAIN_HEX_LEN)
		return -EINVAL;
	for (size_t i = 0; i < LOGCHAIN_HASH_LEN; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		hash[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int
logchain_record_format(const struct logchain_record *r, char *buf, size_t len)
{
	char hex[LOGCHAIN_HEX_LEN + 1];
	size_t off = 0;
	int n;

	logchain_hex(r->head.head, hex);
	n = snprintf(buf, len, "box-log-chain 1\nseq %llu\nhead %s\nsealed %d\nrotations %llu\n",
		     (unsigned long long)r->head.seq, hex, r->sealed ? 1 : 0,
		     (unsigned long long)r->rotations);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (size_t i = 0; i < r->n_rotated && i < 2; i++) {
		logchain_hex(r->rotated[i].head, hex);
		n = snprintf(buf + off, len - off, "rotated %llu %s\n",
			     (unsigned long long)r->rotated[i].seq, hex);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return (int)off;
}

/* "SEQ HEX" */
static int
point_parse(const char *v, struct logchain_point *p)
{
	const char *sp = strchr(v, ' ');
	char num[24];

	if (!sp || (size_t)(sp - v) >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, (size_t)(sp - v));
	num[sp - v] = '\0';
	if (parse_u64(num, UINT64_MAX, &p->seq) < 0)
		return -EINVAL;
	return logchain_unhex(sp + 1, strlen(sp + 1), p->head);
}

int
logchain_record_parse(const char *text, size_t len, struct logchain_record *r)
{
	char line[LOGCHAIN_RECORD_MAX];
	unsigned seen = 0; /* bits: version seq head sealed rotations */
	size_t off = 0;

	*r = (struct logchain_record){0};
	if (len > LOGCHAIN_RECORD_MAX || memchr(text, '\0', len))
		return -EINVAL;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		if (!nl)
			return -EINVAL; /* a torn record: every line ends with its newline */
		size_t n = (size_t)(nl - (text + off));
		memcpy(line, text + off, n);
		line[n] = '\0';
		off += n + 1;
		char *v = strchr(line, ' ');
		if (!v)
			return -EINVAL;
		*v++ = '\0';
		int rr = 0;
		unsigned bit = 0;
		if (strcmp(line, "box-log-chain") == 0) {
			bit = 1;
			rr = strcmp(v, "1") == 0 ? 0 : -EINVAL;
		} else if (strcmp(line, "seq") == 0) {
			bit = 2;
			rr = parse_u64(v, UINT64_MAX, &r->head.seq);
		} else if (strcmp(line, "head") == 0) {
			bit = 4;
			rr = logchain_unhex(v, strlen(v), r->head.head);
		} else if (strcmp(line, "sealed") == 0) {
			bit = 8;
			rr = strcmp(v, "0") == 0 || strcmp(v, "1") == 0 ? 0 : -EINVAL;
			r->sealed = v[0] == '1';
		} else if (strcmp(line, "rotations") == 0) {
			bit = 16;
			rr = parse_u64(v, UINT64_MAX, &r->rotations);
		} else if (strcmp(line, "rotated") == 0) {
			if (r->n_rotated >= 2)
				return -EINVAL;
			rr = point_parse(v, &r->rotated[r->n_rotated++]);
		} else {
			return -EINVAL;
		}
		if (rr < 0 || (seen & bit))
			return -EINVAL;
		seen |= bit;
	}
	if (seen != 31 || r->n_rotated > r->rotations)
		return -EINVAL;
	/* rotation points go up, and none is past the head */
	for (size_t i = 0; i < r->n_rotated; i++)
		if (r->rotated[i].seq > r->head.seq ||
		    (i > 0 && r->rotated[i].seq < r->rotated[i - 1].seq))
			return -EINVAL;
	return 0;
}

void
logchain_record_rotated(struct logchain_record *r, const struct logchain_point *p)
{
	if (r->n_rotated == 2) {
		r->rotated[0] = r->rotated[1];
		r->n_rotated = 1;
	}
	r->rotated[r->n_rotated++] = *p;
	r->rotations++;
}

void
logchain_key(const char *state_dir, char out[LOGCHAIN_HEX_LEN + 1])
{
	uint8_t h[LOGCHAIN_HASH_LEN];
	logchain_sha256(state_dir, strlen(state_dir), h);
	logchain_hex(h, out);
}
