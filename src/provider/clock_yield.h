/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock in nanoseconds, and a yield that says how long it
 * took, for the busy-poll policies of the provider (softiwarp's receive
 * spin, softiwarp/verbs.c) and the transport (transport/spin.c). A yield
 * with nothing else to run costs about a microsecond; one that took
 * several let another task run on this CPU (each caller picks its limit).
 */
#ifndef RPCRDMA_CLOCK_YIELD_H
#define RPCRDMA_CLOCK_YIELD_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* sched_yield(); returns the nanoseconds it took */
static inline uint64_t yield_ns(void)
{
	uint64_t t0 = monotonic_ns();

	(void)sched_yield();
	return monotonic_ns() - t0;
}

#endif
