/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbnop.c — the least a program can be: no libc, no loader, two pages; its _start exits 0.
 * bench/shell-box times `sbnop` with sbtime beside `bash -c true` to show what launching any
 * process (fork, execve, exit, reap) costs on the machine the benchmark runs on: the floor under
 * every `bash -c true`, whatever shell answers it.
 * Trusts: nothing; it reads nothing.
 */
__attribute__((noreturn, used)) void
_start(void)
{
	__asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "memory");
	__builtin_unreachable();
}
