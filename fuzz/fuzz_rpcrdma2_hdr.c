/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: RPC-over-RDMA Version Two header decoder
 * (src/transport/rpcrdma2_hdr.c) and our optional messages' optinfo
 * (src/transport/rpcrdma2_opt.c). For any input:
 *   - decoding returns 0 or one of the documented errnos, leaves the
 *     cursor where it was on failure, and gives the same answer from the
 *     same bytes spread over many iovecs;
 *   - on success: the header (optinfo included) lies within the input,
 *     rpcrdma2_hdr_size() predicts its length, re-encoding gives back
 *     exactly the input's header bytes (the encoding is canonical), and
 *     decoding that again gives the same header (the round trip);
 *   - the direction check runs on any payload behind it;
 *   - a property list (the optinfo of our opttype, or the whole input)
 *     decodes to 0 or a documented errno, and a decoded list re-encodes to
 *     one that decodes to the same properties.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"

#include "fuzz_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const struct rpcrdma2_hdr *a, const struct rpcrdma2_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit ||
	    a->proc != b->proc || a->direction != b->direction || a->err != b->err ||
	    a->vers_low != b->vers_low || a->vers_high != b->vers_high || a->optdir != b->optdir ||
	    a->opttype != b->opttype || a->optinfo_len != b->optinfo_len ||
	    a->optinfo_off != b->optinfo_off || a->hdr_len != b->hdr_len)
		return 0;
	return chunks_same(&a->chunks, &b->chunks);
}

static int same_props(const struct rpcrdma2_props *a, const struct rpcrdma2_props *b)
{
	return a->present == b->present && a->max_send_size == b->max_send_size &&
	       a->recv_buf_size == b->recv_buf_size && a->max_seg_size == b->max_seg_size &&
	       a->max_seg_count == b->max_seg_count && a->reverse_dir == b->reverse_dir &&
	       a->resp_read == b->resp_read && a->remote_inv == b->remote_inv;
}

static void props_round_trip(const uint8_t *info, size_t len)
{
	struct rpcrdma2_props p, q;
	static uint8_t out[1024];
	uint32_t olen;

	int rc = rpcrdma2_props_decode(info, len, &p);
	REQUIRE(rc == 0 || rc == -EBADMSG || rc == -E2BIG || rc == -EOVERFLOW || rc == -EINVAL);
	if (rc)
		return;
	REQUIRE((p.present & ~RPCRDMA2_PROPF_ALL) == 0);
	REQUIRE(rpcrdma2_props_encode(out, sizeof(out), &p, &olen) == 0);
	REQUIRE(olen == rpcrdma2_props_size(&p) && olen <= 4 + 12u * 7);
	REQUIRE(rpcrdma2_props_decode(out, olen, &q) == 0);
	REQUIRE(same_props(&p, &q) && q.nunknown == 0);
}

static void split_decode(const uint8_t *data, size_t size, int rc, const struct rpcrdma2_hdr *h)
{
	static struct rpcrdma2_hdr h2;
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	struct rpcrdma_xdr x;
	/* Pieces of 1, 2, 3, ... bytes. */
	unsigned int n = cut_pieces(iov, data, size);

	REQUIRE(rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_DECODE) == 0);
	REQUIRE(rpcrdma2_decode(&x, &h2) == rc);
	REQUIRE(rpcrdma_xdr_getpos(&x) == (rc ? 0 : h->hdr_len));
	if (!rc)
		REQUIRE(same(h, &h2));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma2_hdr h, h2;
	static uint8_t out[8192];
	struct rpcrdma_xdr x;

	/* The whole input as a property list, too. */
	props_round_trip(data, size);

	rpcrdma_xdr_init(&x, (void *)data, size, RPCRDMA_XDR_DECODE);
	int rc = rpcrdma2_decode(&x, &h);
	REQUIRE(rc == 0 || known_error(rc));
	REQUIRE(rpcrdma_xdr_getpos(&x) == (rc ? 0 : h.hdr_len));
	REQUIRE((rpcrdma2_error_reply(rc) != 0) == (rc != 0));
	split_decode(data, size, rc, &h);
	if (rc)
		return 0;

	/* Size, canonical re-encoding, and the round trip. */
	REQUIRE(h.hdr_len <= size && h.hdr_len >= RPCRDMA2_ERR_SIZE);
	REQUIRE(h.optinfo_off + h.optinfo_len <= h.hdr_len);
	REQUIRE(rpcrdma2_hdr_size(&h) == h.hdr_len);
	const uint8_t *info = data + h.optinfo_off;
	if (h.hdr_len <= sizeof(out)) {
		rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
		REQUIRE(rpcrdma2_encode(&x, &h, info) == 0);
		REQUIRE(rpcrdma_xdr_getpos(&x) == h.hdr_len);
		REQUIRE(memcmp(out, data, h.hdr_len) == 0);
		REQUIRE(rpcrdma2_decode_buf(out, h.hdr_len, &h2) == 0 && same(&h, &h2));
		rpcrdma_xdr_init(&x, out, h.hdr_len - 1, RPCRDMA_XDR_ENCODE);
		REQUIRE(rpcrdma2_encode(&x, &h, info) == -EMSGSIZE && rpcrdma_xdr_getpos(&x) == 0);
	}

	/* Whatever follows is the payload: the §4.2.2 check runs on it. */
	uint32_t mt;
	if (rpcrdma2_payload_msg_type(data + h.hdr_len, size - h.hdr_len, &mt) == 0) {
		int d = rpcrdma2_check_direction(&h, mt);
		REQUIRE(d == 0 || d == -EPROTO || (d == -EINVAL && h.proc == RPCRDMA2_ERROR));
	}
	if (h.proc == RPCRDMA2_OPTIONAL && h.opttype == RPCRDMA2_OPTTYPE_PROPS)
		props_round_trip(info, h.optinfo_len);
	if (h.proc == RPCRDMA2_OPTIONAL && h.opttype == RPCRDMA2_OPTTYPE_PULL_DONE) {
		uint32_t xid;
		int p = rpcrdma2_pull_done_decode(info, h.optinfo_len, &xid);
		REQUIRE(p == 0 || p == -EBADMSG || p == -EINVAL);
		REQUIRE((p == 0) == (h.optinfo_len == 4));
	}
	return 0;
}
