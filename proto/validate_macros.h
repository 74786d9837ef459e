/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_macros.h — the two early-return helpers of the hand-written
 * validators (validate.c, policy_validate.c); private to them, so the names
 * stay out of every file that includes validate.h.
 */
#ifndef BOX_VALIDATE_MACROS_H
#define BOX_VALIDATE_MACROS_H

/* Evaluate EXPR (a negative errno or >= 0) and return it when negative. */
#define TRY(expr)                      \
	do {                           \
		int try_r_ = (expr);   \
		if (try_r_ < 0)        \
			return try_r_; \
	} while (0)

/* Return ERR unless COND holds. */
#define REQUIRE(cond, err)            \
	do {                          \
		if (!(cond))          \
			return (err); \
	} while (0)

#endif
