/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compat/landlock.h — Landlock ABI 1–7 constants and structs.
 *
 * Debian 12's linux-libc-dev (6.1) stops at ABI 2; the kernels box runs on
 * (6.18) offer ABI 7. Everything is prefixed BOX_ so it never collides with a
 * newer system header. Values are the kernel's UAPI (include/uapi/linux/landlock.h).
 * Trusts: nothing; constants only.
 */
#ifndef BOX_COMPAT_LANDLOCK_H
#define BOX_COMPAT_LANDLOCK_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BOX_NR_landlock_create_ruleset 444
#define BOX_NR_landlock_add_rule 445
#define BOX_NR_landlock_restrict_self 446

/* The newest ABI box knows. Newer kernels are treated as this one. */
#define BOX_LANDLOCK_ABI_MAX 7

struct box_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI >= 4 */
	uint64_t scoped;             /* ABI >= 6 */
};

struct box_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct box_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#define BOX_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define BOX_LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)

#define BOX_LANDLOCK_RULE_PATH_BENEATH 1
#define BOX_LANDLOCK_RULE_NET_PORT 2

/* ABI 1 */
#define BOX_LL_FS_EXECUTE (1ULL << 0)
#define BOX_LL_FS_WRITE_FILE (1ULL << 1)
#define BOX_LL_FS_READ_FILE (1ULL << 2)
#define BOX_LL_FS_READ_DIR (1ULL << 3)
#define BOX_LL_FS_REMOVE_DIR (1ULL << 4)
#define BOX_LL_FS_REMOVE_FILE (1ULL << 5)
#define BOX_LL_FS_MAKE_CHAR (1ULL << 6)
#define BOX_LL_FS_MAKE_DIR (1ULL << 7)
#define BOX_LL_FS_MAKE_REG (1ULL << 8)
#define BOX_LL_FS_MAKE_SOCK (1ULL << 9)
#define BOX_LL_FS_MAKE_FIFO (1ULL << 10)
#define BOX_LL_FS_MAKE_BLOCK (1ULL << 11)
#define BOX_LL_FS_MAKE_SYM (1ULL << 12)
/* ABI 2 */
#define BOX_LL_FS_REFER (1ULL << 13)
/* ABI 3 */
#define BOX_LL_FS_TRUNCATE (1ULL << 14)
/* ABI 5 */
#define BOX_LL_FS_IOCTL_DEV (1ULL << 15)

/* ABI 4: network rights (box does not use them inside its own netns). */
#define BOX_LL_NET_BIND_TCP (1ULL << 0)
#define BOX_LL_NET_CONNECT_TCP (1ULL << 1)

/* ABI 6: scopes. */
#define BOX_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define BOX_LL_SCOPE_SIGNAL (1ULL << 1)

/* ABI 7: landlock_restrict_self() flags for audit logging. */
#define BOX_LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define BOX_LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define BOX_LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)

/* Every filesystem right an ABI handles. */
static inline uint64_t
box_landlock_fs_rights(int abi)
{
	uint64_t r = (1ULL << 13) - 1; /* ABI 1: bits 0..12 */
	if (abi >= 2)
		r |= BOX_LL_FS_REFER;
	if (abi >= 3)
		r |= BOX_LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= BOX_LL_FS_IOCTL_DEV;
	return r;
}

static inline uint64_t
box_landlock_scopes(int abi)
{
	return abi >= 6 ? BOX_LL_SCOPE_ABSTRACT_UNIX_SOCKET | BOX_LL_SCOPE_SIGNAL : 0;
}

/* Size of the ruleset attr an ABI understands (older kernels reject bigger). */
static inline unsigned long
box_landlock_attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct box_landlock_ruleset_attr);
	if (abi >= 4)
		return 2 * sizeof(uint64_t);
	return sizeof(uint64_t);
}

static inline int
box_landlock_create_ruleset(const struct box_landlock_ruleset_attr *attr, unsigned long size,
			    uint32_t flags)
{
	return (int)syscall(BOX_NR_landlock_create_ruleset, attr, size, flags);
}

static inline int
box_landlock_add_rule(int ruleset_fd, int rule_type, const void *rule_attr, uint32_t flags)
{
	return (int)syscall(BOX_NR_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
}

static inline int
box_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(BOX_NR_landlock_restrict_self, ruleset_fd, flags);
}

#endif
