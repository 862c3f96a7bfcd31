// SPDX-License-Identifier: MIT
/*
 * The RPC-over-RDMA server (include/rpcrdma/server.h).
 *
 * Structure. One device, one listener, one event channel. Each connection
 * has its own CQ, a receive pool of `credits` buffers (all posted: RFC 8166
 * §3.3.1, the grant is backed by posted receives) and a send pool of
 * credits + 8 buffers (replies and RDMA_ERRORs). Request i of a connection
 * is bound to receive buffer i: it owns that buffer, its pulled Read chunk
 * data and its MRs from the RECV completion until its reply is posted.
 *
 * Threads. The progress thread accepts connections, reaps completions,
 * parses transport headers, answers the ones it refuses (RDMA_ERROR),
 * pulls Read chunks, and runs complete calls itself (the default,
 * workers == 0: no thread handoff per call) or queues them to the workers.
 * It busy-polls the device for SVC_SPIN_NS after the last activity, then
 * blocks on the device fd. Replies are built and posted by whichever
 * thread answers. Shared state is under svc->lock.
 *
 * Ordering. A reply's receive buffer is re-posted before its Send is
 * posted, so a client that sends its next call as soon as it sees the
 * reply always finds a receive waiting (no RNR on iWARP: an unexpected
 * Send is fatal, RFC 5041 §7).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api/api_int.h"
#include "util/clock.h"
#include "transport/backchannel_hooks.h"
#include "rpcrdma/tirpc.h"
#include "transport/xprt.h"

enum { WR_RECV = 1, WR_SEND, WR_READ, WR_WRITE };

#define SVC_MAX_PROGS  32
#define SVC_STASH      64 /* staging buffers kept for reuse, at most */
#define SVC_SEND_EXTRA 8
/* RFC 6581 §9 IRD/ORD we advertise: ORD for the Reads that pull Read
 * chunks (as deep as Linux svcrdma's 128; the client's IRD bounds it), IRD
 * only for a backchannel's client pulling our reverse calls' Read chunks. */
#define SVC_ORD    128u
#define SVC_BC_IRD 16u
/* Every SVC_SIGNAL_EVERY-th Send is signaled (and every one while fewer
 * send buffers are free): its completion frees the buffers of the
 * unsignaled Sends posted before it (send queue order). At most
 * SVC_SIGNAL_EVERY - 1 buffers wait for it, fewer than SVC_SEND_EXTRA. */
#define SVC_SIGNAL_EVERY 4
/* The wr_id index of the signaled marker posted once a connection is
 * down: its (flush) completion comes after every earlier Send's. */
#define SVC_DRAIN_IDX 0xffffffu

struct svc_prog {
	uint32_t prog, vers;
	rpcrdma_svc_dispatch_t fn;
	rpcrdma_svc_tirpc_dispatch_t tfn;
	void *ctx;
};

struct svc_conn;

struct rpcrdma_svc_req {
	struct svc_conn *conn;
	uint32_t ridx;
	uint32_t recv_len;
	bool held;             /* between RECV and reply: owns receive buffer ridx */
	struct rpcrdma1_hdr h; /* the call's transport header (the reply's too) */
	/* Read chunks (RFC 8166 §3.4.5, §3.5.3.1), pulled by RDMA Read into
	 * a staging buffer allocated for this call and freed when it ends
	 * (see "Pulling Read chunks" below): the whole call stream, flat. */
	uint8_t *stage;
	size_t stage_cap; /* bytes mapped for it */
	size_t stage_len; /* stream bytes */
	size_t pull_need; /* bytes charged to the server's pull budget */
	struct rpcrdma_mr *rdmr;
	uint32_t reads_pending;
	bool read_err;
	bool deferred;    /* waits in the pull queue for budget */
	uint32_t msg_len; /* RPC message without the chunks: inline or Position-Zero */
	uint32_t p0len;
	struct {
		uint32_t pos, len; /* rdma_position (complete stream), data bytes */
		uint32_t ioff;     /* the same place in the message sent inline */
		uint8_t *data;
	} rc[RPCRDMA_SVC_MAX_READ_CHUNKS];
	uint32_t nrc;
	struct rpcrdma_svc_req *pnext; /* pull queue */
	/* Reads not posted yet (see reads_post): the next Read list entry,
	 * the end of its chunk, the next rc[], where the chunk goes */
	uint32_t rd_next, rd_end, rd_ci;
	uint64_t rd_soff;
	uint8_t *rd_dst;
	struct rpcrdma_svc_req *rdnext; /* the connection's Read queue */
	/* the call */
	struct rpcrdma_xdr cur;
	XDR xdrs;
	struct xprt_ddp ddp;
	struct rpcrdma_rpc_call call;
	/* reply */
	struct rpcrdma_mr *wmr[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpcrdma_mr *lmr;
	struct xprt_lbuf lrep;
	uint32_t writes_pending;
	struct rpcrdma_svc_req *next; /* work queue */
};

struct svc_conn {
	struct rpcrdma_svc *svc;
	struct rpcrdma_ep *ep;
	struct rpcrdma_cq *cq;
	struct xprt_pool recvp, sendp;
	uint32_t *sfree;
	uint32_t nsfree;
	/* send buffers of posted Sends, in posting order (a ring of nsend):
	 * back to sfree when a signaled Send at or after them completes */
	uint32_t *sinfl;
	uint32_t infl_head, ninfl, unsig;
	struct xprt_limits lim;
	struct rpcrdma_svc_req *reqs;
	bool up, dead;
	uint32_t held; /* requests between RECV and reply */
	/* RFC 8167 §4.3.2: receives posted = credits + the backchannel's extra
	 * ones for reverse replies (request i is bound to receive buffer i). */
	uint32_t nrecv;
	struct bc_conn *bc; /* backchannel of this connection (backchannel.c) */
	bool tx_held;       /* replies posted with RPCRDMA_SEND_DEFER, not flushed */
	/* RDMA Reads: at most rd_depth outstanding, our ORD bounded by the
	 * client's IRD (RFC 6581 §9); calls whose Reads are
	 * not all posted wait in the Read queue, oldest first. */
	uint32_t rd_depth, rd_inflight;
	bool rd_known;
	struct rpcrdma_svc_req *rdq_head, *rdq_tail;
	/* the client's address (CONNECT_REQUEST), rpcrdma_svc_req_caller() */
	struct sockaddr_storage peer;
	struct svc_conn *next;
};

struct rpcrdma_svc {
	struct futex_mutex lock;
	struct futex_cond work_cv; /* work queued / stop */
	struct futex_cond done_cv; /* a Write or Send completed, a request ended */
	/* options */
	uint32_t credits, inline_send, inline_recv, workers, max_conns;
	uint32_t max_wchunks; /* Write chunks one call may offer */
	uint64_t max_chunk;
	int cpu, backlog;
	enum rpcrdma_progress_mode progress;
	bool remote_inv, mpa_crc;
	/* provider */
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_evch *evch;
	struct rpcrdma_listener *lst;
	uint16_t port;
	struct svc_prog progs[SVC_MAX_PROGS];
	uint32_t nprogs;
	struct svc_conn *conns;
	uint32_t nconns;
	struct rpcrdma_svc_req *qhead, *qtail;
	/* Pulled Read chunk memory: in use now, most at once (option), and
	 * the calls waiting for some to be freed (FIFO). */
	uint64_t pull_inuse, max_pull;
	struct rpcrdma_svc_req *pullq_head, *pullq_tail;
	/* Staging buffers kept for reuse (no page faults per call); with
	 * pull_inuse their bytes stay within max_pull. */
	struct {
		void *p;
		size_t cap;
	} stash[SVC_STASH];
	uint32_t nstash;
	uint64_t stash_bytes;
	bool pull_kick_needed, in_pull_kick;
	/* Replies the progress thread sends are held (RPCRDMA_SEND_DEFER)
	 * and flushed once at the end of its pass over a batch of
	 * completions, one transmit per connection; nheld counts them (only
	 * the progress thread touches it). */
	uint32_t nheld;
	uint64_t held_since; /* monotonic_ns() of the oldest held reply */
	/* The request the progress thread runs now is the last of its batch:
	 * its reply leaves at once instead of being held (progress thread
	 * only). */
	bool batch_last;
	uint64_t ncalls; /* st.calls, counted without the lock (atomic) */
	pthread_t pthr;
	pthread_t *wthr;
	uint32_t nwthr;
	bool started, stopping, stop, stopped;
	struct rpcrdma_xprt_stats st;
	struct svc_testhook hook;
	struct bc_svc *bc; /* rpcrdma_svc_bc_init() (backchannel.c), or NULL */
};

static uint64_t mk_wrid(uint32_t kind, uint32_t idx)
{
	return ((uint64_t)kind << 24) | idx;
}

static bool on_progress_thread(const struct rpcrdma_svc *s)
{
	return s->started && pthread_equal(pthread_self(), s->pthr);
}

/* Lock held: wake the threads waiting on done_cv (no system call when
 * none waits: util/futex_cond.h). */
static void done_wake(struct rpcrdma_svc *s)
{
	futex_cond_broadcast(&s->done_cv);
}

/* Lock held: wait on done_cv (until @ts when not NULL); ETIMEDOUT or 0. */
static int done_wait(struct rpcrdma_svc *s, const struct timespec *ts)
{
	if (ts)
		return futex_cond_timedwait(&s->done_cv, &s->lock, ts);
	futex_cond_wait(&s->done_cv, &s->lock);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Sending (lock held)                                                 */
/* ------------------------------------------------------------------ */

static int send_buf_get(struct svc_conn *c, uint32_t *idx)
{
	if (!c->nsfree)
		return -EAGAIN;
	*idx = c->sfree[--c->nsfree];
	return 0;
}

static void send_buf_put(struct svc_conn *c, uint32_t idx)
{
	c->sfree[c->nsfree++] = idx;
}

static uint32_t svc_nsend(const struct svc_conn *c)
{
	return c->svc->credits + SVC_SEND_EXTRA;
}

/* A Send completed (signaled, or flushed): it and every Send posted
 * before it are done with their buffers. SVC_DRAIN_IDX: all of them. */
static void send_done(struct svc_conn *c, uint32_t idx)
{
	uint32_t n = svc_nsend(c), k = 0;

	if (idx != SVC_DRAIN_IDX) {
		while (k < c->ninfl && c->sinfl[(c->infl_head + k) % n] != idx)
			k++;
		if (k == c->ninfl)
			return; /* freed already (by a later completion) */
		k++;
	} else {
		k = c->ninfl;
	}
	while (k--) {
		send_buf_put(c, c->sinfl[c->infl_head]);
		c->infl_head = (c->infl_head + 1) % n;
		c->ninfl--;
	}
}

/* The connection is down: a signaled marker after the Sends still
 * unaccounted for; its flush completion frees their buffers. */
static void send_drain(struct svc_conn *c)
{
	struct rpcrdma_send_wr wr = {
	    .wr_id = mk_wrid(WR_SEND, SVC_DRAIN_IDX),
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = RPCRDMA_SEND_SIGNALED,
	};

	if (c->ninfl && rpcrdma_post_send(c->ep, &wr))
		send_done(c, SVC_DRAIN_IDX); /* nothing can complete any more */
}

/* Post the Send of send buffer @sidx; with @ridx >= 0, receive buffer
 * @ridx is re-posted first, in the same provider step (the receive is in
 * place before the reply leaves; see the top of this file). */
static int post_send_buf(struct svc_conn *c, uint32_t sidx, size_t len, uint32_t inv_stag,
			 int64_t ridx)
{
	struct rpcrdma_sge sge = xprt_pool_sge(&c->sendp, sidx, 0, len);
	bool sig = c->unsig + 1 >= SVC_SIGNAL_EVERY || c->nsfree < SVC_SIGNAL_EVERY;
	struct rpcrdma_send_wr wr = {
	    .wr_id = mk_wrid(WR_SEND, sidx),
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = sig ? RPCRDMA_SEND_SIGNALED : 0,
	    .sg = &sge,
	    .num_sge = 1,
	};
	int rc;

	if (inv_stag) {
		wr.flags |= RPCRDMA_SEND_INVALIDATE;
		wr.invalidate_stag = inv_stag;
	}
	if (on_progress_thread(c->svc) && !c->svc->batch_last) {
		wr.flags |= RPCRDMA_SEND_DEFER; /* progress_main flushes */
		c->tx_held = true;
		if (!c->svc->nheld++)
			c->svc->held_since = monotonic_ns();
	}
	if (ridx >= 0) {
		struct rpcrdma_sge rs = xprt_pool_sge(&c->recvp, (uint32_t)ridx, 0, c->recvp.size);
		struct rpcrdma_recv_wr rw = {
		    .wr_id = mk_wrid(WR_RECV, (uint32_t)ridx), .sg = &rs, .num_sge = 1};
		unsigned int np = 0;

		rc = rpcrdma_post_send_recv(c->ep, &wr, &rw, 1, &np);
		if (np < 1) {
			/* the receive failed, the Send was not posted */
			rpcrdma_disconnect(c->ep);
			rc = rc ? rc : -EIO;
		}
	} else {
		rc = rpcrdma_post_send(c->ep, &wr);
	}
	if (rc) {
		send_buf_put(c, sidx);
		return rc;
	}
	c->sinfl[(c->infl_head + c->ninfl++) % svc_nsend(c)] = sidx;
	c->unsig = sig ? 0 : c->unsig + 1;
	return 0;
}

/* RFC 8166 §4.5: answer a call we will not run. */
static void send_error(struct svc_conn *c, uint32_t xid, uint32_t err)
{
	struct rpcrdma_svc *s = c->svc;
	uint32_t sidx;
	int len;

	if (c->dead || send_buf_get(c, &sidx))
		return;
	len =
	    xprt_encode_error(xprt_pool_buf(&c->sendp, sidx), c->sendp.size, xid, s->credits, err);
	if (len < 0 || post_send_buf(c, sidx, (size_t)len, 0, -1)) {
		return;
	}
	if (err == RPCRDMA1_ERR_VERS)
		s->st.err_vers_tx++;
	else
		s->st.err_chunk_tx++;
}

static void repost_recv(struct svc_conn *c, uint32_t idx)
{
	if (!c->dead && xprt_pool_post_recv(&c->recvp, c->ep, idx, mk_wrid(WR_RECV, idx)))
		rpcrdma_disconnect(c->ep);
}

static void pull_release(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r);
static void pull_kick(struct rpcrdma_svc *s);

/* The request is over: give back its receive buffer and credit. */
static void req_end(struct rpcrdma_svc_req *r, bool repost)
{
	struct svc_conn *c = r->conn;

	if (!r->held)
		return;
	r->held = false;
	if (r->pull_need)
		pull_release(c->svc, r);
	if (c->svc->pull_kick_needed && !c->svc->in_pull_kick)
		pull_kick(c->svc);
	if (repost)
		repost_recv(c, r->ridx);
	c->held--;
	c->svc->st.outstanding--;
	done_wake(c->svc);
}

/* ------------------------------------------------------------------ */
/* Receiving a call (progress thread, lock held)                       */
/* ------------------------------------------------------------------ */

static void queue_ready(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r,
			struct rpcrdma_svc_req **runnow)
{
	r->next = NULL;
	if (s->workers == 0) {
		/* run by the progress thread once the lock is dropped */
		r->next = *runnow;
		*runnow = r;
		return;
	}
	if (s->qtail)
		s->qtail->next = r;
	else
		s->qhead = r;
	s->qtail = r;
	futex_cond_signal(&s->work_cv);
}

/* Refuse: answer with RDMA_ERROR (or drop), give the receive back. */
static void refuse(struct svc_conn *c, struct rpcrdma_svc_req *r, uint32_t err)
{
	if (err)
		send_error(c, r->h.xid, err);
	req_end(r, true);
}

/* ------------------------------------------------------------------ */
/* Pulling Read chunks (lock held)                                     */
/* ------------------------------------------------------------------ */

/*
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
 * Layout. The staging buffer is the call stream exactly as the decoder
 * reads it: the inline pieces (or the Position-Zero chunk's pieces) with
 * each chunk's data at its XDR position, followed by its XDR roundup as
 * zeros (RFC 8166 §3.4.5: the requester leaves the roundup out). A
 * position is an offset in that complete stream, so chunk i's data
 * starts ioff = position - (data + roundup of chunks 0..i-1) bytes into
 * the message sent inline; a chunk that carries its roundup (a length
 * that is a multiple of 4) is accepted as well and lands the same way. So the
 * arguments decode from one flat buffer, bulk items point into it without
 * a copy, and the number of chunks is not limited by an iovec count. When a
 * Long Call (Position-Zero) also has other Read chunks, the Position-Zero
 * chunk is pulled behind the stream and its pieces are copied into place
 * once every Read has completed.
 */

/* Where the Position-Zero chunk is pulled. */
static size_t p0_target(const struct rpcrdma_svc_req *r)
{
	return r->nrc ? r->stage_len : 0;
}

/* Staging memory comes from mmap, not malloc: freed buffers go back to the
 * system (glibc would keep large freed blocks in per-thread arenas and the
 * resident size would follow the payloads after all). Up to max_pull bytes
 * (in use + kept) are kept mapped for reuse, so a steady stream of calls
 * costs neither syscalls nor page faults. */
static void *stage_get(struct rpcrdma_svc *s, size_t need, size_t *cap)
{
	size_t want = (need + 65535u) & ~(size_t)65535u;
	void *p;

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

static void pull_release(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r)
{
	if (r->stage) {
		s->pull_inuse -= r->stage_cap;
		stage_put(s, r->stage, r->stage_cap);
	}
	r->stage = NULL;
	r->stage_cap = 0;
	r->pull_need = 0;
	if (s->pullq_head && !s->stopping)
		s->pull_kick_needed = true;
}

static void conn_fail(struct svc_conn *c);

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
			req_end(r, false);
		}
	}
	c->rdq_tail = NULL;
}

/*
 * Post queued Reads, oldest call first, while fewer than the connection's
 * Read depth are outstanding (RFC 6581 §9: the IRD the client advertised is
 * the most RDMA Read Requests it accepts outstanding; RFC 5040 IRD/ORD). A call with more
 * Read segments than that, or many such calls at once, wait here and go on
 * as Read Responses come in (handle_wc), instead of overrunning the send
 * queue. A full send queue (-ENOMEM) also just waits for a completion.
 */
static void reads_post(struct svc_conn *c)
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
				r->rd_dst = r->stage + p0_target(r);
			else
				r->rd_dst = r->rc[r->rd_ci++].data;
			r->rd_end = r->rd_next + nsegs;
			r->rd_soff = 0;
		}
		sg = &ch->reads[r->rd_next].seg;
		xprt_read_wr(&wr, &sge, mk_wrid(WR_READ, r->ridx), sg, r->rd_dst + r->rd_soff,
			     rpcrdma_mr_stag(r->rdmr));
		rc = rpcrdma_post_send(c->ep, &wr);
		if (rc == -ENOMEM)
			break;
		if (rc) {
			conn_fail(c); /* the DISCONNECTED event drops the rest */
			break;
		}
		r->rd_next++;
		r->rd_soff += sg->length;
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
	const uint8_t *inl = NULL;
	uint8_t *st;
	size_t off = 0;
	uint32_t prev = 0;
	int rc;

	st = stage_get(s, r->pull_need, &r->stage_cap);
	if (!st)
		return -ENOMEM;
	r->stage = st;
	s->pull_inuse += r->stage_cap;
	rc = xprt_mr_use(s->pd, &r->rdmr, st, r->pull_need, RPCRDMA_ACCESS_LOCAL_WRITE);
	if (rc)
		return rc;
	if (r->h.proc == RPCRDMA1_MSG)
		inl = xprt_pool_buf(&c->recvp, r->ridx) + r->h.hdr_len;
	for (uint32_t i = 0; i < r->nrc; i++) {
		uint32_t gap = r->rc[i].ioff - prev, len = r->rc[i].len;
		size_t pad = RPCRDMA_XDR_ROUNDUP((size_t)len) - len;

		if (inl)
			memcpy(st + off, inl + prev, gap);
		off += gap;
		r->rc[i].data = st + off;
		off += len;
		memset(st + off, 0, pad);
		off += pad;
		prev = r->rc[i].ioff;
	}
	if (inl)
		memcpy(st + off, inl + prev, r->msg_len - prev);
	/* One RDMA Read per Read list entry, posted by reads_post() as the
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
	reads_post(c);
	if (s->hook.on_pull && s->hook.on_pull(s->hook.arg, r->h.xid))
		rpcrdma_disconnect(c->ep); /* fault test: drop mid-pull */
	return 0;
}

/* Every Read of @r completed: copy the Position-Zero pieces into place. */
static void pull_finish(struct rpcrdma_svc_req *r)
{
	uint8_t *st = r->stage;
	const uint8_t *p0 = st + p0_target(r);
	size_t off = 0;
	uint32_t prev = 0;

	if (!r->p0len || !r->nrc)
		return;
	for (uint32_t i = 0; i < r->nrc; i++) {
		uint32_t gap = r->rc[i].ioff - prev;

		memcpy(st + off, p0 + prev, gap);
		off += gap + RPCRDMA_XDR_ROUNDUP((size_t)r->rc[i].len);
		prev = r->rc[i].ioff;
	}
	memcpy(st + off, p0 + prev, r->p0len - prev);
}

static void pull_go(struct svc_conn *c, struct rpcrdma_svc_req *r);

/* Start the pull of @r now, or queue it for budget (FIFO: behind calls
 * already waiting). */
static void pull_or_queue(struct svc_conn *c, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = c->svc;

	if (s->pullq_head || (s->pull_inuse && s->pull_inuse + r->pull_need > s->max_pull)) {
		r->deferred = true;
		r->pnext = NULL;
		if (s->pullq_tail)
			s->pullq_tail->pnext = r;
		else
			s->pullq_head = r;
		s->pullq_tail = r;
		s->st.credit_stalls++; /* server side: a call waited for pull memory */
		return;
	}
	pull_go(c, r);
}

/* Start the pull of @r now; on failure end it (ERR_CHUNK). */
static void pull_go(struct svc_conn *c, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = c->svc;

	r->deferred = false;
	/* No Read depth (the client's IRD is 0, RFC 6581 §9): its Read
	 * chunks cannot be pulled, RFC 8166 §4.5.2 ERR_CHUNK. Otherwise
	 * pull_start fails only before any Read is queued. */
	if (conn_read_depth(c) == 0 || pull_start(c, r)) {
		s->st.bad_headers++;
		refuse(c, r, RPCRDMA1_ERR_CHUNK);
	}
}

/* Memory was freed: start queued pulls that fit now (lock held). */
static void pull_kick(struct rpcrdma_svc *s)
{
	s->pull_kick_needed = false;
	s->in_pull_kick = true;
	while (s->pullq_head &&
	       (!s->pull_inuse || s->pull_inuse + s->pullq_head->pull_need <= s->max_pull)) {
		struct rpcrdma_svc_req *r = s->pullq_head;

		s->pullq_head = r->pnext;
		if (!s->pullq_head)
			s->pullq_tail = NULL;
		r->pnext = NULL;
		r->deferred = false;
		if (r->conn->dead || s->stopping)
			req_end(r, false);
		else
			pull_go(r->conn, r);
	}
	s->in_pull_kick = false;
}

/* A connection died: end its calls still waiting for pull memory. */
static void pull_drop_conn(struct rpcrdma_svc *s, struct svc_conn *c)
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
		req_end(r, false);
	}
}

static void handle_call(struct svc_conn *c, uint32_t idx, uint32_t len,
			struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma_svc_req *r = &c->reqs[idx];
	const uint8_t *buf = xprt_pool_buf(&c->recvp, idx);
	struct rpcrdma1_chunks *ch = &r->h.chunks;
	uint64_t total = 0, w, moved = 0;
	uint32_t nchunks = 0, start = 0, prev_ioff = 0;
	int rc;

	/* RFC 8167 §4.1: a reverse Reply (or an RDMA_ERROR answering a reverse
	 * call) lands in any receive buffer; the backchannel takes it and the
	 * buffer goes straight back to the receive queue. */
	if (c->bc && bc_svc_recv(c->bc, buf, len)) {
		repost_recv(c, idx);
		return;
	}
	r->held = true;
	r->recv_len = len;
	r->nrc = 0;
	r->p0len = 0;
	r->stage = NULL;
	r->stage_len = 0;
	r->pull_need = 0;
	c->held++;
	s->st.outstanding++;
	if (s->st.outstanding > s->st.max_outstanding)
		s->st.max_outstanding = s->st.outstanding;
	s->st.inline_bytes_rx += len;
	if (s->hook.on_recv)
		s->hook.on_recv(s->hook.arg, buf, len);
	if (s->stopping) {
		refuse(c, r, 0);
		return;
	}
	if (len < RPCRDMA1_FIXED_SIZE) {
		s->st.bad_headers++;
		refuse(c, r, 0); /* nothing to answer to */
		return;
	}
	/* The common Short call word by word (short.c), else in full. */
	rc = xprt_short_decode_hdr(buf, len, &r->h) ? 0 : rpcrdma1_decode_buf(buf, len, &r->h);
	if (rc == -EPROTONOSUPPORT) {
		/* RFC 8166 §4.5.1: whatever follows, answer ERR_VERS. */
		s->st.bad_headers++;
		refuse(c, r, RPCRDMA1_ERR_VERS);
		return;
	}
	if (r->h.proc == RPCRDMA1_DONE || r->h.proc == RPCRDMA1_ERROR) {
		/* A requester's DONE/ERROR: dropped silently, as Linux does. */
		s->st.dropped_msgs++;
		refuse(c, r, 0);
		return;
	}
	if (rc || r->h.proc == RPCRDMA1_MSGP || rpcrdma1_check_call(&r->h)) {
		/* RFC 8166 §4.5.2: unparseable header or unusable chunks
		 * (MSGP too: Linux answers it ERR_CHUNK). */
		s->st.bad_headers++;
		refuse(c, r, RPCRDMA1_ERR_CHUNK);
		return;
	}
	/* Read chunks: Position-Zero (NOMSG) first, then the DDP items at
	 * 4-aligned positions in the complete stream (RFC 8166 §3.4.5), each
	 * at or after the end of the previous one's data and roundup (moved:
	 * the stream bytes of the chunks so far), at most
	 * RPCRDMA_SVC_MAX_READ_CHUNKS of them. */
	while (start < ch->nreads) {
		uint32_t pos, nsegs;
		uint64_t clen;

		if (rpcrdma1_read_chunk(ch, start, &pos, &nsegs, &clen))
			goto chunk_err;
		if (clen > UINT32_MAX)
			goto chunk_err;
		if (pos == 0 && nchunks == 0 && r->h.proc == RPCRDMA1_NOMSG) {
			r->p0len = (uint32_t)clen;
		} else {
			if (r->nrc >= RPCRDMA_SVC_MAX_READ_CHUNKS || pos == 0 || (pos & 3) ||
			    pos < moved || pos - moved < prev_ioff)
				goto chunk_err;
			r->rc[r->nrc].pos = pos;
			r->rc[r->nrc].len = (uint32_t)clen;
			r->rc[r->nrc].ioff = (uint32_t)(pos - moved);
			prev_ioff = r->rc[r->nrc].ioff;
			r->nrc++;
			moved += RPCRDMA_XDR_ROUNDUP(clen);
		}
		total += clen;
		nchunks++;
		start += nsegs;
	}
	/* The Write list, bounded by max_write_chunks (RFC 8166 §4.5.2:
	 * chunks we cannot use get ERR_CHUNK). */
	if (ch->nwrites > s->max_wchunks)
		goto chunk_err;
	if (total > s->max_chunk || rpcrdma1_write_list_length(ch, &w) || w > s->max_chunk ||
	    rpcrdma1_reply_chunk_length(ch, &w) || w > s->max_chunk)
		goto chunk_err;
	r->msg_len = r->h.proc == RPCRDMA1_MSG ? len - (uint32_t)r->h.hdr_len : r->p0len;
	if (r->nrc && r->rc[r->nrc - 1].ioff > r->msg_len)
		goto chunk_err; /* position out of range */
	if (!nchunks) {
		queue_ready(s, r, runnow);
		return;
	}
	/* Stream = message + each chunk rounded up; plus the Position-Zero
	 * chunk pulled behind it when there are other chunks. total is at
	 * most max_chunk (<= 2^64 / 4), so none of this overflows. */
	r->stage_len = r->msg_len;
	for (uint32_t i = 0; i < r->nrc; i++)
		r->stage_len += RPCRDMA_XDR_ROUNDUP((size_t)r->rc[i].len);
	r->pull_need = r->stage_len + (r->nrc ? r->p0len : 0);
	if (!r->pull_need)
		r->pull_need = 4; /* zero-length chunks: still a valid buffer */
	s->st.read_chunks += nchunks;
	s->st.read_bytes += total;
	if (r->p0len)
		s->st.long_calls++;
	pull_or_queue(c, r);
	return;
chunk_err:
	s->st.bad_headers++;
	refuse(c, r, RPCRDMA1_ERR_CHUNK);
}

static void conn_fail(struct svc_conn *c)
{
	if (!c->dead)
		rpcrdma_disconnect(c->ep);
}

static void handle_wc(struct svc_conn *c, const struct rpcrdma_wc *wc,
		      struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_svc *s = c->svc;
	uint32_t kind = (uint32_t)(wc->wr_id >> 24) & 0xff;
	uint32_t idx = (uint32_t)wc->wr_id & 0xffffff;
	bool ok = wc->status == RPCRDMA_WC_SUCCESS;

	if (!ok && wc->status != RPCRDMA_WC_WR_FLUSH_ERR) {
		s->st.conn_errors++;
		conn_fail(c);
	}
	switch (kind) {
	case WR_RECV:
		if (ok && idx < c->nrecv)
			handle_call(c, idx, wc->byte_len, runnow);
		break;
	case WR_SEND:
		send_done(c, idx);
		done_wake(s);
		if (c->rdq_head)
			reads_post(c); /* the send queue has room again */
		break;
	case WR_READ:
		if (c->rd_inflight)
			c->rd_inflight--;
		if (idx < c->nrecv) {
			struct rpcrdma_svc_req *r = &c->reqs[idx];

			if (!ok)
				r->read_err = true;
			if (r->reads_pending && --r->reads_pending == 0) {
				rpcrdma_mr_invalidate(r->rdmr);
				if (r->read_err) {
					req_end(r, !c->dead);
				} else {
					pull_finish(r);
					queue_ready(s, r, runnow);
				}
			}
		}
		if (c->rdq_head)
			reads_post(c);
		break;
	case WR_WRITE:
		if (idx < c->nrecv) {
			struct rpcrdma_svc_req *r = &c->reqs[idx];

			if (r->writes_pending)
				r->writes_pending--;
		}
		done_wake(s);
		if (c->rdq_head)
			reads_post(c); /* the send queue has room again */
		break;
	default:
		break;
	}
}

/* Reap @c's completions; returns how many. A short batch means the CQ is
 * empty (no extra empty poll). */
static int poll_conn(struct svc_conn *c, struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_wc wc[32];
	int n, total = 0;

	do {
		n = rpcrdma_cq_poll(c->cq, wc, 32);
		for (int i = 0; i < n; i++)
			handle_wc(c, &wc[i], runnow);
		if (n > 0)
			total += n;
	} while (n == 32);
	return total;
}

/* ------------------------------------------------------------------ */
/* Dispatch (worker or progress thread, no lock)                       */
/* ------------------------------------------------------------------ */

static int do_reply(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		    void *res);

/* The call's XDR stream: the inline message, or the staging buffer the
 * Read chunks were pulled into (already laid out flat, with roundup). */
static const uint8_t *call_cursor(struct rpcrdma_svc_req *r, size_t *len)
{
	uint8_t *base = r->stage;

	*len = r->stage_len;
	if (!base) {
		base = xprt_pool_buf(&r->conn->recvp, r->ridx) + r->h.hdr_len;
		*len = r->msg_len;
	}
	rpcrdma_xdr_init(&r->cur, base, *len, RPCRDMA_XDR_DECODE);
	return base;
}

static void process(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_rpc_reply rep;
	const struct svc_prog *p = NULL;
	uint32_t low = UINT32_MAX, high = 0;
	bool prog_known = false;
	size_t mlen;
	const uint8_t *msg = call_cursor(r, &mlen);

	if (xprt_short_call_parse(msg, mlen, &r->call)) {
		/* AUTH_NONE call header read word by word (short.c). */
		rpcrdma_xdr_setpos(&r->cur, XPRT_SHORT_CALL);
	} else if (rpcrdma_rpc_decode_call(&r->cur, &r->call)) {
		/* RFC 5531 §9: an opaque_auth body over 400 bytes is a bad
		 * credential (verifier), answered AUTH_ERROR (rpc_auth.c). */
		if (rpcrdma_rpc_oversize_auth(&r->cur, &rep) == 1) {
			do_reply(r, &rep, NULL, NULL);
			return;
		}
		/* Not an RPC call we can parse: dropped (as Linux does). */
		futex_mutex_lock(&s->lock);
		s->st.decode_errors++;
		req_end(r, true);
		futex_mutex_unlock(&s->lock);
		return;
	}
	__atomic_fetch_add(&s->ncalls, 1, __ATOMIC_RELAXED);
	if (rpcrdma_rpc_check_call(&r->call, RPCRDMA_RPC_FLAVORS_DEFAULT, &rep) == 1) {
		do_reply(r, &rep, NULL, NULL);
		return;
	}
	for (uint32_t i = 0; i < s->nprogs; i++) {
		if (s->progs[i].prog != r->call.prog)
			continue;
		prog_known = true;
		if (s->progs[i].vers < low)
			low = s->progs[i].vers;
		if (s->progs[i].vers > high)
			high = s->progs[i].vers;
		if (s->progs[i].vers == r->call.vers)
			p = &s->progs[i];
	}
	if (!p) {
		if (prog_known)
			rpcrdma_rpc_reply_prog_mismatch(&rep, r->call.xid, low, high);
		else
			rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_PROG_UNAVAIL);
		do_reply(r, &rep, NULL, NULL);
		return;
	}
	rpcrdma_tirpc_xdr_create(&r->xdrs, &r->cur);
	xprt_ddp_init(&r->ddp, XPRT_DDP_SVC_DEC);
	xprt_ddp_attach(&r->xdrs, &r->ddp);
	if (p->fn)
		p->fn(r, r->call.proc, &r->xdrs, p->ctx);
	else
		svc_tirpc_dispatch(r, p->tfn);
}

static void *worker_main(void *arg)
{
	struct rpcrdma_svc *s = arg;

	futex_mutex_lock(&s->lock);
	for (;;) {
		while (!s->qhead && !s->stop)
			futex_cond_wait(&s->work_cv, &s->lock);
		if (s->stop && !s->qhead)
			break;
		struct rpcrdma_svc_req *r = s->qhead;

		s->qhead = r->next;
		if (!s->qhead)
			s->qtail = NULL;
		futex_mutex_unlock(&s->lock);
		process(s, r);
		futex_mutex_lock(&s->lock);
	}
	futex_mutex_unlock(&s->lock);
	return NULL;
}

/* Progress thread: send the held replies (one flush per connection). */
static void flush_held(struct rpcrdma_svc *s)
{
	futex_mutex_lock(&s->lock);
	s->nheld = 0;
	for (struct svc_conn *c = s->conns; c; c = c->next) {
		if (c->tx_held) {
			c->tx_held = false;
			(void)rpcrdma_ep_flush(c->ep);
		}
	}
	futex_mutex_unlock(&s->lock);
}

/* Replies are held for the rest of a batch only while that is short: a
 * handler that computes for long (a checksum over a 1 MiB payload) must not
 * delay the replies of the calls answered before it. */
#define SVC_HOLD_NS 20000u

static void process_batched(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r, bool last)
{
	/* The last call of a batch sends its reply at once (with the held
	 * ones before it, in order): nothing follows to share a transmit. */
	s->batch_last = last;
	process(s, r);
	s->batch_last = false;
	if (s->nheld && monotonic_ns() - s->held_since >= SVC_HOLD_NS)
		flush_held(s);
}

static void run_list(struct rpcrdma_svc *s, struct rpcrdma_svc_req *list)
{
	/* The list was built newest first; run oldest first. */
	struct rpcrdma_svc_req *rev = NULL;

	while (list) {
		struct rpcrdma_svc_req *n = list->next;

		list->next = rev;
		rev = list;
		list = n;
	}
	while (rev) {
		struct rpcrdma_svc_req *n = rev->next;

		/* qhead: only this thread queues there when workers == 0 */
		process_batched(s, rev, !n && (s->workers || !s->qhead));
		rev = n;
	}
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

struct write_ctx {
	struct svc_conn *c;
	struct rpcrdma_svc_req *r;
};

/* Post one RDMA Write of a reply and count it (its completion is awaited
 * before the reply's Send). Lock held. */
static int write_post(void *ctx, struct rpcrdma_send_wr *wr)
{
	struct write_ctx *w = ctx;
	int rc = rpcrdma_post_send(w->c->ep, wr);

	if (!rc)
		w->r->writes_pending++;
	return rc;
}

/* RDMA Write @len bytes at @base into the segments @seg[0..n) (lengths
 * rewritten to what was written, RFC 8166 §3.4.6). Lock held. */
static int write_segments(struct svc_conn *c, struct rpcrdma_svc_req *r, struct rpcrdma_mr *mr,
			  const uint8_t *base, uint64_t len, struct rpcrdma1_segment *seg,
			  uint32_t n)
{
	const struct rpcrdma_send_wr tmpl = {
	    .wr_id = mk_wrid(WR_WRITE, r->ridx),
	    .flags = RPCRDMA_SEND_SIGNALED,
	};
	struct write_ctx w = {c, r};

	return xprt_write_segments(&tmpl, write_post, &w, base, rpcrdma_mr_stag(mr), len, seg, n);
}

/* Encode RPC reply header + results at @buf/@cap; 0 or -EMSGSIZE. */
static int encode_reply(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep,
			xdrproc_t xres, void *res, uint8_t *buf, size_t cap, size_t *len)
{
	struct rpcrdma_xdr x;
	XDR xdrs;
	/* handle_call() bounded nwrites by max_write_chunks */
	uint32_t nw = r->h.chunks.nwrites < RPCRDMA_MAX_WRITE_CHUNKS ? r->h.chunks.nwrites
								     : RPCRDMA_MAX_WRITE_CHUNKS;

	xprt_ddp_init(&r->ddp, XPRT_DDP_SVC_ENC);
	r->ddp.nwrite = nw;
	for (uint32_t i = 0; i < nw; i++)
		rpcrdma1_write_chunk_length(&r->h.chunks, i, &r->ddp.write_cap[i]);
	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	if (rpcrdma_rpc_encode_reply(&x, rep))
		return -EMSGSIZE;
	if (xres) {
		rpcrdma_tirpc_xdr_create(&xdrs, &x);
		xprt_ddp_attach(&xdrs, &r->ddp);
		if (!(*xres)(&xdrs, res))
			return -EMSGSIZE;
	}
	*len = rpcrdma_xdr_getpos(&x);
	return 0;
}

/* The one STag a call exposed, or 0 (RFC 8797 §4 remote invalidation is
 * used only then: the requester cannot tell which of several we did). */
static uint32_t only_stag(const struct rpcrdma1_chunks *ch)
{
	uint32_t h = 0;

#define ONE(x)                                                                                     \
	do {                                                                                       \
		if (!h)                                                                            \
			h = (x);                                                                   \
		else if (h != (x))                                                                 \
			return 0;                                                                  \
	} while (0)
	for (uint32_t i = 0; i < ch->nreads; i++)
		ONE(ch->reads[i].seg.handle);
	for (uint32_t i = 0; i < ch->nwsegs; i++)
		ONE(ch->wsegs[i].handle);
	for (uint32_t i = 0; i < ch->nreply; i++)
		ONE(ch->reply[i].handle);
#undef ONE
	return h;
}

/*
 * Wait (lock held) until the RDMA Writes of @r completed. A Write completes
 * when TCP took its last byte, often inside rpcrdma_post_send itself: look
 * at the CQ first. On the progress thread (dispatch inline) drive the
 * device here, busy-polling before sleeping 1 ms at a time; on a worker,
 * reap what is there and sleep on done_cv, which the progress thread
 * signals (with a 1 ms bound, so a completion it has not reaped yet is
 * found by polling again).
 */
static void wait_writes(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc_req *runnow = NULL, *rev = NULL;
	bool drive = on_progress_thread(s) || !s->started;
	uint32_t polls = 0;

	for (;;) {
		poll_conn(c, &runnow);
		if (!r->writes_pending || c->dead)
			break;
		if (drive) {
			futex_mutex_unlock(&s->lock);
			rpcrdma_dev_progress(s->dev, polls++ < 2000 ? 0 : 1);
			futex_mutex_lock(&s->lock);
		} else {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			done_wait(s, &ts);
		}
	}
	/* Calls that became ready meanwhile (built newest first): queue them
	 * oldest first, to run after this one. */
	while (runnow) {
		struct rpcrdma_svc_req *n = runnow->next;

		runnow->next = rev;
		rev = runnow;
		runnow = n;
	}
	while (rev) {
		struct rpcrdma_svc_req *n = rev->next;

		rev->next = NULL;
		if (s->qtail)
			s->qtail->next = rev;
		else
			s->qhead = rev;
		s->qtail = rev;
		if (s->workers)
			futex_cond_signal(&s->work_cv);
		rev = n;
	}
}

static int do_reply(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		    void *res)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc *s = c->svc;
	/* The reply's chunk lists are the call's, rewritten in place (no
	 * second 3 KiB header per request): Write list and Reply chunk echoed
	 * (as Linux does) with the lengths written, no Read list. */
	struct rpcrdma1_chunks *rch = &r->h.chunks;
	struct rpcrdma_xdr hx;
	uint8_t *sbuf;
	uint32_t sidx, inv;
	size_t hsize, mlen = 0;
	bool long_reply = false;
	uint64_t rcap = 0;
	int rc;

	futex_mutex_lock(&s->lock);
	if (c->dead) {
		req_end(r, false);
		futex_mutex_unlock(&s->lock);
		return -ENOTCONN;
	}
	while (send_buf_get(c, &sidx)) {
		if (c->dead || on_progress_thread(s)) {
			req_end(r, true);
			futex_mutex_unlock(&s->lock);
			return -ENOBUFS;
		}
		done_wait(s, NULL);
	}
	futex_mutex_unlock(&s->lock);

	/* RFC 8797 §4: Send With Invalidate names the one STag the call
	 * exposed (decided before the Read list is dropped below). */
	inv = c->lim.remote_inv ? only_stag(rch) : 0;
	rch->nreads = 0;
	hsize = RPCRDMA1_FIXED_SIZE + rpcrdma1_chunks_size(rch);
	sbuf = xprt_pool_buf(&c->sendp, sidx);
	if (hsize > c->lim.inline_send) {
		rc = -EMSGSIZE;
	} else {
		rc = encode_reply(r, rep, xres, res, sbuf + hsize, c->lim.inline_send - hsize,
				  &mlen);
	}
	if (rc && r->h.chunks.reply_present && hsize <= c->lim.inline_send &&
	    !rpcrdma1_reply_chunk_length(&r->h.chunks, &rcap) && rcap) {
		/* Long Reply (RFC 8166 §3.5.3.2): into the Reply chunk. */
		rc = xprt_lbuf_reserve(&r->lrep, (size_t)rcap);
		if (!rc)
			rc = encode_reply(r, rep, xres, res, r->lrep.buf, (size_t)rcap, &mlen);
		long_reply = rc == 0;
	}

	futex_mutex_lock(&s->lock);
	if (rc || c->dead) {
		send_buf_put(c, sidx);
		if (!c->dead) {
			/* RFC 8166 §4.5.2: the reply fits nowhere the
			 * requester allowed. */
			send_error(c, r->h.xid, RPCRDMA1_ERR_CHUNK);
		}
		req_end(r, true);
		futex_mutex_unlock(&s->lock);
		return c->dead ? -ENOTCONN : -EMSGSIZE;
	}
	/* Echoed chunks we do not write into report 0 bytes (RFC 8166
	 * §3.4.6); the ones we write report what was written. */
	{
		bool used[RPCRDMA1_MAX_WRITE_CHUNKS] = {false};

		for (uint32_t k = 0; k < r->ddp.nitems; k++)
			if (r->ddp.items[k].pos < RPCRDMA1_MAX_WRITE_CHUNKS)
				used[r->ddp.items[k].pos] = true;
		for (uint32_t i = 0; i < rch->nwrites; i++)
			for (uint32_t j = 0; !used[i] && j < rch->writes[i].nsegs; j++)
				rch->wsegs[rch->writes[i].first + j].length = 0;
		for (uint32_t j = 0; !long_reply && j < rch->nreply; j++)
			rch->reply[j].length = 0;
	}
	/* RDMA Writes: result bulk items into their Write chunks, then the
	 * Long Reply into the Reply chunk. */
	r->writes_pending = 0;
	for (uint32_t k = 0; k < r->ddp.nitems && !rc; k++) {
		const struct xprt_ddp_item *it = &r->ddp.items[k];
		const struct rpcrdma1_write_chunk *wc = &rch->writes[it->pos];

		rc = xprt_mr_use(s->pd, &r->wmr[k], it->base, it->len, 0);
		if (!rc)
			rc = write_segments(c, r, r->wmr[k], it->base, it->len,
					    &rch->wsegs[wc->first], wc->nsegs);
		s->st.write_chunks++;
		s->st.write_bytes += it->len;
	}
	if (!rc && long_reply) {
		rc = xprt_mr_use(s->pd, &r->lmr, r->lrep.buf, mlen, 0);
		if (!rc)
			rc = write_segments(c, r, r->lmr, r->lrep.buf, mlen, rch->reply,
					    rch->nreply);
		s->st.long_replies++;
		s->st.reply_chunks++;
		s->st.reply_bytes += mlen;
	}
	if (!rc && r->writes_pending && s->hook.on_reply_writes &&
	    s->hook.on_reply_writes(s->hook.arg, r->h.xid)) {
		conn_fail(c); /* fault test: drop between the Writes and the Send */
		rc = -ECONNABORTED;
	}
	if (rc) {
		/* The send queue is full or the connection failed mid-reply:
		 * the requester cannot trust partial placement; drop the
		 * connection (it retransmits on a new one). */
		send_buf_put(c, sidx);
		wait_writes(s, r);
		req_end(r, false);
		conn_fail(c);
		futex_mutex_unlock(&s->lock);
		return -ENOTCONN;
	}
	/* The Writes' sources are the caller's buffers: they must be read
	 * before rpcrdma_svc_reply() returns. */
	wait_writes(s, r);
	rpcrdma_xdr_init(&hx, sbuf, hsize, RPCRDMA_XDR_ENCODE);
	if (long_reply)
		rc = rpcrdma1_encode_nomsg(&hx, r->h.xid, s->credits, rch);
	else
		rc = rpcrdma1_encode_msg(&hx, r->h.xid, s->credits, rch);
	if (rc || c->dead) {
		send_buf_put(c, sidx);
		req_end(r, !c->dead);
		futex_mutex_unlock(&s->lock);
		return c->dead ? -ENOTCONN : rc;
	}
	/* Receive first, then the Send (see the top of this file): both in
	 * one provider step. */
	req_end(r, false);
	if (!long_reply) {
		s->st.short_msgs++;
		s->st.inline_bytes_tx += hsize + mlen;
	}
	if (inv)
		s->st.remote_invalidations++;
	rc = post_send_buf(c, sidx, long_reply ? hsize : hsize + mlen, inv, r->ridx);
	if (!rc)
		s->st.replies++;
	if (rep->reply_stat != RPCRDMA_RPC_MSG_ACCEPTED || rep->accept_stat != RPCRDMA_RPC_SUCCESS)
		s->st.rpc_errors++;
	futex_mutex_unlock(&s->lock);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Connections (progress thread)                                       */
/* ------------------------------------------------------------------ */

static void conn_destroy(struct svc_conn *c)
{
	struct rpcrdma_wc wc[32];

	if (c->ep)
		rpcrdma_ep_destroy(c->ep);
	if (c->cq) {
		while (rpcrdma_cq_poll(c->cq, wc, 32) > 0)
			;
		rpcrdma_cq_destroy(c->cq);
	}
	if (c->bc)
		bc_svc_conn_free(c->bc);
	if (c->reqs) {
		for (uint32_t i = 0; i < c->nrecv; i++) {
			struct rpcrdma_svc_req *r = &c->reqs[i];

			for (uint32_t k = 0; k < RPCRDMA_MAX_WRITE_CHUNKS; k++)
				if (r->wmr[k])
					rpcrdma_mr_dereg(r->wmr[k]);
			if (r->rdmr)
				rpcrdma_mr_dereg(r->rdmr);
			if (r->lmr)
				rpcrdma_mr_dereg(r->lmr);
			if (r->pull_need)
				pull_release(c->svc, r);
			xprt_lbuf_fini(&r->lrep);
		}
		free(c->reqs);
	}
	xprt_pool_fini(&c->recvp);
	xprt_pool_fini(&c->sendp);
	free(c->sfree);
	free(c->sinfl);
	free(c);
}

static void conn_accept(struct rpcrdma_svc *s, struct rpcrdma_event *ev)
{
	struct svc_conn *c;
	struct rpcrdma_cq_attr ca = {0};
	struct rpcrdma_ep_attr ea = {0};
	uint8_t pdata[RPCRDMA1_CM_SIZE];
	uint32_t nsend = s->credits + SVC_SEND_EXTRA;
	int rc;

	if (s->stopping || s->nconns >= s->max_conns) {
		rpcrdma_reject(ev->req, NULL, 0);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		rpcrdma_reject(ev->req, NULL, 0);
		return;
	}
	c->svc = s;
	c->peer = ev->peer;
	c->nrecv = s->credits + bc_svc_extra_recvs(s->bc);
	/* RFC 8797: the client's sizes bound ours; absent or bad -> 1024. */
	xprt_negotiate(ev->private_data, ev->private_data_len, s->inline_send, s->inline_recv,
		       s->remote_inv, &c->lim);
	ea.comp_mask = RPCRDMA_EP_ATTR_CAPS | RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_CONTEXT |
		       RPCRDMA_EP_ATTR_IRD_ORD;
	/* RFC 6581 §9: we issue the Reads (ORD); we serve Reads only for a
	 * backchannel client (IRD), as Linux svcrdma answers IRD 0. */
	ea.ord = SVC_ORD;
	ea.ird = s->bc ? SVC_BC_IRD : 0;
	ea.max_send_wr = 4 * s->credits + 256;
	ea.max_recv_wr = c->nrecv;
	ea.max_send_sge = 1;
	ea.max_recv_sge = 1;
	ea.mpa_crc = s->mpa_crc;
	ea.context = c;
	ca.cqe = ea.max_send_wr + ea.max_recv_wr + 16;
	rc = rpcrdma_cq_create(s->dev, &ca, &c->cq);
	ea.send_cq = c->cq;
	ea.recv_cq = c->cq;
	ea.evch = s->evch;
	if (!rc)
		rc = rpcrdma_ep_create(s->pd, &ea, &c->ep);
	if (!rc)
		rc = xprt_pool_init(&c->recvp, s->pd, c->nrecv, s->inline_recv);
	if (!rc)
		rc = xprt_pool_init(&c->sendp, s->pd, nsend, s->inline_send);
	if (!rc) {
		c->reqs = calloc(c->nrecv, sizeof(*c->reqs));
		c->sfree = calloc(nsend, sizeof(*c->sfree));
		c->sinfl = calloc(nsend, sizeof(*c->sinfl));
		if (!c->reqs || !c->sfree || !c->sinfl)
			rc = -ENOMEM;
	}
	for (uint32_t i = 0; !rc && i < nsend; i++)
		c->sfree[c->nsfree++] = i;
	for (uint32_t i = 0; !rc && i < c->nrecv; i++) {
		c->reqs[i].conn = c;
		c->reqs[i].ridx = i;
		rc = xprt_pool_post_recv(&c->recvp, c->ep, i, mk_wrid(WR_RECV, i));
	}
	if (!rc)
		rc = xprt_pdata_build(pdata, sizeof(pdata), s->inline_send, s->inline_recv,
				      s->remote_inv);
	if (rc) {
		rpcrdma_reject(ev->req, NULL, 0);
		conn_destroy(c);
		return;
	}
	rc = rpcrdma_accept(ev->req, c->ep, pdata, sizeof(pdata));
	if (rc) {
		conn_destroy(c);
		return;
	}
	if (s->bc)
		c->bc = bc_svc_conn_new(s->bc, c->ep, &c->lim); /* NULL: no backchannel */
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
}

static struct svc_conn *conn_of(struct rpcrdma_svc *s, struct rpcrdma_ep *ep)
{
	for (struct svc_conn *c = s->conns; c; c = c->next)
		if (c->ep == ep)
			return c;
	return NULL;
}

static void reap_conns(struct rpcrdma_svc *s)
{
	struct svc_conn **pp = &s->conns;

	while (*pp) {
		struct svc_conn *c = *pp;

		if (c->dead && c->held == 0 && c->nsfree == s->credits + SVC_SEND_EXTRA) {
			*pp = c->next;
			s->nconns--;
			conn_destroy(c);
			continue;
		}
		pp = &c->next;
	}
}

/* Progress thread: busy-poll this long after the last activity before
 * blocking on the device fd (back-to-back calls then cost no wakeup). */
#define SVC_SPIN_NS  50000u
#define SVC_BLOCK_MS 20

static void handle_events(struct rpcrdma_svc *s, struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_event ev;

	while (rpcrdma_evch_get(s->evch, &ev) == 0) {
		struct svc_conn *c;

		switch (ev.type) {
		case RPCRDMA_EV_CONNECT_REQUEST:
			conn_accept(s, &ev);
			break;
		case RPCRDMA_EV_ESTABLISHED:
			c = conn_of(s, ev.ep);
			if (c && !c->up) {
				c->up = true;
				s->st.connections++;
			}
			break;
		case RPCRDMA_EV_DISCONNECTED:
			c = conn_of(s, ev.ep);
			if (c && !c->dead) {
				poll_conn(c, runnow);
				c->dead = true;
				send_drain(c);
				pull_drop_conn(s, c);
				reads_drop(c);
				if (c->bc)
					bc_svc_conn_down(c->bc); /* RFC 8167 §5.4 */
				if (c->up)
					s->st.connections--;
				c->up = false;
				/* Flushed Reads end their requests;
				 * the rest end as they are answered. */
				done_wake(s);
			}
			break;
		case RPCRDMA_EV_TERMINATE:
			c = conn_of(s, ev.ep);
			if (c)
				s->st.conn_errors++;
			break;
		default:
			break;
		}
	}
}

/* Bytes every connection moved so far (both directions). */
static uint64_t svc_bytes(struct rpcrdma_svc *s)
{
	struct rpcrdma_ep_stats st;
	uint64_t b = 0;

	futex_mutex_lock(&s->lock);
	for (struct svc_conn *c = s->conns; c; c = c->next)
		if (!rpcrdma_ep_query_stats(c->ep, &st))
			b += st.tx_bytes + st.rx_bytes;
	futex_mutex_unlock(&s->lock);
	return b;
}

static void *progress_main(void *arg)
{
	struct rpcrdma_svc *s = arg;
	struct xprt_spin sp;
	uint64_t spin_end = 0, next_reap = 0, budget = 0, bytes = 0;
	uint64_t blocked_at = 0; /* when the loop started blocking, 0: not blocked */
	uint32_t idle = 0, quiet = 0;
	bool spinning = false;

	xprt_spin_init(&sp, SVC_SPIN_NS, s->progress == RPCRDMA_PROGRESS_BUSY_POLL);
	if (s->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (;;) {
		struct rpcrdma_svc_req *runnow = NULL;
		uint64_t t = monotonic_ns();

		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			break;
		if (spinning && t >= spin_end) {
			/* No completion, but bytes may be moving (a large
			 * chunk being pulled or written): activity too. */
			uint64_t b = svc_bytes(s);

			if (b != bytes) {
				bytes = b;
				spin_end = t + budget;
			} else {
				xprt_spin_result(&sp, false);
				spinning = false;
			}
		}
		int tmo = t < spin_end ? 0 : SVC_BLOCK_MS;

		if (tmo && !blocked_at)
			blocked_at = t;
		/* The first connection's completions made in this progress
		 * round come back with it (one provider lock round); the
		 * list of connections changes only on this thread. */
		struct svc_conn *c0 = s->conns;
		struct rpcrdma_wc wc0[32];
		int m = 0;
		int n = c0 ? rpcrdma_dev_progress_poll(s->dev, tmo, c0->cq, wc0, 32, &m)
			   : rpcrdma_dev_progress(s->dev, tmo);

		/* An idle spin iteration (progress produced nothing) looks at
		 * the CQs only every 16th time: what appears there without
		 * progress are completions of posts (Sends that TCP took at
		 * once), which only free send buffers. */
		if (n != 0 || tmo != 0 || (++quiet & 15) == 0) {
			futex_mutex_lock(&s->lock);
			for (int i = 0; i < m; i++)
				handle_wc(c0, &wc0[i], &runnow);
			for (struct svc_conn *c = s->conns; c; c = c->next)
				m += poll_conn(c, &runnow);
			/* progress counts completions and events: look for
			 * events only when it produced more than the
			 * completions just reaped (or now and then). */
			if (n > m || t >= next_reap)
				handle_events(s, &runnow);
			if (t >= next_reap) {
				reap_conns(s);
				next_reap = t + 5000000ull;
			}
			futex_mutex_unlock(&s->lock);
		}
		if (n > 0 || runnow) {
			/* Activity: a spin that saw it paid off; spin again
			 * after handling it. */
			if (spinning && tmo == 0)
				xprt_spin_result(&sp, true);
			if (blocked_at)
				xprt_spin_woke(&sp, monotonic_ns() - blocked_at);
			blocked_at = 0;
		} else if (tmo == 0 && budget > SVC_SPIN_NS && t < spin_end &&
			   spin_end - t < budget - SVC_SPIN_NS && (++idle & 3) == 0) {
			/* spun past the base budget: let a peer on this CPU run */
			xprt_spin_idle(&sp);
		}
		if (runnow)
			run_list(s, runnow);
		bc_svc_run_inline(s->bc); /* RPCRDMA_BC_OPT_INLINE completions */
		/* Work queued while dispatching on this thread. */
		if (s->workers == 0 && s->qhead) {
			futex_mutex_lock(&s->lock);
			struct rpcrdma_svc_req *q = s->qhead;

			s->qhead = s->qtail = NULL;
			futex_mutex_unlock(&s->lock);
			while (q) {
				struct rpcrdma_svc_req *nx = q->next;

				process_batched(s, q, !nx);
				q = nx;
			}
		}
		/* End of the batch: the held replies leave, one transmit per
		 * connection (calls that arrived together are answered
		 * together). */
		if (s->nheld)
			flush_held(s);
		if (n > 0 || runnow) {
			t = monotonic_ns();
			budget = xprt_spin_budget(&sp);
			spin_end = budget > UINT64_MAX - t ? UINT64_MAX : t + budget;
			spinning = budget != 0;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

static int apply_opts(struct rpcrdma_svc *s, const struct rpcrdma_svc_opts *o)
{
	uint32_t m = o ? o->comp_mask : 0;

	s->credits = RPCRDMA_DEFAULT_CREDITS;
	s->inline_send = s->inline_recv = RPCRDMA_DEFAULT_INLINE;
	s->workers = 0; /* dispatch inline on the progress thread */
	s->cpu = -1;
	s->progress = RPCRDMA_PROGRESS_THREAD;
	s->remote_inv = true;
	s->max_chunk = 64u << 20;
	s->max_wchunks = RPCRDMA_MAX_WRITE_CHUNKS;
	s->max_pull = 16u << 20;
	s->max_conns = 1024;
	s->mpa_crc = true;
	s->backlog = 128;
	if (m & RPCRDMA_SVC_OPT_CREDITS) {
		/* RFC 8166 §3.3.1: never grant zero. */
		if (o->credits < 1 || o->credits > 1024)
			return -EINVAL;
		s->credits = o->credits;
	}
	if (m & RPCRDMA_SVC_OPT_INLINE) {
		if (!xprt_inline_valid(o->inline_send) || !xprt_inline_valid(o->inline_recv))
			return -EINVAL;
		s->inline_send = o->inline_send;
		s->inline_recv = o->inline_recv;
	}
	if (m & RPCRDMA_SVC_OPT_WORKERS) {
		if (o->workers > 256)
			return -EINVAL;
		s->workers = o->workers;
	}
	if (m & RPCRDMA_SVC_OPT_CPU)
		s->cpu = o->cpu;
	if (m & RPCRDMA_SVC_OPT_PROGRESS)
		s->progress = o->progress;
	if (m & RPCRDMA_SVC_OPT_REMOTE_INV)
		s->remote_inv = o->remote_invalidate != 0;
	if (m & RPCRDMA_SVC_OPT_MAX_PULL)
		s->max_pull = o->max_pull_bytes ? o->max_pull_bytes : 1;
	if (m & RPCRDMA_SVC_OPT_MAX_CHUNK)
		s->max_chunk = o->max_chunk_bytes;
	if (m & RPCRDMA_SVC_OPT_MAX_CONNS)
		s->max_conns = o->max_conns ? o->max_conns : 1;
	if (m & RPCRDMA_SVC_OPT_MPA_CRC)
		s->mpa_crc = o->mpa_crc != 0;
	if (m & RPCRDMA_SVC_OPT_BACKLOG)
		s->backlog = o->backlog > 0 ? o->backlog : 128;
	if (m & RPCRDMA_SVC_OPT_MAX_WRITE_CHUNKS) {
		if (o->max_write_chunks < 1 || o->max_write_chunks > RPCRDMA_MAX_WRITE_CHUNKS)
			return -EINVAL;
		s->max_wchunks = o->max_write_chunks;
	}
	return 0;
}

static int svc_create(const char *host, uint16_t port, const struct rpcrdma_svc_opts *opts,
		      struct rpcrdma_svc **out)
{
	struct rpcrdma_svc *s;
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int rc;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	futex_mutex_init(&s->lock);
	futex_cond_init(&s->work_cv);
	futex_cond_init(&s->done_cv);
	rc = apply_opts(s, opts);
	if (!rc) {
		if (!host || !*host) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
			sin->sin_port = htons(port);
			sl = sizeof(*sin);
		} else {
			struct addrinfo hints = {0}, *res = NULL;
			char ps[8];

			hints.ai_family = AF_UNSPEC;
			hints.ai_socktype = SOCK_STREAM;
			hints.ai_flags = AI_PASSIVE;
			snprintf(ps, sizeof(ps), "%u", port);
			if (getaddrinfo(host, ps, &hints, &res) || !res) {
				rc = -ENOENT;
			} else {
				memcpy(&ss, res->ai_addr, res->ai_addrlen);
				sl = res->ai_addrlen;
				freeaddrinfo(res);
			}
		}
	}
	if (!rc)
		rc = rpcrdma_dev_open(
		    (opts && (opts->comp_mask & RPCRDMA_SVC_OPT_PROVIDER)) ? opts->provider : NULL,
		    NULL, &s->dev);
	if (!rc)
		rc = rpcrdma_pd_alloc(s->dev, &s->pd);
	if (!rc)
		rc = rpcrdma_evch_create(s->dev, NULL, &s->evch);
	if (!rc)
		rc = rpcrdma_listen(s->dev, s->evch, (struct sockaddr *)&ss, sl, s->backlog, s,
				    &s->lst);
	if (!rc) {
		struct sockaddr_storage la;

		rc = rpcrdma_listener_addr(s->lst, &la);
		if (!rc)
			s->port =
			    ntohs(la.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&la)->sin6_port
							   : ((struct sockaddr_in *)&la)->sin_port);
	}
	if (rc) {
		rpcrdma_svc_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

int rpcrdma_svc_create(const char *host, uint16_t port, const struct rpcrdma_svc_opts *opts,
		       struct rpcrdma_svc **out)
{
	return svc_create(host, port ? port : RPCRDMA_DEFAULT_PORT, opts, out);
}

int rpcrdma_svc_create_any(const char *host, const struct rpcrdma_svc_opts *opts,
			   struct rpcrdma_svc **out)
{
	return svc_create(host, 0, opts, out);
}

uint16_t rpcrdma_svc_port(const struct rpcrdma_svc *s)
{
	return s->port;
}

static int reg(struct rpcrdma_svc *s, uint32_t prog, uint32_t vers, rpcrdma_svc_dispatch_t fn,
	       rpcrdma_svc_tirpc_dispatch_t tfn, void *ctx)
{
	int rc = 0;

	futex_mutex_lock(&s->lock);
	for (uint32_t i = 0; i < s->nprogs; i++)
		if (s->progs[i].prog == prog && s->progs[i].vers == vers)
			rc = -EEXIST;
	if (!rc && s->nprogs >= SVC_MAX_PROGS)
		rc = -ENOSPC;
	if (!rc) {
		struct svc_prog *p = &s->progs[s->nprogs++];

		p->prog = prog;
		p->vers = vers;
		p->fn = fn;
		p->tfn = tfn;
		p->ctx = ctx;
	}
	futex_mutex_unlock(&s->lock);
	return rc;
}

int rpcrdma_svc_register(struct rpcrdma_svc *s, uint32_t prog, uint32_t vers,
			 rpcrdma_svc_dispatch_t dispatch, void *ctx)
{
	if (!s || !dispatch)
		return -EINVAL;
	return reg(s, prog, vers, dispatch, NULL, ctx);
}

int rpcrdma_svc_register_tirpc(struct rpcrdma_svc *s, uint32_t prog, uint32_t vers,
			       rpcrdma_svc_tirpc_dispatch_t dispatch)
{
	if (!s || !dispatch)
		return -EINVAL;
	return reg(s, prog, vers, NULL, dispatch, NULL);
}

int rpcrdma_svc_start(struct rpcrdma_svc *s)
{
	int rc;

	if (!s || s->started)
		return -EINVAL;
	if (s->workers) {
		s->wthr = calloc(s->workers, sizeof(*s->wthr));
		if (!s->wthr)
			return -ENOMEM;
		for (; s->nwthr < s->workers; s->nwthr++) {
			rc = pthread_create(&s->wthr[s->nwthr], NULL, worker_main, s);
			if (rc)
				return -rc;
		}
	}
	rc = pthread_create(&s->pthr, NULL, progress_main, s);
	if (rc)
		return -rc;
	s->started = true;
	return 0;
}

int rpcrdma_svc_stop(struct rpcrdma_svc *s, int timeout_ms)
{
	struct timespec dl;
	int rc = 0;

	if (!s)
		return -EINVAL;
	futex_mutex_lock(&s->lock);
	if (s->stopped || !s->started) {
		futex_mutex_unlock(&s->lock);
		return 0;
	}
	s->stopping = true;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	/* Let dispatched calls be answered. */
	for (;;) {
		uint32_t held = 0;

		for (struct svc_conn *c = s->conns; c; c = c->next)
			held += c->held;
		if (!held)
			break;
		if (done_wait(s, &dl) == ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	for (struct svc_conn *c = s->conns; c; c = c->next)
		if (!c->dead)
			rpcrdma_disconnect(c->ep);
	futex_mutex_unlock(&s->lock);
	/* Give the progress thread a moment to send what was posted. */
	usleep(20000);
	futex_mutex_lock(&s->lock);
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	s->stopped = true;
	futex_cond_broadcast(&s->work_cv);
	futex_mutex_unlock(&s->lock);
	pthread_join(s->pthr, NULL);
	for (uint32_t i = 0; i < s->nwthr; i++)
		pthread_join(s->wthr[i], NULL);
	return rc;
}

void rpcrdma_svc_destroy(struct rpcrdma_svc *s)
{
	if (!s)
		return;
	/* Reverse callers wake with -ECANCELED before the threads go. */
	bc_svc_stop(s->bc);
	if (s->started)
		rpcrdma_svc_stop(s, 0);
	while (s->conns) {
		struct svc_conn *c = s->conns;

		s->conns = c->next;
		conn_destroy(c);
	}
	bc_svc_free(s->bc);
	if (s->lst)
		rpcrdma_listener_destroy(s->lst);
	if (s->evch)
		rpcrdma_evch_destroy(s->evch);
	if (s->pd)
		rpcrdma_pd_free(s->pd);
	if (s->dev)
		rpcrdma_dev_close(s->dev);
	while (s->nstash) {
		s->nstash--;
		munmap(s->stash[s->nstash].p, s->stash[s->nstash].cap);
	}
	free(s->wthr);
	free(s);
}

int rpcrdma_svc_stats(struct rpcrdma_svc *s, struct rpcrdma_xprt_stats *st)
{
	if (!s || !st)
		return -EINVAL;
	futex_mutex_lock(&s->lock);
	*st = s->st;
	st->calls = __atomic_load_n(&s->ncalls, __ATOMIC_RELAXED);
	st->credits = s->credits;
	st->inline_send = s->inline_send;
	st->inline_recv = s->inline_recv;
	st->remote_invalidate = s->remote_inv;
	futex_mutex_unlock(&s->lock);
	return 0;
}

void rpcrdma_svc_set_testhook(struct rpcrdma_svc *s, const struct svc_testhook *h)
{
	futex_mutex_lock(&s->lock);
	s->hook = *h;
	futex_mutex_unlock(&s->lock);
}

uint32_t rpcrdma_svc_req_xid(const struct rpcrdma_svc_req *r)
{
	return r->call.xid;
}

uint32_t rpcrdma_svc_req_prog(const struct rpcrdma_svc_req *r)
{
	return r->call.prog;
}

uint32_t rpcrdma_svc_req_vers(const struct rpcrdma_svc_req *r)
{
	return r->call.vers;
}

uint32_t rpcrdma_svc_req_proc(const struct rpcrdma_svc_req *r)
{
	return r->call.proc;
}

const struct rpcrdma_rpc_auth *rpcrdma_svc_req_cred(const struct rpcrdma_svc_req *r)
{
	return &r->call.cred;
}

int rpcrdma_svc_req_authsys(const struct rpcrdma_svc_req *r, struct rpcrdma_rpc_authsys *s)
{
	if (!r || !s)
		return -EINVAL;
	if (r->call.cred.flavor != RPCRDMA_RPC_AUTH_SYS)
		return -ENOENT;
	return rpcrdma_rpc_auth_get_sys(&r->call.cred, s);
}

int rpcrdma_svc_req_caller(const struct rpcrdma_svc_req *r, struct sockaddr_storage *addr,
			   socklen_t *len)
{
	const struct sockaddr_storage *p = &r->conn->peer;

	if (!addr || !len)
		return -EINVAL;
	if (p->ss_family == AF_INET)
		*len = sizeof(struct sockaddr_in);
	else if (p->ss_family == AF_INET6)
		*len = sizeof(struct sockaddr_in6);
	else
		return -ENOTCONN;
	memcpy(addr, p, sizeof(*p));
	return 0;
}

int rpcrdma_svc_getargs(struct rpcrdma_svc_req *r, xdrproc_t xargs, void *args)
{
	if (!xargs)
		return 0;
	return (*xargs)(&r->xdrs, args) ? 0 : -EBADMSG;
}

void rpcrdma_svc_freeargs(struct rpcrdma_svc_req *r, xdrproc_t xargs, void *args)
{
	(void)r;
	if (xargs)
		xdr_free(xargs, args);
}

int rpcrdma_svc_req_read_chunk(struct rpcrdma_svc_req *r, uint32_t i, const void **data,
			       uint32_t *len, uint32_t *position)
{
	if (i >= r->nrc)
		return -ENOENT;
	*data = r->rc[i].data;
	*len = r->rc[i].len;
	if (position)
		*position = r->rc[i].pos;
	return 0;
}

uint64_t rpcrdma_svc_req_write_space(const struct rpcrdma_svc_req *r, uint32_t i)
{
	uint64_t w = 0;

	if (rpcrdma1_write_chunk_length(&r->h.chunks, i, &w))
		return 0;
	return w;
}

/*
 * The common reply (RFC 8166 §3.5.1 Short message): the call offered no
 * Write list and no Reply chunk, the reply is SUCCESS with AUTH_NONE and
 * fits inline. Headers written word by word (short.c), one lock round.
 * Returns 1 when it is not that case (nothing done: use do_reply).
 */
static int reply_short(struct rpcrdma_svc_req *r, xdrproc_t xres, void *res)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma_xdr x;
	uint8_t *sbuf;
	uint32_t sidx;
	size_t mlen = XPRT_SHORT_REPLY;
	int rc;

	if (r->h.chunks.nwrites || r->h.chunks.reply_present ||
	    r->call.verf.flavor != RPCRDMA_RPC_AUTH_NONE)
		return 1;
	futex_mutex_lock(&s->lock);
	if (c->dead || send_buf_get(c, &sidx)) {
		futex_mutex_unlock(&s->lock);
		return 1;
	}
	sbuf = xprt_pool_buf(&c->sendp, sidx);
	xprt_short_rdma_msg(sbuf, r->h.xid, s->credits);
	xprt_short_reply_hdr(sbuf + XPRT_SHORT_HDR, r->call.xid);
	if (xres) {
		XDR xdrs;

		xprt_ddp_init(&r->ddp, XPRT_DDP_SVC_ENC);
		rpcrdma_xdr_init(&x, sbuf + XPRT_SHORT_HDR, c->lim.inline_send - XPRT_SHORT_HDR,
				 RPCRDMA_XDR_ENCODE);
		rpcrdma_xdr_setpos(&x, XPRT_SHORT_REPLY);
		rpcrdma_tirpc_xdr_create(&xdrs, &x);
		xprt_ddp_attach(&xdrs, &r->ddp);
		if (!(*xres)(&xdrs, res)) {
			/* Too large for inline: the general path decides. */
			send_buf_put(c, sidx);
			futex_mutex_unlock(&s->lock);
			return 1;
		}
		mlen = rpcrdma_xdr_getpos(&x);
	}
	/* Receive first, then the Send (see the top of this file): both in
	 * one provider step. */
	req_end(r, false);
	s->st.short_msgs++;
	s->st.inline_bytes_tx += XPRT_SHORT_HDR + mlen;
	rc = post_send_buf(c, sidx, XPRT_SHORT_HDR + mlen, 0, r->ridx);
	if (!rc)
		s->st.replies++;
	futex_mutex_unlock(&s->lock);
	return rc;
}

int rpcrdma_svc_reply(struct rpcrdma_svc_req *r, xdrproc_t xres, void *res)
{
	struct rpcrdma_rpc_reply rep;
	int rc = reply_short(r, xres, res);

	if (rc != 1)
		return rc;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_SUCCESS);
	return do_reply(r, &rep, xres, res);
}

int rpcrdma_svc_error(struct rpcrdma_svc_req *r, uint32_t accept_stat)
{
	struct rpcrdma_rpc_reply rep;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, xprt_error_accept_stat(accept_stat));
	return do_reply(r, &rep, NULL, NULL);
}

void svc_req_drop(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = r->conn->svc;

	futex_mutex_lock(&s->lock);
	req_end(r, !r->conn->dead);
	futex_mutex_unlock(&s->lock);
}

int svc_reply_raw(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		  void *res)
{
	return do_reply(r, rep, xres, res);
}

/* ---- the backchannel's view of a server (transport/backchannel_hooks.h) ---- */

void svc_bc_host(struct rpcrdma_svc *s, struct svc_bc_host *h)
{
	h->lock = &s->lock;
	h->pd = s->pd;
	h->inline_send = s->inline_send;
	h->started = s->started;
}

int svc_bc_attach(struct rpcrdma_svc *s, struct bc_svc *b)
{
	int rc = 0;

	futex_mutex_lock(&s->lock);
	if (s->started)
		rc = -EBUSY;
	else if (s->bc)
		rc = -EEXIST;
	else
		s->bc = b;
	futex_mutex_unlock(&s->lock);
	return rc;
}

struct bc_svc *svc_bc_get(struct rpcrdma_svc *s)
{
	return s->bc;
}

struct bc_conn *svc_req_bc(struct rpcrdma_svc_req *r)
{
	return r->conn->bc;
}
