/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elfinterp.c — a program's PT_INTERP (elfinterp.h).
 * Trusts: nothing in the image: the header, every program header and the
 * interpreter string are checked to lie within the bytes read.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "elfinterp.h"

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

int
elf_interp(const uint8_t *buf, size_t len, char *out, size_t outlen)
{
	Elf64_Ehdr eh;

	if (len < sizeof(eh) || memcmp(buf, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	memcpy(&eh, buf, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != HOST_ELFDATA)
		return -ENOEXEC;
	if (eh.e_phnum == 0)
		return -ENOENT;
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff < sizeof(eh) || eh.e_phoff > len ||
	    (len - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
		return -EINVAL;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, buf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_INTERP)
			continue;
		/* "/x\0" at least; the NUL is the last byte, and the only one. */
		if (ph.p_filesz < 3 || ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			return -EINVAL;
		const char *s = (const char *)buf + ph.p_offset;
		size_t n = (size_t)ph.p_filesz - 1;
		if (s[n] != '\0' || memchr(s, '\0', n) || s[0] != '/')
			return -EINVAL;
		if (n >= outlen)
			return -ENAMETOOLONG;
		memcpy(out, s, n + 1);
		return 0;
	}
	return -ENOENT;
}

int
elf_interp_fd(int fd, char *out, size_t outlen)
{
	_cleanup_free_ uint8_t *buf = malloc(BOX_ELF_READ_MAX);
	size_t len = 0;

	if (!buf)
		return -ENOMEM;
	while (len < BOX_ELF_READ_MAX) {
		ssize_t n = pread(fd, buf + len, BOX_ELF_READ_MAX - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return elf_interp(buf, len, out, outlen);
}
