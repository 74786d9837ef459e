/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sh_host_stub.h — the fuzzing instance of the interpreter's host
 * operations (sh_host_stub.c): a decider and an in-memory file system.
 */
#ifndef BOX_TEST_FUZZ_SH_HOST_STUB_H
#define BOX_TEST_FUZZ_SH_HOST_STUB_H

/* The shell's directories: they exist in the memory file system. */
#define FUZZ_HOME "/fuzz/home"
#define FUZZ_CWD  "/fuzz/work"

struct sh_decider;

/* The decider to give sh_new (one for the process). */
struct sh_decider *fuzz_host_decider(void);
/* Forget every file of the memory file system (after each input). */
void fuzz_host_reset(void);

#endif
