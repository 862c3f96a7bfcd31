/* SPDX-License-Identifier: MIT */
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), transport half: what a message's
 * direction is and the reverse responder's Read chunk rules, built on the
 * Version One codec (rpcrdma1_hdr). The reverse requester's slots are in
 * slots.h, what the reverse responder shares with the server (Read chunk
 * plan, splice, reply marshalling) in respond.h.
 *
 * The engine halves are bc_requester.c (the server's reverse requester)
 * and bc_responder.c (the client's reverse responder); the API shells are
 * src/api/bc_svc.c and src/api/bc_clnt.c. Nothing here is exported.
 */
#ifndef RPCRDMA_TRANSPORT_BACKCHANNEL_H
#define RPCRDMA_TRANSPORT_BACKCHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/backchannel.h"
#include "transport/respond.h"
#include "transport/slots.h"
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

/* The same for a Version Two message (draft §4.2.2: rdma_direction,
 * checked against an RDMA2_MSG's payload); XPRT_DIR_NONE with *@decoded
 * false for anything that is not Version Two. RDMA2_ERROR and
 * RDMA2_OPTIONAL are XPRT_DIR_NONE with *@decoded true. */
enum xprt_dir xprt_v2_msg_direction(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h,
				    bool *decoded);

/* Any chunk list non-empty (RFC 8167 §5.3: what ERR_CHUNK answers when
 * reverse chunks are off). */
bool xprt_bc_has_chunks(const struct rpcrdma1_chunks *c);

/* ---- reverse responder (the client side) ---- */

/*
 * The Read list of a received reverse call, as the reverse responder
 * pulls it: the shared plan (xprt_read_plan, respond.h) with up to
 * RPCRDMA_MAX_BULK DDP chunks, a valid call header, at most @max_total
 * bytes, and, inline, positions that fall inside the message of
 * @inline_len bytes once the chunks are taken out. Fills *p0len, rc[],
 * *nrc and *total (bytes to read). -EINVAL when the list cannot be used
 * (the caller answers ERR_CHUNK, RFC 8166 §4.5.2).
 */
int xprt_bc_read_plan(const struct rpcrdma1_hdr *h, size_t inline_len, uint64_t max_total,
		      uint32_t *p0len, struct xprt_rchunk *rc, uint32_t *nrc, uint64_t *total);

#endif
