// SPDX-License-Identifier: MIT
/*
 * Slow paths of futex_cond.h: sleeping on and waking the futexes.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/futex_cond.h"

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts, uint32_t mask)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, mask);
}

void futex_cond_wake(struct futex_cond *cv, bool all)
{
	(void)futex(&cv->seq, FUTEX_WAKE_PRIVATE, all ? (uint32_t)INT_MAX : 1u, NULL, 0);
}

/*
 * The waiter is counted and reads seq while it holds the mutex, so a state
 * change made under the mutex after this point is followed by a seq change
 * that either happens before FUTEX_WAIT (which then returns at once: the
 * value differs) or wakes the sleeper; and the signaller, which bumps seq
 * before it reads waiters, sees the count. The mutex is taken back as
 * contended (2): other threads woken together may be sleeping on it.
 * Under ThreadSanitizer that retaking is a lock it sees (util/tsan.h; the
 * drop is futex_mutex_unlock's); seq and waiters are atomics it knows, and
 * a signal orders nothing by itself, as with pthread_cond_t.
 */
static int cond_wait(struct futex_cond *cv, struct futex_mutex *m, const struct timespec *abstime)
{
	uint32_t seq;
	long r;
	int err = 0;

	__atomic_fetch_add(&cv->waiters, 1u, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&cv->seq, __ATOMIC_SEQ_CST);
	futex_mutex_unlock(m);
	if (abstime)
		r = futex(&cv->seq, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, seq, abstime,
			  FUTEX_BITSET_MATCH_ANY);
	else
		r = futex(&cv->seq, FUTEX_WAIT_PRIVATE, seq, NULL, 0);
	if (r < 0 && errno == ETIMEDOUT)
		err = ETIMEDOUT;
	__atomic_fetch_sub(&cv->waiters, 1u, __ATOMIC_SEQ_CST);
	TSAN_MUTEX_PRE_LOCK(m);
	futex_mutex_wait(m); /* takes it as contended (2) */
	TSAN_MUTEX_POST_LOCK(m);
	return err;
}

void futex_cond_wait(struct futex_cond *cv, struct futex_mutex *m)
{
	(void)cond_wait(cv, m, NULL);
}

int futex_cond_timedwait(struct futex_cond *cv, struct futex_mutex *m,
			 const struct timespec *abstime)
{
	return cond_wait(cv, m, abstime);
}
