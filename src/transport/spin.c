// SPDX-License-Identifier: MIT
/*
 * Busy-poll policy of the progress loops (client leader, server progress
 * thread): after activity, poll the device without sleeping for a bounded
 * time, because being woken from epoll costs about as much as a whole
 * loopback round trip. Spinning pays only when the peer runs on another
 * CPU; on the same CPU it keeps the peer from running at all. So the
 * policy learns: a spin that ended with activity is a success; after
 * XPRT_SPIN_MAX_FAILS spins in a row that expired idle, spinning stops,
 * except one probe every XPRT_SPIN_PROBE waits, which turns it back on when
 * it succeeds again (the peer moved, the load changed).
 */
#include "transport/xprt.h"

#define XPRT_SPIN_MAX_FAILS 3u
#define XPRT_SPIN_PROBE     64u

void xprt_spin_init(struct xprt_spin *sp, uint32_t ns, bool always)
{
	sp->ns = ns;
	sp->fails = 0;
	sp->probe = 0;
	sp->always = always;
}

uint64_t xprt_spin_budget(struct xprt_spin *sp)
{
	if (sp->always)
		return UINT64_MAX;
	if (sp->fails >= XPRT_SPIN_MAX_FAILS && (++sp->probe % XPRT_SPIN_PROBE) != 0)
		return 0;
	return sp->ns;
}

void xprt_spin_result(struct xprt_spin *sp, bool success)
{
	if (success)
		sp->fails = 0;
	else if (sp->fails < UINT32_MAX)
		sp->fails++;
}
