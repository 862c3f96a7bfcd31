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

uint64_t perf_sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0, w0, w1, w2, w3;
	uint64_t t = 0;
	size_t len = n;

	/* Fletcher-64 in four interleaved lanes: a = sum of the words, b = sum
	 * of the running a, so each word counts with a weight that depends on
	 * its position and misplaced blocks (data written at the wrong offset,
	 * stale bytes from an earlier call) change the result. Two adds per
	 * word, no multiply: close to memory speed, so checking every payload
	 * does not dominate what is measured. */
	while (n >= 32) {
		memcpy(&w0, b, 8);
		memcpy(&w1, b + 8, 8);
		memcpy(&w2, b + 16, 8);
		memcpy(&w3, b + 24, 8);
		a0 += w0;
		a1 += w1;
		a2 += w2;
		a3 += w3;
		b0 += a0;
		b1 += a1;
		b2 += a2;
		b3 += a3;
		b += 32;
		n -= 32;
	}
	for (size_t i = 0; i < n; i++)
		t = (t << 8 | t >> 56) ^ b[i];
	return mix64(
	    a0 ^
	    mix64(
		b0 ^
		mix64(a1 ^
		      mix64(b1 ^ mix64(a2 ^ mix64(b2 ^ mix64(a3 ^ mix64(b3 ^ mix64(t ^ len)))))))));
}
