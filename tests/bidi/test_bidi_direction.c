// SPDX-License-Identifier: MIT
/*
 * Unit test of the backchannel's wire rules (src/transport/backchannel.c):
 *   - direction from the RPC msg_type (RFC 8167 §4.1): RDMA_MSG inline Call
 *     and Reply, with and without chunk lists (fast path and full decode);
 *     RDMA_NOMSG Long Call (Position-Zero Read chunk) and Long Reply (Reply
 *     chunk); undetermined (so its credit is ignored): RDMA_ERROR, RDMA_DONE,
 *     an RPC message whose XID differs from the header's (§5.1), a bad
 *     msg_type, another rdma_vers, truncated input;
 *   - the reverse responder's Read chunk plan: positions, Position-Zero,
 *     refusals (decreasing or zero positions, past the inline message, more
 *     chunks than RPCRDMA_MAX_BULK, over the byte budget);
 *   - the splice: chunk data inserted at its position with XDR roundup.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport/backchannel.h"

#include "lib/check.h"
#include "util/be.h"

static uint8_t buf[4096];
static size_t len;

static void put(uint32_t v)
{
	put_be32(buf + len, v);
	len += 4;
}

/* RPC call header of @xid (prog 0x40000001 v1 proc 0, AUTH_NONE) */
static void rpc_call(uint32_t xid)
{
	put(xid);
	put(0); /* CALL */
	put(2);
	put(0x40000001);
	put(1);
	put(0);
	put(0);
	put(0);
	put(0);
	put(0);
}

static void rpc_reply(uint32_t xid, uint32_t msgtype)
{
	put(xid);
	put(msgtype);
	put(0); /* MSG_ACCEPTED */
	put(0);
	put(0);
	put(0); /* SUCCESS */
}

static enum xprt_dir dir(bool *decoded)
{
	static struct rpcrdma1_hdr h;

	return xprt_msg_direction(buf, len, &h, decoded);
}

int main(void)
{
	static struct rpcrdma1_hdr h;
	struct xprt_rchunk rc[RPCRDMA_MAX_BULK];
	uint32_t p0, nrc;
	uint64_t total;
	bool dec;

	/* RDMA_MSG, no chunk lists: Call and Reply (fast path). */
	len = 0;
	put(7), put(1), put(2), put(0), put(0), put(0), put(0);
	rpc_call(7);
	CHECK(dir(&dec) == XPRT_DIR_CALL && !dec);
	len = 0;
	put(7), put(1), put(2), put(0), put(0), put(0), put(0);
	rpc_reply(7, 1);
	CHECK(dir(&dec) == XPRT_DIR_REPLY && !dec);
	/* RFC 8167 §5.1: the RPC message must start with the header's XID. */
	len = 0;
	put(7), put(1), put(2), put(0), put(0), put(0), put(0);
	rpc_call(8);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	/* msg_type neither CALL nor REPLY */
	len = 0;
	put(7), put(1), put(2), put(0), put(0), put(0), put(0);
	rpc_reply(7, 2);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	/* RPC message cut after the XID */
	len = 0;
	put(7), put(1), put(2), put(0), put(0), put(0), put(0), put(7);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	/* RDMA_MSG with a Reply chunk (full decode), a Reply with a Write list */
	len = 0;
	put(9), put(1), put(2), put(0), put(0), put(0);
	put(1), put(1), put(0x1234), put(4096), put(0), put(0x1000); /* reply chunk */
	rpc_call(9);
	CHECK(dir(&dec) == XPRT_DIR_CALL && dec);
	len = 0;
	put(9), put(1), put(2), put(0), put(0);
	put(1), put(1), put(0x55), put(100), put(0), put(0), put(0); /* 1 write chunk */
	put(0);
	rpc_reply(9, 1);
	CHECK(dir(&dec) == XPRT_DIR_REPLY && dec);
	/* RDMA_NOMSG: Long Call (Position-Zero Read chunk), Long Reply */
	len = 0;
	put(10), put(1), put(2), put(1);
	put(1), put(0), put(0x77), put(300), put(0), put(0x2000), put(0);
	put(0), put(0);
	CHECK(dir(&dec) == XPRT_DIR_CALL && dec);
	len = 0;
	put(10), put(1), put(2), put(1), put(0), put(0);
	put(1), put(1), put(0x88), put(300), put(0), put(0x3000);
	CHECK(dir(&dec) == XPRT_DIR_REPLY && dec);
	/* RDMA_NOMSG with neither: undetermined */
	len = 0;
	put(10), put(1), put(2), put(1), put(0), put(0), put(0);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	/* RDMA_ERROR (both codes), RDMA_DONE, other versions, truncated */
	len = 0;
	put(11), put(1), put(2), put(4), put(2);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	len = 0;
	put(11), put(1), put(2), put(4), put(1), put(1), put(1);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	len = 0;
	put(11), put(1), put(2), put(3);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	len = 0;
	put(7), put(2), put(2), put(0), put(0), put(0), put(0);
	rpc_call(7);
	CHECK(dir(&dec) == XPRT_DIR_NONE);
	len = 12;
	CHECK(dir(&dec) == XPRT_DIR_NONE);

	/* ---- Read chunk plan ---- */
	/* Two DDP chunks in a 56-byte inline message (each position is that
	 * of the item's data, after its length word, in the complete stream,
	 * RFC 8166 §3.4.5): 44, and 44 + 8 (5 bytes + roundup) + 4 = 56. */
	len = 0;
	put(12), put(1), put(2), put(0);
	put(1), put(44), put(0x10), put(5), put(0), put(0x100);
	put(1), put(56), put(0x11), put(8), put(0), put(0x200);
	put(0), put(0), put(0);
	{
		size_t hl = len;

		rpc_call(12);
		put(5);
		put(8);
		put(0xabcdef01);
		put(0x22222222);
		CHECK(rpcrdma1_decode_buf(buf, len, &h) == 0 && h.hdr_len == hl);
		CHECK(xprt_bc_read_plan(&h, len - hl, 1 << 20, &p0, rc, &nrc, &total) == 0);
		CHECK(p0 == 0 && nrc == 2 && total == 13);
		CHECK(rc[0].pos == 44 && rc[0].len == 5 && rc[1].pos == 56 && rc[1].len == 8);
		/* splice: "hello" at 44 (+3 pad), "ABCDEFGH" at 48 */
		{
			uint8_t data[13];
			struct rpcrdma_xdr x;
			uint8_t out[80];

			memcpy(data, "helloABCDEFGH", 13);
			rc[0].data = data;
			rc[1].data = data + 5;
			CHECK(xprt_bc_splice(&x, buf + hl, (uint32_t)(len - hl), rc, nrc) == 0);
			CHECK(rpcrdma_xdr_remaining(&x) == 56 + 8 + 8);
			CHECK(rpcrdma_xdr_get_opaque_fixed(&x, out, 72) == 0);
			CHECK(!memcmp(out + 44, "hello\0\0\0", 8));
			CHECK(!memcmp(out + 56, "ABCDEFGH", 8));
			CHECK(out[43] == 5 && out[55] == 8);       /* the length words stayed */
			CHECK(out[64] == 0xab && out[71] == 0x22); /* and what follows */
		}
		/* byte budget */
		CHECK(xprt_bc_read_plan(&h, len - hl, 12, &p0, rc, &nrc, &total) == -EINVAL);
		/* a position past the inline message */
		CHECK(xprt_bc_read_plan(&h, 44, 1 << 20, &p0, rc, &nrc, &total) == -EINVAL);
	}
	/* decreasing positions */
	len = 0;
	put(13), put(1), put(2), put(0);
	put(1), put(48), put(0x10), put(5), put(0), put(0x100);
	put(1), put(40), put(0x11), put(8), put(0), put(0x200);
	put(0), put(0), put(0);
	rpc_call(13);
	CHECK(rpcrdma1_decode_buf(buf, len, &h) == 0);
	CHECK(xprt_bc_read_plan(&h, 60, 1 << 20, &p0, rc, &nrc, &total) == -EINVAL);
	/* more chunks than RPCRDMA_MAX_BULK */
	len = 0;
	put(14), put(1), put(2), put(0);
	for (uint32_t i = 0; i <= RPCRDMA_MAX_BULK; i++)
		put(1), put(8 + 4 * i), put(0x10 + i), put(4), put(0), put(0x100);
	put(0), put(0), put(0);
	rpc_call(14);
	CHECK(rpcrdma1_decode_buf(buf, len, &h) == 0);
	CHECK(xprt_bc_read_plan(&h, 40, 1 << 20, &p0, rc, &nrc, &total) == -EINVAL);
	/* Long Call: Position-Zero chunk of 300 bytes, then a DDP chunk at 60 */
	len = 0;
	put(15), put(1), put(2), put(1);
	put(1), put(0), put(0x77), put(300), put(0), put(0x2000);
	put(1), put(60), put(0x78), put(1000), put(0), put(0x3000);
	put(0), put(0), put(0);
	CHECK(rpcrdma1_decode_buf(buf, len, &h) == 0);
	CHECK(xprt_bc_read_plan(&h, 0, 1 << 20, &p0, rc, &nrc, &total) == 0);
	CHECK(p0 == 300 && nrc == 1 && rc[0].pos == 60 && total == 1300);
	/* RDMA_MSG with a Position-Zero chunk is not a call (RFC 8166 §3.5.3.1) */
	len = 0;
	put(16), put(1), put(2), put(0);
	put(1), put(0), put(0x77), put(300), put(0), put(0x2000);
	put(0), put(0), put(0);
	rpc_call(16);
	CHECK(rpcrdma1_decode_buf(buf, len, &h) == 0);
	CHECK(xprt_bc_read_plan(&h, 40, 1 << 20, &p0, rc, &nrc, &total) == -EINVAL);
	CHECK(xprt_bc_has_chunks(&h.chunks));

	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
