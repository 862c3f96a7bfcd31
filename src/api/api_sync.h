/* SPDX-License-Identifier: MIT */
/*
 * The locks and condition variables of the client and the server
 * (client.c, server.c, and both sides of the backchannel, backchannel.c),
 * on private futexes.
 *
 * api_mutex is a plain mutex with the semantics of a default
 * pthread_mutex_t (not recursive, not error-checking, not robust); taking
 * and dropping it uncontended is one atomic instruction each, inline,
 * where pthread_mutex_lock/unlock cost about 55 instructions per round
 * (the client takes it twice per call). state: 0 free, 1 held, 2 held and
 * a thread may sleep on it (its unlock wakes one).
 *
 * api_cond is a condition variable for api_mutex with the guarantees of
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

struct api_mutex {
	uint32_t state;
};

struct api_cond {
	uint32_t seq;
	uint32_t waiters;
};

void api_mutex_wait(struct api_mutex *m);
void api_mutex_wake(struct api_mutex *m);
void api_cond_wake(struct api_cond *cv, bool all);

static inline void api_mutex_init(struct api_mutex *m)
{
	__atomic_store_n(&m->state, 0u, __ATOMIC_RELAXED);
}

static inline void api_mutex_lock(struct api_mutex *m)
{
	uint32_t expected = 0;

	if (__builtin_expect(!__atomic_compare_exchange_n(&m->state, &expected, 1u, false,
							  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED),
			     0))
		api_mutex_wait(m);
}

static inline void api_mutex_unlock(struct api_mutex *m)
{
	if (__builtin_expect(__atomic_exchange_n(&m->state, 0u, __ATOMIC_RELEASE) == 2u, 0))
		api_mutex_wake(m);
}

static inline void api_cond_init(struct api_cond *cv)
{
	__atomic_store_n(&cv->seq, 0u, __ATOMIC_RELAXED);
	__atomic_store_n(&cv->waiters, 0u, __ATOMIC_RELAXED);
}

/* Mutex held on entry and on return. */
void api_cond_wait(struct api_cond *cv, struct api_mutex *m);
/* As api_cond_wait, until @abstime on CLOCK_REALTIME at the latest
 * (pthread_cond_timedwait's clock and form); ETIMEDOUT then, else 0. */
int api_cond_timedwait(struct api_cond *cv, struct api_mutex *m, const struct timespec *abstime);

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
