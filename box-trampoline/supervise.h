/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.h — a supervised program's seccomp listener (supervise.c): the
 * workload child installs the filter and hands the listener to PID 1, which
 * decides each call it receives.
 * Trusts: nothing the tracee says.
 */
#ifndef BOX_TRAMPOLINE_SUPERVISE_H
#define BOX_TRAMPOLINE_SUPERVISE_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

/* The supervised calls' program into F (SUPERVISE_INSNS_MAX); its length. */
#define SUPERVISE_INSNS_MAX 128
size_t supervise_program(struct sock_filter *f);
/* PID 1: serve LISTENER, asking box-policyd on POLICYD_FD (taken); HOME spells "~". */
int supervise_start(int listener, int policyd_fd, const char *home);
/* PID 1: answer one notification received (kernel.c) that is not a kernel refusal. */
void supervise_handle(const struct seccomp_notif *req, size_t size);

#endif
