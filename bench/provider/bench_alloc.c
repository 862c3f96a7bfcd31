/* SPDX-License-Identifier: MIT */
/* Counting wrappers around the allocator (see bench_alloc.h). */
#include "bench_alloc.h"

/* Relaxed atomics: the provider may allocate from a progress thread. */
static uint64_t allocs;

static void count(void)
{
	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
}

uint64_t bench_alloc_count(void)
{
	return __atomic_load_n(&allocs, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t n)
{
	count();
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	count();
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	count();
	return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	count();
	return __real_posix_memalign(p, align, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	count();
	return __real_aligned_alloc(align, n);
}

char *__wrap_strdup(const char *s)
{
	count();
	return __real_strdup(s);
}
