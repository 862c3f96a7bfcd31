// SPDX-License-Identifier: MIT
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), the client's reverse responder:
 * its callback programs on the connection the forward requester owns
 * (requester.c, reconnect.c).
 * include/rpcrdma/backchannel.h says what (src/api/bc_clnt.c is its API);
 * transport/backchannel_hooks.h lists the hooks; transport/backchannel.c
 * has the wire rules (direction, Read chunk plan, splice). The Read pulls
 * and the Reply chunk Writes use the same work request helpers as the
 * server (rdma_rw.c).
 *
 * Client side (struct bc_clnt). A reverse call lands in any of the
 * client's receive buffers (the receive queue is FIFO, not per direction);
 * requester.c asks bc_clnt_recv() first, which copies a Call into one of its
 * requests and lets the buffer be re-posted at once, so the number of
 * posted receives stays `credits + rev_credits` (RFC 8167 §4.3.1). A
 * request owns its copy, its pulled Read chunk data and one send buffer
 * from then until its reply's Send completes. Read chunks are pulled with
 * RDMA Reads on the client's connection; ready calls are dispatched on the
 * backchannel thread; another one sends BC_ENABLE again after a reconnect
 * (both run loops without a device, evloop.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/tirpc.h"
#include "transport/bc_responder.h"
#include "transport/opt_dispatch.h"
#include "util/be.h"
#include "util/clock.h"
#include "util/probe.h"

uint32_t bc_clnt_extra_recvs(const struct rpcrdma_bc_opts *o)
{
	uint32_t credits, t, w;
	bool ch;

	if (opts_resolve(o, &credits, &ch, &t, &w))
		return 0;
	return credits;
}

uint32_t bc_clnt_extra_wrs(const struct rpcrdma_bc_opts *o)
{
	/* Per request: the reply's Send, its Reply chunk Writes, its Reads
	 * (segments bounded by the Read list of one header). */
	return 2 * bc_clnt_extra_recvs(o) * 4 + RPCRDMA1_MAX_READ_SEGS + RPCRDMA1_MAX_REPLY_SEGS;
}

/* Lock held: drop @r's registrations (the Read chunk sink, the Long
 * Reply source) as soon as no posted work request may still use them,
 * not when the request slot is next used. A registration pins its pages
 * on kernel devices (siw charges them to RLIMIT_MEMLOCK even for root),
 * and kept ones added up over the slots (issue 16). Reads or Writes still
 * out (a connection lost, a post failed midway): the slot is not reused
 * until the endpoint is gone, and bc_clnt_up() drops them then. The next
 * xprt_mr_use() registers anew. */
static void req_unpin(struct rpcrdma_bc_req *r)
{
	if (r->reads_pending || r->writes_out)
		return;
	if (r->rdmr && rpcrdma_mr_valid(r->rdmr))
		rpcrdma_mr_invalidate(r->rdmr);
	if (r->lmr && rpcrdma_mr_valid(r->lmr))
		rpcrdma_mr_invalidate(r->lmr);
}

static void req_free(struct bc_clnt *b, struct rpcrdma_bc_req *r)
{
	if (r->state == RQ_FREE)
		return;
	req_unpin(r);
	/* A request counts against the reverse credits until its reply is
	 * posted (the server may then send the next call). */
	if (r->state != RQ_SENDING && b->st.outstanding)
		b->st.outstanding--;
	r->state = RQ_FREE;
}

/* Lock held: post @wr on the current connection. */
static int clnt_post(struct bc_clnt *b, struct rpcrdma_send_wr *wr)
{
	if (!b->up || !b->ep)
		return -ENOTCONN;
	return rpcrdma_post_send(b->ep, wr);
}

/* Lock held: send @len bytes of request @r's send buffer. */
static int req_send(struct bc_clnt *b, struct rpcrdma_bc_req *r, size_t len)
{
	struct rpcrdma_sge sge = xprt_pool_sge(&b->sendp, r->idx, 0, len);
	struct rpcrdma_send_wr wr = {
	    .wr_id = bc_wrid(b->gen, BC_OP_SEND, r->idx),
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = RPCRDMA_SEND_SIGNALED,
	    .sg = &sge,
	    .num_sge = 1,
	};
	int rc = clnt_post(b, &wr);

	if (rc) {
		req_free(b, r);
		return rc;
	}
	r->state = RQ_SENDING; /* freed by the Send's completion */
	if (b->st.outstanding)
		b->st.outstanding--;
	b->st.replies_sent++;
	b->st.inline_bytes_tx += len;
	return 0;
}

/* Lock held: answer @r with an error of code @err in the call's version
 * (ERR_CHUNK is Version Two's ERR_BAD_HEADER: the same number). */
static void req_err(struct bc_clnt *b, struct rpcrdma_bc_req *r, uint32_t err)
{
	uint8_t *buf = xprt_pool_buf(&b->sendp, r->idx);
	int len = r->h.vers == RPCRDMA2_VERSION
		      ? xprt_v2_encode_error(buf, b->sendp.size, r->h.xid, b->credits, err)
		      : xprt_encode_error(buf, b->sendp.size, r->h.xid, b->credits, err);

	if (len < 0) {
		req_free(b, r);
		return;
	}
	RPCRDMA_PROBE(error_send, RPCRDMA_PROBE_CLIENT, r->h.xid, err, r->h.vers);
	if (!req_send(b, r, (size_t)len) && err == RPCRDMA1_ERR_CHUNK)
		b->st.err_chunk_tx++;
}

/* Lock held. RFC 8167 §5.3 / RFC 8166 §4.5.2: answer ERR_CHUNK. */
static void req_err_chunk(struct bc_clnt *b, struct rpcrdma_bc_req *r)
{
	req_err(b, r, RPCRDMA1_ERR_CHUNK);
}

static void queue_ready(struct bc_clnt *b, struct rpcrdma_bc_req *r)
{
	r->state = RQ_READY;
	r->next = NULL;
	if (b->inline_dispatch) {
		if (b->itail)
			b->itail->next = r;
		else
			b->ihead = r;
		b->itail = r;
		return;
	}
	if (b->qtail)
		b->qtail->next = r;
	else
		b->qhead = r;
	b->qtail = r;
	futex_cond_broadcast(&b->cv);
}

/* Lock held: pull the Read chunks of @r (RFC 8166 §3.4.5) into r->rd. */
static int req_post_reads(struct bc_clnt *b, struct rpcrdma_bc_req *r, uint64_t total)
{
	const struct rpcrdma1_chunks *ch = &r->h.chunks;
	uint64_t off = 0;
	int rc;

	rc = xprt_lbuf_reserve(&r->rd, total ? (size_t)total : 4);
	if (!rc)
		rc = xprt_mr_use(b->pd, &r->rdmr, r->rd.buf, (size_t)(total ? total : 4),
				 RPCRDMA_ACCESS_LOCAL_WRITE);
	if (rc)
		return rc;
	r->reads_pending = 0;
	r->read_err = false;
	for (uint32_t i = 0; i < ch->nreads; i++) {
		const struct rpcrdma1_segment *sg = &ch->reads[i].seg;
		struct rpcrdma_sge sge;
		struct rpcrdma_send_wr wr;

		xprt_read_wr(&wr, &sge, bc_wrid(b->gen, BC_OP_READ, r->idx), sg, r->rd.buf + off,
			     rpcrdma_mr_stag(r->rdmr));
		rc = clnt_post(b, &wr);
		if (rc) {
			/* the Reads posted end the request: not dispatched
			 * with part of its data */
			r->read_err = true;
			return rc;
		}
		r->reads_pending++;
		off += sg->length;
	}
	/* Where each chunk lands in rd. */
	off = r->p0len;
	for (uint32_t i = 0; i < r->nrc; i++) {
		r->rc[i].data = r->rd.buf + off;
		off += r->rc[i].len;
	}
	return 0;
}

/* The reverse responder's rows get the backchannel and the request. */
struct bc_opt_ctx {
	struct bc_clnt *b;
	struct rpcrdma_bc_req *r;
};

static void bc_opt_answer(void *ctx, const struct xprt_opt_msg *m, uint32_t err)
{
	struct bc_opt_ctx *x = ctx;

	(void)m;
	x->b->st.dropped++;
	req_err(x->b, x->r, err);
}

/* What the reverse responder takes (opt_dispatch.h): no opttype. Our
 * properties and pull completion are forward-direction messages, so
 * every optional call that reaches it is answered ERR_INVAL_OPTION with
 * its xid, whatever it carried (draft §3.1). */
static const struct xprt_opt_role bc_role = {NULL, 0, bc_opt_answer, NULL};

/* An RDMA2_OPTIONAL call in @r (its header decoded as far as the fixed
 * words by xprt_decode_hdr). */
static void bc_opt_recv(struct bc_clnt *b, struct rpcrdma_bc_req *r, size_t len)
{
	struct bc_opt_ctx x = {b, r};
	struct xprt_v2_info vi;
	struct rpcrdma1_hdr h;
	struct xprt_opt_msg m = {.xid = r->h.xid, .buf = r->buf, .len = len};

	if (!xprt_v2_decode(r->buf, len, &h, &vi)) {
		m.optdir = vi.optdir;
		m.opttype = vi.opttype;
		m.optinfo = r->buf + vi.optinfo_off;
		m.optinfo_len = vi.optinfo_len;
		m.hdr_len = h.hdr_len;
	}
	(void)xprt_opt_dispatch(&bc_role, &x, &m);
}

bool bc_clnt_recv(struct bc_clnt *b, const uint8_t *buf, size_t len)
{
	struct rpcrdma_bc_req *r = NULL;
	bool decoded;
	uint64_t total = 0;
	enum xprt_dir dir = xprt_msg_direction(buf, len, &b->scratch, &decoded);
	int rc;

	/* Version Two on a connection that may speak it (lim.vers, set by
	 * bc_clnt_up from the client's policy): reverse calls come in it. */
	if (dir == XPRT_DIR_NONE && b->lim.vers == RPCRDMA2_VERSION) {
		dir = xprt_v2_msg_direction(buf, len, &b->scratch, &decoded);
		/* An RDMA2_OPTIONAL whose rdma_optdir (its fifth word) says
		 * CALL is the server's reverse call too: answered below, on a
		 * reverse credit (draft §3.1, §3.2). */
		if (dir == XPRT_DIR_NONE && decoded && b->scratch.proc == RPCRDMA2_OPTIONAL &&
		    len >= 20 && !buf[16] && !buf[17] && !buf[18] && buf[19] == RPCRDMA2_CALL)
			dir = XPRT_DIR_CALL;
	}
	if (dir != XPRT_DIR_CALL) {
		/* RFC 8167 §4.1: an RDMA_ERROR's direction cannot be told from
		 * the message; requester.c then ignores its credit value. */
		if (dir == XPRT_DIR_NONE && len >= RPCRDMA1_FIXED_SIZE)
			b->st.credits_ignored++;
		return false;
	}
	/* A reverse Call: its rdma_credit is the server's reverse credit
	 * request (RFC 8167 §5.1), never a forward grant. */
	b->st.calls_received++;
	b->st.inline_bytes_rx += len;
	b->st.peer_credits = get_be32(buf + 8);
	if (len > b->inline_recv_cap) {
		b->st.dropped++;
		return true;
	}
	for (uint32_t i = 0; i < b->nreq; i++) {
		/* not one whose work requests may still be out (req_unpin) */
		if (b->reqs[i].state == RQ_FREE && !b->reqs[i].reads_pending &&
		    !b->reqs[i].writes_out) {
			r = &b->reqs[i];
			break;
		}
	}
	if (!r || !b->up) {
		/* More calls than the credits we granted: dropped; the server's
		 * call times out. */
		b->st.dropped++;
		return true;
	}
	memcpy(r->buf, buf, len);
	r->len = len;
	r->gen = b->gen;
	r->state = RQ_READY;
	r->nrc = 0;
	r->p0len = 0;
	b->st.outstanding++;
	if (b->st.outstanding > b->st.max_outstanding)
		b->st.max_outstanding = b->st.outstanding;
	rc = xprt_decode_hdr(r->buf, len, &r->h, b->lim.vers == RPCRDMA2_VERSION);
	if (rc == -EOPNOTSUPP && r->h.vers == RPCRDMA2_VERSION && r->h.proc == RPCRDMA2_OPTIONAL) {
		bc_opt_recv(b, r, len);
		return true;
	}
	if (rc) {
		b->st.dropped++;
		req_free(b, r);
		return true;
	}
	RPCRDMA_PROBE(bc_call_recv, r->h.xid, r->h.vers, r->h.proc, r->h.credit, len);
	if (xprt_bc_has_chunks(&r->h.chunks)) {
		/* RFC 8167 §5.3: a responder without reverse chunks answers a
		 * call that carries any with ERR_CHUNK. We never use Write
		 * chunks in the reverse direction: the same answer. */
		if (!b->chunks || r->h.chunks.nwrites ||
		    xprt_bc_read_plan(&r->h, len - r->h.hdr_len, BC_MAX_CHUNK, &r->p0len, r->rc,
				      &r->nrc, &total)) {
			req_err_chunk(b, r);
			return true;
		}
		if (r->h.chunks.nreads) {
			b->st.read_chunks += r->nrc + (r->p0len ? 1 : 0);
			b->st.read_bytes += total;
			if (r->p0len)
				b->st.long_calls++;
			r->state = RQ_READING;
			if (req_post_reads(b, r, total)) {
				if (r->reads_pending)
					return true; /* freed when they complete */
				req_unpin(r);        /* no Read out: the sink goes now */
				req_err_chunk(b, r);
			}
			return true;
		}
	}
	b->st.short_msgs++;
	queue_ready(b, r);
	return true;
}

void bc_clnt_wc(struct bc_clnt *b, const struct rpcrdma_wc *wc)
{
	uint32_t gen = (uint32_t)(wc->wr_id >> 32);
	uint32_t op = (uint32_t)(wc->wr_id >> 16) & 0xff;
	uint32_t idx = (uint32_t)wc->wr_id & 0xffff;
	struct rpcrdma_bc_req *r;

	if (!b || gen != b->gen || idx >= b->nreq)
		return;
	r = &b->reqs[idx];
	switch (op) {
	case BC_OP_SEND:
		if (r->state == RQ_SENDING) {
			/* The Reply chunk Writes were posted before the Send
			 * on the same send queue: they are complete too. */
			r->writes_out = false;
			req_free(b, r);
		}
		break;
	case BC_OP_READ:
		if (r->state != RQ_READING)
			break;
		if (wc->status != RPCRDMA_WC_SUCCESS)
			r->read_err = true;
		if (r->reads_pending && --r->reads_pending == 0) {
			rpcrdma_mr_invalidate(r->rdmr);
			if (r->read_err)
				req_free(b, r);
			else
				queue_ready(b, r);
		}
		break;
	default:
		break;
	}
}

void bc_clnt_up(struct bc_clnt *b, struct rpcrdma_ep *ep, const struct xprt_limits *lim,
		uint32_t gen, bool reconnect)
{
	b->ep = ep;
	b->lim = *lim;
	b->gen = gen;
	b->up = true;
	b->st.connected = 1;
	/* The previous endpoint, if any, is destroyed by now (reconnect.c):
	 * the work requests that were out on it are gone, and the
	 * registrations they could use go too (req_unpin). */
	for (uint32_t i = 0; i < b->nreq; i++) {
		struct rpcrdma_bc_req *r = &b->reqs[i];

		if (r->state != RQ_FREE)
			continue;
		r->reads_pending = 0;
		r->writes_out = false;
		req_unpin(r);
	}
	/* RFC 8167 §6 on the new connection: the server must hear again that
	 * we take reverse calls (as NFSv4.1 BIND_CONN_TO_SESSION). */
	if (reconnect && b->enabled) {
		b->reenable_pending = true;
		futex_cond_broadcast(&b->cv);
	}
}

void bc_clnt_lim(struct bc_clnt *b, const struct xprt_limits *lim)
{
	/* The server raised its reverse thresholds when it took our first
	 * Version Two call or our properties, before it answered them: our
	 * replies may grow as soon as we read that answer. A reply being
	 * marshalled keeps the smaller cap it took (bc_clnt_answer). */
	b->lim.vers = lim->vers;
	b->lim.inline_send = lim->inline_send;
	b->lim.inline_recv = lim->inline_recv;
}

void bc_clnt_down(struct bc_clnt *b)
{
	b->up = false;
	b->ep = NULL;
	b->st.connected = 0;
	b->st.enabled = 0;
	/* The old connection's receives and work requests are gone with it
	 * (the endpoint is destroyed before the next one exists): requests
	 * reading or sending are over; queued ones are dropped, the server
	 * retransmits them (RFC 8167 §5.4). Dispatched ones end when their
	 * dispatch answers (the answer is not sent). */
	for (uint32_t i = 0; i < b->nreq; i++) {
		struct rpcrdma_bc_req *r = &b->reqs[i];

		if (r->state == RQ_READING || r->state == RQ_READY || r->state == RQ_SENDING)
			req_free(b, r);
	}
	b->qhead = b->qtail = NULL;
	b->ihead = b->itail = NULL;
	b->gen++; /* stale completions are ignored (requester.c bumps its own) */
}

/* ---- dispatch (backchannel thread, no lock) ---- */

static void req_dispatch(struct bc_clnt *b, struct rpcrdma_bc_req *r)
{
	struct rpcrdma_rpc_reply rep;
	const struct bc_prog *p = NULL;
	const uint8_t *base;
	uint32_t blen, low = UINT32_MAX, high = 0;
	bool known = false;

	if (r->h.proc == RPCRDMA1_NOMSG) {
		base = r->rd.buf;
		blen = r->p0len;
	} else {
		base = r->buf + r->h.hdr_len;
		blen = (uint32_t)(r->len - r->h.hdr_len);
	}
	if (xprt_bc_splice(&r->cur, base, blen, r->rc, r->nrc) ||
	    rpcrdma_rpc_decode_call(&r->cur, &r->call)) {
		futex_mutex_lock(b->lock);
		b->st.dropped++;
		if (r->gen == b->gen && b->up)
			req_err_chunk(b, r);
		else
			req_free(b, r);
		futex_mutex_unlock(b->lock);
		return;
	}
	if (rpcrdma_rpc_check_call(&r->call, RPCRDMA_RPC_FLAVORS_DEFAULT, &rep) == 1) {
		bc_clnt_answer(r, &rep, NULL, NULL);
		return;
	}
	futex_mutex_lock(b->lock);
	for (uint32_t i = 0; i < b->nprogs; i++) {
		if (b->progs[i].prog != r->call.prog)
			continue;
		known = true;
		low = b->progs[i].vers < low ? b->progs[i].vers : low;
		high = b->progs[i].vers > high ? b->progs[i].vers : high;
		if (b->progs[i].vers == r->call.vers)
			p = &b->progs[i];
	}
	futex_mutex_unlock(b->lock);
	if (!p) {
		if (known)
			rpcrdma_rpc_reply_prog_mismatch(&rep, r->call.xid, low, high);
		else
			rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_PROG_UNAVAIL);
		bc_clnt_answer(r, &rep, NULL, NULL);
		return;
	}
	rpcrdma_tirpc_xdr_create(&r->xdrs, &r->cur);
	p->fn(r, r->call.proc, &r->xdrs, p->ctx);
}

bool bc_clnt_inline_pending(const struct bc_clnt *b)
{
	return b->ihead != NULL;
}

void bc_clnt_run_inline(struct bc_clnt *b)
{
	struct rpcrdma_bc_req *list;

	futex_mutex_lock(b->lock);
	list = b->ihead;
	b->ihead = b->itail = NULL;
	for (struct rpcrdma_bc_req *r = list; r; r = r->next)
		r->state = RQ_DISPATCHED;
	futex_mutex_unlock(b->lock);
	while (list) {
		struct rpcrdma_bc_req *n = list->next;

		req_dispatch(b, list);
		list = n;
	}
}

static void clnt_reenable(struct bc_clnt *b)
{
	struct bc_enable_args a = {.id = b->id, .credits = b->credits};
	int rc;

	a.flags = b->chunks ? BC_F_CHUNKS : 0;
	rc = clnt_call_prog(b->c, RPCRDMA_BC_PROG, RPCRDMA_BC_VERS, RPCRDMA_BC_PROC_ENABLE,
			    (xdrproc_t)xdr_bc_enable_args, &a, NULL, NULL, NULL);
	futex_mutex_lock(b->lock);
	b->st.enables++;
	if (!rc && b->up)
		b->st.enabled = 1;
	futex_mutex_unlock(b->lock);
}

/* eloop end of iteration, lock held (dropped around the call): RFC 8167
 * §6 after a reconnect (as NFSv4.1 BIND_CONN_TO_SESSION). */
static void enable_after(struct evloop *l)
{
	struct bc_clnt *b = l->ctx;

	while (!b->stop && b->reenable_pending) {
		b->reenable_pending = false;
		futex_mutex_unlock(b->lock);
		clnt_reenable(b);
		futex_mutex_lock(b->lock);
	}
}

/* dloop end of iteration, lock held (dropped around dispatch): the calls
 * ready to dispatch, oldest first. */
static void dispatch_after(struct evloop *l)
{
	struct bc_clnt *b = l->ctx;

	while (!b->stop && b->qhead) {
		struct rpcrdma_bc_req *r = b->qhead;

		b->qhead = r->next;
		if (!b->qhead)
			b->qtail = NULL;
		r->state = RQ_DISPATCHED;
		futex_mutex_unlock(b->lock);
		req_dispatch(b, r);
		futex_mutex_lock(b->lock);
	}
}

static const struct evloop_ops enable_ops = {.after = enable_after};
static const struct evloop_ops dispatch_ops = {.after = dispatch_after};

static void *loop_thread(void *arg)
{
	evloop_run(arg);
	return NULL;
}

int bc_clnt_new(struct rpcrdma_clnt *c, struct futex_mutex *lock, struct rpcrdma_pd *pd,
		uint32_t inline_send, const struct rpcrdma_bc_opts *o, struct bc_clnt **out)
{
	struct bc_clnt *b;
	uint32_t t, w;
	struct timespec ts;
	int rc;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	rc = opts_resolve(o, &b->credits, &b->chunks, &t, &w);
	if (rc) {
		free(b);
		return rc;
	}
	b->c = c;
	b->lock = lock;
	b->pd = pd;
	b->inline_dispatch = opt_inline(o);
	/* Twice the grant: a request whose reply is sent but whose Send has
	 * not completed yet must not hold up the next call. */
	b->nreq = 2 * b->credits;
	/* Copies of received messages: the largest receive threshold. */
	b->inline_recv_cap = RPCRDMA1_CM_SIZE_MAX;
	b->st.credits = b->credits;
	clock_gettime(CLOCK_REALTIME, &ts);
	b->id = ((uint64_t)ts.tv_sec << 32 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 16) *
		0x9e3779b97f4a7c15ull;
	futex_cond_init(&b->cv);
	b->reqs = calloc(b->nreq, sizeof(*b->reqs));
	rc = b->reqs ? 0 : -ENOMEM;
	if (!rc)
		rc = xprt_pool_init(&b->sendp, pd, b->nreq, inline_send);
	for (uint32_t i = 0; !rc && i < b->nreq; i++) {
		b->reqs[i].b = b;
		b->reqs[i].idx = i;
		b->reqs[i].buf = malloc(b->inline_recv_cap);
		if (!b->reqs[i].buf)
			rc = -ENOMEM;
	}
	evloop_init(&b->dloop, NULL, NULL, 0, false, 0, 0, lock, &b->cv, &dispatch_ops, b);
	evloop_init(&b->eloop, NULL, NULL, 0, false, 0, 0, lock, &b->cv, &enable_ops, b);
	if (!rc) {
		rc = -pthread_create(&b->thr, NULL, loop_thread, &b->dloop);
		b->thr_started = rc == 0;
	}
	if (!rc) {
		rc = -pthread_create(&b->ethr, NULL, loop_thread, &b->eloop);
		b->ethr_started = rc == 0;
	}
	if (rc) {
		bc_clnt_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

void bc_clnt_free(struct bc_clnt *b)
{
	if (!b)
		return;
	futex_mutex_lock(b->lock);
	b->stop = true;
	evloop_stop(&b->dloop);
	evloop_stop(&b->eloop);
	futex_mutex_unlock(b->lock);
	if (b->thr_started)
		pthread_join(b->thr, NULL);
	if (b->ethr_started)
		pthread_join(b->ethr, NULL);
	if (b->reqs) {
		for (uint32_t i = 0; i < b->nreq; i++) {
			struct rpcrdma_bc_req *r = &b->reqs[i];

			if (r->rdmr)
				rpcrdma_mr_dereg(r->rdmr);
			if (r->lmr)
				rpcrdma_mr_dereg(r->lmr);
			xprt_lbuf_fini(&r->rd);
			xprt_lbuf_fini(&r->lrep);
			free(r->buf);
		}
		free(b->reqs);
	}
	xprt_pool_fini(&b->sendp);
	free(b);
}

/* ---- answering (any thread) ---- */

static int clnt_post_ctx(void *b, struct rpcrdma_send_wr *wr)
{
	return clnt_post(b, wr);
}

/* Lock held: RDMA Write @len bytes at @src into the Reply chunk segments
 * @seg[0..n), rewriting their lengths to what was written (RFC 8166
 * §3.4.7, §3.5.3.2). */
static int write_reply_chunk(struct bc_clnt *b, struct rpcrdma_bc_req *r, const uint8_t *src,
			     uint64_t len, struct rpcrdma1_segment *seg, uint32_t n)
{
	/* Unsignaled: the reply's Send that follows is signaled and
	 * completes after it (send queue order). */
	const struct rpcrdma_send_wr tmpl = {
	    .wr_id = bc_wrid(b->gen, BC_OP_WRITE, r->idx),
	    .flags = 0,
	};

	return xprt_write_segments(&tmpl, clnt_post_ctx, b, src, rpcrdma_mr_stag(r->lmr), len, seg,
				   n);
}

int bc_clnt_answer(struct rpcrdma_bc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		   void *res)
{
	struct bc_clnt *b = r->b;
	/* The reply's chunk lists are the call's, rewritten in place (as the
	 * server's, reply.c): the Reply chunk echoed (RFC 8166 §3.4.7) with
	 * the length written, no Read list, no Write list (a call with Write
	 * chunks got ERR_CHUNK). The request owns them until it ends. */
	struct rpcrdma1_chunks *rch = &r->h.chunks;
	const struct xprt_reply rp = {rep, xres, res, NULL, rch};
	uint8_t *sbuf = xprt_pool_buf(&b->sendp, r->idx);
	size_t hsize, mlen = 0, cap;
	bool long_reply = false;
	int rc;

	futex_mutex_lock(b->lock);
	if (r->gen != b->gen || !b->up) {
		/* Its connection is gone: the server sends the call again
		 * on the next one (RFC 8167 §5.4). */
		req_free(b, r);
		futex_mutex_unlock(b->lock);
		return -ENOTCONN;
	}
	cap = b->lim.inline_send < b->sendp.size ? b->lim.inline_send : b->sendp.size;
	futex_mutex_unlock(b->lock);

	rch->nreads = 0;
	hsize = xprt_hdr_fixed(r->h.vers) + rpcrdma1_chunks_size(rch);
	/* A Long Reply only with reverse chunks on (RFC 8167 §5.3). */
	rc = xprt_reply_marshal(&rp, b->chunks ? BC_MAX_CHUNK : 0, sbuf, hsize, cap, &r->lrep,
				&mlen, &long_reply);

	futex_mutex_lock(b->lock);
	if (r->gen != b->gen || !b->up) {
		req_free(b, r);
		futex_mutex_unlock(b->lock);
		return -ENOTCONN;
	}
	if (rc) {
		/* Fits nowhere the server allowed (RFC 8166 §4.5.2). */
		req_err_chunk(b, r);
		futex_mutex_unlock(b->lock);
		return -EMSGSIZE;
	}
	xprt_reply_echo(rch, NULL, long_reply);
	if (long_reply) {
		rc = xprt_mr_use(b->pd, &r->lmr, r->lrep.buf, mlen, 0);
		if (!rc) {
			/* until the Send's completion (bc_clnt_wc); kept on
			 * a failure below, some Writes may be out */
			r->writes_out = true;
			rc = write_reply_chunk(b, r, r->lrep.buf, mlen, rch->reply, rch->nreply);
		}
		if (rc) {
			req_free(b, r);
			futex_mutex_unlock(b->lock);
			return rc;
		}
		b->st.long_replies++;
		b->st.reply_chunks++;
		b->st.reply_bytes += mlen;
	}
	/* RFC 8167 §5.2: rdma_credit of a reverse reply is our reverse grant.
	 * The Send follows the Writes on the same connection, so the server
	 * sees the Reply chunk filled when the Send arrives (RFC 8166 §3.1). */
	rc = xprt_reply_hdr(sbuf, hsize, r->h.vers, r->h.xid, b->credits, rch, long_reply);
	if (rc) {
		req_free(b, r);
		futex_mutex_unlock(b->lock);
		return rc;
	}
	RPCRDMA_PROBE(bc_reply_send, r->h.xid, (uint32_t)long_reply, hsize, mlen, b->credits);
	rc = req_send(b, r, long_reply ? hsize : hsize + mlen);
	futex_mutex_unlock(b->lock);
	return rc;
}
