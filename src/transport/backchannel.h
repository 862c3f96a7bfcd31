/* SPDX-License-Identifier: MIT */
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), transport half: what a message's
 * direction is, the reverse direction's requester slots (XID space, credit
 * window, retransmission state) and the reverse responder's chunk handling
 * (Read chunk plan, splice, reply marshalling), built on the Version One
 * codec (rpcrdma1_hdr) and the forward marshal helpers (xprt.h).
 *
 * The API half (src/api/backchannel.c) owns threads, locks and the public
 * handles. Nothing here is exported.
 */
#ifndef RPCRDMA_TRANSPORT_BACKCHANNEL_H
#define RPCRDMA_TRANSPORT_BACKCHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/backchannel.h"
#include "transport/xprt.h"

/* ---- direction (RFC 8167 §2, §4.1) ---- */

enum xprt_dir {
	XPRT_DIR_NONE = -1, /* cannot be told: RDMA_ERROR, DONE, bad header */
	XPRT_DIR_CALL = 0,  /* RFC 5531 msg_type CALL */
	XPRT_DIR_REPLY = 1, /* RFC 5531 msg_type REPLY */
};

/*
 * The direction of the received message @buf/@len. RDMA_MSG / RDMA_MSGP:
 * the msg_type of the inline RPC message, which must start with the
 * header's XID (RFC 8167 §5.1, §5.2); RDMA_NOMSG: a Position-Zero Read
 * chunk means a Long Call, a Reply chunk without Read list a Long Reply
 * (RFC 8166 §3.5.3). Anything else is XPRT_DIR_NONE, and its credit value
 * must be ignored (RFC 8167 §4.1). @h is scratch for a full decode (the
 * common case, RDMA_MSG with no chunk lists, needs none); when the return
 * is not NONE and *@decoded is true, @h holds the decoded header.
 */
enum xprt_dir xprt_msg_direction(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h,
				 bool *decoded);

/* Any chunk list non-empty (RFC 8167 §5.3: what ERR_CHUNK answers when
 * reverse chunks are off). */
bool xprt_bc_has_chunks(const struct rpcrdma1_chunks *c);

/* ---- reverse requester slots (the server side) ---- */

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

/* ---- reverse responder (the client side) ---- */

struct xprt_rchunk {
	uint32_t pos, len;
	uint8_t *data;
};

/*
 * The Read list of a received call, as the responder will pull it: an
 * optional Position-Zero chunk (RDMA_NOMSG, Long Call) and up to
 * RPCRDMA_MAX_BULK DDP chunks at increasing non-zero positions in the
 * complete stream (RFC 8166 §3.4.5: a position counts the data + roundup
 * of the chunks before it) that fall inside the inline message of
 * @inline_len bytes once those are taken out. Fills *p0len, rc[].pos/.len, *nrc
 * and *total (bytes to read). -EINVAL when the list cannot be used (the
 * caller answers ERR_CHUNK, RFC 8166 §4.5.2).
 */
int xprt_bc_read_plan(const struct rpcrdma1_hdr *h, size_t inline_len, uint64_t max_total,
		      uint32_t *p0len, struct xprt_rchunk *rc, uint32_t *nrc, uint64_t *total);
/* The call's XDR stream: @base/@blen (inline message or Position-Zero
 * chunk) with every pulled chunk spliced in at its position plus the XDR
 * roundup the requester left out (RFC 8166 §3.4.5). */
int xprt_bc_splice(struct rpcrdma_xdr *x, const uint8_t *base, uint32_t blen,
		   const struct xprt_rchunk *rc, uint32_t nrc);

/* Encode RPC reply header @rep + @xres(@res) at @buf/@cap (bulk items
 * inline); 0 or -EMSGSIZE. */
int xprt_bc_encode_reply(const struct rpcrdma_rpc_reply *rep, xdrproc_t xres, void *res,
			 uint8_t *buf, size_t cap, size_t *len);

#endif
