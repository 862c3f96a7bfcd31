// SPDX-License-Identifier: MIT
/*
 * The server's shared receive pool (issue 20): one shared receive queue
 * (rpcrdma_srq_create) and one registered pool of inline-sized buffers
 * for every connection, instead of `credits` receives per connection, so
 * an idle connection holds no receive buffer and no receive slots.
 *
 * Credits (RFC 8166 §3.3.1: a requester never has more calls outstanding
 * than it was granted, so the receives it may need must be posted before
 * a grant is announced). srq_resv is the sum of the grants announced; the
 * receives posted (srq_posted, in the queue or held by calls) are never
 * fewer. A connection starts at one credit (what a requester assumes
 * before the first reply). Each message we send it raises its grant
 * towards its share, srq_depth / connections capped at `credits`, by what
 * srq_depth - srq_resv still allows. A grant never shrinks while its
 * connection lives (its requester may act on the largest one it saw):
 * it comes back to the pool when the connection is gone. The pool grows
 * beyond srq_depth only for the floor of one credit per connection, so
 * its capacity is srq_depth + max_conns. A requester that sends more than
 * it was granted finds no free request slot and is disconnected (its
 * extra message is given back to the queue at once).
 *
 * A device may hold fewer receives in one queue than srq_depth +
 * max_conns (rpcrdma_dev_caps.max_srq_wr), and a device that pins
 * registrations no more than half of RLIMIT_MEMLOCK's worth
 * (srq_memlock_recvs): the queue is then made as
 * large as the device allows, up to half of it for the floors of
 * connections and the rest for srq_depth (lowered to fit), so that a connection beyond what the queue can back is refused
 * at accept (-ENOBUFS, svc_srq_conn_add) instead of failing later.
 *
 * Servers with a backchannel or reliable replies keep per-connection
 * pools: reverse replies and RDMA_DONE messages arrive outside the
 * forward credits. Lock held everywhere.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "transport/responder.h"
#include "util/log.h"
#include "util/probe.h"

static int srq_post(struct rpcrdma_svc *s, uint32_t idx)
{
	struct rpcrdma_sge sge = xprt_pool_sge(&s->srqp, idx, 0, s->srqp.size);

	return xprt_post_srq_recv(s->srq, svc_wrid(SVC_WR_RECV, idx), &sge, 1);
}

/* Receives the pool may hold where registrations are charged to
 * RLIMIT_MEMLOCK (RPCRDMA_DEV_CAP_PINS_MEMORY): half of the limit, the
 * other half for the connections' send pools and the Reads' and Writes'
 * registrations. A pool of exactly the limit (2,048 receives of 4 KiB
 * under the usual 8 MiB, page-aligned) was registered and left nothing:
 * every connection was then refused at accept (-ENOMEM; Linux siw in the
 * verbs guest). UINT32_MAX: no such bound. */
static uint32_t srq_memlock_recvs(const struct rpcrdma_svc *s, const struct rpcrdma_dev_caps *caps)
{
	struct rlimit rl;
	uint64_t n;

	if (!(caps->flags & RPCRDMA_DEV_CAP_PINS_MEMORY) || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY || !s->inline_recv)
		return UINT32_MAX;
	n = (uint64_t)rl.rlim_cur / 2 / s->inline_recv;
	return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* The queue's capacity: srq_depth + max_conns, or what the device holds
 * or the memlock limit allows (srq_depth then lowered: see the top); 0:
 * too few for a queue. */
static uint32_t srq_capacity(struct rpcrdma_svc *s)
{
	struct rpcrdma_dev_caps caps;
	uint32_t cap = s->srq_depth + s->max_conns, floors, lim;

	if (rpcrdma_dev_query(s->dev, &caps))
		return cap;
	lim = caps.max_srq_wr ? caps.max_srq_wr : UINT32_MAX;
	floors = srq_memlock_recvs(s, &caps);
	if (floors < lim)
		lim = floors;
	if (cap <= lim)
		return cap;
	if (lim < 2)
		return 0;
	cap = lim;
	floors = s->max_conns < cap / 2 ? s->max_conns : cap / 2;
	if (s->srq_depth > cap - floors)
		s->srq_depth = cap - floors;
	RLOG_PEER(RPCRDMA_LOG_INFO, "svc", NULL,
		  "shared receive queue: %s holds %u receives: depth %u, %u connections "
		  "at least",
		  lim == caps.max_srq_wr ? "the device" : "half the memlock limit", cap,
		  s->srq_depth, cap - s->srq_depth);
	return cap;
}

void svc_srq_init(struct rpcrdma_svc *s)
{
	struct rpcrdma_srq_attr a = {0};
	uint32_t cap;
	int rc;

	s->srq_tried = true;
	if (!s->srq_depth || s->bc || s->rr)
		return;
	cap = srq_capacity(s);
	if (!cap)
		return;
	a.max_wr = cap;
	a.max_sge = 1;
	rc = rpcrdma_srq_create(s->pd, &a, &s->srq);
	if (rc) {
		s->srq = NULL;
		if (rc != -EOPNOTSUPP)
			RLOG_PEER(RPCRDMA_LOG_ERR, "svc", NULL, "shared receive queue: %s",
				  rlog_errname(rc));
		return;
	}
	rc = xprt_pool_init(&s->srqp, s->pd, cap, s->inline_recv);
	for (uint32_t i = 0; !rc && i < s->srq_depth; i++)
		rc = srq_post(s, i);
	if (rc) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", NULL, "shared receive pool: %s",
			  rlog_errname(rc));
		svc_srq_fini(s);
		return;
	}
	s->srq_posted = s->srq_depth;
}

void svc_srq_fini(struct rpcrdma_svc *s)
{
	if (s->srq)
		rpcrdma_srq_destroy(s->srq);
	s->srq = NULL;
	xprt_pool_fini(&s->srqp);
	s->srq_posted = s->srq_resv = 0;
}

int svc_srq_conn_add(struct rpcrdma_svc *s, struct svc_conn *c)
{
	if (!s->srq) {
		c->rpool = &c->recvp;
		return 0;
	}
	c->rfree = calloc(c->nrecv, sizeof(*c->rfree));
	if (!c->rfree)
		return -ENOMEM;
	/* slot 0 on top: an idle connection's calls all use request 0 */
	for (uint32_t i = c->nrecv; i-- > 0;)
		c->rfree[c->nrfree++] = i;
	if (s->srq_resv + 1 > s->srq_posted) {
		if (s->srq_posted >= s->srqp.count)
			return -ENOBUFS;
		int rc = srq_post(s, s->srq_posted);

		if (rc)
			return rc;
		s->srq_posted++;
	}
	s->srq_resv++;
	c->grant = 1;
	c->rpool = &s->srqp;
	return 0;
}

void svc_srq_conn_del(struct rpcrdma_svc *s, struct svc_conn *c)
{
	if (c->grant) {
		s->srq_resv -= c->grant;
		c->grant = 0;
	}
	free(c->rfree);
	c->rfree = NULL;
}

void svc_srq_repost(struct rpcrdma_svc *s, uint32_t idx)
{
	/* A queue that refuses (its device failed) loses the buffer: the
	 * connections then meet an empty queue and end, as they would. */
	if (srq_post(s, idx))
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", NULL, "shared receive queue refused a receive");
}

/* Memory comes back: glibc returns the free pages inside its heaps (the
 * progress thread allocates from an arena of its own, whose free chunks
 * stay resident) only when asked. Once as many connections were freed as
 * remain (and at least 64): amortised, a burst of closes costs one walk of
 * the heaps, not one per close; and once no connection was freed for
 * SVC_TRIM_QUIET_NS (the tail of a burst, and servers whose connections
 * close one by one: one trim a second at most). */
void svc_mem_trim(struct rpcrdma_svc *s, uint32_t freed_before)
{
	if (s->freed_since_trim != freed_before)
		s->freed_ns = monotonic_ns();
	if ((s->freed_since_trim >= 64 && s->freed_since_trim >= s->nconns) ||
	    (s->freed_since_trim && monotonic_ns() - s->freed_ns >= SVC_TRIM_QUIET_NS)) {
		s->freed_since_trim = 0;
		svc_srq_trim(s);
		malloc_trim(0);
	}
}

void svc_srq_trim(struct rpcrdma_svc *s)
{
	/* The receives posted stay at their peak (a queue cannot take one
	 * back); a burst touched as many buffers as messages it had in
	 * flight at once. The live connections' grants stay warm on top of
	 * the queue. A provider whose device pins the memory keeps it. */
	if (s->srq)
		(void)rpcrdma_srq_trim(s->srq, s->srq_resv, NULL);
}

uint32_t svc_srq_grant(struct svc_conn *c)
{
	struct rpcrdma_svc *s = c->svc;
	uint32_t share;

	if (c->grant >= s->credits || c->dead)
		return c->grant;
	share = s->nconns ? s->srq_depth / s->nconns : s->srq_depth;
	if (share > s->credits)
		share = s->credits;
	if (c->grant < share && s->srq_depth > s->srq_resv) {
		uint32_t add = share - c->grant;

		if (add > s->srq_depth - s->srq_resv)
			add = s->srq_depth - s->srq_resv;
		c->grant += add;
		s->srq_resv += add;
		RPCRDMA_PROBE(credits, RPCRDMA_PROBE_FORWARD, c->grant, c->held);
	}
	return c->grant;
}
