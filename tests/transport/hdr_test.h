/* SPDX-License-Identifier: MIT */
/*
 * What the Version One and Version Two header tests share: big-endian word
 * macros for known-answer vectors, a header from a list of words, the
 * truncation sweep, chunk-list equality, random iovec cuts, and the seed
 * and verdict of main(). Each test includes it after lib/check.h and
 * defines `codec` for its version's header struct (the helpers reach the
 * header only through it).
 */
#ifndef RPCRDMA_TESTS_TRANSPORT_HDR_TEST_H
#define RPCRDMA_TESTS_TRANSPORT_HDR_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"
#include "util/be.h"

/* Big-endian words, as a reader would write them from the RFC or draft. */
#define W(v) BE32_BYTES(v)
#define H(v) W((uint64_t)(v) >> 32), W((uint64_t)(v)&0xffffffffu)

/* One version's decoder, seen through `void *` headers. */
struct hdr_codec {
	int (*decode)(struct rpcrdma_xdr *x, void *h);
	int (*decode_buf)(const void *buf, size_t len, void *h);
	uint32_t (*error_reply)(int rc);
	uint32_t (*xid)(const void *h);
	size_t (*hdr_len)(const void *h);
	uint32_t bad_header; /* what error_reply() answers a truncated header */
};

/* Defined by the including test. */
static const struct hdr_codec codec;

static inline struct rpcrdma1_segment seg(uint32_t handle, uint32_t length, uint64_t offset)
{
	struct rpcrdma1_segment s = {handle, length, offset};
	return s;
}

static inline int seg_eq(const struct rpcrdma1_segment *a, const struct rpcrdma1_segment *b)
{
	return a->handle == b->handle && a->length == b->length && a->offset == b->offset;
}

/* Every count, position, Write chunk boundary and segment the same. */
static inline int chunks_eq(const struct rpcrdma1_chunks *p, const struct rpcrdma1_chunks *q)
{
	if (p->nreads != q->nreads || p->nwrites != q->nwrites || p->nwsegs != q->nwsegs ||
	    p->reply_present != q->reply_present || p->nreply != q->nreply)
		return 0;
	for (uint32_t i = 0; i < p->nreads; i++)
		if (p->reads[i].position != q->reads[i].position ||
		    !seg_eq(&p->reads[i].seg, &q->reads[i].seg))
			return 0;
	for (uint32_t i = 0; i < p->nwrites; i++)
		if (p->writes[i].first != q->writes[i].first ||
		    p->writes[i].nsegs != q->writes[i].nsegs)
			return 0;
	for (uint32_t k = 0; k < p->nwsegs; k++)
		if (!seg_eq(&p->wsegs[k], &q->wsegs[k]))
			return 0;
	for (uint32_t k = 0; k < p->nreply; k++)
		if (!seg_eq(&p->reply[k], &q->reply[k]))
			return 0;
	return 1;
}

/* ---- truncation ---- */

struct vec {
	const char *name;
	const uint8_t *p;
	size_t len; /* header bytes */
};

/*
 * Every proper prefix of every vector fails with -EBADMSG or -EOVERFLOW
 * (a count or length was read but what it announces cannot fit in what is
 * left), leaves the cursor where it was, answers codec.bad_header, and
 * still gives the xid once it is there; the whole vector decodes to
 * exactly its length.
 */
static inline void test_truncation_of(const struct vec *vectors, size_t nvec, void *h)
{
	for (size_t v = 0; v < nvec; v++) {
		const struct vec *vec = &vectors[v];
		uint32_t xid = get_be32(vec->p);
		for (size_t cut = 0; cut < vec->len; cut++) {
			/* Exact-size heap copy: ASan sees any read past the cut. */
			uint8_t *b = malloc(cut ? cut : 1);
			if (!b)
				abort();
			memcpy(b, vec->p, cut);
			struct rpcrdma_xdr x;
			rpcrdma_xdr_init(&x, b, cut, RPCRDMA_XDR_DECODE);
			int rc = codec.decode(&x, h);
			if (rc != -EBADMSG && rc != -EOVERFLOW) {
				fprintf(stderr, "%s cut at %zu: rc %d\n", vec->name, cut, rc);
				failures++;
			}
			CHECK(rpcrdma_xdr_getpos(&x) == 0);
			CHECK(codec.error_reply(rc) == codec.bad_header);
			if (cut >= 4)
				CHECK(codec.xid(h) == xid);
			free(b);
		}
		CHECK_RC(codec.decode_buf(vec->p, vec->len, h), 0);
		CHECK(codec.hdr_len(h) == vec->len);
	}
}

/* ---- hostile headers, written as words ---- */

static inline size_t hdr_build(uint8_t *buf, size_t cap, const uint32_t *words, size_t n)
{
	if (n * 4 > cap)
		abort();
	for (size_t i = 0; i < n; i++) {
		put_be32(buf + 4 * i, words[i]);
	}
	return n * 4;
}

/* Decodes @n words into @h; a failure must leave the cursor unmoved. */
static inline int decode_words(const uint32_t *words, size_t n, void *h)
{
	static uint8_t buf[8192];
	size_t len = hdr_build(buf, sizeof(buf), words, n);
	struct rpcrdma_xdr x;
	rpcrdma_xdr_init(&x, buf, len, RPCRDMA_XDR_DECODE);
	int rc = codec.decode(&x, h);
	if (rc && rpcrdma_xdr_getpos(&x) != 0) {
		fprintf(stderr, "cursor moved on failure (rc %d)\n", rc);
		failures++;
	}
	return rc;
}

#define DECODE(h, ...)                                                                             \
	decode_words((const uint32_t[]){__VA_ARGS__},                                              \
		     sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t), (h))

/* ---- random round trips ---- */

/* Cuts @buf[0..len) into @cnt iovecs at places @below (a uniform draw in
 * [0, n]) picks; the last takes the rest. */
static inline void cut_iov(struct iovec *iov, unsigned int cnt, uint8_t *buf, size_t len,
			   uint32_t (*below)(uint32_t))
{
	size_t off = 0;
	for (unsigned int i = 0; i < cnt; i++) {
		size_t left = len - off;
		size_t piece = i + 1 == cnt ? left : below((uint32_t)left + 1);
		iov[i].iov_base = buf + off;
		iov[i].iov_len = piece;
		off += piece;
	}
}

/* Points the same cuts at @out, the last iovec taking all the room left. */
static inline void recut_iov(struct iovec *iov, unsigned int cnt, uint8_t *out, size_t room)
{
	size_t off = 0;
	for (unsigned int i = 0; i < cnt; i++) {
		iov[i].iov_base = out + off;
		off += iov[i].iov_len;
	}
	iov[cnt - 1].iov_len += room - off;
}

static inline uint64_t test_seed(uint64_t dflt)
{
	const char *env = getenv("RPCRDMA_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : dflt;
	printf("seed 0x%" PRIx64 " (set RPCRDMA_TEST_SEED to repeat another)\n", seed);
	return seed;
}

static inline int test_verdict(void)
{
	if (failures) {
		printf("FAIL: %d check(s) failed\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}

#endif
