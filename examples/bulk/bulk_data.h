/* SPDX-License-Identifier: MIT */
/* The test pattern and checksum both sides compute (the example's, not
 * the library's). */
#ifndef BULK_DATA_H
#define BULK_DATA_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a 64 of @n bytes */
static inline uint64_t bulk_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* @n pseudo-random bytes (xorshift32) from @seed */
static inline void bulk_fill(void *p, size_t n, uint32_t seed)
{
	unsigned char *b = p;
	uint32_t x = seed ? seed : 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (unsigned char)x;
	}
}

#endif
