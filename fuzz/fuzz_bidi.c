// SPDX-License-Identifier: MIT
/*
 * Fuzz target: what the backchannel does with a received message before
 * any RDMA operation (RFC 8167): classify its direction from the RPC
 * msg_type (xprt_msg_direction, fast path and full decode), and for a
 * Call, plan its Read chunks as the reverse responder would
 * (xprt_bc_read_plan), splice the stream with stand-in chunk data
 * (xprt_bc_splice) and decode the RPC call header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/rpc.h"
#include "transport/backchannel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma1_hdr h, h2;
	struct xprt_rchunk rc[RPCRDMA_MAX_BULK];
	struct rpcrdma_rpc_call call;
	struct rpcrdma_xdr x;
	uint32_t p0len = 0, nrc = 0;
	uint64_t total = 0;
	uint8_t *pulled;
	bool decoded;
	enum xprt_dir d = xprt_msg_direction(data, size, &h, &decoded);

	if (d != XPRT_DIR_CALL || rpcrdma1_decode_buf(data, size, &h2))
		return 0;
	if (decoded && (h.xid != h2.xid || h.proc != h2.proc || h.hdr_len != h2.hdr_len))
		abort(); /* the two decodes must agree */
	if (h2.hdr_len > size)
		abort();
	/* At most 1 MiB of stand-in chunk data. */
	if (xprt_bc_read_plan(&h2, size - h2.hdr_len, 1u << 20, &p0len, rc, &nrc, &total))
		return 0;
	pulled = calloc(1, total ? (size_t)total : 1);
	if (!pulled)
		return 0;
	{
		uint64_t off = p0len;

		for (uint32_t i = 0; i < nrc; i++) {
			rc[i].data = pulled + off;
			off += rc[i].len;
		}
	}
	if (h2.proc == RPCRDMA1_NOMSG) {
		if (!xprt_bc_splice(&x, pulled, p0len, rc, nrc))
			rpcrdma_rpc_decode_call(&x, &call);
	} else if (!xprt_bc_splice(&x, data + h2.hdr_len, (uint32_t)(size - h2.hdr_len), rc, nrc)) {
		rpcrdma_rpc_decode_call(&x, &call);
	}
	free(pulled);
	return 0;
}
