/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compat/syscalls.h — x86-64 syscall numbers Debian 12's headers and
 * libseccomp 2.5.4 cannot name.
 *
 * Seccomp filters add these by number (seccomp_rule_add with the raw value
 * works for the native architecture). Values from the kernel's
 * arch/x86/entry/syscalls/syscall_64.tbl.
 * Trusts: nothing; constants only.
 */
#ifndef BOX_COMPAT_SYSCALLS_H
#define BOX_COMPAT_SYSCALLS_H

#if defined(__x86_64__)
#define BOX_NR_io_uring_setup 425
#define BOX_NR_io_uring_enter 426
#define BOX_NR_io_uring_register 427
#define BOX_NR_open_tree 428
#define BOX_NR_move_mount 429
#define BOX_NR_fsopen 430
#define BOX_NR_fsconfig 431
#define BOX_NR_fsmount 432
#define BOX_NR_fspick 433
#define BOX_NR_pidfd_open 434
#define BOX_NR_clone3 435
#define BOX_NR_close_range 436
#define BOX_NR_openat2 437
#define BOX_NR_pidfd_getfd 438
#define BOX_NR_faccessat2 439
#define BOX_NR_process_madvise 440
#define BOX_NR_epoll_pwait2 441
#define BOX_NR_mount_setattr 442
#define BOX_NR_quotactl_fd 443
#define BOX_NR_memfd_secret 447
#define BOX_NR_process_mrelease 448
#define BOX_NR_futex_waitv 449
#define BOX_NR_set_mempolicy_home_node 450
#define BOX_NR_cachestat 451
#define BOX_NR_fchmodat2 452
#define BOX_NR_map_shadow_stack 453
#define BOX_NR_futex_wake 454
#define BOX_NR_futex_wait 455
#define BOX_NR_futex_requeue 456
#define BOX_NR_statmount 457
#define BOX_NR_listmount 458
#define BOX_NR_lsm_get_self_attr 459
#define BOX_NR_lsm_set_self_attr 460
#define BOX_NR_lsm_list_modules 461
#define BOX_NR_mseal 462
#define BOX_NR_setxattrat 463
#define BOX_NR_getxattrat 464
#define BOX_NR_listxattrat 465
#define BOX_NR_removexattrat 466
#define BOX_NR_open_tree_attr 467
#define BOX_NR_file_getattr 468
#define BOX_NR_file_setattr 469
#else
#error "box's syscall table covers x86-64 only"
#endif

/* mount_setattr(2) (Debian 12's glibc has no wrapper). */
#include <stdint.h>
struct box_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};
#define BOX_MOUNT_ATTR_RDONLY 0x00000001
#define BOX_MOUNT_ATTR_NOSUID 0x00000002
#define BOX_MOUNT_ATTR_NODEV 0x00000004
#define BOX_MOUNT_ATTR_NOEXEC 0x00000008
#define BOX_AT_RECURSIVE 0x8000
#define BOX_OPEN_TREE_CLONE 1
#define BOX_OPEN_TREE_CLOEXEC 02000000
#define BOX_MOVE_MOUNT_F_EMPTY_PATH 0x00000004

#endif
