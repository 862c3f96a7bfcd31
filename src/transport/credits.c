// SPDX-License-Identifier: MIT
/*
 * The requester's credit window (RFC 8166 §3.3.1): a requester starts a
 * connection with one outstanding call, never has more calls on the wire
 * than the responder's latest grant, and treats a grant of zero as one (so
 * it can always make progress; Linux's xprtrdma does the same). It also
 * never uses more slots than it has receive buffers for (@max, the credits
 * it requested).
 */
#include "transport/xprt.h"

void xprt_credits_init(struct xprt_credits *c, uint32_t max)
{
	c->max = max ? max : 1;
	xprt_credits_reset(c);
}

void xprt_credits_reset(struct xprt_credits *c)
{
	c->grant = 1;
	c->on_wire = 0;
}

/* xprt_credits_update/_may_send/_sent/_done are inline in xprt.h. */
