// SPDX-License-Identifier: MIT
/*
 * Slow paths of futex_mutex.h: sleeping on and waking the futex.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/futex_mutex.h"

/* The mutex was found held: mark it contended (2) and sleep until it is
 * free. Whoever takes it here leaves it at 2, so its unlock wakes the next
 * sleeper, if any (a spare wake-up at most). */
void futex_mutex_wait(struct futex_mutex *m)
{
	while (__atomic_exchange_n(&m->state, 2u, __ATOMIC_ACQUIRE) != 0u)
		(void)syscall(SYS_futex, &m->state, FUTEX_WAIT_PRIVATE, 2u, NULL, NULL, 0);
}

/* Unlocked from the contended state: wake one sleeper. */
void futex_mutex_wake(struct futex_mutex *m)
{
	(void)syscall(SYS_futex, &m->state, FUTEX_WAKE_PRIVATE, 1u, NULL, NULL, 0);
}
