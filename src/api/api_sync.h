/* SPDX-License-Identifier: MIT */
/*
 * The locks and condition variables of the client and the server
 * (client.c, server.c, and both sides of the backchannel, backchannel.c),
 * on private futexes.
 *
 * The mutex is futex_mutex (provider/futex_mutex.h, shared with the
 * softiwarp device lock); the client takes it twice per call.
 *
 * api_cond is a condition variable for futex_mutex with the guarantees of
 * pthread_cond_t that the callers rely on: a waiter releases the mutex and
 * sleeps atomically with respect to any thread that changes the state
 * under the mutex and then signals (during or after its hold of the
 * mutex); wake-ups may be spurious, so every wait is in a loop. seq
 * changes with every signal; waiters counts the threads inside a wait
 * (a signal without waiters makes no system call). Neither wait is a
 * cancellation point (the library never cancels its threads).
 */
#ifndef RPCRDMA_API_SYNC_H
#define RPCRDMA_API_SYNC_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "provider/futex_mutex.h"

struct api_cond {
	uint32_t seq;
	uint32_t waiters;
};

void api_cond_wake(struct api_cond *cv, bool all);

static inline void api_cond_init(struct api_cond *cv)
{
	__atomic_store_n(&cv->seq, 0u, __ATOMIC_RELAXED);
	__atomic_store_n(&cv->waiters, 0u, __ATOMIC_RELAXED);
}

/* Mutex held on entry and on return. */
void api_cond_wait(struct api_cond *cv, struct futex_mutex *m);
/* As api_cond_wait, until @abstime on CLOCK_REALTIME at the latest
 * (pthread_cond_timedwait's clock and form); ETIMEDOUT then, else 0. */
int api_cond_timedwait(struct api_cond *cv, struct futex_mutex *m, const struct timespec *abstime);

static inline void api_cond_signal(struct api_cond *cv)
{
	__atomic_fetch_add(&cv->seq, 1u, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cv->waiters, __ATOMIC_SEQ_CST))
		api_cond_wake(cv, false);
}

static inline void api_cond_broadcast(struct api_cond *cv)
{
	__atomic_fetch_add(&cv->seq, 1u, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cv->waiters, __ATOMIC_SEQ_CST))
		api_cond_wake(cv, true);
}

#endif
