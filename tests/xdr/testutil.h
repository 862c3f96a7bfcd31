/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the XDR and RPC unit tests: CHECK (lib/check.h) and
 * CHECK_FAIL_AT, which report the line and the random seed, a seeded PRNG
 * (RPCRDMA_TEST_SEED overrides the fixed default), and a splitter that
 * scatters a buffer over many small iovecs so items straddle iovec
 * boundaries.
 */
#ifndef RPCRDMA_TESTS_XDR_TESTUTIL_H
#define RPCRDMA_TESTS_XDR_TESTUTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"

static uint64_t tu_seed;
static uint64_t tu_state;

/* CHECK stops the test function at its first failure and names the seed. */
#define CHECK_SEED    tu_seed
#define CHECK_ON_FAIL return 1
#include "lib/check.h"

/* Expect a call to return exactly @err and leave the cursor where it was. */
#define CHECK_FAIL_AT(x, call, err)                                                                \
	do {                                                                                       \
		size_t tu_pos_ = rpcrdma_xdr_getpos(x);                                            \
		int tu_rc_ = (call);                                                               \
		if (tu_rc_ != (err) || rpcrdma_xdr_getpos(x) != tu_pos_) {                         \
			fprintf(stderr,                                                            \
				"%s:%d: %s: rc %d (want %d), pos %zu -> %zu (seed %" PRIu64 ")\n", \
				__FILE__, __LINE__, #call, tu_rc_, (err), tu_pos_,                 \
				rpcrdma_xdr_getpos(x), tu_seed);                                   \
			failures++;                                                                \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define RUN(fn)                                                                                    \
	do {                                                                                       \
		if (fn() != 0)                                                                     \
			fprintf(stderr, "FAIL %s\n", #fn);                                         \
		else                                                                               \
			printf("ok   %s\n", #fn);                                                  \
	} while (0)

static inline void tu_seed_init(void)
{
	const char *e = getenv("RPCRDMA_TEST_SEED");
	tu_seed = e ? strtoull(e, NULL, 0) : UINT64_C(0x5eed0f4d0c0ffee1);
	tu_state = tu_seed ? tu_seed : 1;
	printf("seed %" PRIu64 " (set RPCRDMA_TEST_SEED to override)\n", tu_seed);
}

/* xorshift64*: deterministic, good enough to pick test values. */
static inline uint64_t tu_rand64(void)
{
	tu_state ^= tu_state >> 12;
	tu_state ^= tu_state << 25;
	tu_state ^= tu_state >> 27;
	return tu_state * UINT64_C(2685821657736338717);
}

static inline uint32_t tu_rand32(void)
{
	return (uint32_t)(tu_rand64() >> 32);
}

/* Uniform-ish in [0, n). */
static inline uint32_t tu_below(uint32_t n)
{
	return n ? (uint32_t)(tu_rand64() % n) : 0;
}

static inline void tu_fill(void *p, size_t n)
{
	uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)tu_rand32();
}

/*
 * Split @buf[0..len) into @n (<= RPCRDMA_XDR_MAX_IOV) iovecs at random cut
 * points (some empty); returns the count used. Cut points are byte-granular,
 * so most items straddle a boundary somewhere.
 */
static inline unsigned tu_split(struct iovec *iov, unsigned n, void *buf, size_t len)
{
	size_t cuts[RPCRDMA_XDR_MAX_IOV + 1];
	if (n == 0 || n > RPCRDMA_XDR_MAX_IOV)
		n = RPCRDMA_XDR_MAX_IOV;
	cuts[0] = 0;
	cuts[n] = len;
	for (unsigned i = 1; i < n; i++) {
		/* Mostly small pieces near the front, so short headers get
		 * fragmented too. */
		size_t lim = len < 64 ? len : 64;
		cuts[i] =
		    tu_below(4) == 0 ? tu_below((uint32_t)len + 1) : tu_below((uint32_t)lim + 1);
	}
	/* insertion sort the inner cuts */
	for (unsigned i = 2; i < n; i++)
		for (unsigned j = i; j > 1 && cuts[j - 1] > cuts[j]; j--) {
			size_t t = cuts[j];
			cuts[j] = cuts[j - 1];
			cuts[j - 1] = t;
		}
	for (unsigned i = 0; i < n; i++) {
		iov[i].iov_base = (uint8_t *)buf + cuts[i];
		iov[i].iov_len = cuts[i + 1] - cuts[i];
	}
	return n;
}

/* Split into fixed-size pieces of @piece bytes (the last takes the rest). */
static inline unsigned tu_split_even(struct iovec *iov, void *buf, size_t len, size_t piece)
{
	unsigned n = 0;
	size_t off = 0;
	while (n < RPCRDMA_XDR_MAX_IOV - 1 && off + piece < len) {
		iov[n].iov_base = (uint8_t *)buf + off;
		iov[n].iov_len = piece;
		off += piece;
		n++;
	}
	iov[n].iov_base = (uint8_t *)buf + off;
	iov[n].iov_len = len - off;
	return n + 1;
}

static inline int tu_finish(const char *name)
{
	if (failures) {
		printf("%s: %d failed (seed %" PRIu64 ")\n", name, failures, tu_seed);
		return 1;
	}
	printf("%s: all passed\n", name);
	return 0;
}

static inline void tu_hexdump(FILE *f, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x%s", b[i], (i % 16 == 15 || i + 1 == n) ? "\n" : " ");
}

#endif
