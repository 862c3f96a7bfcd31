// SPDX-License-Identifier: MIT
/*
 * RDMA Write and RDMA Read work requests over the segments of a chunk
 * (RFC 8166 §3.4.6, §3.4.7), shared by every responder and requester that
 * moves chunk data: the server, both sides of the backchannel.
 */
#include <errno.h>

#include "transport/xprt.h"

int xprt_write_segments(const struct rpcrdma_send_wr *tmpl,
			int (*post)(void *ctx, struct rpcrdma_send_wr *wr), void *ctx,
			const uint8_t *base, uint32_t lkey, uint64_t len,
			struct rpcrdma1_segment *seg, uint32_t n)
{
	uint64_t off = 0;

	for (uint32_t j = 0; j < n; j++) {
		uint32_t k = (uint32_t)(len - off < seg[j].length ? len - off : seg[j].length);

		seg[j].length = k;
		if (!k)
			continue;
		struct rpcrdma_sge sge = {
		    .addr = (uint64_t)(uintptr_t)(base + off),
		    .length = k,
		    .lkey = lkey,
		};
		struct rpcrdma_send_wr wr = {
		    .wr_id = tmpl->wr_id,
		    .opcode = RPCRDMA_WR_RDMA_WRITE,
		    .flags = tmpl->flags,
		    .sg = &sge,
		    .num_sge = 1,
		    .remote_offset = seg[j].offset,
		    .remote_stag = seg[j].handle,
		};
		int rc = post(ctx, &wr);

		if (rc)
			return rc;
		off += k;
	}
	return off == len ? 0 : -EMSGSIZE;
}

void xprt_read_wr(struct rpcrdma_send_wr *wr, struct rpcrdma_sge *sge, uint64_t wr_id,
		  const struct rpcrdma1_segment *sg, uint8_t *dst, uint32_t lkey)
{
	*sge = (struct rpcrdma_sge){
	    .addr = (uint64_t)(uintptr_t)dst,
	    .length = sg->length,
	    .lkey = lkey,
	};
	*wr = (struct rpcrdma_send_wr){
	    .wr_id = wr_id,
	    .opcode = RPCRDMA_WR_RDMA_READ,
	    .flags = RPCRDMA_SEND_SIGNALED,
	    .sg = sge,
	    .num_sge = sg->length ? 1 : 0,
	    .remote_offset = sg->offset,
	    .remote_stag = sg->handle,
	};
}
