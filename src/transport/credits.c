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

void xprt_credits_update(struct xprt_credits *c, uint32_t granted)
{
	if (granted == 0)
		granted = 1; /* RFC 8166 §3.3.1 */
	if (granted > c->max)
		granted = c->max;
	c->grant = granted;
}

bool xprt_credits_may_send(const struct xprt_credits *c)
{
	return c->on_wire < c->grant;
}

void xprt_credits_sent(struct xprt_credits *c)
{
	c->on_wire++;
}

void xprt_credits_done(struct xprt_credits *c)
{
	if (c->on_wire)
		c->on_wire--;
}
