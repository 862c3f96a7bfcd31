/* SPDX-License-Identifier: MIT */
/*
 * A mutex on a private futex, shared by the softiwarp device lock
 * (softiwarp/siw.h) and the client/server locks (util/futex_cond.h).
 *
 * Semantics of a default pthread_mutex_t (not recursive, not
 * error-checking, not robust). Taking and dropping it uncontended is one
 * atomic instruction each, inline, where pthread_mutex_lock/unlock cost
 * about 55 instructions per round. state: 0 free, 1 held, 2 held and a
 * thread may sleep on it (its unlock wakes one). Under ThreadSanitizer
 * the lock and unlock carry its mutex annotations (util/tsan.h).
 */
#ifndef RPCRDMA_UTIL_FUTEX_MUTEX_H
#define RPCRDMA_UTIL_FUTEX_MUTEX_H

#include <stdbool.h>
#include <stdint.h>

#include "util/tsan.h"

struct futex_mutex {
	uint32_t state;
};

/* slow paths (futex_mutex.c) */
void futex_mutex_wait(struct futex_mutex *m);
void futex_mutex_wake(struct futex_mutex *m);

static inline void futex_mutex_init(struct futex_mutex *m)
{
	__atomic_store_n(&m->state, 0u, __ATOMIC_RELAXED);
	TSAN_MUTEX_CREATE(m);
}

static inline void futex_mutex_lock(struct futex_mutex *m)
{
	uint32_t expected = 0;

	TSAN_MUTEX_PRE_LOCK(m);
	if (__builtin_expect(!__atomic_compare_exchange_n(&m->state, &expected, 1u, false,
							  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED),
			     0))
		futex_mutex_wait(m);
	TSAN_MUTEX_POST_LOCK(m);
}

static inline void futex_mutex_unlock(struct futex_mutex *m)
{
	TSAN_MUTEX_PRE_UNLOCK(m);
	if (__builtin_expect(__atomic_exchange_n(&m->state, 0u, __ATOMIC_RELEASE) == 2u, 0))
		futex_mutex_wake(m);
	TSAN_MUTEX_POST_UNLOCK(m);
}

#endif
