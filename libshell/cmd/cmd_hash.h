/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_hash.h — SHA-256 and MD5 for sha256sum / md5sum (cmd_hash.c).
 * Trusts: nothing.
 */
#ifndef BOX_SHELL_CMD_HASH_H
#define BOX_SHELL_CMD_HASH_H

#include <stddef.h>
#include <stdint.h>

struct sh_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t fill;
};
void sh_sha256_init(struct sh_sha256 *s);
void sh_sha256_update(struct sh_sha256 *s, const void *data, size_t n);
void sh_sha256_final(struct sh_sha256 *s, unsigned char out[32]);

struct sh_md5 {
	uint32_t h[4];
	uint64_t len;
	unsigned char buf[64];
	size_t fill;
};
void sh_md5_init(struct sh_md5 *s);
void sh_md5_update(struct sh_md5 *s, const void *data, size_t n);
void sh_md5_final(struct sh_md5 *s, unsigned char out[16]);

#endif
