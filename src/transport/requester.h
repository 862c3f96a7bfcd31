/* SPDX-License-Identifier: MIT */
/*
 * The forward requester: the state of an RPC-over-RDMA client
 * (include/rpcrdma/client.h) and the functions its files share. Hidden
 * symbols.
 *
 *   slots.h      what a call slot shares with the reverse requester of
 *                RFC 8167: starting, accounting and ending a call, XIDs,
 *                deadlines
 *   requester.c  slots, the XID space, the transmit queue, transmit
 *                (marshal + post), reply matching by XID, completion of
 *                calls and callbacks, deadlines
 *   reconnect.c  connection open and loss, backoff, reconnect, failing
 *                every call, retransmission after a reconnect, the reset
 *                of credits held by calls that timed out
 *   clnt_loop.c  the leader/follower progress loop and the background
 *                thread
 *   credits.c    the credit window itself (RFC 8166 §3.3.1)
 *   marshal.c    a call -> Short / Chunked / Long Call (xprt.h)
 *   recv.c       a reply's checks and decode (xprt.h)
 *   clnt_vers.c  Version Two negotiation and the fallback to Version One
 *   rr_pull.c    reliable replies: pulling a reply from a Read chunk,
 *                RDMA_DONE
 *   ccp_clnt.c   CONF_RDMA asked at connect, its answer applied (ccp.h)
 *
 * Structure. A client owns one connection (endpoint) at a time and a fixed
 * array of call slots, one per credit it requests. A slot owns two send
 * buffers of the pre-registered send pool (transport header, RPC message),
 * the MRs it re-registers over each call's chunk memory, and the call's
 * state. The receive pool holds one buffer per slot, all posted while the
 * connection is up (donated to the provider until their RECV completion).
 * Everything shared is under clnt->lock; the provider is called without
 * it. The lock-held / no-lock notes below say which.
 */
#ifndef RPCRDMA_TRANSPORT_REQUESTER_H
#define RPCRDMA_TRANSPORT_REQUESTER_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/client.h"
#include "rpcrdma/provider.h"
#include "transport/evloop.h"
#include "transport/slots.h"
#include "transport/xprt.h"
#include "util/clock.h"
#include "util/futex_cond.h"
#include "util/futex_mutex.h"

/* Tests (tests/xprt, tests/bidi): called (under the client's lock) with
 * the transport header of every call just before it is posted, and the
 * RPC message length. */
struct clnt_testhook {
	void (*on_send)(void *arg, const uint8_t *hdr, size_t hdr_len, size_t msg_len);
	void *arg;
	/* and with every message received (reverse calls included) */
	void (*on_recv)(void *arg, const uint8_t *buf, size_t len);
};

enum clnt_state { C_DOWN = 0, C_UP, C_DEAD };

enum {
	CLNT_WR_SEND = 1,
	CLNT_WR_RECV = 2,
	CLNT_WR_RR_READ = 5,
	CLNT_WR_RR_DONE = 6,
	CLNT_WR_V2_ANSWER = 7, /* an RDMA2_ERROR we answer with (clnt_vers.c) */
};

enum { CLNT_NEG_DONE = 0, CLNT_NEG_PROBE = 1 };

/* Leader: busy-poll this long after sending before blocking on the device
 * fd (a NULL round trip on loopback takes a few microseconds; blocking and
 * being woken costs about as much again). */
#define CLNT_SPIN_NS 50000u

struct clnt_slot {
	struct xprt_call call;
	uint32_t index;
	bool in_use;  /* owned by a call (or a zombie) */
	bool need_tx; /* in the transmit queue, waiting to be (re)transmitted */
	bool on_wire; /* sent on the current connection, no reply yet */
	bool done;    /* completed: status is final */
	bool zombie;  /* its caller is gone; free it when its reply or the
			 connection goes */
	bool async;
	bool waiting; /* its synchronous caller sleeps on cv */
	int status;
	uint64_t deadline; /* ns, 0 = none */
	rpcrdma_clnt_cb_t cb;
	void *cb_arg;
	struct clnt_slot *qnext; /* transmit queue */
	struct clnt_rr_pull *rr; /* reliable replies: its pull (rr_pull.c), or NULL */
	uint32_t rr_epoch;       /* c->rr_epoch when it was last transmitted */
	struct rpcrdma_call_result result;
	struct futex_cond cv;
};

struct bc_clnt;
struct rpcrdma_bc_opts;

struct rpcrdma_clnt {
	struct futex_mutex lock;
	struct futex_cond slot_cv; /* a slot was freed */
	struct futex_cond bg_cv;   /* work for the background thread */
	struct sockaddr_storage addr;
	socklen_t alen;
	uint32_t prog, vers;
	/* resolved options */
	uint32_t nslots, inline_send, inline_recv, timeout_ms, connect_timeout_ms, retries;
	uint32_t ddp_threshold;
	int cpu;
	enum rpcrdma_progress_mode progress;
	bool remote_inv, mpa_crc;
	bool pdata; /* send RFC 8797 private data (RPCRDMA_CLNT_OPT_PRIVATE_DATA) */
	/* RPCRDMA_CLNT_OPT_CCP and its outcome (ccp_clnt.c) */
	bool ccp;
	struct rpcrdma_ccp_info ccp_info;
	/* RPCRDMA_CLNT_OPT_RDMA_VERSION (clnt_vers.c) */
	enum rpcrdma_version_policy vpolicy;
	bool v2_props;
	/* Version Two negotiation on the current connection (draft §5,
	 * clnt_vers.c): CLNT_NEG_PROBE while the first Version Two call
	 * awaits a reply that is not an error; the inline send threshold
	 * is held at 1024 meanwhile, neg_send is the negotiated one. */
	uint8_t neg;
	uint32_t neg_send;
	/* the version replies come in: 1, 2, or 0 while negotiating */
	uint32_t rx_vers;
	uint32_t props_xid; /* our transport properties on the wire, 0: none */
	/* `auto` only: a Version Two probe went unanswered until its
	 * deadline (draft §5.2: the responder is taken not to support
	 * Version Two): every later connection speaks Version One. */
	bool v2_off;
	/* Version Two policies: send buffers of the RDMA2_ERRORs the
	 * requester answers optional messages with (draft §3.1,
	 * clnt_vers.c); bit i of v2ans_busy: buffer i's Send is out. */
	struct xprt_pool v2ans;
	uint32_t v2ans_busy;
	/* credential + verifier of every call (rpc_auth.c); none: AUTH_NONE */
	uint8_t auth[RPCRDMA_RPC_CRED_VERF_MAX];
	uint32_t auth_len;
	uint32_t tirpc_reply; /* Reply chunk of the CLIENT adapter's calls */
	/* provider objects */
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *evch;
	struct rpcrdma_ep *ep;
	struct xprt_pool sendp, recvp;
	struct xprt_limits lim;
	enum clnt_state state;
	uint32_t gen;      /* connection generation, in every wr_id */
	uint32_t attempts; /* failed reconnect attempts since the last connection (leader) */
	int last_conn_err; /* the latest failed attempt's error, 0 once connected */
	uint64_t jitter;   /* backoff jitter state (reconnect.c, leader) */
	struct xprt_credits cr;
	struct clnt_slot *slots;
	struct clnt_slot *txq_head, *txq_tail; /* FIFO of need_tx slots */
	uint32_t nfree;
	uint32_t nslot_wait; /* callers waiting for a free slot (call_start) */
	uint32_t xid_seq;
	/* leader/follower */
	bool leader;        /* a thread drives the device */
	uint32_t nwaiting;  /* synchronous callers asleep on their slot's cv */
	uint32_t nasync;    /* asynchronous calls not yet completed */
	struct evloop loop; /* the loop the leader runs (clnt_loop.c) */
	pthread_t thr;
	bool thr_started, stop;
	/* The leader runs completion callbacks with the lock dropped (the
	 * thread-local tl_cb_clnt says which client's, call_start). Leader
	 * only: */
	uint64_t now_ns;    /* the leader's clock at its last pass */
	uint32_t cb_queued; /* calls its callbacks queued, not yet sent */
	uint32_t cb_issued; /* calls its callbacks issued in this pass */
	bool cb_last;       /* the callback running is the pass's last */
	struct rpcrdma_xprt_stats st;
	struct rpcrdma1_hdr rh; /* reply header scratch (under lock) */
	/* Receives that replies used, given back together with the next call
	 * (transmit, rpcrdma_post_send_recv(): one provider lock round for
	 * both). Every reply uses one receive and ends one call on the wire,
	 * so the receives still posted always cover the calls on the wire;
	 * each new call re-posts what is pending before it leaves. Under the
	 * lock, current connection only (conn_lost empties it); not used with
	 * a backchannel, whose reverse calls may arrive at any time. */
	struct rpcrdma_recv_wr *rpend;
	struct rpcrdma_sge *rpend_sge;
	uint32_t nrpend;
	struct clnt_testhook hook;
	/* RFC 8167 (bc_clnt.c, rpcrdma_clnt_create_bc), or NULL. Receives
	 * posted: nrecv = nslots + 1 spare + its reverse credits (§4.3.1). */
	struct bc_clnt *bc;
	uint32_t nrecv;
	uint32_t bc_wrs; /* send work requests it may have posted at once */
	/* RPCRDMA_CLNT_OPT_RELIABLE_REPLY: asked for (advertised in Version
	 * Two). The state (rr_pull.c) exists whatever the option: a reply in
	 * a Read chunk is pulled and notified all the same (the draft). */
	bool rr_opt;
	struct clnt_rr *rr;
	/* Credits held by pull-completion notifications (counted in
	 * cr.on_wire, rr_pull.c), and their sequence: calls transmitted
	 * after a notification carry an rr_epoch at or past its own. */
	uint32_t rr_held, rr_epoch;
};

/* Completed async calls whose callbacks run after the lock is dropped. */
#define CB_MAX 64
struct cb_list {
	uint32_t n;
	struct {
		rpcrdma_clnt_cb_t cb;
		void *arg, *res;
		int status;
	} e[CB_MAX];
};

/* The client whose completion callbacks this thread is running as its
 * leader (clnt_loop.c), else NULL (hidden: as cheap as a static). */
extern _Thread_local struct rpcrdma_clnt *tl_cb_clnt __attribute__((visibility("hidden")));

static inline uint64_t clnt_wrid(uint32_t gen, uint32_t kind, uint32_t idx)
{
	return ((uint64_t)gen << 32) | ((uint64_t)kind << 24) | idx;
}

/* Lock held: give slot @s back. */
static inline void clnt_slot_free(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	s->in_use = false;
	s->zombie = false;
	s->need_tx = false;
	s->done = false;
	c->nfree++;
	if (c->nfree == 1 || c->stop)
		futex_cond_broadcast(&c->slot_cv);
}

/* Lock held: the call's owner is finished with @s. A slot still on the
 * wire keeps its credit and receive expectations until its reply or the
 * connection goes. */
static inline void clnt_slot_release(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	if (s->on_wire) {
		s->zombie = true;
		return;
	}
	clnt_slot_free(c, s);
}

/* ---- requester.c ---- */

/* Allocate the device objects, pools and slots of @c (options resolved,
 * address set; @bc: its backchannel options or NULL), connect and start
 * the background thread. On failure everything is freed with @c. */
int clnt_setup(struct rpcrdma_clnt *c, const char *provider, const struct rpcrdma_bc_opts *bc);
/* Free @c and everything it holds (no thread running). */
void clnt_free(struct rpcrdma_clnt *c);
/* No lock held: rpcrdma_clnt_call() and rpcrdma_clnt_call_async(), @c
 * checked here (another program: clnt_call_prog, backchannel_hooks.h). */
int clnt_call_own(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
		  xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts);
int clnt_call_async(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
		    xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts,
		    rpcrdma_clnt_cb_t cb, void *cb_arg);
/* Lock held: complete @s with @status; an async call's callback goes on
 * @cbl (NULL: a synchronous call). */
void clnt_slot_complete(struct rpcrdma_clnt *c, struct clnt_slot *s, int status,
			struct cb_list *cbl);
/* No lock held: run and empty @cbl. */
void clnt_run_callbacks(struct rpcrdma_clnt *c, struct cb_list *cbl);
/* Lock held: send waiting calls while the credit window allows. */
void clnt_kick_tx(struct rpcrdma_clnt *c, struct cb_list *cbl);
/* Lock held: a completion of the current connection's work. */
void clnt_handle_wc(struct rpcrdma_clnt *c, const struct rpcrdma_wc *wc, struct cb_list *cbl);
/* Lock held: fail the calls past their deadlines with -ETIMEDOUT. */
void clnt_check_timeouts(struct rpcrdma_clnt *c, struct cb_list *cbl);
/* No lock held: has a call that is not completed reached its deadline? */
bool clnt_deadline_passed(struct rpcrdma_clnt *c, uint64_t now);

/* Lock held: put @s (not on the wire, not queued) first in the transmit
 * queue. */
static inline void clnt_txq_push_front(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	s->need_tx = true;
	s->qnext = c->txq_head;
	c->txq_head = s;
	if (!c->txq_tail)
		c->txq_tail = s;
}

/* ---- clnt_vers.c: Version Two negotiation (draft §5) ---- */

/* Lock held: a connection is up (c->lim from its private data): start
 * in the version the policy says. */
void clnt_v2_conn_up(struct rpcrdma_clnt *c);
/* Lock held: the reply @h (decode result *@rc) to call @s is not in the
 * version replies are expected in (c->rx_vers). While negotiating it may
 * end negotiation; true when it was an ERR_VERS that made the connection
 * fall back to Version One: @s is queued to go again, in Version One, and
 * is not completed. Otherwise the reply's credit is applied when it is in
 * the negotiated version, and any other version fails the call (*@rc
 * -EPROTO) unless it is an ERR_VERS. */
bool clnt_v2_reply_vers(struct rpcrdma_clnt *c, struct clnt_slot *s, const struct rpcrdma1_hdr *h,
			int *rc);
/* Lock held: decode the Version Two message @buf into @h. 0: a reply (an
 * RDMA2_MSG or RDMA2_NOMSG in the REPLY direction, or an RDMA2_ERROR) for
 * the caller to match; 1: it ended a call on the wire (our transport
 * properties answered), its receive goes back with the next call; 2: the
 * caller re-posts its receive at once: a header in error (discarded,
 * RFC 8166 §4.5: no call and no grant touched), or an RDMA2_OPTIONAL no
 * call of ours waits for (answered ERR_INVAL_OPTION, draft §3.1). */
int clnt_v2_decode(struct rpcrdma_clnt *c, const uint8_t *buf, uint32_t len,
		   struct rpcrdma1_hdr *h);
/* Set up the send buffers of the RDMA2_ERROR answers (a Version Two
 * policy; clnt_setup, after the PD); send work requests they may add at
 * once (*@wrs). clnt_v2_fini frees them. */
int clnt_v2_init(struct rpcrdma_clnt *c, uint32_t *wrs);
void clnt_v2_fini(struct rpcrdma_clnt *c);
/* Lock held: the Send of answer buffer @idx (CLNT_WR_V2_ANSWER) completed. */
void clnt_v2_answer_wc(struct rpcrdma_clnt *c, uint32_t idx);
/* Lock held: the Version Two probe reached its call's deadline with no
 * answer (draft §5.2). With AUTO: Version One on every later connection,
 * and this one closed. */
void clnt_v2_probe_lost(struct rpcrdma_clnt *c, struct cb_list *cbl);

/* ---- rr_pull.c: reliable replies, the requester's side ---- */

/* Set up @c->rr (clnt_setup, after the PD); send work requests it may add
 * at once (*@wrs). */
int clnt_rr_init(struct rpcrdma_clnt *c, uint32_t *wrs);
void clnt_rr_fini(struct rpcrdma_clnt *c);
/* Is @h (decoded, no error) a reply in a responder-provided Read chunk? */
static inline bool clnt_rr_reply(const struct rpcrdma_clnt *c, const struct rpcrdma1_hdr *h)
{
	return c->rr && h->proc == RPCRDMA1_NOMSG && h->chunks.nreads;
}
/* Lock held: @s's reply @h (received as @buf, @len) is in a Read chunk:
 * start pulling it (@s stays on the wire, holding its credit, until the
 * pull ends and its notification takes the credit over). With a
 * backchannel, @h's credit is applied only once the pulled message is
 * known to be a REPLY (RFC 8167 §4.1). False when @s was pulling already
 * (a second message of its XID: kept for the pull's end with a
 * backchannel, else dropped as a duplicate): nothing ended. */
bool clnt_rr_start(struct rpcrdma_clnt *c, struct clnt_slot *s, const struct rpcrdma1_hdr *h,
		   const uint8_t *buf, size_t len, struct cb_list *cbl);
/* Lock held: notify pull completion of @h's reply without pulling it (no
 * call waits for it any more). @hold: on the credit of the call it ended
 * (not given back by the caller); true when the notification holds it,
 * false when it was given back. */
bool clnt_rr_notify_hdr(struct rpcrdma_clnt *c, const struct rpcrdma1_hdr *h, bool hold);
/* Lock held, c->rr_held not 0: a reply ended @s, a call on the wire: the
 * notifications sent before @s was transmitted give their credits back. */
void clnt_rr_reply_seen(struct rpcrdma_clnt *c, const struct clnt_slot *s);
/* Lock held: a completion of kind CLNT_WR_RR_READ or CLNT_WR_RR_DONE. */
void clnt_rr_wc(struct rpcrdma_clnt *c, const struct rpcrdma_wc *wc, struct cb_list *cbl);

/* ---- reconnect.c ---- */

/* No lock held: open a connection of generation @gen. */
int clnt_conn_open(struct rpcrdma_clnt *c, uint32_t gen);
/* Lock held: the connection is gone; calls on the wire wait for the next. */
void clnt_conn_lost(struct rpcrdma_clnt *c, struct cb_list *cbl);
/* Lock held (dropped to run a full @cbl): complete every call with @status. */
void clnt_fail_all(struct rpcrdma_clnt *c, int status, struct cb_list *cbl);
/* Leader, lock held, connection down: connect again or fail the calls. */
void clnt_reconnect(struct rpcrdma_clnt *c, struct cb_list *cbl);
/* Lock held: do calls that timed out on the wire, or our transport
 * properties unanswered by their deadline, hold every credit while another
 * call waits? (The latter: no properties on later connections.) */
bool clnt_credits_held_by_dead(struct rpcrdma_clnt *c);

/* ---- clnt_loop.c ---- */

/* Set up c->loop over c->dev and c->cq (clnt_setup). */
void clnt_loop_init(struct rpcrdma_clnt *c);

/* Lock held on entry and exit, c->leader ours: drive the device until
 * @mine is done, or for the background thread (@mine NULL) while only it
 * has work. */
void clnt_lead(struct rpcrdma_clnt *c, struct clnt_slot *mine);
/* Lock held: the leader is leaving; pass the device on. */
void clnt_handoff(struct rpcrdma_clnt *c);
/* The background thread (pthread_create). */
void *clnt_bg_main(void *arg);
/* No lock held: stop the background thread, fail every call with
 * -ECANCELED and wait for the callers still inside. */
void clnt_shutdown(struct rpcrdma_clnt *c);

/* Synchronous caller, lock held: wait for @s, leading when no one does
 * (clnt_loop.c). Inline: the synchronous call path. */
static inline void clnt_wait_done(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	while (!s->done) {
		if (!c->leader && c->state != C_DEAD) {
			c->leader = true;
			clnt_lead(c, s);
			c->leader = false;
		} else if (!s->done) {
			s->waiting = true;
			c->nwaiting++;
			if (s->deadline) {
				struct timespec ts;

				realtime_at(s->deadline, &ts);
				(void)futex_cond_timedwait(&s->cv, &c->lock, &ts);
			} else {
				futex_cond_wait(&s->cv, &c->lock);
			}
			c->nwaiting--;
			s->waiting = false;
			/* The leader checks deadlines; should it be held up
			 * (connecting, in a callback), the call still ends. */
			if (!s->done && xprt_deadline_passed(s->deadline, monotonic_ns()))
				clnt_slot_complete(c, s, -ETIMEDOUT, NULL);
		}
		if (c->state == C_DEAD && !s->done)
			clnt_slot_complete(c, s, -ECONNRESET, NULL);
	}
	clnt_handoff(c);
}

#endif
