// SPDX-License-Identifier: MIT
/*
 * RFC 8797 connection parameters: each side advertises, in its connection
 * private data, the largest message it sends and the largest it can
 * receive, and whether it accepts Send With Invalidate. A message we send
 * must fit both our send size and the peer's receive size; absent or
 * unrecognised private data means 1024 bytes each way and no remote
 * invalidation (RFC 8797 §4.1, as Linux does).
 */
#include <errno.h>

#include "transport/xprt.h"

bool xprt_inline_valid(uint32_t bytes)
{
	uint8_t code;

	return rpcrdma1_cm_size_encode(bytes, &code) == 0;
}

int xprt_pdata_build(void *buf, size_t len, uint32_t send, uint32_t recv, bool remote_inv)
{
	struct rpcrdma1_cm_private p = {
	    .remote_invalidate = remote_inv,
	    .send_size = send,
	    .recv_size = recv,
	};

	return rpcrdma1_cm_private_encode(buf, len, &p);
}

bool xprt_dev_remote_inv(struct rpcrdma_dev *dev)
{
	struct rpcrdma_dev_caps caps;

	return rpcrdma_dev_query(dev, &caps) == 0 && (caps.flags & RPCRDMA_DEV_CAP_REMOTE_INV);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

int xprt_negotiate(const void *peer, size_t len, uint32_t our_send, uint32_t our_recv,
		   bool our_remote_inv, struct xprt_limits *out)
{
	struct rpcrdma1_cm_private p;
	int rc = rpcrdma1_cm_private_decode(peer, len, &p);

	/* On failure p holds the defaults already. */
	out->inline_send = min_u32(our_send, p.recv_size);
	out->inline_recv = min_u32(our_recv, p.send_size);
	out->remote_inv = our_remote_inv && p.remote_invalidate;
	out->pdata = rc == 0;
	out->vers = RPCRDMA1_VERSION; /* until Version Two is negotiated (vers2.c) */
	out->no_reads = false;        /* until CONF_RDMA says otherwise (ccp_clnt.c) */
	return rc;
}
