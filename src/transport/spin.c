// SPDX-License-Identifier: MIT
/*
 * Busy-poll policy of the event loop (evloop.h; the client leader, the server
 * progress thread): after activity, poll the device without sleeping for a bounded
 * time, because being woken from epoll costs about as much as a whole
 * loopback round trip. Spinning pays only when the peer runs on another
 * CPU; on the same CPU it keeps the peer from running at all. So the
 * policy learns: a spin that ended with activity is a success; after
 * XPRT_SPIN_MAX_FAILS spins in a row that expired idle, spinning stops,
 * except one probe every XPRT_SPIN_PROBE waits, which turns it back on when
 * it succeeds again (the peer moved, the load changed). The budget adapts
 * like halt-polling: when the loop had to block and the activity came soon
 * after, the budget grows (up to XPRT_SPIN_MAX_NS) so the next such wait is
 * spun through; long waits shrink it back. Idle spin iterations yield the
 * CPU (xprt_spin_idle), so a peer on the same CPU runs during our spin
 * instead of after it.
 */
#include "util/clock.h"
#include "transport/xprt.h"

void xprt_spin_init(struct xprt_spin *sp, uint32_t ns, bool always)
{
	sp->ns = ns;
	sp->cur = ns;
	sp->cross = false;
	sp->gave = false;
	sp->fails = 0;
	sp->probe = 0;
	sp->always = always;
}

void xprt_spin_woke(struct xprt_spin *sp, uint64_t waited_ns)
{
	if (sp->always || !sp->cross)
		return;
	if (waited_ns + sp->cur <= XPRT_SPIN_MAX_NS) {
		/* The peer was a little slower than our spin (it was copying
		 * or checksumming a large payload): a wake-up costs tens of
		 * microseconds on a VM, so spin long enough next time. This
		 * spin was not a sign that spinning is useless. */
		uint64_t want = 2u * ((uint64_t)sp->cur + waited_ns);

		sp->cur = want > XPRT_SPIN_MAX_NS ? XPRT_SPIN_MAX_NS : (uint32_t)want;
		sp->fails = 0;
	} else if (sp->cur > sp->ns) {
		sp->cur = sp->cur / 2u > sp->ns ? sp->cur / 2u : sp->ns;
	}
}

void xprt_spin_idle(struct xprt_spin *sp)
{
	/* several microseconds: another task ran on this CPU */
	if (yield_ns() > 5000u)
		sp->gave = true;
}
