/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elfinterp.h — the ELF interpreter (PT_INTERP: the dynamic loader the kernel opens
 * for execve) a program names, for the agent's Landlock EXECUTE list
 * (box.ini(5) [agent] exec_system).
 *
 * Only 64-bit ELF in this machine's byte order is read (a sandbox's seccomp
 * filter kills any other ABI anyway). Library code: negative errno, never logs.
 * Trusts: nothing in the file; every offset and size is checked against what
 * was read.
 */
#ifndef BOX_ELFINTERP_H
#define BOX_ELFINTERP_H

#include <stddef.h>
#include <stdint.h>

/* How much of a file elf_interp_fd reads: PT_INTERP lies in the first page in practice. */
#define BOX_ELF_READ_MAX (64u << 10)

/*
 * The PT_INTERP path of the file image `buf` (its first `len` bytes) into
 * `out` (NUL-terminated). 0; -ENOEXEC: not a 64-bit ELF of this byte order;
 * -ENOENT: no PT_INTERP (a static program); -EINVAL: a malformed header, or
 * an interpreter that is not an absolute path or lies beyond `len`;
 * -ENAMETOOLONG: it does not fit `out`.
 */
int elf_interp(const uint8_t *buf, size_t len, char *out, size_t outlen);
/* The same for the file open at `fd` (read from offset 0, up to BOX_ELF_READ_MAX). */
int elf_interp_fd(int fd, char *out, size_t outlen);

#endif
