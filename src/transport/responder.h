/* SPDX-License-Identifier: MIT */
/*
 * The server's RPC-over-RDMA responder (include/rpcrdma/server.h is its
 * API, src/api/server.c the thin shell over it). One file per concern:
 *   respond.h   what the server shares with the reverse responder of
 *               RFC 8167: the Read chunk plan, reply marshalling
 *   svc_conn.c  a connection: accept, pools, receives and the credit grant,
 *               send buffers and send signalling, RDMA_ERROR refusals, the
 *               RFC 8167 direction demux, completions, teardown
 *   pull.c      Read-chunk pull: budget, staging buffers, the Read queue
 *               within the client's IRD, pull completion
 *   splice.c    the call stream: inline bytes + pulled Read chunks at their
 *               RFC 8166 §3.4.5 positions
 *   reply.c     reply marshalling: inline / Write chunks / Reply chunk
 *               (RDMA_NOMSG), held replies flushed per batch
 *   svc_loop.c  the progress thread, worker threads and dispatch
 *   svc_srq.c   the shared receive pool (one SRQ for every connection)
 *   svc_vers.c  Version Two: what it adds, checked before the common path
 *   exposed.c   reliable replies: replies exposed in Read chunks, fenced
 *               after RDMA_DONE
 *   svc_drc.c   the duplicate request cache around a call (drc.c, drc.h)
 *   ccp_svc.c   CONF_RDMA, the Connection Configuration Protocol (ccp.h)
 *
 * Structure. One device, one listener, one event channel, one CQ for every
 * connection (resized as they come: rpcrdma_cq_resize; a provider that
 * cannot resize gets a CQ per connection): a pass of the progress thread
 * then costs the same with 1 or 10,000 connections, and a connection no
 * descriptor beyond its socket. Receives come from the server's shared
 * pool (svc_srq.c: a shared receive queue; the grants never exceed the
 * receives posted, RFC 8166 §3.3.1), or, on a provider without one, from
 * a pool of `credits` buffers per connection, all posted. Each connection
 * has a send pool of credits + 8 buffers (replies and RDMA_ERRORs).
 * Request i of a connection owns the receive buffer its call landed in
 * (r->rbuf; with per-connection pools buffer i), its pulled Read chunk
 * data and its MRs from the RECV completion until its reply is posted.
 * Requests are allocated on the first message into their buffer (a
 * request is some 6 kB: 64 of them were most of an idle connection's
 * cost).
 *
 * Threads. The progress thread accepts connections, reaps completions,
 * parses transport headers, answers the ones it refuses (RDMA_ERROR),
 * pulls Read chunks, and runs complete calls itself (the default,
 * workers == 0: no thread handoff per call) or queues them to the workers.
 * It busy-polls the device for SVC_SPIN_NS after the last activity, then
 * blocks on the device fd. Replies are built and posted by whichever
 * thread answers. Shared state is under svc->lock ("lock held" below).
 *
 * Ordering. A reply's receive buffer is re-posted before its Send is
 * posted, so a client that sends its next call as soon as it sees the
 * reply always finds a receive waiting (no RNR on iWARP: an unexpected
 * Send is fatal, RFC 5041 §7).
 *
 * Hidden symbols, nothing here is exported.
 */
#ifndef RPCRDMA_TRANSPORT_RESPONDER_H
#define RPCRDMA_TRANSPORT_RESPONDER_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "rpcrdma/server.h"
#include "transport/drc.h"
#include "transport/evloop.h"
#include "transport/respond.h"
#include "transport/xprt.h"
#include "util/futex_cond.h"
#include "util/probe.h"

enum { SVC_WR_RECV = 1, SVC_WR_SEND, SVC_WR_READ, SVC_WR_WRITE };

#define SVC_MAX_PROGS 32
#define SVC_STASH     64 /* staging buffers kept for reuse, at most */
/* after connections closed, memory is trimmed once none closed this long */
#define SVC_TRIM_QUIET_NS 1000000000ull
/* kept staging buffers are unmapped after this long without a pull */
#define SVC_STASH_IDLE_NS 1000000000ull
/* One connection's calls hold at most 1/SVC_PULL_SHARE of max_pull while
 * pulling (beyond its first call): a client whose Reads go unanswered
 * cannot take the pull budget from the others (pull.c). */
#define SVC_PULL_SHARE 4u
/* buffers of exposed replies kept for reuse, at most, and the largest kept */
#define SVC_RR_CACHE     8
#define SVC_RR_CACHE_MAX (4u << 20)
#define SVC_SEND_EXTRA   8
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

/* Server: on_recv is called with every received message (before any
 * check). Fault injection (fault tests): on_pull right after the RDMA Reads
 * of a call's Read chunks were posted, on_reply_writes right after the
 * RDMA Writes of a reply (Write or Reply chunk) were posted, before its
 * Send; returning true drops the connection exactly there. Called with the
 * server's lock held. */
struct svc_testhook {
	void (*on_recv)(void *arg, const uint8_t *msg, size_t len);
	bool (*on_pull)(void *arg, uint32_t xid);
	bool (*on_reply_writes)(void *arg, uint32_t xid);
	void *arg;
};

struct svc_prog {
	uint32_t prog, vers;
	rpcrdma_svc_dispatch_t fn;
	rpcrdma_svc_tirpc_dispatch_t tfn;
	void *ctx;
};

struct svc_conn;

struct rpcrdma_svc_req {
	struct svc_conn *conn;
	uint32_t ridx; /* its slot in conn->reqs (and in wr_ids) */
	uint32_t rbuf; /* the receive buffer it owns while held */
	uint32_t recv_len;
	bool held;             /* between RECV and reply: owns receive buffer ridx */
	struct rpcrdma1_hdr h; /* the call's transport header (the reply's too) */
	/* Read chunks (RFC 8166 §3.4.5, §3.5.3.1), pulled by RDMA Read into
	 * a staging buffer allocated for this call and freed when it ends
	 * (pull.c): the whole call stream, flat (splice.c). */
	uint8_t *stage;
	size_t stage_cap; /* bytes mapped for it */
	size_t stage_len; /* stream bytes */
	size_t pull_need; /* bytes charged to the server's pull budget */
	struct rpcrdma_mr *rdmr;
	uint32_t reads_pending;
	bool read_err;
	bool deferred;    /* waits in the pull queue for budget */
	bool pull_over;   /* its staging is the server's one call over max_pull */
	uint32_t msg_len; /* RPC message without the chunks: inline or Position-Zero */
	uint32_t p0len;
	struct xprt_rchunk rc[RPCRDMA_SVC_MAX_READ_CHUNKS]; /* respond.h */
	uint32_t nrc;
	struct rpcrdma_svc_req *pnext; /* pull queue */
	/* Reads not posted yet (see svc_reads_post): the next Read list
	 * entry, the end of its chunk, the next rc[], where the chunk goes */
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
	/* its duplicate request cache entry while it runs (svc_drc.c) */
	struct svc_drc_entry *drc;
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
	/* request i (bound to receive buffer i), allocated when a message
	 * first lands in buffer i and kept until the connection goes: an
	 * idle connection holds only the few it used (svc_req_of) */
	struct rpcrdma_svc_req **reqs;
	/* Receive buffers: the connection's own (recvp), or the server's
	 * shared pool (svc_srq.c), where request slots are not bound to a
	 * buffer: r->rbuf says which one a call landed in, and the free
	 * slots wait in rfree. grant: the credits announced to it, all
	 * backed by the shared pool (never shrinks). */
	struct xprt_pool *rpool;
	uint32_t *rfree;
	uint32_t nrfree, grant;
	bool up, dead;
	uint32_t held; /* requests between RECV and reply */
	/* RFC 8167 §4.3.2: receives posted = credits + the backchannel's extra
	 * ones for reverse replies (request i is bound to receive buffer i). */
	uint32_t nrecv;
	struct bc_conn *bc; /* backchannel of this connection (bc_svc.c) */
	bool tx_held;       /* replies posted with RPCRDMA_SEND_DEFER, not flushed */
	/* Version Two (svc_vers.c): a Version Two call came; the peer's
	 * transport properties came */
	bool v2_seen, v2_props_seen;
	/* Reliable replies (exposed.c): the Version Two client's properties
	 * said it takes responder-provided Read chunks; the STag the Send
	 * being handled invalidated (Send With Invalidate), else 0; the
	 * replies exposed now, by XID (NULL until the first). */
	bool rr_peer;
	/* Its CONF_RDMA said maxrdmaread 0 (ccp_svc.c, RFC 5666 §6.2): no
	 * reply is exposed for it to Read. */
	bool ccp_no_reads;
	uint32_t rr_inv;
	struct svc_rr *rr;
	/* RDMA Reads: at most rd_depth outstanding, our ORD bounded by the
	 * client's IRD (RFC 6581 §9); calls whose Reads are
	 * not all posted wait in the Read queue, oldest first. */
	uint32_t rd_depth, rd_inflight;
	bool rd_known;
	/* pull memory its calls hold now (its share of pull_inuse); when its
	 * Reads last made progress (pull_timeout_ms, svc_pull_tick) */
	uint64_t pull_held;
	uint64_t rd_progress_ns;
	struct rpcrdma_svc_req *rdq_head, *rdq_tail;
	/* the client's address (CONNECT_REQUEST), rpcrdma_svc_req_caller() */
	struct sockaddr_storage peer;
	/* this connection's counters (SVC_COUNT; calls is atomic: workers
	 * count it without the lock), and its number (1, 2, ...) */
	struct rpcrdma_svc_conn_stats cst;
	struct svc_conn *next;
	struct svc_conn *held_next; /* s->held_conns while tx_held */
	uint32_t cqe;               /* its share of the shared CQ */
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
	bool pdata; /* accept with RFC 8797 private data (RPCRDMA_SVC_OPT_PRIVATE_DATA) */
	/* RPCRDMA_SVC_OPT_RDMA_VERSION: Version Two capable (svc_vers.c);
	 * answer transport properties with ours */
	bool v2, v2_props;
	/* RPCRDMA_SVC_OPT_RELIABLE_REPLY (exposed.c): on, reclaim timeout,
	 * bounds per connection and overall, bytes exposed now */
	bool rr;
	/* RPCRDMA_SVC_OPT_CCP: serve the Connection Configuration Protocol
	 * (ccp_svc.c; default on) */
	bool ccp;
	uint32_t rr_timeout_ms;
	uint64_t rr_max_conn, rr_max, rr_bytes;
	/* buffers of released exposed replies kept for the next ones (their
	 * pages stay mapped and touched), and when one was last kept or
	 * taken (monotonic ns: unmapped after a second unused); exposed.c */
	struct {
		uint8_t *buf;
		size_t cap;
	} rr_cache[SVC_RR_CACHE];
	uint32_t rr_ncache;
	uint64_t rr_cache_ns;
	uint64_t rr_refused_ns; /* last refusal logged (svc_rr_refused) */
	/* RPCRDMA_SVC_OPT_RPCBIND, and whether our entries are in rpcbind
	 * now (api/rpcbind.c) */
	bool rpcbind, rpcb_set;
	/* provider */
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_evch *evch;
	struct rpcrdma_listener *lst;
	uint16_t port;
	struct svc_prog progs[SVC_MAX_PROGS];
	uint32_t nprogs;
	struct svc_drc *drc; /* RPCRDMA_SVC_OPT_DRC, else NULL (drc.h) */
	/* Runs a program registered with rpcrdma_svc_register_tirpc() (the
	 * SVCXPRT adapter, set by the API layer). */
	void (*tirpc_run)(struct rpcrdma_svc_req *r, rpcrdma_svc_tirpc_dispatch_t fn);
	struct svc_conn *conns;
	uint32_t nconns;
	/* The CQ of every connection (NULL: one each), its capacity and the
	 * sum of the connections' shares (svc_conn.c) */
	struct rpcrdma_cq *scq;
	uint32_t scq_cap, scq_need;
	/* The shared receive queue and its buffers (svc_srq.c; NULL: a pool
	 * per connection): srq_depth the option, srq_posted buffers posted
	 * or held by calls (never fewer than srq_resv, the sum of the
	 * connections' grants), srqp.count its capacity; srq_tried: created
	 * (or found impossible) at the first connection. */
	struct rpcrdma_srq *srq;
	struct xprt_pool srqp;
	uint32_t srq_depth, srq_posted, srq_resv;
	bool srq_tried;
	/* connections with replies held (tx_held), flushed per batch */
	struct svc_conn *held_conns;
	/* connections freed since the allocator was last trimmed, and when
	 * the last of them was (monotonic ns) */
	uint32_t freed_since_trim;
	uint64_t freed_ns;
	struct rpcrdma_svc_req *qhead, *qtail;
	/* Pulled Read chunk memory: in use now, most at once (option), and
	 * the calls waiting for some to be freed (FIFO). */
	uint64_t pull_inuse, max_pull;
	struct rpcrdma_svc_req *pullq_head, *pullq_tail;
	/* the staging of the one call larger than max_pull held now (0: none;
	 * included in pull_inuse); Reads unanswered this long end their
	 * connection (0: never), looked at from pull_check_ns on */
	uint64_t pull_over;
	uint64_t pull_timeout_ns, pull_check_ns;
	/* Staging buffers kept for reuse (no page faults per call); with
	 * pull_inuse their bytes stay within max_pull. */
	struct {
		void *p;
		size_t cap;
	} stash[SVC_STASH];
	uint32_t nstash;
	uint64_t stash_bytes;
	/* staging buffers taken so far, the count the last tick saw and when
	 * it changed (monotonic ns): the stash goes after a second unused */
	uint64_t stage_gets, stash_gets_seen, stash_used_ns;
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
	uint64_t ncalls;   /* st.calls, counted without the lock (atomic) */
	uint32_t conn_ids; /* connections accepted so far (their cst.id) */
	/* The progress thread's event loop (svc_loop.c), and the calls its
	 * current iteration made ready (progress thread only). */
	struct evloop loop;
	struct rpcrdma_svc_req *runnow;
	pthread_t pthr;
	pthread_t *wthr;
	uint32_t nwthr;
	bool started, stopping, stop, stopped;
	struct rpcrdma_xprt_stats st;
	struct svc_testhook hook;
	struct bc_svc *bc; /* rpcrdma_svc_bc_init() (bc_svc.c), or NULL */
};

/* ---- small helpers of every step (static inline: the hot path) ---- */

/* Lock held: count @n in the server's totals and in connection @c's own
 * counters (rpcrdma_svc_conn_foreach). */
#define SVC_COUNT(c, field, n)                                                                     \
	do {                                                                                       \
		(c)->svc->st.field += (n);                                                         \
		(c)->cst.field += (n);                                                             \
	} while (0)

static inline uint64_t svc_wrid(uint32_t kind, uint32_t idx)
{
	return ((uint64_t)kind << 24) | idx;
}

static inline bool svc_on_progress_thread(const struct rpcrdma_svc *s)
{
	return s->started && pthread_equal(pthread_self(), s->pthr);
}

/* Lock held: wake the threads waiting on done_cv (no system call when
 * none waits: util/futex_cond.h). */
static inline void svc_done_wake(struct rpcrdma_svc *s)
{
	futex_cond_broadcast(&s->done_cv);
}

/* Lock held: wait on done_cv (until @ts when not NULL); ETIMEDOUT or 0. */
static inline int svc_done_wait(struct rpcrdma_svc *s, const struct timespec *ts)
{
	if (ts)
		return futex_cond_timedwait(&s->done_cv, &s->lock, ts);
	futex_cond_wait(&s->done_cv, &s->lock);
	return 0;
}

/* Lock held: a free send buffer of @c, or -EAGAIN. */
static inline int svc_send_buf_get(struct svc_conn *c, uint32_t *idx)
{
	if (!c->nsfree)
		return -EAGAIN;
	*idx = c->sfree[--c->nsfree];
	return 0;
}

static inline void svc_send_buf_put(struct svc_conn *c, uint32_t idx)
{
	c->sfree[c->nsfree++] = idx;
}

/* ---- svc_srq.c: the shared receive pool (lock held) ---- */

/* At the first connection: create the server's shared receive queue when
 * srq_depth, the provider and the options allow (none: pools per
 * connection, s->srq NULL). */
void svc_srq_init(struct rpcrdma_svc *s);
void svc_srq_fini(struct rpcrdma_svc *s);
/* Reserve @c's first credit, posting a buffer if the pool is short of
 * one; set c->rpool and its free request slots. */
int svc_srq_conn_add(struct rpcrdma_svc *s, struct svc_conn *c);
void svc_srq_conn_del(struct rpcrdma_svc *s, struct svc_conn *c);
/* Give receive buffer @idx back to the shared queue. */
void svc_srq_repost(struct rpcrdma_svc *s, uint32_t idx);
/* After a burst of connections closed: the pages of the receives the
 * remaining connections cannot take at once go back (rpcrdma_srq_trim). */
void svc_srq_trim(struct rpcrdma_svc *s);
/* svc_conn_reap's end (svc_conn.c), @freed_before its count of freed
 * connections on entry: the allocator and the queue trimmed after a burst
 * of closes, or a quiet second after the last one. */
void svc_mem_trim(struct rpcrdma_svc *s, uint32_t freed_before);
/* The credits to announce in @c's next message (raised when the pool
 * has room, RFC 8166 §3.3.1: backed before announced). */
uint32_t svc_srq_grant(struct svc_conn *c);
static inline uint32_t svc_grant(struct svc_conn *c)
{
	if (!c->svc->srq)
		return c->svc->credits;
	return c->grant >= c->svc->credits ? c->grant : svc_srq_grant(c);
}

static inline uint32_t svc_nsend(const struct svc_conn *c)
{
	return c->svc->credits + SVC_SEND_EXTRA;
}

/* Request @idx of @c, or NULL when no message ever landed in its
 * receive buffer (then no work of it can be outstanding either). */
static inline struct rpcrdma_svc_req *svc_req_of(const struct svc_conn *c, uint32_t idx)
{
	return idx < c->nrecv ? c->reqs[idx] : NULL;
}

/* The connection a completion belongs to (its endpoint's context). */
static inline struct svc_conn *svc_wc_conn(const struct rpcrdma_wc *wc)
{
	return rpcrdma_ep_context(wc->ep);
}

/* Lock held: @c has a reply held (RPCRDMA_SEND_DEFER) for the flush at the
 * end of the progress thread's batch (svc_flush_held). */
static inline void svc_conn_hold_tx(struct svc_conn *c)
{
	if (!c->tx_held) {
		c->tx_held = true;
		c->held_next = c->svc->held_conns;
		c->svc->held_conns = c;
	}
}

static inline void svc_conn_fail(struct svc_conn *c)
{
	if (!c->dead)
		rpcrdma_disconnect(c->ep);
}

/* Lock held: @r is complete; it runs on the progress thread once the lock
 * is dropped (@runnow, newest first; workers == 0) or on a worker. */
static inline void svc_queue_ready(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r,
				   struct rpcrdma_svc_req **runnow)
{
	r->next = NULL;
	if (s->workers == 0) {
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

/* ---- svc_conn.c (lock held unless said) ---- */

/* Open the device, bind and listen (rpcrdma_svc_create). */
int svc_listen(struct rpcrdma_svc *s, const char *host, uint16_t port, const char *provider);
/* Free every connection and the device objects (rpcrdma_svc_destroy). */
void svc_teardown(struct rpcrdma_svc *s);
/* Post the Send of send buffer @sidx (@inv_stag: Send With Invalidate);
 * with @ridx >= 0, receive buffer @ridx is re-posted first, in the same
 * provider step. On failure the send buffer is back in the pool. */
int svc_post_send(struct svc_conn *c, uint32_t sidx, size_t len, uint32_t inv_stag, int64_t ridx);
/* RFC 8166 §4.5: answer a call we will not run with RDMA_ERROR @err
 * (RPCRDMA1_ERR_*). A Version Two capable server answers a call whose
 * rdma_vers (@vers) is not 1 in Version Two (svc_vers.c): ERR_CHUNK as
 * ERR_BAD_HEADER (the same number), ERR_VERS as 1..2. */
void svc_send_error(struct svc_conn *c, uint32_t xid, uint32_t err, uint32_t vers);
/* The request is over: give back its receive buffer (@repost) and credit. */
void svc_req_end(struct rpcrdma_svc_req *r, bool repost);
/* svc_vers.c: a message in receive @r whose rdma_vers is not 1, on a
 * Version Two capable server. 1: answered or dropped, @r is over; 0: a
 * Version Two call, r->h its Version One view (vers 2), to run as any
 * call; -EPROTONOSUPPORT: another version (ERR_VERS). */
int svc_v2_recv(struct svc_conn *c, struct rpcrdma_svc_req *r, const uint8_t *buf, uint32_t len);
/* svc_vers.c: true for a Version Two RDMA2_NOMSG call whose pulled payload
 * is not an RPC CALL (draft §4.2.2; answered ERR_BAD_HEADER). */
bool svc_v2_nomsg_bad_dir(const struct rpcrdma_svc_req *r);
/* Refuse: answer with RDMA_ERROR @err (0: drop), give the receive back. */
void svc_refuse(struct svc_conn *c, struct rpcrdma_svc_req *r, uint32_t err);
/* Handle one completion of @c; complete calls go to @runnow. */
void svc_conn_wc(struct svc_conn *c, const struct rpcrdma_wc *wc, struct rpcrdma_svc_req **runnow);
/* Reap @c's CQ (the shared one: every connection's); returns how many. */
int svc_conn_poll(struct svc_conn *c, struct rpcrdma_svc_req **runnow);
/* Connection events: accept, established, disconnected. */
void svc_conn_events(struct rpcrdma_svc *s, struct rpcrdma_svc_req **runnow);
/* Free the connections that are down and idle. */
void svc_conn_reap(struct rpcrdma_svc *s);
/* No lock held: bytes every connection moved so far (both directions). */
uint64_t svc_conn_bytes(struct rpcrdma_svc *s);

/* ---- pull.c (lock held) ---- */

/* Start the pull of @r's Read chunks now, or queue it for budget. */
void svc_pull_or_queue(struct svc_conn *c, struct rpcrdma_svc_req *r);
/* @r's staging memory goes back (its request ends). */
void svc_pull_release(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r);
/* Memory was freed: start queued pulls that fit now. */
void svc_pull_kick(struct rpcrdma_svc *s);
/* A connection died: end its calls waiting for pull memory, and those
 * whose Reads were not all posted. */
void svc_pull_drop_conn(struct rpcrdma_svc *s, struct svc_conn *c);
/* Post queued Reads within the connection's Read depth. */
void svc_reads_post(struct svc_conn *c);
/* Loop tick: end connections whose Reads went unanswered for
 * pull_timeout_ms. */
void svc_pull_tick(struct rpcrdma_svc *s);
/* An RDMA Read of request @idx completed (@ok: successfully). */
void svc_pull_read_done(struct svc_conn *c, uint32_t idx, bool ok, struct rpcrdma_svc_req **runnow);
/* Unmap the kept staging buffers (no lock: the server is going). */
void svc_pull_fini(struct rpcrdma_svc *s);

/* ---- splice.c ---- */

/* Check @r's Read list (RFC 8166 §3.4.5 positions: rc[], p0len), adding
 * its chunks and bytes to *@nchunks, *@total. 0, or -1: ERR_CHUNK. */
int svc_splice_plan(struct rpcrdma_svc_req *r, uint32_t *nchunks, uint64_t *total);
/* msg_len set: the stream's length (stage_len) and the bytes to pull. */
void svc_splice_size(struct rpcrdma_svc_req *r);
/* Copy the inline pieces into the staging buffer, between the places of
 * the chunks (rc[].data set). */
void svc_splice_inline(struct svc_conn *c, struct rpcrdma_svc_req *r);
/* Every Read of @r completed: copy the Position-Zero pieces into place. */
void svc_splice_finish(struct rpcrdma_svc_req *r);

/* Where the Position-Zero chunk is pulled: behind the stream when there
 * are other chunks, else at the start. */
static inline size_t svc_p0_target(const struct rpcrdma_svc_req *r)
{
	return r->nrc ? r->stage_len : 0;
}

/* The call's XDR stream: the inline message, or the staging buffer the
 * Read chunks were pulled into (already laid out flat, with roundup). */
static inline const uint8_t *svc_call_cursor(struct rpcrdma_svc_req *r, size_t *len)
{
	uint8_t *base = r->stage;

	*len = r->stage_len;
	if (!base) {
		base = xprt_pool_buf(r->conn->rpool, r->rbuf) + r->h.hdr_len;
		*len = r->msg_len;
	}
	rpcrdma_xdr_init(&r->cur, base, *len, RPCRDMA_XDR_DECODE);
	return base;
}

/* ---- svc_drc.c: the duplicate request cache around a call (drc.h) ---- */

/* No lock held, before dispatch (@msg/@len: the RPC call): true when
 * the call was answered from the cache or parked there. */
bool svc_drc_admit(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r, const uint8_t *msg,
		   size_t len);
/* No lock held: @r (r->drc set) is answered with @rep + @xres/@res. */
void svc_drc_req_done(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep,
		      xdrproc_t xres, void *res);
/* Lock held: @r (r->drc set) ends without a reply. */
void svc_drc_req_abandon(struct rpcrdma_svc_req *r);

/* ---- reply.c (no lock held) ---- */

/* rpcrdma_svc_reply(): SUCCESS with the results @xres/@res. */
int svc_reply_results(struct rpcrdma_svc_req *r, xdrproc_t xres, void *res);
/* Reply @rep (+ @xres/@res): inline, Write chunks, or Long Reply. */
int svc_reply_msg(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		  void *res);
/* Progress thread: send the held replies (one flush per connection). */
void svc_flush_held(struct rpcrdma_svc *s);

/* ---- exposed.c: reliable replies, the responder's side (lock held) ---- */

/* Are replies exposed in Read chunks on @c for a call of version @vers? */
static inline bool svc_rr_on(const struct svc_conn *c, uint32_t vers)
{
	return c->svc->rr && (vers == RPCRDMA1_VERSION || c->rr_peer) && !c->ccp_no_reads;
}
/* Receives posted per connection beyond the credits: one for each reply
 * that may be exposed at once, for its pull completion. */
static inline uint32_t svc_rr_extra_recvs(const struct rpcrdma_svc *s)
{
	return s->rr ? s->credits : 0;
}
/* No lock: encode @rp (too large for inline and Reply chunk) into a new
 * buffer *@buf (*@cap bytes, *@mlen used). 0, or -EMSGSIZE over the
 * bounds, -ENOMEM. */
int svc_rr_encode(struct svc_conn *c, const struct xprt_reply *rp, uint8_t **buf, size_t *cap,
		  size_t *mlen);
/* Expose @mlen bytes of @buf (taken over, freed on failure) for @r's
 * reply: register it remotely readable, enter it in the table and make
 * r->h.chunks's Read list its Position-Zero chunk. 0, -ENOSPC (a
 * bytes bound), -ENOBUFS (every entry of the connection's table in use),
 * provider errors. */
int svc_rr_expose(struct svc_conn *c, struct rpcrdma_svc_req *r, uint8_t *buf, size_t cap,
		  size_t mlen);
/* @r's reply of @len bytes could not be exposed (@rc from svc_rr_expose
 * when @encoded, else from svc_rr_encode): count it and say why in the
 * debug log (at most once a second). Lock held. */
void svc_rr_refused(struct svc_conn *c, const struct rpcrdma_svc_req *r, size_t len, int rc,
		    bool encoded);
/* A pull completion for @xid arrived on @c (inv: the STag its Send
 * invalidated, or 0): release that reply; unknown XIDs are dropped. */
void svc_rr_done(struct svc_conn *c, uint32_t xid, uint32_t inv);
/* Reclaim exposed replies past their timeout (the loop's tick). */
void svc_rr_tick(struct rpcrdma_svc *s);
/* Free every exposed reply of @c (its teardown). */
void svc_rr_conn_free(struct svc_conn *c);
/* Free the buffers kept for exposed replies (the server's teardown). */
void svc_rr_fini(struct rpcrdma_svc *s);

/* ---- svc_loop.c ---- */

/* Start the progress thread and the workers. */
int svc_loop_start(struct rpcrdma_svc *s);
/* Let dispatched calls be answered (until @timeout_ms), disconnect, stop
 * the threads. 0 or -ETIMEDOUT. */
int svc_loop_stop(struct rpcrdma_svc *s, int timeout_ms);

#endif
