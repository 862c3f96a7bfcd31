// SPDX-License-Identifier: MIT
/* Latency histogram: log-linear buckets (PERF_HIST_SUB per power of two);
 * the clocks it and the CPU accounting read. */
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "perf_tool.h"

uint64_t perf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void perf_rusage(uint64_t *user_ns, uint64_t *sys_ns, uint64_t *csw)
{
	struct rusage ru;

	memset(&ru, 0, sizeof(ru));
	(void)getrusage(RUSAGE_SELF, &ru);
	*user_ns =
	    (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000u;
	*sys_ns =
	    (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000u;
	*csw = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

/* Values below PERF_HIST_SUB get one bucket each; above, the power of two
 * (its top bit) picks a group of PERF_HIST_SUB buckets and the next five
 * bits pick the bucket. */
static unsigned bucket_of(uint64_t v)
{
	unsigned top, idx;

	if (v < PERF_HIST_SUB)
		return (unsigned)v;
	top = 63u - (unsigned)__builtin_clzll(v); /* >= 5 */
	idx = (top - 4u) * PERF_HIST_SUB + (unsigned)((v >> (top - 5u)) & (PERF_HIST_SUB - 1u));
	return idx < PERF_HIST_BUCKETS ? idx : PERF_HIST_BUCKETS - 1u;
}

/* Lowest value of bucket @i and its width. */
static void bucket_range(unsigned i, double *lo, double *width)
{
	unsigned top, sub;

	if (i < PERF_HIST_SUB) {
		*lo = i;
		*width = 1;
		return;
	}
	top = i / PERF_HIST_SUB + 4u;
	sub = i % PERF_HIST_SUB;
	*width = (double)(1ull << (top - 5u));
	*lo = (double)(1ull << top) + sub * *width;
}

void perf_hist_add(struct perf_hist *h, uint64_t ns)
{
	uint64_t m = atomic_load_explicit(&h->max_ns, memory_order_relaxed);

	atomic_fetch_add_explicit(&h->b[bucket_of(ns)], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
	while (ns > m && !atomic_compare_exchange_weak(&h->max_ns, &m, ns))
		;
}

void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src)
{
	for (unsigned i = 0; i < PERF_HIST_BUCKETS; i++)
		dst->b[i] += atomic_load(&src->b[i]);
	dst->count += atomic_load(&src->count);
	dst->sum_ns += atomic_load(&src->sum_ns);
	if (atomic_load(&src->max_ns) > dst->max_ns)
		dst->max_ns = atomic_load(&src->max_ns);
}

double perf_hist_quantile(const struct perf_hist *h, double q)
{
	uint64_t n = atomic_load(&h->count), seen = 0;
	double want = q * (double)n;

	if (!n)
		return 0;
	for (unsigned i = 0; i < PERF_HIST_BUCKETS; i++) {
		uint64_t c = atomic_load(&h->b[i]);
		double lo, width;

		if (!c)
			continue;
		if ((double)(seen + c) >= want) {
			/* interpolate inside the bucket */
			bucket_range(i, &lo, &width);
			return lo + width * ((want - (double)seen) / (double)c);
		}
		seen += c;
	}
	return (double)atomic_load(&h->max_ns);
}
