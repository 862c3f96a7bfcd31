/* SPDX-License-Identifier: MIT */
/*
 * The CHECK macro every single-file test uses. A failed check prints
 * "file:line: CHECK failed: <condition>" on stderr, counts itself in
 * `failures` (main() turns a non-zero count into exit status 1) and then
 * does what the test asked for before including this header:
 *
 *   CHECK_ON_FAIL   a statement run after a failure, e.g. `return 1` for a
 *                   test that stops at its first failure; default: go on.
 *   CHECK_WITH_PID  defined: prefix "[pid] ", for tests that fork.
 *   CHECK_SEED      an expression of type uint64_t: suffix " (seed N)", for
 *                   randomised tests, so a failure can be replayed.
 */
#ifndef RPCRDMA_TESTS_LIB_CHECK_H
#define RPCRDMA_TESTS_LIB_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef CHECK_ON_FAIL
#define CHECK_ON_FAIL (void)0
#endif

static int failures;

/* One fprintf, so one write on unbuffered stderr: processes that fork do
 * not interleave their reports. */
static inline void check_failed_(const char *file, int line, const char *cond)
{
	char pid[24] = "", seed[40] = "";

#ifdef CHECK_WITH_PID
	snprintf(pid, sizeof(pid), "[%d] ", (int)getpid());
#endif
#ifdef CHECK_SEED
	snprintf(seed, sizeof(seed), " (seed %" PRIu64 ")", (uint64_t)(CHECK_SEED));
#endif
	fprintf(stderr, "%s%s:%d: CHECK failed: %s%s\n", pid, file, line, cond, seed);
	failures++;
}

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			check_failed_(__FILE__, __LINE__, #c);                                     \
			CHECK_ON_FAIL;                                                             \
		}                                                                                  \
	} while (0)

/* CHECK with a printf-style message after the condition, for checks whose
 * condition alone does not say what went wrong. Returns whether @ok. */
static inline int check_msg_(int ok, const char *file, int line, const char *cond, const char *fmt,
			     ...) __attribute__((format(printf, 5, 6)));
static inline int check_msg_(int ok, const char *file, int line, const char *cond, const char *fmt,
			     ...)
{
	char msg[512], all[768];
	va_list ap;

	if (ok)
		return 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(all, sizeof(all), "%s: %s", cond, msg);
	check_failed_(file, line, all);
	return 0;
}

#define CHECK_MSG(c, ...)                                                                          \
	do {                                                                                       \
		if (!check_msg_(!!(c), __FILE__, __LINE__, #c, __VA_ARGS__)) {                     \
			CHECK_ON_FAIL;                                                             \
		}                                                                                  \
	} while (0)

/* Expect @expr to return @want (an int, 0 or -errno); a mismatch names both
 * codes and their errno texts. */
#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		int rc_ = (expr);                                                                  \
		if (rc_ != (want)) {                                                               \
			fprintf(stderr, "%s:%d: %s = %d (%s), want %d (%s)\n", __FILE__, __LINE__, \
				#expr, rc_, strerror(-rc_), (want), strerror(-(want)));            \
			failures++;                                                                \
			CHECK_ON_FAIL;                                                             \
		}                                                                                  \
	} while (0)

#endif
