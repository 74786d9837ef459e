/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_elfinterp.c — common/elfinterp.c: the PT_INTERP of real programs on
 * this host (a dynamic one, the escape suite's static probe when built), and every
 * refusal on images cut or bent on purpose: not ELF, another class, program
 * headers or the interpreter beyond what was read, a string without its NUL
 * or with one inside, a relative path, an output buffer too small.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "elfinterp.h"
#include "tap.h"

/* A minimal 64-bit image: header, one PT_LOAD and one PT_INTERP, the string after them. */
struct image {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	char interp[32];
};

static void
image_init(struct image *im, const char *interp)
{
	memset(im, 0, sizeof(*im));
	memcpy(im->eh.e_ident, ELFMAG, SELFMAG);
	im->eh.e_ident[EI_CLASS] = ELFCLASS64;
	im->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	im->eh.e_phoff = offsetof(struct image, ph);
	im->eh.e_phentsize = sizeof(Elf64_Phdr);
	im->eh.e_phnum = 2;
	im->ph[0].p_type = PT_LOAD;
	im->ph[1].p_type = PT_INTERP;
	im->ph[1].p_offset = offsetof(struct image, interp);
	im->ph[1].p_filesz = strlen(interp) + 1;
	memcpy(im->interp, interp, strlen(interp) + 1);
}

static int
parse(const struct image *im, size_t len, char *out, size_t outlen)
{
	return elf_interp((const uint8_t *)im, len, out, outlen);
}

static void
test_images(void)
{
	struct image im;
	char out[64];

	image_init(&im, "/lib64/ld-test.so.2");
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), 0);
	CHECK_STR(out, "/lib64/ld-test.so.2");
	/* Cut before the string, before the program headers, before the header. */
	CHECK_INT(parse(&im, offsetof(struct image, interp) + 4, out, sizeof(out)), -EINVAL);
	CHECK_INT(parse(&im, offsetof(struct image, ph) + 8, out, sizeof(out)), -EINVAL);
	CHECK_INT(parse(&im, 16, out, sizeof(out)), -ENOEXEC);
	/* Too small an output. */
	CHECK_INT(parse(&im, sizeof(im), out, 8), -ENAMETOOLONG);
	/* Not ELF; 32-bit; the other byte order. */
	image_init(&im, "/lib/ld.so");
	im.eh.e_ident[1] = 'X';
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -ENOEXEC);
	image_init(&im, "/lib/ld.so");
	im.eh.e_ident[EI_CLASS] = ELFCLASS32;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -ENOEXEC);
	image_init(&im, "/lib/ld.so");
	im.eh.e_ident[EI_DATA] = ELFDATA2MSB;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -ENOEXEC);
	/* No PT_INTERP: a static program. */
	image_init(&im, "/lib/ld.so");
	im.ph[1].p_type = PT_NOTE;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -ENOENT);
	im.eh.e_phnum = 0;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -ENOENT);
	/* A bent program header table: entry size, offset, count past the end. */
	image_init(&im, "/lib/ld.so");
	im.eh.e_phentsize = 40;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	image_init(&im, "/lib/ld.so");
	im.eh.e_phoff = (Elf64_Off)-8;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	image_init(&im, "/lib/ld.so");
	im.eh.e_phnum = 0xffff;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	/* The string: past the end (offset + size wraps), no NUL, a NUL inside, relative. */
	image_init(&im, "/lib/ld.so");
	im.ph[1].p_offset = (Elf64_Off)-4;
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	image_init(&im, "/lib/ld.so");
	im.ph[1].p_filesz = 6; /* "/lib/l" without its NUL */
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	image_init(&im, "/lib/ld.so");
	im.interp[3] = '\0';
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	image_init(&im, "lib/ld.so");
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
	image_init(&im, "/");
	CHECK_INT(parse(&im, sizeof(im), out, sizeof(out)), -EINVAL);
}

/* What the host's own programs name: this test itself is a dynamic program. */
static void
test_host_programs(void)
{
	char out[4096];
	_cleanup_close_ int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(self >= 0);
	CHECK_INT(elf_interp_fd(self, out, sizeof(out)), 0);
	CHECK(out[0] == '/' && strstr(out, "ld") != NULL);
	_cleanup_close_ int sh = open("/usr/bin/true", O_RDONLY | O_CLOEXEC);
	CHECK(sh >= 0);
	char out2[4096];
	CHECK_INT(elf_interp_fd(sh, out2, sizeof(out2)), 0);
	CHECK_STR(out2, out);
	/* A script is no ELF. */
	_cleanup_close_ int script = open("/usr/bin/ldd", O_RDONLY | O_CLOEXEC);
	if (script >= 0)
		CHECK_INT(elf_interp_fd(script, out2, sizeof(out2)), -ENOEXEC);
	/* The escape suite's probe is a static program (in every build): no loader. */
	const char *bin = getenv("BOX_BIN");
	char probe[4096];
	snprintf(probe, sizeof(probe), "%s/box-escape-probe", bin ? bin : "build/bin");
	_cleanup_close_ int a = open(probe, O_RDONLY | O_CLOEXEC);
	if (a >= 0)
		CHECK_INT(elf_interp_fd(a, out2, sizeof(out2)), -ENOENT);
	else
		printf("# %s not built: its check left out\n", probe);
}

int
main(void)
{
	RUN(test_images);
	RUN(test_host_programs);
	return tap_done();
}
