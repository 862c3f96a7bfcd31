// SPDX-License-Identifier: MIT
/*
 * The payload pattern and checksum of rpcrdma-perf. Client and server
 * derive the bytes at any offset independently, so a READ's data is
 * checked against what the client computed itself, and a WRITE's checksum
 * comes from the bytes the server actually received.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "perf_tool.h"

static uint8_t *pattern;
static pthread_once_t pattern_once = PTHREAD_ONCE_INIT;

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finaliser: every input bit reaches every output bit */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

size_t perf_pattern_len(void)
{
	return (size_t)PERF_MAX_SIZE + (size_t)PERF_NOFF * PERF_OFF_STEP;
}

static void pattern_build(void)
{
	size_t n = perf_pattern_len() / 8;
	uint8_t *p = malloc(n * 8);

	if (!p)
		abort(); /* a tool, not the library: nothing sensible to do */
	for (size_t k = 0; k < n; k++) {
		uint64_t w = mix64(k);

		memcpy(p + 8 * k, &w, 8);
	}
	pattern = p;
}

const uint8_t *perf_pattern(void)
{
	pthread_once(&pattern_once, pattern_build);
	return pattern;
}

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}

uint64_t perf_sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	const uint64_t k = 0x9fb21c651e98df25ull;
	uint64_t h0 = 1, h1 = 2, h2 = 3, h3 = 4, w0, w1, w2, w3, t = 0;
	size_t len = n;

	/* Four chains so the multiplies overlap; each step is a bijection of
	 * the lane, so no single changed word can cancel out. */
	while (n >= 32) {
		memcpy(&w0, b, 8);
		memcpy(&w1, b + 8, 8);
		memcpy(&w2, b + 16, 8);
		memcpy(&w3, b + 24, 8);
		h0 = rotl64(h0 ^ w0, 29) * k;
		h1 = rotl64(h1 ^ w1, 29) * k;
		h2 = rotl64(h2 ^ w2, 29) * k;
		h3 = rotl64(h3 ^ w3, 29) * k;
		b += 32;
		n -= 32;
	}
	for (size_t i = 0; i < n; i++)
		t = (t << 8 | t >> 56) ^ b[i];
	return mix64(h0 ^ mix64(h1 ^ mix64(h2 ^ mix64(h3 ^ mix64(t ^ len)))));
}
