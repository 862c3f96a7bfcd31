/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock in nanoseconds, deadlines on it as the CLOCK_REALTIME
 * times futex_cond_timedwait takes, a per-process seed for identifiers
 * (XIDs, STag keys), and a yield that says how long it
 * took, for the busy-poll policies of the provider (softiwarp's receive
 * spin, softiwarp/verbs.c) and the transport (transport/spin.c). A yield
 * with nothing else to run costs about a microsecond; one that took
 * several let another task run on this CPU (each caller picks its limit).
 */
#ifndef RPCRDMA_UTIL_CLOCK_H
#define RPCRDMA_UTIL_CLOCK_H

#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* @mono_ns on the monotonic_ns() clock as an absolute CLOCK_REALTIME time
 * (the clock of futex_cond_timedwait and pthread_cond_timedwait); a time
 * already past gives now. */
static inline void realtime_at(uint64_t mono_ns, struct timespec *ts)
{
	uint64_t now = monotonic_ns(), left = mono_ns > now ? mono_ns - now : 0;

	clock_gettime(CLOCK_REALTIME, ts);
	left += (uint64_t)ts->tv_nsec;
	ts->tv_sec += (time_t)(left / 1000000000u);
	ts->tv_nsec = (long)(left % 1000000000u);
}

/* @ms milliseconds from now as an absolute CLOCK_REALTIME time. */
static inline void realtime_in_ms(uint32_t ms, struct timespec *ts)
{
	realtime_at(monotonic_ns() + (uint64_t)ms * 1000000u, ts);
}

/* A seed that differs from process to process and from call to call:
 * the first XID of a requester, the STag key of a device. Not secret. */
static inline uint32_t id_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint32_t)ts.tv_nsec ^ ((uint32_t)ts.tv_sec << 12) ^ (uint32_t)getpid()) *
	       2654435761u;
}

/* sched_yield(); returns the nanoseconds it took */
static inline uint64_t yield_ns(void)
{
	uint64_t t0 = monotonic_ns();

	(void)sched_yield();
	return monotonic_ns() - t0;
}

#endif
