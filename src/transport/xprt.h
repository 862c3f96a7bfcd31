/* SPDX-License-Identifier: MIT */
/*
 * The transport's internals shared by its roles: the client's requester
 * (requester.h), the server's responder (responder.h) and both halves of
 * the backchannel (backchannel.h), in Version One and Version Two. Every
 * file of src/transport, by role (the rooms a newcomer reads; one file
 * per concern, as in Linux xprtrdma). Nothing here is exported.
 *
 * Wire codecs (no state, hostile input):
 *   rpcrdma1_hdr.c   Version One header (RFC 8166 §4, RFC 5666 §4.3)
 *   rpcrdma2_hdr.c   Version Two header (the draft's §4.2)
 *   rpcrdma2_opt.c   our Version Two optional messages' rdma_optinfo
 *   chunks_xdr.h     chunk lists and segments, both versions
 *   connect_private.c RFC 8797 private data
 *   short.c          the common Short message with AUTH_NONE, word by word
 *   errors.c         RDMA_ERROR replies, error codes and their names
 *   ccp_xdr.c        the Connection Configuration Protocol's codec
 *                    (RFC 5666 §6; ccp.h)
 *   *_wire.h         wire constants
 * Requester (the client; requester.h):
 *   requester.c      slots, XIDs, transmit, reply matching, deadlines
 *   marshal.c        call -> Short / Chunked / Long Call + chunk lists
 *   recv.c           reply header checks, RPC reply decode
 *   reconnect.c      connection loss, backoff, reconnect, retransmission
 *   clnt_loop.c      the leader/follower progress loop
 *   clnt_vers.c      Version Two negotiation and fallback
 *   rr_pull.c        reliable replies: pull, RDMA_DONE
 *   credits.c        the credit window (RFC 8166 §3.3.1)
 *   ccp_clnt.c       CONF_RDMA asked at connect, its answer applied
 * Responder (the server; responder.h):
 *   svc_conn.c       connections, receives + credit grant, send
 *                    signalling, RDMA_ERROR, RFC 8167 direction demux
 *   svc_srq.c        the shared receive pool
 *   svc_vers.c       Version Two checks before the common path
 *   pull.c           Read-chunk pull budget, staging, Read queue (IRD)
 *   splice.c         call stream = inline bytes + pulled Read chunks
 *   reply.c          reply -> inline / Write chunks / Reply chunk
 *   exposed.c        reliable replies: exposed replies, fencing
 *   svc_drc.c, drc.c the duplicate request cache
 *   svc_loop.c       progress thread, workers, dispatch
 *   ccp_svc.c        CONF_RDMA served on every connection
 * Backchannel (RFC 8167; backchannel.h, backchannel_hooks.h):
 *   backchannel.c    direction of a message, reverse Read chunk rules
 *   bc_requester.c   the server's reverse requester (bc_requester.h)
 *   bc_responder.c   the client's reverse responder (bc_responder.h)
 *   slots.c          the reverse requester's slots and credits (slots.h)
 *   vers2.c          Version Two headers for every role
 * Shared:
 *   buffers.c        pre-registered send/receive buffer pools
 *   negotiate.c      RFC 8797 private data -> inline thresholds
 *   ddp.c            DDP-eligible items (struct rpcrdma_bulk) in XDR
 *   rdma_rw.c        RDMA Write / Read work requests over a chunk
 *   evloop.c         the event loop every transport thread runs
 *   spin.c           its busy-poll policy (evloop.h)
 *   opt_dispatch.c   Version Two optional messages: one dispatcher,
 *                    a table per role (opt_dispatch.h)
 *   respond.h        what the two responders share
 */
#ifndef RPCRDMA_TRANSPORT_XPRT_H
#define RPCRDMA_TRANSPORT_XPRT_H

#include <rpc/xdr.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/client.h"
#include "rpcrdma/provider.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"
#include "transport/connect_private.h"
#include "transport/rpcrdma1_hdr.h"
#include "transport/rpcrdma2_wire.h"

/* ---- buffers.c: a pool of equal buffers in one registration ---- */

/* @count buffers of @size bytes, registered once (RPCRDMA_ACCESS_LOCAL_WRITE)
 * so no message needs a registration of its own. The pool owns the memory;
 * who owns each buffer at a time is the caller's bookkeeping (a posted
 * receive belongs to the provider until its completion). */
struct xprt_pool {
	uint8_t *base;
	size_t size;
	uint32_t count;
	struct rpcrdma_mr *mr;
	uint32_t lkey;  /* the MR's STag (registered once, never changes) */
	size_t map_len; /* base is a mapping of this many bytes (0: heap) */
};

int xprt_pool_init(struct xprt_pool *p, struct rpcrdma_pd *pd, uint32_t count, size_t size);
void xprt_pool_fini(struct xprt_pool *p);
static inline uint8_t *xprt_pool_buf(const struct xprt_pool *p, uint32_t i)
{
	return p->base + (size_t)i * p->size;
}
/* SGE over @len bytes of buffer @i at @off. */
static inline struct rpcrdma_sge xprt_pool_sge(const struct xprt_pool *p, uint32_t i, size_t off,
					       size_t len)
{
	struct rpcrdma_sge s = {
	    .addr = (uint64_t)(uintptr_t)(xprt_pool_buf(p, i) + off),
	    .length = (uint32_t)len,
	    .lkey = p->lkey,
	};
	return s;
}
/* Post buffer @i as a receive with wr_id @wr_id. */
int xprt_pool_post_recv(const struct xprt_pool *p, struct rpcrdma_ep *ep, uint32_t i,
			uint64_t wr_id);

/* A growable heap buffer with one MR that is re-registered on each use
 * (the cheap per-I/O path of rpcrdma_mr_rereg). Only for chunks: Long
 * Calls, Long Replies and pulled Read chunk data. */
struct xprt_lbuf {
	uint8_t *buf;
	size_t cap;
};
int xprt_lbuf_reserve(struct xprt_lbuf *b, size_t len);
void xprt_lbuf_fini(struct xprt_lbuf *b);

/* An MR kept across calls and re-registered over each call's memory. */
int xprt_mr_use(struct rpcrdma_pd *pd, struct rpcrdma_mr **mr, const void *addr, size_t len,
		unsigned int access);

/* ---- negotiate.c: RFC 8797 ---- */

struct xprt_limits {
	uint32_t inline_send; /* largest message we may Send */
	uint32_t inline_recv; /* largest message the peer may Send us */
	bool remote_inv;      /* both sides accept Send With Invalidate */
	bool pdata;           /* the peer's private data was valid (not the defaults) */
	uint32_t vers;        /* RPC-over-RDMA version of what we send: 1, or 2 (vers2.c) */
	/* The server's CONF_RDMA said maxrdmaread 0 (ccp_clnt.c, RFC 5666
	 * §6.2): no call may need it to RDMA Read (marshal.c). */
	bool no_reads;
};

/* Our private data: @send/@recv are our thresholds. 8 bytes into @buf. */
int xprt_pdata_build(void *buf, size_t len, uint32_t send, uint32_t recv, bool remote_inv);
/* Whether @dev's registrations can be invalidated by the peer's Send With
 * Invalidate (RPCRDMA_DEV_CAP_REMOTE_INV): without it we leave RFC 8797's
 * Remote Invalidation flag clear, so no peer sends one. */
bool xprt_dev_remote_inv(struct rpcrdma_dev *dev);
/* Combine our thresholds with the peer's private data (absent or bad:
 * 1024/1024/no remote invalidation, RFC 8797 §4.1). Returns 0 when the peer's
 * data was valid, -EINVAL when defaults were used (the connection goes on). */
int xprt_negotiate(const void *peer, size_t len, uint32_t our_send, uint32_t our_recv,
		   bool our_remote_inv, struct xprt_limits *out);
/* Validate a configured threshold (a multiple of 1024 in 1 KiB..256 KiB). */
bool xprt_inline_valid(uint32_t bytes);

/* ---- vers2.c: Version Two headers in the engine ---- */

/* What a Version Two header has beyond its Version One view. */
struct xprt_v2_info {
	uint32_t dir;    /* MSG, NOMSG: rdma_direction */
	uint32_t optdir; /* OPTIONAL: rdma_optdir, rdma_opttype, optinfo */
	uint32_t opttype;
	uint32_t optinfo_len; /* bytes of rdma_optinfo at optinfo_off */
	size_t optinfo_off;
};

/*
 * Decode the Version Two header in @buf into @h (vers 2; MSG, NOMSG and
 * ERROR as their Version One twins, chunk lists included; OPTIONAL as
 * proc RPCRDMA2_OPTIONAL with no chunks) and @vi. Return codes are
 * rpcrdma2_decode()'s; on failure h->xid, vers, credit, proc still say
 * what the fixed words held.
 */
int xprt_v2_decode(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h, struct xprt_v2_info *vi);
/* Draft §4.2.2: 0 when an RDMA2_MSG's payload msg_type is its
 * rdma_direction (and for other procs), else -EPROTO (ERR_BAD_HEADER). */
int xprt_v2_check_msg_dir(const struct rpcrdma1_hdr *h, const struct xprt_v2_info *vi,
			  const uint8_t *buf, size_t len);
/* RDMA_MSG / RDMA_NOMSG (@nomsg) in version @vers; @dir is Version Two's
 * rdma_direction (RPCRDMA2_CALL or RPCRDMA2_REPLY), ignored in Version One. */
int xprt_hdr_encode(struct rpcrdma_xdr *x, uint32_t vers, bool nomsg, uint32_t xid, uint32_t credit,
		    uint32_t dir, const struct rpcrdma1_chunks *ch);
/* Bytes of the header before its chunk lists. */
static inline uint32_t xprt_hdr_fixed(uint32_t vers)
{
	return vers == RPCRDMA2_VERSION ? RPCRDMA2_FIXED_SIZE + 4u : RPCRDMA1_FIXED_SIZE;
}
/* RDMA2_MSG without chunks at @p; returns its length (32). */
uint32_t xprt_v2_short_msg(uint8_t *p, uint32_t xid, uint32_t credit, uint32_t dir);
/* RDMA2_ERROR @err (ERR_VERS says 1..2) answering @xid; length or -errno. */
int xprt_v2_encode_error(void *buf, size_t len, uint32_t xid, uint32_t credit, uint32_t err);
/* A Version One header, or with @v2 a Version Two one too (OPTIONAL:
 * -EOPNOTSUPP); rpcrdma1_decode_buf()'s return codes. */
int xprt_decode_hdr(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h, bool v2);
/* Once Version Two is in use on a connection whose peer sent no RFC 8797
 * private data: the thresholds become 4096 each way, bounded by ours. */
void xprt_v2_raise_inline(struct xprt_limits *lim, uint32_t our_send, uint32_t our_recv);
struct rpcrdma2_props;
/* Our transport properties (docs/rpcrdma2-extensions.md §3): the sizes we
 * send and receive, reverse-direction support, remote invalidation, and
 * with @resp_read responder-provided Read chunks (docs/reliable-replies.md). */
void xprt_v2_props_ours(struct rpcrdma2_props *p, uint32_t send, uint32_t recv, bool bc,
			bool remote_inv, bool resp_read);
/* The peer's properties @p: sizes above the thresholds in @lim raise them
 * for later messages, never past our own buffers (@our_send, @our_recv);
 * remote invalidation, when @p says, is on exactly when both sides
 * accept it (@our_inv: ours). */
void xprt_v2_props_apply(struct xprt_limits *lim, const struct rpcrdma2_props *p, uint32_t our_send,
			 uint32_t our_recv, bool our_inv);

/* ---- credits.c: requester credit window ---- */

struct xprt_credits {
	uint32_t max;     /* slots we have (credits requested) */
	uint32_t grant;   /* latest grant, 0 taken as 1, capped at max */
	uint32_t on_wire; /* calls sent on this connection, no reply yet */
};

void xprt_credits_init(struct xprt_credits *c, uint32_t max);
/* A new connection: start again at one outstanding call (RFC 8166 §3.3.1). */
void xprt_credits_reset(struct xprt_credits *c);
/* The per-call steps are inline (each runs once or twice per call): */

/* Apply the rdma_credit of a received reply. */
static inline void xprt_credits_update(struct xprt_credits *c, uint32_t granted)
{
	if (granted == 0)
		granted = 1; /* RFC 8166 §3.3.1 */
	if (granted > c->max)
		granted = c->max;
	c->grant = granted;
}

/* May another call go on the wire now? */
static inline bool xprt_credits_may_send(const struct xprt_credits *c)
{
	return c->on_wire < c->grant;
}

static inline void xprt_credits_sent(struct xprt_credits *c)
{
	c->on_wire++;
}

static inline void xprt_credits_done(struct xprt_credits *c)
{
	if (c->on_wire)
		c->on_wire--;
}

/* ---- ddp.c: DDP-eligible items in XDR streams ---- */

enum xprt_ddp_role {
	XPRT_DDP_CLNT_ENC = 1, /* call args: large bulk items become Read chunks */
	XPRT_DDP_CLNT_DEC,     /* reply results: bulk item i may be in Write chunk i */
	XPRT_DDP_SVC_DEC,      /* call args: zero-copy view of the spliced stream */
	XPRT_DDP_SVC_ENC,      /* reply results: bulk item i may go by Write chunk i */
	XPRT_DDP_CAPTURE,      /* drc.c: bulk items kept apart, at their positions */
};

struct xprt_ddp_item {
	/* CLNT_ENC: XDR position of the item's data (after its length word)
	 * in the complete stream (RFC 8166 §3.4.5); SVC_ENC: Write chunk
	 * index; CAPTURE: stream position where its length word would be */
	uint32_t pos;
	uint32_t len;
	const void *base;
};

struct xprt_ddp {
	uint32_t magic;
	enum xprt_ddp_role role;
	uint32_t idx; /* rank of the next bulk item */
	/* CLNT_ENC: items of at least @threshold bytes leave the stream */
	uint32_t threshold;
	bool no_ddp;
	/* CLNT_ENC: items moved by Read chunk; SVC_ENC: items moved by Write
	 * chunk (pos = Write chunk index) */
	uint32_t nitems;
	struct xprt_ddp_item items[RPCRDMA_MAX_WRITE_CHUNKS];
	/* CLNT_ENC: stream bytes (data + roundup) moved to Read chunks so
	 * far; the reduced stream's offset + this = the position */
	uint32_t elided;
	/* CLNT_DEC */
	const struct rpcrdma_buf *recv_bulk;
	uint32_t nrecv_bulk;
	uint32_t nplaced;                          /* Write chunks the reply reports */
	uint32_t placed[RPCRDMA_MAX_WRITE_CHUNKS]; /* bytes the responder wrote */
	uint32_t got[RPCRDMA_MAX_WRITE_CHUNKS];    /* bytes that arrived, any way */
	/* SVC_ENC: capacity of the client's Write chunks */
	uint32_t nwrite;
	uint64_t write_cap[RPCRDMA_MAX_WRITE_CHUNKS];
};

void xprt_ddp_init(struct xprt_ddp *d, enum xprt_ddp_role role);

/* The receive buffers a call gives for its result bulk items (recv_bulk_v
 * or recv_bulk), their number in *@n (bounded as client.h says). */
static inline const struct rpcrdma_buf *xprt_recv_bulk(const struct rpcrdma_call_opts *o,
						       uint32_t *n)
{
	if (o->comp_mask & RPCRDMA_CALL_OPT_RECV_BULK_V) {
		*n = o->nrecv_bulk_v < RPCRDMA_MAX_WRITE_CHUNKS ? o->nrecv_bulk_v
								: RPCRDMA_MAX_WRITE_CHUNKS;
		return o->recv_bulk_v;
	}
	if (o->comp_mask & RPCRDMA_CALL_OPT_RECV_BULK) {
		*n = o->nrecv_bulk < RPCRDMA_MAX_BULK ? o->nrecv_bulk : RPCRDMA_MAX_BULK;
		return o->recv_bulk;
	}
	*n = 0;
	return NULL;
}
/* Make @xdrs (an rpcrdma_tirpc stream) carry @d. */
void xprt_ddp_attach(XDR *xdrs, struct xprt_ddp *d);

/* ---- marshal.c / recv.c: the requester's side of one call ---- */

/* MRs a call slot keeps: one per argument bulk item (Read chunks), one per
 * result bulk item (Write chunks), the Reply chunk, the Long Call. */
#define XPRT_MR_READ0  0
#define XPRT_MR_WRITE0 RPCRDMA_MAX_BULK
#define XPRT_MR_REPLY  (RPCRDMA_MAX_BULK + RPCRDMA_MAX_WRITE_CHUNKS)
#define XPRT_MR_LONG   (XPRT_MR_REPLY + 1)
#define XPRT_CALL_NMR  (XPRT_MR_REPLY + 2)

struct xprt_call {
	/* What to call; set by the API before xprt_marshal(). */
	uint32_t xid, prog, vers, proc;
	xdrproc_t xargs, xres;
	void *args, *res;
	struct rpcrdma_call_opts opts; /* a copy; zero when none given */
	/* Credential and verifier as encoded after proc in the call header
	 * (RFC 5531 §9), or NULL for AUTH_NONE (word by word, short.c); the
	 * bytes stay valid until the call completes. */
	const uint8_t *auth;
	uint32_t auth_len;
	/* Resources kept by the slot across calls. hdr and msg are two
	 * buffers of the client's send pool (lkey), each inline_send bytes. */
	struct rpcrdma_pd *pd;
	uint8_t *hdr, *msg;
	uint32_t lkey;
	struct xprt_lbuf lcall;  /* Long Call message (Position-Zero Read chunk) */
	struct xprt_lbuf lreply; /* Reply chunk target */
	struct rpcrdma_mr *mr[XPRT_CALL_NMR];
	/* Outcome of xprt_marshal(): what to Send and what was exposed. */
	struct rpcrdma_sge sge[2];
	uint32_t nsge;
	uint32_t call_proc; /* RPCRDMA1_MSG or RPCRDMA1_NOMSG */
	uint32_t mr_used;   /* bit i: mr[i] exposes an STag for this call */
	uint32_t nstags;    /* STags exposed to the responder */
	uint64_t reg_bytes; /* bytes registered for this transmission */
	uint32_t nread;     /* Read chunks (incl. Position-Zero) */
	uint64_t read_bytes;
	uint32_t nwrite; /* Write chunks offered */
	uint64_t write_cap[RPCRDMA_MAX_WRITE_CHUNKS];
	bool reply_offered;
	uint64_t reply_cap;
	uint32_t hdr_len, msg_len;
	/* A reply pulled from a responder-provided Read chunk (rr_pull.c):
	 * the RPC message is here instead of in the Reply chunk, else NULL */
	const uint8_t *rr_msg;
	size_t rr_len;
	struct rpcrdma1_chunks chunks; /* scratch for the header */
};

/*
 * Encode the call (RPC header + @xargs) and choose its form (RFC 8166
 * §3.5): Short (RDMA_MSG, all inline), Chunked (large bulk items by Read
 * chunk at their positions, Write chunks for large result buffers, a Reply
 * chunk when the reply's transport header + opts.reply_size exceed the
 * inline receive threshold), or Long
 * Call (RDMA_NOMSG + Position-Zero Read chunk) when the rest still exceeds
 * the inline send threshold. Registers the chunk memory (left registered:
 * xprt_call_fence() invalidates it). Fills c->sge/nsge: the Send to post.
 * -EINVAL args did not encode; -EMSGSIZE the header alone exceeds the
 * threshold; provider errors from registration.
 */
int xprt_marshal(struct xprt_call *c, const struct xprt_limits *lim, uint32_t ddp_threshold,
		 uint32_t credits);
/*
 * Fence the call's chunk memory before the call completes: invalidate every
 * STag it exposed, except @remote_stag when the responder already
 * invalidated it with Send With Invalidate (@remote_inv). Returns how many
 * STags were invalidated locally.
 */
uint32_t xprt_call_fence(struct xprt_call *c, bool remote_inv, uint32_t remote_stag);
/* The one STag exposed, when nstags == 1 (what Send With Invalidate may
 * name), else 0. */
uint32_t xprt_call_only_stag(const struct xprt_call *c);
/* Free the slot's resources. */
void xprt_call_fini(struct xprt_call *c);

/*
 * Process the reply @h (decoded from @buf/@len) to call @c: RDMA_ERROR ->
 * its error code; check the chunk lists against what we offered; decode the
 * RPC reply header and the results with c->xres into c->res. Fills @r.
 */
int xprt_reply_process(struct xprt_call *c, const uint8_t *buf, size_t len,
		       const struct rpcrdma1_hdr *h, struct rpcrdma_call_result *r);

/* ---- short.c: the common case without the general codecs ---- */

#define XPRT_SHORT_HDR   28u /* RDMA_MSG with three empty lists */
#define XPRT_SHORT_CALL  40u /* RPC call header, AUTH_NONE credential and verifier */
#define XPRT_SHORT_REPLY 24u /* accepted SUCCESS reply header, AUTH_NONE verifier */

void xprt_short_rdma_msg(uint8_t *p, uint32_t xid, uint32_t credit);
/* RDMA_MSG version 1 with three empty lists: fill @h (what decode would
 * give) and return true; anything else false (use rpcrdma1_decode_buf). */
bool xprt_short_decode_hdr(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h);
void xprt_short_call_hdr(uint8_t *p, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc);
/* An rpcvers 2 RPC call with empty AUTH_NONE credential and verifier: fill
 * @call (as rpcrdma_rpc_decode_call() would) and return true; else false. */
bool xprt_short_call_parse(const uint8_t *msg, size_t len, struct rpcrdma_rpc_call *call);
void xprt_short_reply_hdr(uint8_t *p, uint32_t xid);
/* An accepted SUCCESS reply to @xid with an AUTH_NONE verifier? */
bool xprt_short_reply_ok(const uint8_t *msg, size_t len, uint32_t xid);

/* ---- spin.c: how long a progress loop busy-polls before blocking ---- */

struct xprt_spin {
	uint32_t ns;    /* base budget after activity */
	uint32_t cur;   /* current budget: ns .. XPRT_SPIN_MAX_NS */
	uint32_t fails; /* spins in a row that expired idle */
	uint32_t probe;
	bool always; /* RPCRDMA_PROGRESS_BUSY_POLL: never block */
	bool cross;  /* spins succeed without giving the CPU away: the peer
			runs elsewhere, growing the budget pays */
	bool gave;   /* this spin's yields let another task run */
};

/* Longest budget the policy grows to (a 1 MiB transfer plus the peer's
 * work on it, on loopback). */
#define XPRT_SPIN_MAX_NS 400000u

/* Spins in a row that expire idle before spinning stops; while stopped,
 * every XPRT_SPIN_PROBE-th wait spins once more to see whether it pays
 * again. */
#define XPRT_SPIN_MAX_FAILS 3u
#define XPRT_SPIN_PROBE     64u

void xprt_spin_init(struct xprt_spin *sp, uint32_t ns, bool always);

/* Nanoseconds to busy-poll now (0: block at once; UINT64_MAX: forever).
 * Inline, as xprt_spin_result(): both run on every pass of a progress
 * loop. */
static inline uint64_t xprt_spin_budget(struct xprt_spin *sp)
{
	sp->gave = false; /* a new spin phase */
	if (sp->always)
		return UINT64_MAX;
	if (sp->fails >= XPRT_SPIN_MAX_FAILS && (++sp->probe % XPRT_SPIN_PROBE) != 0)
		return 0;
	return sp->cur;
}

/* The CPU's spin-wait hint, once per idle busy-poll iteration (x86 pause,
 * Arm yield): a few dozen cycles at most, next to the system call of the
 * iteration, that leave the core's resources to its sibling hyperthread. */
static inline void xprt_spin_hint(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* A spin ended: with activity (@success) or idle at its deadline. */
static inline void xprt_spin_result(struct xprt_spin *sp, bool success)
{
	if (success && !sp->gave) {
		sp->fails = 0;
		sp->cross = true;
	} else if (success) {
		/* it came only once we let another task run: most likely the
		 * peer shares our CPU, where a longer spin only delays it */
		sp->fails = 0;
		sp->cross = false;
		sp->cur = sp->ns;
	} else {
		if (sp->fails < UINT32_MAX)
			sp->fails++;
		if (sp->fails >= XPRT_SPIN_MAX_FAILS)
			sp->cross = false;
	}
	sp->gave = false;
}
/* The loop blocked (after an idle spin, or without spinning) and activity
 * came @waited_ns later: grow the budget when a longer spin would have
 * caught it (only while spins are seen to succeed on their own: a peer on
 * our CPU cannot progress while we spin), shrink it back when the wait was
 * long. */
void xprt_spin_woke(struct xprt_spin *sp, uint64_t waited_ns);
/* Called on an idle iteration of a spin past its base budget: lets a peer
 * that shares our CPU run (sched_yield; returns at once when nothing else
 * is runnable here), and notes when something else did run. */
void xprt_spin_idle(struct xprt_spin *sp);

/* ---- errors.c ---- */

/* Map an RPC reply header that is not SUCCESS to the call's error code. */
int xprt_rpc_status(const struct rpcrdma_rpc_reply *r);
/* Map a received RDMA_ERROR errcode. */
int xprt_rdma_err_status(uint32_t err);
/* Encode an RDMA_ERROR (ERR_VERS 1..1 or ERR_CHUNK) answering @xid into
 * @buf; returns the length or -errno. */
int xprt_encode_error(void *buf, size_t len, uint32_t xid, uint32_t credit, uint32_t err);
/* RDMA_ERROR / ERR_VERS answering a message of version @vers: the fixed
 * words carry @vers back (the requester's version, which it can decode;
 * RFC 5666 §4.2, Version Two draft §5.3, and Linux's svcrdma), the body
 * our range 1..@high. Length or -errno. */
int xprt_encode_err_vers(void *buf, size_t len, uint32_t xid, uint32_t vers, uint32_t credit,
			 uint32_t high);

/* The accept_stat an error reply carries: SUCCESS, PROG_MISMATCH (it needs
 * the version range) and unknown values become SYSTEM_ERR (RFC 5531 §9). */
uint32_t xprt_error_accept_stat(uint32_t accept_stat);

/* ---- rdma_rw.c ---- */

/* RDMA Write @len bytes at @base (registered as @lkey) into the segments
 * @seg[0..n), rewriting their lengths to what was written (RFC 8166
 * §3.4.6, §3.4.7); a segment left empty gets no Write. @tmpl gives wr_id
 * and flags; @post posts one Write WR for @ctx (lock held by the caller).
 * 0, -EMSGSIZE when the segments hold less than @len, or what @post
 * returned. */
int xprt_write_segments(const struct rpcrdma_send_wr *tmpl,
			int (*post)(void *ctx, struct rpcrdma_send_wr *wr), void *ctx,
			const uint8_t *base, uint32_t lkey, uint64_t len,
			struct rpcrdma1_segment *seg, uint32_t n);

/* Fill @wr (and its one @sge) with a signaled RDMA Read of segment @sg
 * into @dst (registered as @lkey); an empty segment gets no SGE. */
void xprt_read_wr(struct rpcrdma_send_wr *wr, struct rpcrdma_sge *sge, uint64_t wr_id,
		  const struct rpcrdma1_segment *sg, uint8_t *dst, uint32_t lkey);

#endif
