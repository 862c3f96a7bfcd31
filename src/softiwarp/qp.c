/* SPDX-License-Identifier: MIT */
/*
 * Endpoint (queue pair) state changes: entering RTS, Terminate (RFC 5040
 * §7: report the error to the peer, then close), flushing outstanding work
 * into the CQs, retiring send-queue entries in posting order, and
 * connection events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "softiwarp/siw.h"

static enum rpcrdma_wc_opcode wc_opcode(uint8_t wr_op)
{
	switch (wr_op) {
	case RPCRDMA_WR_RDMA_WRITE:
		return RPCRDMA_WC_RDMA_WRITE;
	case RPCRDMA_WR_RDMA_READ:
		return RPCRDMA_WC_RDMA_READ;
	default:
		return RPCRDMA_WC_SEND;
	}
}

static void sq_complete(struct siw_ep *ep, struct siw_wqe *w)
{
	struct rpcrdma_wc wc = {
	    .wr_id = w->wr_id,
	    .status = w->status,
	    .opcode = wc_opcode(w->opcode),
	    .byte_len = (uint32_t)(w->opcode == RPCRDMA_WR_RDMA_READ ? w->read_got : w->len),
	    .vendor_err = w->vendor_err,
	    .ep = &ep->base,
	};

	if (siw_cq_push(ep->dev, ep->scq, &wc))
		ep->cq_overrun = true;
}

void siw_ep_check_overrun(struct siw_ep *ep)
{
	if (ep->cq_overrun && ep->state != SIW_EP_ERROR && ep->state != SIW_EP_CLOSED) {
		ep->term_hdr_len = 0;
		siw_ep_terminate(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
				 RDMAP_ECODE_UNSPECIFIED);
	}
}

/* RFC 5040 §5.5 / verbs: send-queue completions appear in posting order,
 * so a finished entry waits behind an older RDMA Read still in flight. */
void siw_sq_retire(struct siw_ep *ep)
{
	while (ep->sq_head != ep->sq_tx) {
		struct siw_wqe *w = &ep->sq[ep->sq_head % ep->max_send_wr];

		if (w->state != SIW_WQE_DONE)
			break;
		if ((w->flags & RPCRDMA_SEND_SIGNALED) || w->status != RPCRDMA_WC_SUCCESS)
			sq_complete(ep, w);
		ep->sq_head++;
	}
}

int siw_rq_complete(struct siw_ep *ep, struct siw_rqe *rqe, enum rpcrdma_wc_status st,
		    uint32_t byte_len, uint32_t flags, uint32_t inv)
{
	struct rpcrdma_wc wc = {
	    .wr_id = rqe->wr_id,
	    .status = st,
	    .opcode = RPCRDMA_WC_RECV,
	    .byte_len = byte_len,
	    .wc_flags = flags,
	    .invalidated_stag = inv,
	    .ep = &ep->base,
	};

	int rc = siw_cq_push(ep->dev, ep->rcq, &wc);

	if (rc)
		ep->cq_overrun = true;
	return rc;
}

void siw_ep_event(struct siw_ep *ep, enum rpcrdma_event_type type, int status)
{
	struct rpcrdma_event *ev;
	struct siw_ev_node tmp; /* large: built in place, copied by push */

	if (ep->fuzz && !ep->evch)
		return;
	ev = &tmp.ev;
	memset(ev, 0, offsetof(struct rpcrdma_event, private_data));
	ev->type = type;
	ev->status = status;
	ev->ep = &ep->base;
	ev->context = ep->base.context;
	ev->ird = (uint16_t)ep->peer_ird;
	ev->ord = (uint16_t)ep->peer_ord;
	ev->mpa_rev = ep->rev;
	ev->crc = ep->crc;
	ev->peer = ep->peer;
	ev->term_local = ep->term_sent || ep->term_pending;
	ev->term_layer = ep->term_layer;
	ev->term_etype = ep->term_etype;
	ev->term_code = ep->term_code;
	ev->private_data_len = 0;
	(void)siw_evch_push(ep->dev, ep->evch, ev);
}

void siw_ep_enter_rts(struct siw_ep *ep)
{
	ep->state = SIW_EP_RTS;
	ep->deadline_ms = 0;
	if (ep->rx.state == SIW_RX_MPA) {
		ep->rx.state = SIW_RX_HDR;
		ep->rx.hdr_have = 0;
		ep->rx.hdr_need = 4;
		ep->rx.crc = SIW_CRC_INIT;
	}
}

/* Flush every outstanding work request (verbs semantics: all of them,
 * signaled or not, complete with an error). The oldest unfinished send
 * entry gets @first_status when that is more specific than a flush. */
void siw_ep_flush(struct siw_ep *ep, enum rpcrdma_wc_status first_status, uint32_t vendor_err)
{
	bool first = true;

	/* a half-built message no longer exists */
	ep->tx.msg.kind = SIW_TXM_NONE;
	while (ep->sq_head != ep->sq_tail) {
		struct siw_wqe *w = &ep->sq[ep->sq_head % ep->max_send_wr];

		if (w->state != SIW_WQE_DONE) {
			w->status = first ? first_status : RPCRDMA_WC_WR_FLUSH_ERR;
			w->vendor_err = first ? vendor_err : 0;
			first = false;
			w->state = SIW_WQE_DONE;
		}
		if ((w->flags & RPCRDMA_SEND_SIGNALED) || w->status != RPCRDMA_WC_SUCCESS)
			sq_complete(ep, w);
		ep->sq_head++;
	}
	ep->sq_tx = ep->sq_tail = ep->sq_head;
	ep->orq_head = ep->orq_tail = 0;
	while (ep->rq_head != ep->rq_tail) {
		struct siw_rqe *r = &ep->rq[ep->rq_head % ep->max_recv_wr];

		(void)siw_rq_complete(ep, r, RPCRDMA_WC_WR_FLUSH_ERR, 0, 0, 0);
		ep->rq_head++;
	}
	ep->irq_head = ep->irq_tx = ep->irq_tail = 0;
	ep->tx.ndone = ep->tx.done_i = 0;
}

void siw_ep_close_socket(struct siw_ep *ep, bool abortive)
{
	if (ep->fd < 0)
		return;
	siw_poll_del(ep->dev, &ep->poll, ep->fd);
	if (abortive && !ep->fuzz) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		(void)setsockopt(ep->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(ep->fd);
	ep->fd = -1;
	/* the copied rest of an FPDU (siw_ep_terminate) dies with the socket */
	free(ep->tx_rest);
	ep->tx_rest = NULL;
	ep->tx.left = 0;
	ep->tx.iov_n = ep->tx.iov_i = 0;
	ep->tx.blocked = false;
	ep->rx.state = SIW_RX_DEAD;
	ep->deadline_ms = 0;
}

/* The connection is gone (peer closed, reset, timeout, local close):
 * flush, close the socket, report once. */
void siw_ep_fail(struct siw_ep *ep, int status, enum rpcrdma_wc_status first_status,
		 uint32_t vendor_err)
{
	enum siw_ep_state old = ep->state;

	if (old == SIW_EP_CLOSED)
		return;
	ep->state = SIW_EP_CLOSED;
	siw_ep_close_socket(ep, status != 0);
	siw_ep_flush(ep, first_status, vendor_err);
	if (ep->disc_reported)
		return;
	ep->disc_reported = true;
	if (old == SIW_EP_CONNECTING || old == SIW_EP_MPA_REQ_SENT || old == SIW_EP_MPA_REP_SENT)
		siw_ep_event(ep, RPCRDMA_EV_CONNECT_ERROR, status ? status : -ECONNRESET);
	else
		siw_ep_event(ep, RPCRDMA_EV_DISCONNECTED, status);
}

/* Index of the first iovec of the batch that starts an FPDU of which no
 * byte is on the wire yet (iov_n if none). Every FPDU begins with its
 * header iovec pointing at the start of its tx.fb[] slot, and sendmsg()
 * moves the base of a partly sent iovec, so an unmoved header iovec at or
 * after the cursor is an FPDU not started. Error path only: the quadratic
 * scan is at most SIW_TX_IOV x SIW_TX_FPDUS compares. */
static uint32_t tx_first_unstarted(const struct siw_tx *tx)
{
	for (uint32_t i = tx->iov_i; i < tx->iov_n; i++) {
		for (uint32_t k = 0; k < tx->nfb; k++) {
			if (tx->iov[i].iov_base == (const void *)tx->fb[k].hdr)
				return i;
		}
	}
	return tx->iov_n;
}

/* Cut the batch on the wire after the FPDU it has started (RFC 5044 §4:
 * the peer only finds the Terminate if the stream stays framed). FPDUs not
 * started are dropped: their messages are flushed by the caller. The rest
 * of the started FPDU is copied, because its send-queue entry is flushed
 * (and its memory handed back to the application) before it is sent.
 * Returns 0 or -ENOMEM. */
static int tx_cut_after_started(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;
	uint32_t cut = tx->left ? tx_first_unstarted(tx) : tx->iov_i;
	uint64_t rest = 0;

	for (uint32_t i = tx->iov_i; i < cut; i++)
		rest += tx->iov[i].iov_len;
	tx->ndone = tx->done_i = 0;
	if (!rest) {
		tx->left = 0;
		tx->iov_n = tx->iov_i = 0;
		tx->nfb = 0;
		tx->built = tx->sent = 0;
		return 0;
	}
	/* at most one FPDU: MPA length + ULPDU + pad + CRC */
	if (!ep->tx_rest) {
		ep->tx_rest = malloc(MPA_LEN_SIZE + MPA_MAX_ULPDU + 8u);
		if (!ep->tx_rest)
			return -ENOMEM;
	}
	if (rest > MPA_LEN_SIZE + MPA_MAX_ULPDU + 8u)
		return -EPROTO; /* not reached: the cut is within one FPDU */
	rest = 0;
	for (uint32_t i = tx->iov_i; i < cut; i++) {
		memcpy(ep->tx_rest + rest, tx->iov[i].iov_base, tx->iov[i].iov_len);
		rest += tx->iov[i].iov_len;
	}
	tx->iov[0].iov_base = ep->tx_rest;
	tx->iov[0].iov_len = (size_t)rest;
	tx->iov_i = 0;
	tx->iov_n = 1;
	tx->nfb = 0;
	tx->left = rest;
	tx->built = tx->sent = 0;
	return 0;
}

/* RFC 5040 §7 / RFC 5041 §7: a fatal error detected locally. Report it
 * to the peer in a Terminate message (RFC bit order), stop placing data,
 * flush outstanding work, then close once the Terminate is out. */
void siw_ep_terminate(struct siw_ep *ep, uint8_t layer, uint8_t etype, uint8_t code)
{
	if (ep->state == SIW_EP_ERROR || ep->state == SIW_EP_CLOSED)
		return;
	ep->rx.state = SIW_RX_DEAD;
	ep->term_layer = layer;
	ep->term_etype = etype;
	ep->term_code = code;
	ep->stats.terminates_tx++;
	/* A batch partly on the wire: finish the FPDU started, drop the
	 * rest; the Terminate follows that FPDU (qp_tx.c sends term_pending
	 * first once the batch is out). Only without a socket, or without
	 * memory for the copy, the connection is reset instead. */
	if (ep->fd < 0 || tx_cut_after_started(ep)) {
		ep->term_pending = false;
		siw_ep_event(ep, RPCRDMA_EV_TERMINATE, -EPROTO);
		siw_ep_fail(ep, -EPROTO, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		return;
	}
	ep->state = SIW_EP_ERROR;
	ep->term_pending = true;
	siw_ep_flush(ep, RPCRDMA_WC_WR_FLUSH_ERR, 0);
	siw_ep_event(ep, RPCRDMA_EV_TERMINATE, -EPROTO);
	/* give the Terminate a second to leave, then close anyway */
	ep->deadline_ms = siw_now_ms() + 1000u;
	siw_timer_rearm(ep->dev);
	(void)siw_tx_process(ep);
}
