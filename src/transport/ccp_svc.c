// SPDX-License-Identifier: MIT
/*
 * The Connection Configuration Protocol, the responder's side (RFC 5666
 * §6; ccp.h, docs/ccp.md). A server answers CONF_RDMA on every
 * connection unless RPCRDMA_SVC_OPT_CCP turns it off; a program the
 * application registers as 100417 itself is found first and wins.
 *
 * What a call does to its connection, judged as hostile input:
 *   - RFC 8797 private data, when the client sent it, already fixed both
 *     inline thresholds and takes precedence (issue 35): nothing changes;
 *   - else maxreply_sendsize becomes our send threshold on it, bounded
 *     by the connection's send buffers (a huge value; they are as large
 *     as the threshold agreed at accept, or ours on a Version Two
 *     server) and ignored below 1 KiB (RFC 5666 §6.1's basic level; 0
 *     included), and we take calls as large as our receive buffers
 *     (the shared receive queue's are ours: 4096 by default), which is
 *     what the answer says;
 *   - maxrdmaread 0 ("the peer MUST NOT issue requests that require RDMA
 *     Read to satisfy", §6.2): no reply is exposed in a Read chunk for
 *     this client (reliable replies, svc_rr_on);
 *   - arguments shorter than twelve bytes: GARBAGE_ARGS; bytes after
 *     them are ignored, as an XDR decoder ignores what follows its type.
 * The answer: maxcall_sendsize the largest inline call we take on this
 * connection, align 4 (the XDR unit: our receive buffers gain nothing
 * from more padding), maxrdmaread the RDMA Reads we have active toward
 * this client at most (our ORD as MPA left it, bounded by SVC_ORD).
 */
#include <errno.h>

#include "transport/ccp.h"
#include "transport/responder.h"

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static void conf_rdma(struct rpcrdma_svc_req *r, uint32_t proc, XDR *args, void *ctx)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma_ep_conn_info ci;
	struct rpcrdma_rpc_reply rep;
	struct ccp_req q = {0};
	struct ccp_reply a;

	(void)ctx;
	if (proc == 0) { /* RFC 5531 §12.1: procedure 0 of every program */
		svc_reply_results(r, NULL, NULL);
		return;
	}
	if (proc != RPCRDMA_CCP_CONF_RDMA || !xdr_ccp_req(args, &q)) {
		rpcrdma_rpc_reply_accepted(&rep, r->call.xid,
					   proc != RPCRDMA_CCP_CONF_RDMA
					       ? RPCRDMA_RPC_PROC_UNAVAIL
					       : RPCRDMA_RPC_GARBAGE_ARGS);
		svc_reply_msg(r, &rep, NULL, NULL);
		return;
	}
	futex_mutex_lock(&s->lock);
	if (!c->lim.pdata) {
		/* Bounded by the buffers this connection has: they were sized
		 * to the thresholds agreed at accept (svc_conn.c), ours only
		 * on a Version Two server or with a shared receive queue. */
		if (q.maxreply_sendsize >= RPCRDMA_CCP_MIN_SIZE)
			c->lim.inline_send =
			    min_u32(q.maxreply_sendsize, (uint32_t)c->sendp.size) & ~3u;
		c->lim.inline_recv = (uint32_t)(s->srq ? s->srqp.size : c->recvp.size);
	}
	c->ccp_no_reads = q.maxrdmaread == 0;
	a.maxcall_sendsize = c->lim.inline_recv;
	a.align = 4;
	a.maxrdmaread =
	    c->ep && rpcrdma_ep_query_conn(c->ep, &ci) == 0 ? min_u32(ci.ord, SVC_ORD) : SVC_ORD;
	futex_mutex_unlock(&s->lock);
	svc_reply_results(r, (xdrproc_t)xdr_ccp_reply, &a);
}

static const struct svc_prog ccp_prog = {
    .prog = RPCRDMA_CCP_PROG,
    .vers = RPCRDMA_CCP_VERS,
    .fn = conf_rdma,
};

const struct svc_prog *svc_ccp_prog(const struct rpcrdma_svc *svc, uint32_t prog)
{
	return svc->ccp && prog == RPCRDMA_CCP_PROG ? &ccp_prog : NULL;
}
