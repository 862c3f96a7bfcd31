// SPDX-License-Identifier: MIT
/*
 * Pulling Read chunks (RFC 8166 §3.4.5, §3.5.3.1) with RDMA Reads: the
 * server's pull budget, the staging buffers the chunks land in (their
 * layout is splice.c's), the per-connection Read queue kept within the
 * client's IRD (RFC 6581 §9), and the completion of a pull. Lock held
 * throughout.
 *
 * Memory (issue 4: server memory grows with connections x credits x inline
 * threshold, not with the payload sizes in flight). A call's Read chunks
 * are pulled into a staging buffer allocated for that call and freed when
 * its request ends (its reply is sent). The staging bytes of all calls at
 * once are bounded by the pull budget (RPCRDMA_SVC_OPT_MAX_PULL): a call
 * that does not fit now waits in the pull queue (FIFO), holding only its
 * receive buffer (one credit), until earlier calls free theirs; a call
 * larger than the whole budget is pulled alone, when nothing else is held.
 * The largest call is bounded by max_chunk_bytes (beyond: ERR_CHUNK, RFC
 * 8166 §4.5.2, chunks we cannot use). An idle server keeps no pull memory.
 *
 * A client whose RDMA Reads go unanswered (a broken or hostile one: iWARP
 * and InfiniBand have no Read timeout of their own toward a peer that
 * keeps its TCP connection or QP up) must not take the budget from the
 * others (issue 20, rogue client):
 * - one connection's calls hold at most max_pull / SVC_PULL_SHARE at once,
 *   beyond the first call it holds; its calls over that share wait
 *   without holding up other connections' calls queued behind them;
 * - the one call larger than the whole budget that may be pulled at a
 *   time has a place of its own next to the budget (so pull memory stays
 *   within max_pull plus one such call), instead of being pulled alone
 *   while every other call waits;
 * - a connection whose Reads make no progress for pull_timeout_ms
 *   (RPCRDMA_SVC_OPT_PULL_TIMEOUT, default 10 s) is ended, which flushes
 *   its Reads and frees what its calls held (stats: pull_timeouts).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "transport/responder.h"
#include "transport/rpcrdma2_wire.h"
#include "util/clock.h"
#include "util/log.h"

/* Staging memory comes from mmap, not malloc: freed buffers go back to the
 * system (glibc would keep large freed blocks in per-thread arenas and the
 * resident size would follow the payloads after all). Up to max_pull bytes
 * (in use + kept) are kept mapped for reuse, so a steady stream of calls
 * costs neither syscalls nor page faults. */
static void *stage_get(struct rpcrdma_svc *s, size_t need, size_t *cap)
{
	size_t want = (need + 65535u) & ~(size_t)65535u;
	void *p;

	s->stage_gets++; /* the stash is in use (svc_pull_tick) */
	for (uint32_t i = 0; i < s->nstash; i++) {
		if (s->stash[i].cap >= need) {
			p = s->stash[i].p;
			*cap = s->stash[i].cap;
			s->stash_bytes -= *cap;
			s->stash[i] = s->stash[--s->nstash];
			return p;
		}
	}
	/* None fits: give kept ones back until the new one fits the budget. */
	while (s->nstash && s->pull_inuse + s->stash_bytes + want > s->max_pull) {
		s->nstash--;
		munmap(s->stash[s->nstash].p, s->stash[s->nstash].cap);
		s->stash_bytes -= s->stash[s->nstash].cap;
	}
	p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*cap = want;
	return p;
}

static void stage_put(struct rpcrdma_svc *s, void *p, size_t cap)
{
	if (s->nstash < SVC_STASH && s->pull_inuse + s->stash_bytes + cap <= s->max_pull) {
		s->stash[s->nstash].p = p;
		s->stash[s->nstash].cap = cap;
		s->nstash++;
		s->stash_bytes += cap;
		return;
	}
	munmap(p, cap);
}

void svc_pull_release(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r)
{
	if (r->stage) {
		s->pull_inuse -= r->stage_cap;
		r->conn->pull_held -= r->stage_cap;
		if (r->pull_over) {
			s->pull_over = 0;
			r->pull_over = false;
		}
		stage_put(s, r->stage, r->stage_cap);
	}
	r->stage = NULL;
	r->stage_cap = 0;
	r->pull_need = 0;
	if (s->pullq_head && !s->stopping)
		s->pull_kick_needed = true;
}

/* The connection's Read depth: our ORD as the MPA exchange left it
 * (bounded by the client's IRD, RFC 6581 §9). */
static uint32_t conn_read_depth(struct svc_conn *c)
{
	struct rpcrdma_ep_conn_info ci;

	if (!c->rd_known && rpcrdma_ep_query_conn(c->ep, &ci) == 0) {
		c->rd_depth = ci.ord < SVC_ORD ? ci.ord : SVC_ORD;
		c->rd_known = true;
	}
	return c->rd_known ? c->rd_depth : 1u;
}

/* @c is down: its calls' Reads not posted yet never will be. A call ends
 * here when none of its Reads is in flight, else at its last (flushed)
 * completion. */
static void reads_drop(struct svc_conn *c)
{
	while (c->rdq_head) {
		struct rpcrdma_svc_req *r = c->rdq_head;

		c->rdq_head = r->rdnext;
		r->rdnext = NULL;
		r->read_err = true;
		r->reads_pending -= r->h.chunks.nreads - r->rd_next;
		if (!r->reads_pending) {
			rpcrdma_mr_invalidate(r->rdmr);
			svc_req_end(r, false);
		}
	}
	c->rdq_tail = NULL;
}

/*
 * Post queued Reads, oldest call first, while fewer than the connection's
 * Read depth are outstanding (RFC 6581 §9: the IRD the client advertised is
 * the most RDMA Read Requests it accepts outstanding; RFC 5040 IRD/ORD). A call with more
 * Read segments than that, or many such calls at once, wait here and go on
 * as Read Responses come in (svc_pull_read_done), instead of overrunning the send
 * queue. A full send queue (-ENOMEM) also just waits for a completion.
 */
void svc_reads_post(struct svc_conn *c)
{
	struct rpcrdma_svc *s = c->svc;
	uint32_t depth = conn_read_depth(c);

	if (c->dead) {
		reads_drop(c);
		return;
	}
	while (c->rdq_head && c->rd_inflight < depth) {
		struct rpcrdma_svc_req *r = c->rdq_head;
		const struct rpcrdma1_chunks *ch = &r->h.chunks;
		const struct rpcrdma1_segment *sg;
		struct rpcrdma_sge sge;
		struct rpcrdma_send_wr wr;
		int rc;

		if (r->rd_next == r->rd_end) {
			/* RFC 8166 §3.4.5: a chunk is consecutive entries
			 * with one position (checked in handle_call) */
			uint32_t pos, nsegs;
			uint64_t clen;

			(void)rpcrdma1_read_chunk(ch, r->rd_next, &pos, &nsegs, &clen);
			if (pos == 0 && r->p0len && r->rd_next == 0)
				r->rd_dst = r->stage + svc_p0_target(r);
			else
				r->rd_dst = r->rc[r->rd_ci++].data;
			r->rd_end = r->rd_next + nsegs;
			r->rd_soff = 0;
		}
		sg = &ch->reads[r->rd_next].seg;
		xprt_read_wr(&wr, &sge, svc_wrid(SVC_WR_READ, r->ridx), sg, r->rd_dst + r->rd_soff,
			     rpcrdma_mr_stag(r->rdmr));
		rc = rpcrdma_post_send(c->ep, &wr);
		if (rc == -ENOMEM)
			break;
		if (rc) {
			svc_conn_fail(c); /* the DISCONNECTED event drops the rest */
			break;
		}
		r->rd_next++;
		r->rd_soff += sg->length;
		if (!c->rd_inflight)
			c->rd_progress_ns = monotonic_ns();
		if (++c->rd_inflight > s->st.max_reads_outstanding)
			s->st.max_reads_outstanding = c->rd_inflight;
		if (r->rd_next == ch->nreads) {
			c->rdq_head = r->rdnext;
			if (!c->rdq_head)
				c->rdq_tail = NULL;
			r->rdnext = NULL;
		}
	}
}

/* Allocate the staging buffer, copy the inline pieces, queue the Reads. */
static int pull_start(struct svc_conn *c, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = c->svc;
	const struct rpcrdma1_chunks *ch = &r->h.chunks;
	uint8_t *st;
	int rc;

	st = stage_get(s, r->pull_need, &r->stage_cap);
	if (!st)
		return -ENOMEM;
	r->stage = st;
	s->pull_inuse += r->stage_cap;
	c->pull_held += r->stage_cap;
	if (r->pull_need > s->max_pull) {
		r->pull_over = true;
		s->pull_over = r->stage_cap;
	}
	rc = xprt_mr_use(s->pd, &r->rdmr, st, r->pull_need, RPCRDMA_ACCESS_LOCAL_WRITE);
	if (rc)
		return rc;
	s->st.reg_bytes += r->pull_need;
	svc_splice_inline(c, r);
	/* One RDMA Read per Read list entry, posted by svc_reads_post() as the
	 * connection's Read depth allows. */
	r->reads_pending = ch->nreads;
	r->read_err = false;
	r->rd_next = r->rd_end = r->rd_ci = 0;
	r->rd_soff = 0;
	r->rd_dst = NULL;
	r->rdnext = NULL;
	if (c->rdq_tail)
		c->rdq_tail->rdnext = r;
	else
		c->rdq_head = r;
	c->rdq_tail = r;
	svc_reads_post(c);
#ifdef RPCRDMA_TEST_HOOKS
	if (s->hook.on_pull && s->hook.on_pull(s->hook.arg, r->h.xid))
		rpcrdma_disconnect(c->ep); /* fault test: drop mid-pull */
#endif
	return 0;
}

static void pull_go(struct svc_conn *c, struct rpcrdma_svc_req *r);

/* Can @r's pull start now? 1 yes; 0 no, and calls queued behind it wait
 * too (the budget is full: first come, first served); -1 no, but only
 * because of its own connection's share or the place of the one call over
 * the budget: later calls may go ahead. */
static int pull_fits(const struct rpcrdma_svc *s, const struct rpcrdma_svc_req *r)
{
	const struct svc_conn *c = r->conn;
	uint64_t normal = s->pull_inuse - s->pull_over;

	if (r->pull_need > s->max_pull)
		return !s->pull_over && !c->pull_held ? 1 : -1;
	if (normal && normal + r->pull_need > s->max_pull)
		return 0;
	if (c->pull_held && c->pull_held + r->pull_need > s->max_pull / SVC_PULL_SHARE)
		return -1;
	return 1;
}

/* Start the pull of @r now, or queue it for budget (behind calls already
 * waiting, which may then go first). */
void svc_pull_or_queue(struct svc_conn *c, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = c->svc;

	if (s->pullq_head || pull_fits(s, r) != 1) {
		r->deferred = true;
		r->pnext = NULL;
		if (s->pullq_tail)
			s->pullq_tail->pnext = r;
		else
			s->pullq_head = r;
		s->pullq_tail = r;
		s->st.credit_stalls++; /* server side: a call waited for pull memory */
		/* calls ahead of it may wait for their connection's share
		 * only: this one may fit */
		if (s->pullq_head != r && !s->in_pull_kick)
			svc_pull_kick(s);
		return;
	}
	pull_go(c, r);
}

static void pull_go(struct svc_conn *c, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = c->svc;

	r->deferred = false;
	/* No Read depth (the client's IRD is 0, RFC 6581 §9): its Read
	 * chunks cannot be pulled, RFC 8166 §4.5.2 ERR_CHUNK. Otherwise
	 * pull_start fails only before any Read is queued. */
	if (conn_read_depth(c) == 0 || pull_start(c, r)) {
		s->st.bad_headers++;
		svc_refuse(c, r, RPCRDMA1_ERR_CHUNK);
	}
}

/* Memory was freed: start queued pulls that fit now, in queue order, up
 * to the first that waits for the budget itself (lock held). */
void svc_pull_kick(struct rpcrdma_svc *s)
{
	struct rpcrdma_svc_req **pp = &s->pullq_head, *prev = NULL;

	s->pull_kick_needed = false;
	s->in_pull_kick = true;
	while (*pp) {
		struct rpcrdma_svc_req *r = *pp;
		int fit = r->conn->dead || s->stopping ? 1 : pull_fits(s, r);

		if (fit == 0)
			break;
		if (fit < 0) {
			prev = r;
			pp = &r->pnext;
			continue;
		}
		*pp = r->pnext;
		if (s->pullq_tail == r)
			s->pullq_tail = prev;
		r->pnext = NULL;
		r->deferred = false;
		if (r->conn->dead || s->stopping)
			svc_req_end(r, false);
		else
			pull_go(r->conn, r);
		/* pull_go may end calls (ERR_CHUNK) and so change the queue:
		 * start again from its head */
		pp = &s->pullq_head;
		prev = NULL;
	}
	s->in_pull_kick = false;
}

/* Loop tick: a connection with Reads outstanding and none answered for
 * pull_timeout_ns is ended (its Reads are flushed, its calls end, what
 * they held goes back). Looked at every quarter of the timeout (at most
 * every 100 ms), and only while pull memory is held. */
/* Kept staging buffers are for calls that follow each other: a server
 * that has pulled nothing for a second unmaps them (issue 38: after a
 * burst of connections that each sent a 1 MiB WRITE, up to max_pull bytes
 * stayed resident for good). */
static void stash_tick(struct rpcrdma_svc *s, uint64_t now)
{
	if (s->stage_gets != s->stash_gets_seen) {
		s->stash_gets_seen = s->stage_gets;
		s->stash_used_ns = now;
		return;
	}
	if (now - s->stash_used_ns < SVC_STASH_IDLE_NS)
		return;
	svc_pull_fini(s);
}

void svc_pull_tick(struct rpcrdma_svc *s)
{
	uint64_t now, every;

	if (s->nstash)
		stash_tick(s, monotonic_ns());
	if (!s->pull_inuse || !s->pull_timeout_ns)
		return;
	now = monotonic_ns();
	if (now < s->pull_check_ns)
		return;
	every = s->pull_timeout_ns / 4;
	s->pull_check_ns = now + (every < 100000000ull ? every : 100000000ull);
	for (struct svc_conn *c = s->conns; c; c = c->next) {
		if (c->dead || !c->rd_inflight || now - c->rd_progress_ns < s->pull_timeout_ns)
			continue;
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer,
			  "%u RDMA Reads unanswered for %llu ms: connection ended", c->rd_inflight,
			  (unsigned long long)((now - c->rd_progress_ns) / 1000000u));
		s->st.pull_timeouts++;
		c->rd_progress_ns = now; /* once */
		svc_conn_fail(c);
	}
}

/* A connection died: end its calls still waiting for pull memory, then
 * the ones whose Reads are not all posted. */
void svc_pull_drop_conn(struct rpcrdma_svc *s, struct svc_conn *c)
{
	struct rpcrdma_svc_req **pp = &s->pullq_head, *prev = NULL;

	while (*pp) {
		struct rpcrdma_svc_req *r = *pp;

		if (r->conn != c) {
			prev = r;
			pp = &r->pnext;
			continue;
		}
		*pp = r->pnext;
		if (s->pullq_tail == r)
			s->pullq_tail = prev;
		r->pnext = NULL;
		r->deferred = false;
		svc_req_end(r, false);
	}
	reads_drop(c);
}

/* An RDMA Read of request @idx completed: the last one of a call ends its
 * pull (splice the Position-Zero pieces, run the call) or, on error, the
 * call. Then more queued Reads fit in the Read depth. */
void svc_pull_read_done(struct svc_conn *c, uint32_t idx, bool ok, struct rpcrdma_svc_req **runnow)
{
	if (c->rd_inflight)
		c->rd_inflight--;
	c->rd_progress_ns = monotonic_ns();
	struct rpcrdma_svc_req *r = svc_req_of(c, idx);

	if (r) {
		if (!ok)
			r->read_err = true;
		if (r->reads_pending && --r->reads_pending == 0) {
			rpcrdma_mr_invalidate(r->rdmr);
			if (r->read_err) {
				svc_req_end(r, !c->dead);
			} else if (svc_v2_nomsg_bad_dir(r)) {
				SVC_COUNT(c, bad_headers, 1);
				svc_refuse(c, r, RPCRDMA2_ERR_BAD_HEADER);
			} else {
				svc_splice_finish(r);
				svc_queue_ready(c->svc, r, runnow);
			}
		}
	}
	if (c->rdq_head)
		svc_reads_post(c);
}

void svc_pull_fini(struct rpcrdma_svc *s)
{
	while (s->nstash) {
		s->nstash--;
		munmap(s->stash[s->nstash].p, s->stash[s->nstash].cap);
		s->stash_bytes -= s->stash[s->nstash].cap;
	}
}
