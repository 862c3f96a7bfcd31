/* SPDX-License-Identifier: MIT */
/*
 * Call slots: what the two requesters share, the forward client
 * (requester.c) and the server's reverse requester of RFC 8167
 * (bc_requester.c). Hidden symbols.
 *
 * A slot of either holds one call (struct xprt_call), its deadline and
 * its result. Both start a call the same way (xprt_slot_start), account a
 * Send the same way (xprt_slot_sent, XPRT_COUNT_SENT), end it the same
 * way (xprt_slot_final) and bound it by the same deadlines. What differs
 * on purpose stays with each requester:
 *   - XIDs: a forward XID carries its slot index in its low bits, so a
 *     reply finds its slot in O(1) (xprt_xid_make); the reverse XID space
 *     is a sequence of its own (RFC 8167 §2.4.1, struct xprt_rslots) and a
 *     reply is matched by a scan of the few reverse slots.
 *   - Retransmission: a forward call goes again on the next connection
 *     when its retries allow (reconnect.c); a reverse call waits for its
 *     client to come back, at most conn_wait_ms, and goes again with the
 *     same XID (RFC 8167 §5.4, wait_dl below).
 *   - Credits: each its own window (credits.c); the reverse one is the
 *     client's reverse grant (RFC 8167 §4.1).
 * The helpers are static inline: the forward call path pays nothing for
 * the sharing.
 */
#ifndef RPCRDMA_TRANSPORT_SLOTS_H
#define RPCRDMA_TRANSPORT_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/client.h"
#include "transport/xprt.h"

/* ---- XIDs of the forward requester ---- */

/* The low 10 bits of a forward call's XID are its slot index (credits <=
 * 1024), the rest a per-client sequence; the full XID is still compared. */
#define XID_SLOT_BITS 10u
#define XID_SLOT_MASK ((1u << XID_SLOT_BITS) - 1u)

static inline uint32_t xprt_xid_make(uint32_t seq, uint32_t idx)
{
	return (seq << XID_SLOT_BITS) | idx;
}

/* ---- deadlines ---- */

/* The deadline @ms milliseconds after @t0 (ns), or 0 (none) for 0 ms. */
static inline uint64_t xprt_deadline_at(uint64_t t0, uint32_t ms)
{
	return ms ? t0 + (uint64_t)ms * 1000000ull : 0;
}

/* Has deadline @dl (0: none) passed at @now? */
static inline bool xprt_deadline_passed(uint64_t dl, uint64_t now)
{
	return dl && now > dl;
}

/* ---- one call in a slot ---- */

/* What @k calls (the call options, XID and credential are the caller's:
 * the two requesters treat them differently). */
static inline void xprt_slot_start(struct xprt_call *k, uint32_t prog, uint32_t vers, uint32_t proc,
				   xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
	k->prog = prog;
	k->vers = vers;
	k->proc = proc;
	k->xargs = xargs;
	k->args = args;
	k->xres = xres;
	k->res = res;
}

/* The Send of @k was posted: what the call's result says about its
 * transmissions and chunks. True: it was sent before (a retransmission). */
static inline bool xprt_slot_sent(struct rpcrdma_call_result *res, const struct xprt_call *k)
{
	res->transmissions++;
	res->call_proc = k->call_proc;
	res->read_chunks = k->nread;
	res->write_chunks = k->nwrite;
	res->reply_chunk = k->reply_offered;
	return res->transmissions > 1;
}

/*
 * The Send of @k was posted: one more call on the wire in window @cr, and
 * the counters of @st (a struct rpcrdma_xprt_stats or rpcrdma_bc_stats:
 * the two public counter structs share these field names, not a type,
 * hence a macro). RFC 8166 §3.5: a Long Call is RDMA_NOMSG, everything
 * else a Short message; inline bytes are the header plus the message
 * when it went inline.
 */
#define XPRT_COUNT_SENT(st, cr, k)                                                                 \
	do {                                                                                       \
		xprt_credits_sent(cr);                                                             \
		(st).outstanding = (cr)->on_wire;                                                  \
		if ((cr)->on_wire > (st).max_outstanding)                                          \
			(st).max_outstanding = (cr)->on_wire;                                      \
		if ((k)->call_proc == RPCRDMA1_NOMSG)                                              \
			(st).long_calls++;                                                         \
		else                                                                               \
			(st).short_msgs++;                                                         \
		(st).read_chunks += (k)->nread;                                                    \
		(st).read_bytes += (k)->read_bytes;                                                \
		(st).reply_chunks += (k)->reply_offered;                                           \
		(st).inline_bytes_tx += (k)->hdr_len + ((k)->nsge > 1 ? (k)->msg_len : 0);         \
	} while (0)

/* The call in @k ends with @status: its result says so, and the caller's
 * copy of it (RPCRDMA_CALL_OPT_RESULT) is filled. */
static inline void xprt_slot_final(const struct xprt_call *k, struct rpcrdma_call_result *res,
				   int status)
{
	res->xid = k->xid;
	res->status = status;
	if ((k->opts.comp_mask & RPCRDMA_CALL_OPT_RESULT) && k->opts.result)
		*k->opts.result = *res;
}

/* ---- the reverse requester's slot table (slots.c) ---- */

enum xprt_rslot_state {
	XPRT_RS_FREE = 0,
	XPRT_RS_WAIT, /* waiting for a credit or a connection (need_tx) */
	XPRT_RS_WIRE, /* sent on the current connection, no reply yet */
	XPRT_RS_DONE, /* completed: status final, owner not yet told */
};

struct xprt_rslot {
	struct xprt_call call;
	enum xprt_rslot_state state;
	int status;
	uint64_t seq;      /* FIFO order of transmission */
	uint64_t deadline; /* ns, 0 = none: the call's own timeout */
	uint64_t wait_dl;  /* ns, 0 = none: deadline while no connection */
	uint32_t conn_gen; /* the connection it was sent on */
	struct rpcrdma_call_result result;
};

/* A reverse requester: slots (one per reverse credit asked for), the
 * reverse XID space and the reverse credit window (RFC 8167 §4.1). */
struct xprt_rslots {
	struct xprt_rslot *slot;
	uint32_t n;
	uint32_t next_xid;
	uint64_t seq;
	struct xprt_credits cr;
	struct xprt_pool sendp; /* two buffers per slot: header, message */
};

/* @n slots whose send buffers of @inline_send bytes are registered on @pd. */
int xprt_rslots_init(struct xprt_rslots *r, struct rpcrdma_pd *pd, uint32_t n,
		     uint32_t inline_send);
void xprt_rslots_fini(struct xprt_rslots *r);
/* A free slot, or NULL. The XID is assigned (a fresh one from the reverse
 * space, RFC 8167 §2.4). */
struct xprt_rslot *xprt_rslots_get(struct xprt_rslots *r);
/* The slot on the wire with @xid, or NULL (reverse XIDs only: a forward
 * call with the same value is another transaction, RFC 8167 §2.4.1). */
struct xprt_rslot *xprt_rslots_find(struct xprt_rslots *r, uint32_t xid);
/* Oldest waiting slot, or NULL. */
struct xprt_rslot *xprt_rslots_oldest(struct xprt_rslots *r);
/*
 * Marshal slot @s for the connection with limits @lim: the same rules as a
 * forward call (RFC 8167 §4.2: shared thresholds, §5.1: rdma_credit is the
 * reverse credit request = the number of slots). With @chunks false only a
 * Short message may result (RFC 8167 §5.3), else -EMSGSIZE.
 */
int xprt_rslot_marshal(struct xprt_rslots *r, struct xprt_rslot *s, const struct xprt_limits *lim,
		       bool chunks);

#endif
