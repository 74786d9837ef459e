/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-main.c — replays a fuzz target's committed corpus without libFuzzer.
 *
 * Linked with one fuzz_NAME.o; runs LLVMFuzzerTestOneInput on every file of
 * test/fuzz/corpus/NAME (or the files and directories given as arguments) and
 * prints one TAP line. A crash or sanitizer report fails the run. The replay
 * name comes from argv[0] ("replay_NAME").
 * Trusts: nothing; corpus files are arbitrary bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_INPUT_MAX (1UL << 20)

static int
replay_file(const char *path)
{
	char *buf = NULL;
	unsigned long len = 0;
	int r = fd_read_file(AT_FDCWD, path, FUZZ_INPUT_MAX, &buf, &len);
	if (r < 0) {
		printf("# %s: %s\n", path, strerror(-r));
		return r;
	}
	/* Copy into an exact-size allocation so ASan sees overreads. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(exact, buf, len);
	free(buf);
	(void)LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int
replay_dir(const char *dir, unsigned *count)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return -errno;
	int r = 0;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && r == 0) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			r = replay_file(path);
			if (r == 0)
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int
main(int argc, char **argv)
{
	const char *self = strrchr(argv[0], '/');
	self = self ? self + 1 : argv[0];
	const char *name = strncmp(self, "replay_", 7) == 0 ? self + 7 : self;
	unsigned count = 0;
	int r = 0;

	if (argc > 1) {
		for (int i = 1; i < argc && r == 0; i++) {
			struct stat st;
			if (stat(argv[i], &st) < 0)
				r = -errno;
			else if (S_ISDIR(st.st_mode))
				r = replay_dir(argv[i], &count);
			else if ((r = replay_file(argv[i])) == 0)
				count++;
		}
	} else {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/%s", FUZZ_CORPUS_ROOT, name);
		r = replay_dir(dir, &count);
	}
	if (r < 0 || count == 0) {
		printf("not ok - fuzz corpus %s replayed (%u inputs, %s)\n", name, count,
		       r < 0 ? strerror(-r) : "empty corpus");
		return 1;
	}
	printf("ok - fuzz corpus %s replayed (%u inputs)\n", name, count);
	return 0;
}
