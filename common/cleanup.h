/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cleanup.h — scope-bound ownership: _cleanup_ attributes, TAKE_PTR, TAKE_FD.
 *
 * A variable declared `_cleanup_free_ char *s = NULL;` is freed when it goes
 * out of scope; `return TAKE_PTR(s);` hands ownership to the caller instead.
 * Destructors accept NULL (and -1 for fds) so early returns are always safe.
 * Trusts: nothing; pure helpers.
 */
#ifndef BOX_CLEANUP_H
#define BOX_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void
freep(void *p)
{
	free(*(void **)p);
}

/* Close an fd, preserving errno (cleanup runs on error paths). */
static inline void
closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

static inline void
fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;
		(void)fclose(*f);
		errno = saved;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Move a pointer out of a cleanup variable. */
#define TAKE_PTR(p)                                  \
	({                                           \
		__typeof__(p) take_ptr_tmp_ = (p);   \
		(p) = NULL;                          \
		take_ptr_tmp_;                       \
	})

#define TAKE_FD(fd)                              \
	({                                       \
		int take_fd_tmp_ = (fd);         \
		(fd) = -1;                       \
		take_fd_tmp_;                    \
	})

/* Define `name_freep(T **)` for a destructor `void name_free(T *)`. */
#define DEFINE_FREEP(type, fn)                   \
	static inline void fn##p(type **p)       \
	{                                        \
		if (*p)                          \
			fn(*p);                  \
	}

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Close an fd and return -1, for `fd = safe_close(fd);`. */
static inline int
safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
	}
	return -1;
}

#endif
