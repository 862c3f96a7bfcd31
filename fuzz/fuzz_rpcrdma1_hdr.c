/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: RPC-over-RDMA Version One header decoder
 * (src/transport/rpcrdma1_hdr.c). For any input:
 *   - decoding returns 0 or one of the documented errnos, and leaves the
 *     cursor where it was on failure;
 *   - the same bytes spread over many iovecs decode identically;
 *   - on success: the header length is within the input, the size
 *     predicted by rpcrdma1_hdr_size() equals it, re-encoding gives back
 *     exactly the input's header bytes (the Version One encoding is
 *     canonical), the call/reply checks and length sums run without fault
 *     and agree with the decoded lists, and rewriting chunk lengths to
 *     what they offer is a no-op.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"

#include "fuzz_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const struct rpcrdma1_hdr *a, const struct rpcrdma1_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit ||
	    a->proc != b->proc || a->align != b->align || a->thresh != b->thresh ||
	    a->err != b->err || a->vers_low != b->vers_low || a->vers_high != b->vers_high ||
	    a->hdr_len != b->hdr_len)
		return 0;
	return chunks_same(&a->chunks, &b->chunks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma1_hdr h, h2;
	static uint8_t out[8192];
	struct rpcrdma_xdr x;

	rpcrdma_xdr_init(&x, (void *)data, size, RPCRDMA_XDR_DECODE);
	int rc = rpcrdma1_decode(&x, &h);
	REQUIRE(rc == 0 || known_error(rc));
	REQUIRE(rpcrdma_xdr_getpos(&x) == (rc ? 0 : h.hdr_len));
	REQUIRE((rpcrdma1_error_reply(rc) != 0) == (rc != 0));

	/* The same bytes cut into pieces of 1, 2, 3, ... bytes. */
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	unsigned int n = cut_pieces(iov, data, size);
	REQUIRE(rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_DECODE) == 0);
	int rc2 = rpcrdma1_decode(&x, &h2);
	REQUIRE(rc2 == rc);
	if (rc) {
		REQUIRE(rpcrdma_xdr_getpos(&x) == 0);
		return 0;
	}
	REQUIRE(same(&h, &h2));

	/* Size prediction and canonical re-encoding. */
	REQUIRE(h.hdr_len <= size);
	REQUIRE(rpcrdma1_hdr_size(&h) == h.hdr_len);
	rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	REQUIRE(rpcrdma1_encode(&x, &h) == 0);
	REQUIRE(rpcrdma_xdr_getpos(&x) == h.hdr_len);
	REQUIRE(memcmp(out, data, h.hdr_len) == 0);
	/* One byte short: refused, nothing consumed. */
	rpcrdma_xdr_init(&x, out, h.hdr_len - 1, RPCRDMA_XDR_ENCODE);
	REQUIRE(rpcrdma1_encode(&x, &h) == -EMSGSIZE && rpcrdma_xdr_getpos(&x) == 0);

	/* The responder's checks. */
	const struct rpcrdma1_chunks *c = &h.chunks;
	uint32_t nchunks = 0;
	if (rpcrdma1_check_read_list(c, &nchunks) == 0) {
		uint32_t seen = 0;
		for (uint32_t i = 0; i < c->nreads;) {
			uint32_t pos, ns;
			uint64_t len;
			REQUIRE(rpcrdma1_read_chunk(c, i, &pos, &ns, &len) == 0);
			REQUIRE(ns >= 1 && (pos & 3u) == 0);
			i += ns;
			seen++;
		}
		REQUIRE(seen == nchunks);
	}
	int call_rc = rpcrdma1_check_call(&h);
	REQUIRE(call_rc == 0 || call_rc == -EINVAL);
	int reply_rc = rpcrdma1_check_reply(&h);
	REQUIRE(reply_rc == 0 || reply_rc == -EINVAL);
	uint64_t total = 0, sum = 0, len;
	for (uint32_t i = 0; i < c->nwrites; i++) {
		REQUIRE(rpcrdma1_write_chunk_length(c, i, &len) == 0);
		sum += len;
	}
	REQUIRE(rpcrdma1_write_list_length(c, &total) == 0 && total == sum);
	REQUIRE(rpcrdma1_reply_chunk_length(c, &len) == 0);

	/* Rewriting lengths to "all written" changes nothing; one byte more
	 * than offered is refused. */
	h2 = h;
	for (uint32_t i = 0; i < c->nwrites; i++) {
		REQUIRE(rpcrdma1_write_chunk_length(c, i, &len) == 0);
		REQUIRE(rpcrdma1_write_chunk_set_written(&h2.chunks, i, len + 1) == -EMSGSIZE);
		REQUIRE(rpcrdma1_write_chunk_set_written(&h2.chunks, i, len) == 0);
	}
	REQUIRE(rpcrdma1_reply_chunk_length(c, &len) == 0);
	REQUIRE(rpcrdma1_reply_chunk_set_written(&h2.chunks, len + 1) == -EMSGSIZE);
	REQUIRE(rpcrdma1_reply_chunk_set_written(&h2.chunks, len) == 0);
	REQUIRE(same(&h, &h2));
	return 0;
}
