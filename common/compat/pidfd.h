/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compat/pidfd.h — peer pidfds and pidfs ioctls Debian 12's headers lack.
 *
 * SO_PEERPIDFD (Linux 6.5) hands out a pidfd of a Unix socket's peer, taken
 * at connect() / socketpair() time; PIDFD_GET_PID_NAMESPACE (Linux 6.11)
 * turns a pidfd into an nsfs fd of the process's PID namespace. Values from
 * the kernel's include/uapi/asm-generic/socket.h (x86-64 uses the generic
 * numbers) and include/uapi/linux/pidfd.h (PIDFS_IOCTL_MAGIC 0xFF, nr 5:
 * nr 2 is the IPC namespace). Prefixed BOX_ so a newer system header never
 * collides.
 * Trusts: nothing; constants only.
 */
#ifndef BOX_COMPAT_PIDFD_H
#define BOX_COMPAT_PIDFD_H

#include <sys/ioctl.h>

#define BOX_SO_PEERPIDFD 77
#define BOX_PIDFS_IOCTL_MAGIC 0xFF
#define BOX_PIDFD_GET_PID_NAMESPACE _IO(BOX_PIDFS_IOCTL_MAGIC, 5)

#endif
