/* SPDX-License-Identifier: MIT */
/*
 * The locks and condition variables of the client and the server
 * (transport/requester.h, transport/responder.h, and both halves of the
 * backchannel, bc_requester.c and bc_responder.c), on private futexes.
 *
 * The mutex is futex_mutex (util/futex_mutex.h, shared with the
 * softiwarp device lock); the client takes it twice per call.
 *
 * futex_cond is a condition variable for futex_mutex with the guarantees of
 * pthread_cond_t that the callers rely on: a waiter releases the mutex and
 * sleeps atomically with respect to any thread that changes the state
 * under the mutex and then signals (during or after its hold of the
 * mutex); wake-ups may be spurious, so every wait is in a loop. seq
 * changes with every signal; waiters counts the threads inside a wait
 * (a signal without waiters makes no system call). Neither wait is a
 * cancellation point (the library never cancels its threads).
 */
#ifndef RPCRDMA_UTIL_FUTEX_COND_H
#define RPCRDMA_UTIL_FUTEX_COND_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "util/futex_mutex.h"

struct futex_cond {
	uint32_t seq;
	uint32_t waiters;
};

void futex_cond_wake(struct futex_cond *cv, bool all);

static inline void futex_cond_init(struct futex_cond *cv)
{
	__atomic_store_n(&cv->seq, 0u, __ATOMIC_RELAXED);
	__atomic_store_n(&cv->waiters, 0u, __ATOMIC_RELAXED);
}

/* Mutex held on entry and on return. */
void futex_cond_wait(struct futex_cond *cv, struct futex_mutex *m);
/* As futex_cond_wait, until @abstime on CLOCK_REALTIME at the latest
 * (pthread_cond_timedwait's clock and form); ETIMEDOUT then, else 0. */
int futex_cond_timedwait(struct futex_cond *cv, struct futex_mutex *m,
			 const struct timespec *abstime);

static inline void futex_cond_signal(struct futex_cond *cv)
{
	__atomic_fetch_add(&cv->seq, 1u, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cv->waiters, __ATOMIC_SEQ_CST))
		futex_cond_wake(cv, false);
}

static inline void futex_cond_broadcast(struct futex_cond *cv)
{
	__atomic_fetch_add(&cv->seq, 1u, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cv->waiters, __ATOMIC_SEQ_CST))
		futex_cond_wake(cv, true);
}

#endif
