// SPDX-License-Identifier: MIT
/*
 * Pieces the forward client (client.c), the server (server.c) and the
 * backchannel (backchannel.c) share; see api_int.h.
 */
#include <errno.h>

#include "api/api_int.h"
#include "provider/clock_yield.h"
#include "rpcrdma/rpc.h"
#include "transport/rpcrdma1_hdr.h"

uint64_t api_now_ns(void)
{
	return monotonic_ns();
}

uint32_t api_error_accept_stat(uint32_t accept_stat)
{
	if (accept_stat == RPCRDMA_RPC_SUCCESS || accept_stat > RPCRDMA_RPC_SYSTEM_ERR ||
	    accept_stat == RPCRDMA_RPC_PROG_MISMATCH)
		return RPCRDMA_RPC_SYSTEM_ERR;
	return accept_stat;
}

int api_write_segments(const struct rpcrdma_send_wr *tmpl,
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

void api_read_wr(struct rpcrdma_send_wr *wr, struct rpcrdma_sge *sge, uint64_t wr_id,
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
