/* SPDX-License-Identifier: MIT */
/*
 * The receive path's two files and what they share: qp_rx.c runs the
 * per-FPDU state machine (framing, header checks, placement, Sends,
 * Writes, Terminates); qp_rx_read.c handles RDMA Reads in both roles (a
 * peer's Read Request, the Read Responses to ours, and their optional
 * multi-FPDU receive). Private to src/softiwarp; all of it runs under the
 * device lock, on the endpoint's own struct siw_rx.
 */
#ifndef RPCRDMA_SOFTIWARP_QP_RX_H
#define RPCRDMA_SOFTIWARP_QP_RX_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "softiwarp/siw.h"

/* ---- qp_rx.c: steps of the state machine ---- */

/* A fatal error in the incoming stream: send a Terminate (RFC 5040 §4.8)
 * carrying the offending header and stop placing. Returns -EPROTO. */
int siw_rx_error(struct siw_ep *ep, uint8_t layer, uint8_t etype, uint8_t code);
/* siw_rx_error() for a failed protection check of tagged placement. */
int siw_rx_tagged_error(struct siw_ep *ep, enum siw_mem_err e);
/* rx->hdr holds rx->hdr_need bytes: check them, and either ask for more
 * header bytes or set up the FPDU's placement. 0 or -EPROTO. */
int siw_rx_hdr_step(struct siw_ep *ep);
/* The trailer is complete: check the CRC and act on the FPDU. 0 or
 * -EPROTO. */
int siw_rx_trailer_done(struct siw_ep *ep);
/* Account for @n payload bytes the kernel placed at the targets. */
void siw_rx_placed(struct siw_ep *ep, uint32_t n);
/* recvmsg() into the placement targets, then the stage (*stage_n bytes);
 * *asked is the room offered. */
ssize_t siw_rx_recv_direct(struct siw_ep *ep, uint32_t *stage_n, size_t *asked);

/* ---- qp_rx_read.c: RDMA Read ---- */

/* Header checks of a Read Request and of a Read Response segment. 0 or
 * -EPROTO (the stream is terminating). */
int siw_rx_hdr_read_req(struct siw_ep *ep, uint32_t seg);
int siw_rx_hdr_read_resp(struct siw_ep *ep, uint32_t stag, uint64_t to, uint32_t seg);
/* A Read Request / Read Response FPDU passed its CRC: act on it. */
void siw_rx_accept_read(struct siw_ep *ep);
void siw_rx_read_resp_done(struct siw_ep *ep, uint32_t seg);
/* The rest of the current Read Response FPDU and the FPDUs expected after
 * it with one recvmsg(); as siw_rx_recv_direct(). */
ssize_t siw_rx_recv_predict(struct siw_ep *ep, uint32_t *stage_n, size_t *asked);

/* The send-queue entry of our oldest outstanding RDMA Read, or NULL. */
static inline struct siw_wqe *siw_orq_head_wqe(struct siw_ep *ep)
{
	if (ep->orq_head == ep->orq_tail)
		return NULL;
	return &ep->sq[ep->orq[ep->orq_head % ep->orq_cap] % ep->max_send_wr];
}

/* Place the current segment at [p, p + len). */
static inline void siw_rx_map_one(struct siw_rx *rx, void *p, uint32_t len)
{
	rx->tgt[0].iov_base = p;
	rx->tgt[0].iov_len = len;
	rx->tgt_n = 1;
	rx->tgt_i = 0;
}

#endif
