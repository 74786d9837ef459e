/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.h — a supervised program's seccomp listener (supervise.c): the
 * workload child installs the filter and hands the listener to PID 1, which
 * decides each call it receives.
 * Trusts: nothing the tracee says.
 */
#ifndef BOX_TRAMPOLINE_SUPERVISE_H
#define BOX_TRAMPOLINE_SUPERVISE_H

/* Workload child: the notifying filter; its listener fd (CLOEXEC) or negative errno. */
int supervise_filter_install(void);
/* PID 1: serve LISTENER, asking box-policyd on POLICYD_FD (taken); HOME spells "~". */
int supervise_start(int listener, int policyd_fd, const char *home);
/* PID 1: receive and answer one notification (the listener is readable). Negative errno. */
int supervise_one(void);

#endif
