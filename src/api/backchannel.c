// SPDX-License-Identifier: MIT
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), API half: the client's callback
 * programs (reverse responder) and the server's handles for calling its
 * clients (reverse requester), on the connections client.c and server.c
 * own. include/rpcrdma/backchannel.h says what; backchannel_int.h lists
 * the hooks; src/transport/backchannel.c has the wire rules.
 *
 * Client side (struct bc_clnt). A reverse call lands in any of the
 * client's receive buffers (the receive queue is FIFO, not per direction);
 * client.c asks bc_clnt_recv() first, which copies a Call into one of its
 * requests and lets the buffer be re-posted at once, so the number of
 * posted receives stays `credits + rev_credits` (RFC 8167 §4.3.1). A
 * request owns its copy, its pulled Read chunk data and one send buffer
 * from then until its reply's Send completes. Read chunks are pulled with
 * RDMA Reads on the client's connection; ready calls are dispatched on the
 * backchannel thread; another one sends BC_ENABLE again after a reconnect.
 *
 * Server side (struct bc_svc, struct bc_conn per connection, struct
 * rpcrdma_svc_client per client). A client handle exists for every
 * connection from its accept on; BC_ENABLE names the client (64-bit id)
 * and binds the handle of that id to the connection, so after a reconnect
 * the same handle goes on with the new connection and its waiting calls
 * are sent again (RFC 8167 §5.4). The reverse calls' slots, XIDs and credit
 * window are struct xprt_rslots (transport/backchannel.c). A thread runs
 * asynchronous completions, events and timeouts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_int.h"
#include "api/backchannel_int.h"
#include "rpcrdma/tirpc.h"
#include "transport/backchannel.h"

#define BC_DEFAULT_CREDITS 2u
#define BC_MAX_PROGS       16u
#define BC_MAX_CHUNK       (64ull << 20)

/* wr_id layout of backchannel work requests: gen<<32 | KIND<<24 | op<<16 | idx */
enum { BC_OP_SEND = 1, BC_OP_READ, BC_OP_WRITE };

static uint64_t bc_wrid(uint32_t gen, uint32_t op, uint32_t idx)
{
	return ((uint64_t)gen << 32) | ((uint64_t)BC_WR_KIND << 24) | ((uint64_t)op << 16) | idx;
}

static void abstime_in(struct timespec *ts, uint32_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* BC_ENABLE arguments (RPCRDMA_BC_PROG v1 proc 1). */
struct bc_enable_args {
	uint64_t id;      /* the client, the same across reconnects */
	uint32_t credits; /* its reverse credits */
	uint32_t flags;   /* BC_F_CHUNKS: it accepts reverse chunks */
};
#define BC_F_CHUNKS 1u

static bool_t xdr_bc_enable_args(XDR *x, struct bc_enable_args *a)
{
	return xdr_uint64_t(x, &a->id) && xdr_u_int(x, &a->credits) && xdr_u_int(x, &a->flags);
}

static bool opt_inline(const struct rpcrdma_bc_opts *o)
{
	return o && (o->comp_mask & RPCRDMA_BC_OPT_INLINE) && o->inline_dispatch;
}

static int opts_resolve(const struct rpcrdma_bc_opts *o, uint32_t *credits, bool *chunks,
			uint32_t *timeout_ms, uint32_t *conn_wait_ms)
{
	uint32_t m = o ? o->comp_mask : 0;

	if (m &
	    ~(uint32_t)(RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS | RPCRDMA_BC_OPT_TIMEOUT |
			RPCRDMA_BC_OPT_CONN_WAIT | RPCRDMA_BC_OPT_INLINE))
		return -EINVAL;

	*credits = BC_DEFAULT_CREDITS;
	*chunks = true;
	*timeout_ms = 30000;
	*conn_wait_ms = 10000;
	if (m & RPCRDMA_BC_OPT_CREDITS) {
		if (o->credits < 1 || o->credits > RPCRDMA_BC_MAX_CREDITS)
			return -EINVAL;
		*credits = o->credits;
	}
	if (m & RPCRDMA_BC_OPT_CHUNKS)
		*chunks = o->chunks != 0;
	if (m & RPCRDMA_BC_OPT_TIMEOUT)
		*timeout_ms = o->timeout_ms;
	if (m & RPCRDMA_BC_OPT_CONN_WAIT)
		*conn_wait_ms = o->conn_wait_ms;
	return 0;
}

/* ================================================================== */
/* Client: reverse responder                                           */
/* ================================================================== */

enum bc_req_state { RQ_FREE = 0, RQ_READING, RQ_READY, RQ_DISPATCHED, RQ_SENDING };

struct bc_prog {
	uint32_t prog, vers;
	rpcrdma_bc_dispatch_t fn;
	void *ctx;
};

struct rpcrdma_bc_req {
	struct bc_clnt *b;
	uint32_t idx;
	enum bc_req_state state;
	uint32_t gen; /* connection the call came on */
	uint8_t *buf; /* copy of the received message (inline_recv bytes) */
	size_t len;
	struct rpcrdma1_hdr h;
	/* Read chunks, pulled into rd: Position-Zero first, then in order */
	uint32_t p0len;
	struct xprt_rchunk rc[RPCRDMA_MAX_BULK];
	uint32_t nrc;
	struct xprt_lbuf rd;
	struct rpcrdma_mr *rdmr;
	uint32_t reads_pending;
	bool read_err;
	/* the call */
	struct rpcrdma_rpc_call call;
	struct rpcrdma_xdr cur;
	XDR xdrs;
	/* the reply: send buffer idx of the pool; Long Reply source */
	struct xprt_lbuf lrep;
	struct rpcrdma_mr *lmr;
	struct rpcrdma_bc_req *next;
};

struct bc_clnt {
	struct rpcrdma_clnt *c;
	struct futex_mutex *lock; /* the client's */
	struct rpcrdma_pd *pd;
	uint32_t credits; /* reverse credits we grant */
	bool chunks;
	uint64_t id;
	struct rpcrdma_bc_req *reqs;
	uint32_t nreq;
	uint32_t inline_recv_cap; /* size of a request's copy buffer */
	struct xprt_pool sendp;   /* one buffer per request */
	/* connection (lock held) */
	struct rpcrdma_ep *ep;
	struct xprt_limits lim;
	uint32_t gen;
	bool up;
	bool enabled;          /* the upper layer opened the gate */
	bool reenable_pending; /* a reconnect: send BC_ENABLE again */
	struct bc_prog progs[BC_MAX_PROGS];
	uint32_t nprogs;
	struct rpcrdma_bc_req *qhead, *qtail; /* ready to dispatch */
	/* RPCRDMA_BC_OPT_INLINE: ready calls wait here for the thread that
	 * drives the device (bc_clnt_run_inline) instead. */
	bool inline_dispatch;
	struct rpcrdma_bc_req *ihead, *itail;
	pthread_t thr;
	/* A thread of its own sends BC_ENABLE again after a reconnect, so a
	 * callback that blocks on the dispatch thread cannot hold it up. */
	pthread_t ethr;
	bool thr_started, ethr_started, stop;
	struct api_cond cv;
	struct rpcrdma_bc_stats st;
	struct rpcrdma1_hdr scratch;
};

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

static void req_free(struct bc_clnt *b, struct rpcrdma_bc_req *r)
{
	if (r->state == RQ_FREE)
		return;
	if (r->rdmr && rpcrdma_mr_valid(r->rdmr))
		rpcrdma_mr_invalidate(r->rdmr);
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

/* Lock held. RFC 8167 §5.3 / RFC 8166 §4.5.2: answer ERR_CHUNK. */
static void req_err_chunk(struct bc_clnt *b, struct rpcrdma_bc_req *r)
{
	int len = xprt_encode_error(xprt_pool_buf(&b->sendp, r->idx), b->sendp.size, r->h.xid,
				    b->credits, RPCRDMA1_ERR_CHUNK);

	if (len < 0) {
		req_free(b, r);
		return;
	}
	if (!req_send(b, r, (size_t)len))
		b->st.err_chunk_tx++;
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
	api_cond_broadcast(&b->cv);
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

		api_read_wr(&wr, &sge, bc_wrid(b->gen, BC_OP_READ, r->idx), sg, r->rd.buf + off,
			    rpcrdma_mr_stag(r->rdmr));
		rc = clnt_post(b, &wr);
		if (rc)
			return rc;
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

bool bc_clnt_recv(struct bc_clnt *b, const uint8_t *buf, size_t len)
{
	struct rpcrdma_bc_req *r = NULL;
	bool decoded;
	uint64_t total = 0;
	enum xprt_dir dir = xprt_msg_direction(buf, len, &b->scratch, &decoded);

	if (dir != XPRT_DIR_CALL) {
		/* RFC 8167 §4.1: an RDMA_ERROR's direction cannot be told from
		 * the message; client.c then ignores its credit value. */
		if (dir == XPRT_DIR_NONE && len >= RPCRDMA1_FIXED_SIZE)
			b->st.credits_ignored++;
		return false;
	}
	/* A reverse Call: its rdma_credit is the server's reverse credit
	 * request (RFC 8167 §5.1), never a forward grant. */
	b->st.calls_received++;
	b->st.inline_bytes_rx += len;
	b->st.peer_credits =
	    (uint32_t)buf[8] << 24 | (uint32_t)buf[9] << 16 | (uint32_t)buf[10] << 8 | buf[11];
	if (len > b->inline_recv_cap) {
		b->st.dropped++;
		return true;
	}
	for (uint32_t i = 0; i < b->nreq; i++) {
		if (b->reqs[i].state == RQ_FREE) {
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
	if (rpcrdma1_decode_buf(r->buf, len, &r->h)) {
		b->st.dropped++;
		req_free(b, r);
		return true;
	}
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
					return true; /* the connection is failing */
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
		if (r->state == RQ_SENDING)
			req_free(b, r);
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
	/* RFC 8167 §6 on the new connection: the server must hear again that
	 * we take reverse calls (as NFSv4.1 BIND_CONN_TO_SESSION). */
	if (reconnect && b->enabled) {
		b->reenable_pending = true;
		api_cond_broadcast(&b->cv);
	}
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
	b->gen++; /* stale completions are ignored (client.c bumps its own) */
}

/* ---- dispatch (backchannel thread, no lock) ---- */

static int req_answer(struct rpcrdma_bc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		      void *res);

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
		req_answer(r, &rep, NULL, NULL);
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
		req_answer(r, &rep, NULL, NULL);
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

/* RFC 8167 §6 after a reconnect (as NFSv4.1 BIND_CONN_TO_SESSION). */
static void *enable_thread(void *arg)
{
	struct bc_clnt *b = arg;

	futex_mutex_lock(b->lock);
	while (!b->stop) {
		if (b->reenable_pending) {
			b->reenable_pending = false;
			futex_mutex_unlock(b->lock);
			clnt_reenable(b);
			futex_mutex_lock(b->lock);
			continue;
		}
		api_cond_wait(&b->cv, b->lock);
	}
	futex_mutex_unlock(b->lock);
	return NULL;
}

static void *clnt_thread(void *arg)
{
	struct bc_clnt *b = arg;

	futex_mutex_lock(b->lock);
	while (!b->stop) {
		if (b->qhead) {
			struct rpcrdma_bc_req *r = b->qhead;

			b->qhead = r->next;
			if (!b->qhead)
				b->qtail = NULL;
			r->state = RQ_DISPATCHED;
			futex_mutex_unlock(b->lock);
			req_dispatch(b, r);
			futex_mutex_lock(b->lock);
			continue;
		}
		api_cond_wait(&b->cv, b->lock);
	}
	futex_mutex_unlock(b->lock);
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
	api_cond_init(&b->cv);
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
	if (!rc) {
		rc = -pthread_create(&b->thr, NULL, clnt_thread, b);
		b->thr_started = rc == 0;
	}
	if (!rc) {
		rc = -pthread_create(&b->ethr, NULL, enable_thread, b);
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
	api_cond_broadcast(&b->cv);
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

	return api_write_segments(&tmpl, clnt_post_ctx, b, src, rpcrdma_mr_stag(r->lmr), len, seg,
				  n);
}

static int req_answer(struct rpcrdma_bc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		      void *res)
{
	struct bc_clnt *b = r->b;
	struct rpcrdma1_chunks *rch = &b->scratch.chunks; /* only under the lock */
	struct rpcrdma1_chunks ech;
	struct rpcrdma_xdr hx;
	uint8_t *sbuf = xprt_pool_buf(&b->sendp, r->idx);
	size_t hsize, mlen = 0, cap;
	uint64_t rcap = 0;
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

	/* The reply's chunk lists: the Reply chunk echoed (RFC 8166
	 * §3.4.7), lengths set below; no Read list, no Write list (a call
	 * with Write chunks got ERR_CHUNK). */
	rpcrdma1_chunks_init(&ech);
	for (uint32_t i = 0; i < r->h.chunks.nreply; i++)
		rpcrdma1_chunks_add_reply_seg(&ech, &r->h.chunks.reply[i]);
	for (uint32_t i = 0; i < ech.nreply; i++)
		ech.reply[i].length = 0;
	hsize = RPCRDMA1_FIXED_SIZE + rpcrdma1_chunks_size(&ech);
	rc = hsize <= cap ? xprt_bc_encode_reply(rep, xres, res, sbuf + hsize, cap - hsize, &mlen)
			  : -EMSGSIZE;
	if (rc && b->chunks && r->h.chunks.reply_present &&
	    !rpcrdma1_reply_chunk_length(&r->h.chunks, &rcap) && rcap && rcap <= BC_MAX_CHUNK) {
		/* Long Reply (RFC 8166 §3.5.3.2) into the server's Reply
		 * chunk. */
		rc = xprt_lbuf_reserve(&r->lrep, (size_t)rcap);
		if (!rc)
			rc = xprt_bc_encode_reply(rep, xres, res, r->lrep.buf, (size_t)rcap, &mlen);
		long_reply = rc == 0;
	}

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
	*rch = ech;
	if (long_reply) {
		for (uint32_t j = 0; j < rch->nreply; j++)
			rch->reply[j].length = r->h.chunks.reply[j].length;
		rc = xprt_mr_use(b->pd, &r->lmr, r->lrep.buf, mlen, 0);
		if (!rc)
			rc = write_reply_chunk(b, r, r->lrep.buf, mlen, rch->reply, rch->nreply);
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
	rpcrdma_xdr_init(&hx, sbuf, hsize, RPCRDMA_XDR_ENCODE);
	if (long_reply)
		rc = rpcrdma1_encode_nomsg(&hx, r->h.xid, b->credits, rch);
	else
		rc = rpcrdma1_encode_msg(&hx, r->h.xid, b->credits, rch);
	if (rc) {
		req_free(b, r);
		futex_mutex_unlock(b->lock);
		return rc;
	}
	rc = req_send(b, r, long_reply ? hsize : hsize + mlen);
	futex_mutex_unlock(b->lock);
	return rc;
}

/* ---- public: client ---- */

int rpcrdma_clnt_create_bc(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
			   const struct rpcrdma_clnt_opts *opts, const struct rpcrdma_bc_opts *bc,
			   struct rpcrdma_clnt **out)
{
	static const struct rpcrdma_bc_opts defaults;

	return clnt_create_ex(host, port, prog, vers, opts, bc ? bc : &defaults, out);
}

int rpcrdma_clnt_bc_register(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers,
			     rpcrdma_bc_dispatch_t fn, void *ctx)
{
	struct bc_clnt *b = c ? clnt_bc(c) : NULL;
	int rc = 0;

	if (!b || !fn)
		return -EINVAL;
	futex_mutex_lock(b->lock);
	for (uint32_t i = 0; i < b->nprogs; i++)
		if (b->progs[i].prog == prog && b->progs[i].vers == vers)
			rc = -EEXIST;
	if (!rc && b->nprogs >= BC_MAX_PROGS)
		rc = -ENOSPC;
	if (!rc)
		b->progs[b->nprogs++] = (struct bc_prog){prog, vers, fn, ctx};
	futex_mutex_unlock(b->lock);
	return rc;
}

int rpcrdma_clnt_bc_enable(struct rpcrdma_clnt *c)
{
	struct bc_clnt *b = c ? clnt_bc(c) : NULL;
	struct bc_enable_args a;
	int rc;

	if (!b)
		return -EINVAL;
	futex_mutex_lock(b->lock);
	/* From now on every new connection is enabled again by itself. */
	b->enabled = true;
	a.id = b->id;
	a.credits = b->credits;
	a.flags = b->chunks ? BC_F_CHUNKS : 0;
	futex_mutex_unlock(b->lock);
	rc = clnt_call_prog(c, RPCRDMA_BC_PROG, RPCRDMA_BC_VERS, RPCRDMA_BC_PROC_ENABLE,
			    (xdrproc_t)xdr_bc_enable_args, &a, NULL, NULL, NULL);
	futex_mutex_lock(b->lock);
	b->st.enables++;
	if (rc)
		b->enabled = false;
	else if (b->up)
		b->st.enabled = 1;
	futex_mutex_unlock(b->lock);
	return rc;
}

int rpcrdma_clnt_bc_stats(struct rpcrdma_clnt *c, struct rpcrdma_bc_stats *st)
{
	struct bc_clnt *b = c ? clnt_bc(c) : NULL;

	if (!b || !st)
		return -EINVAL;
	futex_mutex_lock(b->lock);
	*st = b->st;
	futex_mutex_unlock(b->lock);
	return 0;
}

uint32_t rpcrdma_bc_req_xid(const struct rpcrdma_bc_req *r)
{
	return r->call.xid;
}

uint32_t rpcrdma_bc_req_prog(const struct rpcrdma_bc_req *r)
{
	return r->call.prog;
}

uint32_t rpcrdma_bc_req_vers(const struct rpcrdma_bc_req *r)
{
	return r->call.vers;
}

uint32_t rpcrdma_bc_req_proc(const struct rpcrdma_bc_req *r)
{
	return r->call.proc;
}

int rpcrdma_bc_getargs(struct rpcrdma_bc_req *r, xdrproc_t xargs, void *args)
{
	if (!xargs)
		return 0;
	return (*xargs)(&r->xdrs, args) ? 0 : -EBADMSG;
}

int rpcrdma_bc_reply(struct rpcrdma_bc_req *r, xdrproc_t xres, void *res)
{
	struct rpcrdma_rpc_reply rep;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_SUCCESS);
	return req_answer(r, &rep, xres, res);
}

int rpcrdma_bc_error(struct rpcrdma_bc_req *r, uint32_t accept_stat)
{
	struct rpcrdma_rpc_reply rep;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, api_error_accept_stat(accept_stat));
	return req_answer(r, &rep, NULL, NULL);
}

/* ================================================================== */
/* Server: reverse requester                                           */
/* ================================================================== */

/* What the API keeps per reverse call slot, next to struct xprt_rslot. */
struct bc_scall {
	bool fin;      /* status final */
	bool released; /* the owner is done with it */
	bool async;
	bool cb_taken; /* the thread is running its callback */
	rpcrdma_svc_client_cb_t cb;
	void *cb_arg;
};

struct rpcrdma_svc_client {
	struct bc_svc *b;
	uint64_t id;
	bool has_id;
	bool ever_enabled; /* the gate opened once: calls may wait for a reconnect */
	bool enabled;      /* the gate is open on the bound connection */
	struct bc_conn *conn;
	uint32_t conn_gen; /* bumped on every bind */
	uint32_t peer_credits;
	struct xprt_rslots rs;
	bool rs_ready;
	struct bc_scall *sc;
	struct api_cond cv; /* a slot was freed or a call finished */
	struct rpcrdma_bc_stats st;
	struct rpcrdma_svc_client *next;
};

struct bc_conn {
	struct bc_svc *b;
	struct rpcrdma_ep *ep;
	struct xprt_limits lim;
	bool up;
	struct rpcrdma_svc_client *cl; /* the client on this connection */
};

#define BC_MAX_EVENTS 64

struct bc_svc {
	struct futex_mutex *lock; /* the server's */
	struct rpcrdma_pd *pd;
	uint32_t inline_send;
	uint32_t slots;
	bool chunks;
	uint32_t timeout_ms, conn_wait_ms;
	rpcrdma_bc_event_t cb;
	void *ctx;
	struct rpcrdma_svc_client *clients;
	struct {
		struct rpcrdma_svc_client *cl;
		enum rpcrdma_bc_event ev;
	} ev[BC_MAX_EVENTS];
	uint32_t nev;
	pthread_t thr;
	struct api_cond cv;
	bool thr_started, stop;
	/* RPCRDMA_BC_OPT_INLINE: async completions run by bc_svc_run_inline()
	 * on the server's progress thread; how many wait (atomic). */
	bool inline_cb;
	unsigned int inline_pending;
	struct rpcrdma1_hdr scratch;
};

uint32_t bc_svc_extra_recvs(const struct bc_svc *b)
{
	return b ? b->slots : 0;
}

static void post_event(struct bc_svc *b, struct rpcrdma_svc_client *cl, enum rpcrdma_bc_event ev)
{
	if (!b->cb || b->nev >= BC_MAX_EVENTS)
		return;
	b->ev[b->nev].cl = cl;
	b->ev[b->nev].ev = ev;
	b->nev++;
	api_cond_broadcast(&b->cv);
}

static uint32_t slot_idx(struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	return (uint32_t)(s - cl->rs.slot);
}

/* Lock held: a slot whose owner is done and which is not on the wire is
 * free again. */
static void slot_maybe_free(struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	struct bc_scall *sc = &cl->sc[slot_idx(cl, s)];

	if (sc->released && s->state != XPRT_RS_WIRE) {
		if (s->call.mr_used)
			xprt_call_fence(&s->call, false, 0);
		s->state = XPRT_RS_FREE;
		api_cond_broadcast(&cl->cv);
	}
}

/* Lock held: the call's status is final; tell its owner. */
static void slot_finish(struct rpcrdma_svc_client *cl, struct xprt_rslot *s, int status)
{
	struct bc_scall *sc = &cl->sc[slot_idx(cl, s)];

	if (sc->fin)
		return;
	/* No chunk memory stays exposed once the caller may reuse it. */
	if (s->call.mr_used)
		xprt_call_fence(&s->call, false, 0);
	sc->fin = true;
	s->status = status;
	s->result.xid = s->call.xid;
	s->result.status = status;
	if (status == -ETIMEDOUT)
		cl->st.timeouts++;
	if ((s->call.opts.comp_mask & RPCRDMA_CALL_OPT_RESULT) && s->call.opts.result)
		*s->call.opts.result = s->result;
	if (s->state != XPRT_RS_WIRE)
		s->state = XPRT_RS_DONE;
	/* A timed-out call still on the wire keeps its credit until its reply
	 * or the connection goes (a zombie, as client.c does). */
	api_cond_broadcast(&cl->cv);
	if (sc->async) {
		if (cl->b->inline_cb)
			__atomic_add_fetch(&cl->b->inline_pending, 1, __ATOMIC_RELEASE);
		else
			api_cond_broadcast(&cl->b->cv);
	}
}

static void slot_release(struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	cl->sc[slot_idx(cl, s)].released = true;
	slot_maybe_free(cl, s);
}

/* Lock held: send waiting calls, oldest first, as the reverse window and
 * the connection allow (RFC 8167 §4.1). */
static void cl_kick(struct rpcrdma_svc_client *cl)
{
	struct bc_svc *b = cl->b;

	while (cl->enabled && cl->conn && cl->conn->up && xprt_credits_may_send(&cl->rs.cr)) {
		struct xprt_rslot *s = xprt_rslots_oldest(&cl->rs);
		struct xprt_call *k;
		int rc;

		if (!s)
			return;
		k = &s->call;
		rc = xprt_rslot_marshal(&cl->rs, s, &cl->conn->lim, b->chunks);
		if (!rc) {
			struct rpcrdma_send_wr wr = {
			    .wr_id = bc_wrid(0, BC_OP_SEND, slot_idx(cl, s)),
			    .opcode = RPCRDMA_WR_SEND,
			    .flags = RPCRDMA_SEND_SIGNALED,
			    .sg = k->sge,
			    .num_sge = k->nsge,
			};

			rc = rpcrdma_post_send(cl->conn->ep, &wr);
		}
		if (rc) {
			s->state = XPRT_RS_DONE;
			slot_finish(cl, s, rc);
			slot_maybe_free(cl, s);
			continue;
		}
		s->state = XPRT_RS_WIRE;
		s->wait_dl = 0;
		s->conn_gen = cl->conn_gen;
		s->result.transmissions++;
		s->result.call_proc = k->call_proc;
		s->result.read_chunks = k->nread;
		s->result.reply_chunk = k->reply_offered;
		if (s->result.transmissions > 1)
			cl->st.retransmits++;
		xprt_credits_sent(&cl->rs.cr);
		cl->st.calls_sent++;
		cl->st.outstanding = cl->rs.cr.on_wire;
		if (cl->st.outstanding > cl->st.max_outstanding)
			cl->st.max_outstanding = cl->st.outstanding;
		if (k->call_proc == RPCRDMA1_NOMSG)
			cl->st.long_calls++;
		else
			cl->st.short_msgs++;
		cl->st.read_chunks += k->nread;
		cl->st.read_bytes += k->read_bytes;
		cl->st.reply_chunks += k->reply_offered;
		cl->st.inline_bytes_tx += k->hdr_len + (k->nsge > 1 ? k->msg_len : 0);
	}
}

static struct rpcrdma_svc_client *client_new(struct bc_svc *b)
{
	struct rpcrdma_svc_client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->b = b;
	api_cond_init(&cl->cv);
	cl->next = b->clients;
	b->clients = cl;
	return cl;
}

struct bc_conn *bc_svc_conn_new(struct bc_svc *b, struct rpcrdma_ep *ep,
				const struct xprt_limits *lim)
{
	struct bc_conn *bc = calloc(1, sizeof(*bc));

	if (!bc)
		return NULL;
	bc->b = b;
	bc->ep = ep;
	bc->lim = *lim;
	bc->up = true;
	/* Until BC_ENABLE names the client, it is an anonymous one whose
	 * gate is closed (RFC 8167 §6). */
	bc->cl = client_new(b);
	if (!bc->cl) {
		free(bc);
		return NULL;
	}
	bc->cl->conn = bc;
	return bc;
}

/* Lock held: @cl lost its connection. */
static void cl_unbind(struct rpcrdma_svc_client *cl)
{
	uint64_t now = api_now_ns();

	if (cl->enabled)
		post_event(cl->b, cl, RPCRDMA_BC_EV_DOWN);
	cl->enabled = false;
	cl->conn = NULL;
	cl->st.enabled = 0;
	cl->st.connected = 0;
	if (!cl->rs_ready)
		return;
	/* RFC 8167 §5.4: calls on the wire wait for the client to come back,
	 * then go again with the same XID; each waits at most conn_wait_ms. */
	for (uint32_t i = 0; i < cl->rs.n; i++) {
		struct xprt_rslot *s = &cl->rs.slot[i];

		if (s->state == XPRT_RS_WAIT && !s->wait_dl && cl->b->conn_wait_ms)
			s->wait_dl = now + (uint64_t)cl->b->conn_wait_ms * 1000000ull;
		if (s->state != XPRT_RS_WIRE)
			continue;
		if (s->call.mr_used)
			xprt_call_fence(&s->call, false, 0);
		if (cl->sc[i].fin) {
			s->state = XPRT_RS_DONE;
			slot_maybe_free(cl, s);
		} else {
			s->state = XPRT_RS_WAIT;
			if (cl->b->conn_wait_ms)
				s->wait_dl = now + (uint64_t)cl->b->conn_wait_ms * 1000000ull;
		}
	}
	xprt_credits_reset(&cl->rs.cr);
	cl->st.outstanding = 0;
}

void bc_svc_conn_down(struct bc_conn *bc)
{
	if (!bc || !bc->up)
		return;
	bc->up = false;
	if (bc->cl && bc->cl->conn == bc)
		cl_unbind(bc->cl);
}

void bc_svc_conn_free(struct bc_conn *bc)
{
	if (!bc)
		return;
	bc_svc_conn_down(bc);
	if (bc->cl && bc->cl->conn == bc)
		bc->cl->conn = NULL;
	free(bc);
}

/* Lock held: open the gate of the client on @bc (RFC 8167 §6). With an
 * id, the client handle that already carries it (an earlier connection of
 * the same client) takes over this connection. */
static int cl_enable(struct bc_conn *bc, bool has_id, uint64_t id, uint32_t credits)
{
	struct bc_svc *b = bc->b;
	struct rpcrdma_svc_client *cl = bc->cl;
	int rc;

	if (!bc->up)
		return -ENOTCONN;
	if (has_id && !(cl->has_id && cl->id == id)) {
		struct rpcrdma_svc_client *o;

		for (o = b->clients; o; o = o->next)
			if (o != cl && o->has_id && o->id == id)
				break;
		if (o) {
			/* The same client again (a reconnect). The anonymous
			 * handle stays, unbound and closed. */
			if (o->conn && o->conn != bc)
				cl_unbind(o);
			if (cl->conn == bc)
				cl->conn = NULL;
			cl = o;
		} else {
			cl->id = id;
			cl->has_id = true;
		}
	}
	if (!cl->rs_ready) {
		rc = xprt_rslots_init(&cl->rs, b->pd, b->slots, b->inline_send);
		if (rc)
			return rc;
		cl->sc = calloc(b->slots, sizeof(*cl->sc));
		if (!cl->sc) {
			xprt_rslots_fini(&cl->rs);
			return -ENOMEM;
		}
		cl->rs_ready = true;
	}
	if (cl->conn != bc) {
		cl->conn = bc;
		cl->conn_gen++;
		xprt_credits_reset(&cl->rs.cr);
	}
	bc->cl = cl;
	cl->peer_credits = credits;
	cl->enabled = cl->ever_enabled = true;
	cl->st.enabled = 1;
	cl->st.connected = 1;
	cl->st.enables++;
	cl->st.credits = cl->rs.cr.grant;
	post_event(b, cl, RPCRDMA_BC_EV_ENABLED);
	/* Calls that waited for this connection go now (same XIDs). */
	cl_kick(cl);
	return 0;
}

bool bc_svc_recv(struct bc_conn *bc, const uint8_t *buf, size_t len)
{
	struct bc_svc *b = bc->b;
	struct rpcrdma1_hdr *h = &b->scratch;
	struct rpcrdma_svc_client *cl = bc->cl;
	struct xprt_rslot *s;
	bool decoded;
	enum xprt_dir dir = xprt_msg_direction(buf, len, h, &decoded);
	int st;

	if (dir == XPRT_DIR_CALL)
		return false; /* forward traffic */
	if (dir == XPRT_DIR_NONE) {
		/* Only an RDMA_ERROR can answer one of our reverse calls; its
		 * direction is not in the message, so its credit value is
		 * ignored (RFC 8167 §4.1). Anything else goes to server.c. */
		if (!decoded && rpcrdma1_decode_buf(buf, len, h))
			return false;
		if (h->proc != RPCRDMA1_ERROR || !cl || !cl->rs_ready)
			return false;
		s = xprt_rslots_find(&cl->rs, h->xid);
		if (!s)
			return false;
		cl->st.credits_ignored++;
		cl->st.inline_bytes_rx += len;
		if (h->err == RPCRDMA1_ERR_CHUNK)
			cl->st.err_chunk_rx++;
		s->result.rdma_err = h->err;
		s->result.reply_proc = RPCRDMA1_ERROR;
		if (h->err == RPCRDMA1_ERR_VERS) {
			s->result.mismatch_low = h->vers_low;
			s->result.mismatch_high = h->vers_high;
		}
		st = xprt_rdma_err_status(h->err);
		goto done;
	}
	/* A reverse Reply (RFC 8167 §5.2). */
	if (!decoded && rpcrdma1_decode_buf(buf, len, h)) {
		if (cl)
			cl->st.unmatched++;
		return true;
	}
	s = cl && cl->rs_ready ? xprt_rslots_find(&cl->rs, h->xid) : NULL;
	if (!s) {
		if (cl)
			cl->st.unmatched++;
		return true;
	}
	/* RFC 8167 §4.1: its rdma_credit is the client's reverse grant. */
	xprt_credits_update(&cl->rs.cr, h->credit);
	cl->st.credits = cl->rs.cr.grant;
	cl->st.inline_bytes_rx += len;
	if (cl->sc[slot_idx(cl, s)].fin) {
		/* Its caller gave up (timeout): the credit comes back now. */
		cl->st.unmatched++;
		xprt_credits_done(&cl->rs.cr);
		s->state = XPRT_RS_DONE;
		slot_maybe_free(cl, s);
		cl_kick(cl);
		return true;
	}
	if (s->call.mr_used)
		xprt_call_fence(&s->call, false, 0);
	st = xprt_reply_process(&s->call, buf, len, h, &s->result);
	if (h->proc == RPCRDMA1_NOMSG) {
		uint64_t w = 0;

		cl->st.long_replies++;
		if (!rpcrdma1_reply_chunk_length(&h->chunks, &w))
			cl->st.reply_bytes += w;
	}
done:
	cl->st.replies++;
	xprt_credits_done(&cl->rs.cr);
	cl->st.outstanding = cl->rs.cr.on_wire;
	s->state = XPRT_RS_DONE;
	slot_finish(cl, s, st);
	slot_maybe_free(cl, s);
	cl_kick(cl);
	return true;
}

/* Lock held: fail calls past their deadlines. */
static void check_timeouts(struct bc_svc *b)
{
	uint64_t now = api_now_ns();

	for (struct rpcrdma_svc_client *cl = b->clients; cl; cl = cl->next) {
		if (!cl->rs_ready)
			continue;
		for (uint32_t i = 0; i < cl->rs.n; i++) {
			struct xprt_rslot *s = &cl->rs.slot[i];

			if (s->state == XPRT_RS_FREE || cl->sc[i].fin)
				continue;
			if ((s->deadline && now > s->deadline) ||
			    (s->state == XPRT_RS_WAIT && s->wait_dl && now > s->wait_dl))
				slot_finish(cl, s, -ETIMEDOUT);
		}
	}
}

/* Lock held: one finished async call whose callback has not run, or NULL. */
static struct xprt_rslot *next_async(struct bc_svc *b, struct rpcrdma_svc_client **pcl)
{
	for (struct rpcrdma_svc_client *cl = b->clients; cl; cl = cl->next) {
		if (!cl->rs_ready)
			continue;
		for (uint32_t i = 0; i < cl->rs.n; i++) {
			struct bc_scall *sc = &cl->sc[i];

			if (sc->async && sc->fin && !sc->released && !sc->cb_taken) {
				*pcl = cl;
				return &cl->rs.slot[i];
			}
		}
	}
	return NULL;
}

/* Lock held (dropped around the callback): run the callback of the
 * finished asynchronous call in slot @s of @cl. */
static void run_async(struct bc_svc *b, struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	struct bc_scall *sc = &cl->sc[slot_idx(cl, s)];
	rpcrdma_svc_client_cb_t cb = sc->cb;
	void *cb_arg = sc->cb_arg, *res = s->call.res;
	int status = s->status;

	sc->cb_taken = true;
	/* The slot is given back before the callback runs, so the callback
	 * may start the next call. */
	slot_release(cl, s);
	futex_mutex_unlock(b->lock);
	if (cb)
		cb(cl, status, res, cb_arg);
	futex_mutex_lock(b->lock);
}

static void *svc_thread(void *arg)
{
	struct bc_svc *b = arg;
	uint64_t last = 0;

	futex_mutex_lock(b->lock);
	for (;;) {
		struct rpcrdma_svc_client *cl;
		struct xprt_rslot *s;
		struct timespec ts;

		while (b->nev) {
			struct rpcrdma_svc_client *ecl = b->ev[0].cl;
			enum rpcrdma_bc_event ev = b->ev[0].ev;

			memmove(&b->ev[0], &b->ev[1], (b->nev - 1) * sizeof(b->ev[0]));
			b->nev--;
			futex_mutex_unlock(b->lock);
			b->cb(ecl, ev, b->ctx);
			futex_mutex_lock(b->lock);
		}
		while ((!b->inline_cb || b->stop) && (s = next_async(b, &cl)) != NULL)
			run_async(b, cl, s);
		if (b->stop)
			break;
		if (api_now_ns() - last > 5000000ull) {
			last = api_now_ns();
			check_timeouts(b);
			continue;
		}
		abstime_in(&ts, 5);
		api_cond_timedwait(&b->cv, b->lock, &ts);
	}
	futex_mutex_unlock(b->lock);
	return NULL;
}

void bc_svc_run_inline(struct bc_svc *b)
{
	struct rpcrdma_svc_client *cl;
	struct xprt_rslot *s;

	if (!b || !__atomic_load_n(&b->inline_pending, __ATOMIC_ACQUIRE))
		return;
	futex_mutex_lock(b->lock);
	__atomic_store_n(&b->inline_pending, 0, __ATOMIC_RELAXED);
	while (!b->stop && (s = next_async(b, &cl)) != NULL)
		run_async(b, cl, s);
	futex_mutex_unlock(b->lock);
}

/* The BC_ENABLE program, served by the library on every backchannel
 * server (the gate's carrier, see backchannel.h). */
static void enable_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct bc_svc *b = ctx;
	struct bc_enable_args a;
	struct bc_conn *bc;
	int rc;

	(void)args;
	if (proc == RPCRDMA_BC_PROC_NULL) {
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	}
	if (proc != RPCRDMA_BC_PROC_ENABLE) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_bc_enable_args, &a)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	futex_mutex_lock(b->lock);
	bc = svc_req_bc(req);
	rc = bc ? cl_enable(bc, true, a.id, a.credits) : -ENOTCONN;
	futex_mutex_unlock(b->lock);
	if (rc)
		rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
	else
		rpcrdma_svc_reply(req, NULL, NULL);
}

void bc_svc_stop(struct bc_svc *b)
{
	if (!b)
		return;
	futex_mutex_lock(b->lock);
	b->stop = true;
	for (struct rpcrdma_svc_client *cl = b->clients; cl; cl = cl->next) {
		if (!cl->rs_ready)
			continue;
		for (uint32_t i = 0; i < cl->rs.n; i++)
			if (cl->rs.slot[i].state != XPRT_RS_FREE)
				slot_finish(cl, &cl->rs.slot[i], -ECANCELED);
	}
	api_cond_broadcast(&b->cv);
	futex_mutex_unlock(b->lock);
	if (b->thr_started) {
		pthread_join(b->thr, NULL);
		b->thr_started = false;
	}
}

void bc_svc_free(struct bc_svc *b)
{
	if (!b)
		return;
	bc_svc_stop(b);
	while (b->clients) {
		struct rpcrdma_svc_client *cl = b->clients;

		b->clients = cl->next;
		if (cl->rs_ready)
			xprt_rslots_fini(&cl->rs);
		free(cl->sc);
		free(cl);
	}
	free(b);
}

/* ---- public: server ---- */

int rpcrdma_svc_bc_init(struct rpcrdma_svc *svc, const struct rpcrdma_bc_opts *opts,
			rpcrdma_bc_event_t cb, void *ctx)
{
	struct svc_bc_host h;
	struct bc_svc *b;
	int rc;

	if (!svc)
		return -EINVAL;
	svc_bc_host(svc, &h);
	if (h.started)
		return -EBUSY;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	rc = opts_resolve(opts, &b->slots, &b->chunks, &b->timeout_ms, &b->conn_wait_ms);
	if (rc) {
		free(b);
		return rc;
	}
	b->lock = h.lock;
	b->pd = h.pd;
	b->inline_send = h.inline_send;
	b->inline_cb = opt_inline(opts);
	b->cb = cb;
	b->ctx = ctx;
	api_cond_init(&b->cv);
	rc = rpcrdma_svc_register(svc, RPCRDMA_BC_PROG, RPCRDMA_BC_VERS, enable_dispatch, b);
	if (!rc)
		rc = svc_bc_attach(svc, b);
	if (!rc) {
		rc = -pthread_create(&b->thr, NULL, svc_thread, b);
		b->thr_started = rc == 0;
	}
	if (rc) {
		/* The program registration cannot be undone; a second
		 * attempt then fails with -EEXIST. */
		free(b);
	}
	return rc;
}

struct rpcrdma_svc_client *rpcrdma_svc_req_client(struct rpcrdma_svc_req *req)
{
	struct bc_conn *bc = req ? svc_req_bc(req) : NULL;
	struct rpcrdma_svc_client *cl;

	if (!bc)
		return NULL;
	futex_mutex_lock(bc->b->lock);
	cl = bc->cl;
	futex_mutex_unlock(bc->b->lock);
	return cl;
}

int rpcrdma_svc_client_enable(struct rpcrdma_svc_client *cl, uint32_t credits)
{
	int rc;

	if (!cl)
		return -EINVAL;
	futex_mutex_lock(cl->b->lock);
	rc = cl->conn ? cl_enable(cl->conn, cl->has_id, cl->id, credits) : -ENOTCONN;
	futex_mutex_unlock(cl->b->lock);
	return rc;
}

static int client_call(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers, uint32_t proc,
		       xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
		       const struct rpcrdma_call_opts *opts, bool async, rpcrdma_svc_client_cb_t cb,
		       void *cb_arg)
{
	struct bc_svc *b;
	struct xprt_rslot *s;
	struct bc_scall *sc;
	uint32_t tmo;
	int rc;

	if (!cl)
		return -EINVAL;
	b = cl->b;
	tmo =
	    opts && (opts->comp_mask & RPCRDMA_CALL_OPT_TIMEOUT) ? opts->timeout_ms : b->timeout_ms;
	futex_mutex_lock(b->lock);
	for (;;) {
		if (b->stop) {
			futex_mutex_unlock(b->lock);
			return -ECANCELED;
		}
		/* RFC 8167 §6: nothing goes to a client that has not said it
		 * takes reverse calls; refused here, nothing is sent. */
		if (!cl->ever_enabled || !cl->rs_ready) {
			cl->st.gate_refusals++;
			futex_mutex_unlock(b->lock);
			return -ENOPROTOOPT;
		}
		s = xprt_rslots_get(&cl->rs);
		if (s)
			break;
		api_cond_wait(&cl->cv, b->lock);
	}
	sc = &cl->sc[slot_idx(cl, s)];
	memset(sc, 0, sizeof(*sc));
	sc->async = async;
	sc->cb = cb;
	sc->cb_arg = cb_arg;
	s->call.prog = prog;
	s->call.vers = vers;
	s->call.proc = proc;
	s->call.xargs = xargs;
	s->call.args = args;
	s->call.xres = xres;
	s->call.res = res;
	if (opts)
		s->call.opts = *opts;
	else
		memset(&s->call.opts, 0, sizeof(s->call.opts));
	s->deadline = tmo ? api_now_ns() + (uint64_t)tmo * 1000000ull : 0;
	if (!cl->enabled && b->conn_wait_ms)
		s->wait_dl = api_now_ns() + (uint64_t)b->conn_wait_ms * 1000000ull;
	s->state = XPRT_RS_WAIT;
	cl->st.calls++;
	cl_kick(cl);
	if (s->state == XPRT_RS_WAIT && !sc->fin)
		cl->st.credit_stalls++; /* waits for a reverse credit or a connection */
	if (async) {
		futex_mutex_unlock(b->lock);
		return 0;
	}
	while (!sc->fin)
		api_cond_wait(&cl->cv, b->lock);
	rc = s->status;
	slot_release(cl, s);
	futex_mutex_unlock(b->lock);
	return rc;
}

int rpcrdma_svc_client_call(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers,
			    uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
			    const struct rpcrdma_call_opts *opts)
{
	return client_call(cl, prog, vers, proc, xargs, args, xres, res, opts, false, NULL, NULL);
}

int rpcrdma_svc_client_call_async(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers,
				  uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres,
				  void *res, const struct rpcrdma_call_opts *opts,
				  rpcrdma_svc_client_cb_t cb, void *cb_arg)
{
	return client_call(cl, prog, vers, proc, xargs, args, xres, res, opts, true, cb, cb_arg);
}

static void cl_stats(struct rpcrdma_svc_client *cl, struct rpcrdma_bc_stats *st)
{
	*st = cl->st;
	st->credits = cl->rs_ready ? cl->rs.cr.grant : 0;
	st->peer_credits = cl->peer_credits;
	st->outstanding = cl->rs_ready ? cl->rs.cr.on_wire : 0;
	st->enabled = cl->enabled;
	st->connected = cl->conn && cl->conn->up;
}

int rpcrdma_svc_client_stats(struct rpcrdma_svc_client *cl, struct rpcrdma_bc_stats *st)
{
	if (!cl || !st)
		return -EINVAL;
	futex_mutex_lock(cl->b->lock);
	cl_stats(cl, st);
	futex_mutex_unlock(cl->b->lock);
	return 0;
}

int rpcrdma_svc_bc_stats(struct rpcrdma_svc *svc, struct rpcrdma_bc_stats *st)
{
	struct svc_bc_host h;
	struct bc_svc *b;

	if (!svc || !st)
		return -EINVAL;
	svc_bc_host(svc, &h);
	memset(st, 0, sizeof(*st));
	futex_mutex_lock(h.lock);
	b = svc_bc_get(svc);
	for (struct rpcrdma_svc_client *cl = b ? b->clients : NULL; cl; cl = cl->next) {
		struct rpcrdma_bc_stats one;

		cl_stats(cl, &one);
#define SUM(f) st->f += one.f
		SUM(calls);
		SUM(calls_sent);
		SUM(replies);
		SUM(retransmits);
		SUM(credit_stalls);
		SUM(timeouts);
		SUM(gate_refusals);
		SUM(err_chunk_rx);
		SUM(unmatched);
		SUM(enables);
		SUM(short_msgs);
		SUM(long_calls);
		SUM(long_replies);
		SUM(read_chunks);
		SUM(read_bytes);
		SUM(reply_chunks);
		SUM(reply_bytes);
		SUM(inline_bytes_tx);
		SUM(inline_bytes_rx);
		SUM(credits_ignored);
		SUM(outstanding);
		SUM(enabled);
		SUM(connected);
#undef SUM
		if (one.max_outstanding > st->max_outstanding)
			st->max_outstanding = one.max_outstanding;
	}
	futex_mutex_unlock(h.lock);
	return b ? 0 : -EINVAL;
}

void bc_test_set_next_xid(struct rpcrdma_svc_client *cl, uint32_t xid)
{
	futex_mutex_lock(cl->b->lock);
	cl->rs.next_xid = xid;
	futex_mutex_unlock(cl->b->lock);
}
