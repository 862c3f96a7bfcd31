/* SPDX-License-Identifier: MIT */
/*
 * Heap allocation counter for the softiwarp benchmark. The link wraps the
 * allocator entry points (-Wl,--wrap=malloc ...), so every allocation made
 * by code linked into bench_siw (the benchmark and the rpcrdma layers) is
 * counted; libc's internal allocations are not. Read the counter around a
 * steady-state loop: the target is zero allocations per operation.
 */
#ifndef BENCH_PROVIDER_ALLOC_H
#define BENCH_PROVIDER_ALLOC_H

#include <stddef.h>
#include <stdint.h>

uint64_t bench_alloc_count(void);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
char *__wrap_strdup(const char *s);

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
char *__real_strdup(const char *s);

#endif
