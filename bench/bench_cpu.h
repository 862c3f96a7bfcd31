/* SPDX-License-Identifier: MIT */
/*
 * The clock and CPU pinning every benchmark program here uses
 * (bench/provider, bench/tcprtt, bench/xprt): header only, so that a
 * one-file benchmark needs no library for it. The clock is the library's
 * own header-only monotonic_ns() (src/util/clock.h). Its includer defines
 * _GNU_SOURCE (sched_setaffinity) before any system header.
 */
#ifndef RPCRDMA_BENCH_CPU_H
#define RPCRDMA_BENCH_CPU_H

#include <errno.h>
#include <sched.h>

#include "../src/util/clock.h" /* monotonic_ns(): the library's own clock */

/* Pin the calling process (its first thread, and the threads it makes
 * afterwards) to @cpu; a negative @cpu leaves it unpinned. 0 or -errno. */
static inline int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

#endif
