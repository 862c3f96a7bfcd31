// SPDX-License-Identifier: MIT
/*
 * The Connection Configuration Protocol, the requester's side (RFC 5666
 * §6; ccp.h, docs/ccp.md): with RPCRDMA_CLNT_OPT_CCP, rpcrdma_clnt_create()
 * asks CONF_RDMA on its first connection before it returns. The call is
 * the connection's first, so it goes alone (the credit window of a new
 * connection is one, RFC 8166 §3.3.1), which is what §6.1 asks: no
 * second message before a valid reply.
 *
 * What the answer does to that connection, judged as hostile input:
 *   - maxcall_sendsize becomes our inline send threshold, bounded by our
 *     send buffers (a huge value), ignored below 1 KiB (§6.1's basic
 *     level; 0 included), and not applied at all when the server sent
 *     RFC 8797 private data: that takes precedence (issue 35);
 *   - maxrdmaread 0 (§6.2: "the peer MUST NOT issue requests that require
 *     RDMA Read to satisfy"): calls that would need a Read chunk (DDP
 *     arguments, Long Calls) fail -EMSGSIZE (marshal.c, lim.no_reads);
 *     another value needs nothing from us (the server paces its Reads);
 *   - align is reported only: our encoder pads nothing beyond XDR;
 *   - an answer shorter than twelve bytes fails the call (-EBADMSG).
 * A reconnect starts from RFC 8797 again (the answer was about the
 * connection it was asked on).
 */
#include <errno.h>

#include "transport/ccp.h"
#include "transport/backchannel_hooks.h"
#include "transport/requester.h"

/* The RDMA Reads we let the server have active: the IRD every connection
 * asks for (reconnect.c CLNT_IRD, client.h). */
#define CCP_CLNT_IRD 128u

static void apply(struct rpcrdma_clnt *c, const struct ccp_reply *a)
{
	struct rpcrdma_ccp_info *i = &c->ccp_info;

	if (!c->lim.pdata && a->maxcall_sendsize >= RPCRDMA_CCP_MIN_SIZE) {
		uint32_t v =
		    a->maxcall_sendsize < c->inline_send ? a->maxcall_sendsize : c->inline_send;

		v &= ~3u; /* whole XDR words */
		if (v != c->lim.inline_send) {
			c->lim.inline_send = v;
			c->st.inline_send = v;
			i->applied = 1;
		}
	}
	if (a->maxrdmaread == 0) {
		c->lim.no_reads = true;
		i->applied = 1;
	}
}

void clnt_ccp_query(struct rpcrdma_clnt *c)
{
	struct rpcrdma_call_result res = {0};
	struct rpcrdma_call_opts o = {0};
	struct ccp_req q;
	struct ccp_reply a = {0};
	uint32_t gen;
	int rc;

	q.maxcall_sendsize = c->inline_send;
	q.maxreply_sendsize = c->inline_recv;
	q.maxrdmaread = CCP_CLNT_IRD;
	o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
	o.result = &res;
	futex_mutex_lock(&c->lock);
	gen = c->gen;
	futex_mutex_unlock(&c->lock);
	rc = clnt_call_prog(c, RPCRDMA_CCP_PROG, RPCRDMA_CCP_VERS, RPCRDMA_CCP_CONF_RDMA,
			    (xdrproc_t)xdr_ccp_req, &q, (xdrproc_t)xdr_ccp_reply, &a, &o);
	futex_mutex_lock(&c->lock);
	c->ccp_info.status = rc;
	c->ccp_info.accept_stat = res.accept_stat;
	if (!rc) {
		c->ccp_info.maxcall_sendsize = a.maxcall_sendsize;
		c->ccp_info.align = a.align;
		c->ccp_info.maxrdmaread = a.maxrdmaread;
		/* Only to the connection it was asked on. */
		if (c->gen == gen && c->state == C_UP)
			apply(c, &a);
	}
	c->ccp_info.inline_send = c->lim.inline_send;
	futex_mutex_unlock(&c->lock);
}
