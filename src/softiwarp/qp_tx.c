/* SPDX-License-Identifier: MIT */
/*
 * Transmit path: cut messages into FPDUs (RFC 5044 §4: ULPDU_Length, DDP
 * segment, pad to 4, CRC32c) and hand batches of them to TCP with one
 * sendmsg() whose iovecs point straight into registered memory (no copy).
 * Resumable: a short write leaves the batch's iovec cursor where TCP
 * stopped; EPOLLOUT resumes it.
 *
 * Message priority at message boundaries: our Terminate, then the RTR
 * frame, then Read Responses (IRQ order, RFC 5040 §5.2), then the send
 * queue in posting order. A message's send-queue entry is finished once
 * its whole batch is accepted by TCP (an RDMA Read once its response has
 * arrived, qp_rx.c).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "softiwarp/siw.h"

/* Batch sizes (siw.h, ep->tx_cap*): Writes and Sends up to SIW_TX_BYTES per
 * sendmsg(), Read Responses without CRC in pieces of SIW_TX_RRESP_BYTES.
 * Larger batches mean fewer system calls but a later start for the
 * receiver; bench/provider/README.md ("Design notes from measurements")
 * has the figures behind both. */

static void msg_src(struct siw_txmsg *m, const struct rpcrdma_sge *sge, uint32_t nsge)
{
	m->sge = sge;
	m->nsge = nsge;
	m->sge_idx = 0;
	m->sge_off = 0;
}

static void msg_untagged(struct siw_txmsg *m, uint8_t op, uint32_t qn, uint32_t msn)
{
	m->op = op;
	m->tagged = false;
	m->qn = qn;
	m->msn = msn;
	m->inv_stag = 0;
	m->done = 0;
	m->ext_len = 0;
}

static void msg_tagged(struct siw_txmsg *m, uint8_t op, uint32_t stag, uint64_t to)
{
	m->op = op;
	m->tagged = true;
	m->stag = stag;
	m->to = to;
	m->done = 0;
	m->ext_len = 0;
}

/* Local protection check of a work request's SGEs (RFC 5042 §5: local
 * accesses are checked like remote ones). */
static inline bool sges_ok(struct siw_ep *ep, const struct rpcrdma_sge *sg, uint32_t n,
			   uint32_t access)
{
	/* The MR found last time (sends reuse a few pool buffers): not freed
	 * since (mr_gen), so the pointer is good; every check of
	 * siw_mem_check() but the table lookup is made again (a new key after
	 * re-registration, an invalidation), the MR's once per request and
	 * each SGE's STag and bounds. */
	struct siw_mr *mr = ep->tx_mr;
	bool cached = mr && ep->tx_mr_gen == ep->dev->mr_gen && mr->valid && mr->pd == ep->pd &&
		      (mr->access & access) == access;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = sg[i].addr - (cached ? mr->addr : 0);

		if (cached && sg[i].lkey == mr->stag && sg[i].addr >= mr->addr && off <= mr->len &&
		    sg[i].length <= mr->len - off)
			continue;
		if (siw_mem_check(ep->dev, sg[i].lkey, ep->pd, access, sg[i].addr, sg[i].length,
				  &mr) != SIW_MEM_OK)
			return false;
		/* passed every check: good for the SGEs that follow */
		ep->tx_mr = mr;
		ep->tx_mr_gen = ep->dev->mr_gen;
		cached = true;
	}
	return true;
}

/* Our Terminate (RFC 5040 §4.8): queue 2, MSN 1, MO 0; the control field,
 * then a copy of the offending DDP (and Read Request) header if kept. */
static void tx_term_msg(struct siw_ep *ep, struct siw_txmsg *m)
{
	m->kind = SIW_TXM_TERM;
	msg_untagged(m, RDMAP_TERMINATE, RDMAP_QN_TERMINATE, ep->tx_msn[RDMAP_QN_TERMINATE]++);
	m->ext[0] = (uint8_t)(ep->term_layer << 4 | (ep->term_etype & 0x0fu));
	m->ext[1] = ep->term_code;
	m->ext[2] = 0;
	m->ext[3] = 0;
	m->ext_len = RDMAP_TERM_CTRL_LEN;
	if (ep->term_hdr_len) {
		/* M: DDP Segment Length valid; D: DDP header follows;
		 * R: RDMAP (Read Request) header follows */
		m->ext[2] = RDMAP_TERM_FLAG_M | RDMAP_TERM_FLAG_D |
			    (ep->term_hdr_rreq ? RDMAP_TERM_FLAG_R : 0);
		memcpy(m->ext + RDMAP_TERM_CTRL_LEN, ep->term_hdr, ep->term_hdr_len);
		m->ext_len += ep->term_hdr_len;
	}
	msg_src(m, NULL, 0);
	m->total = 0;
}

/* The RTR frame of RFC 6581 §6: a zero-length Read Request or Write. */
static void tx_rtr_msg(struct siw_ep *ep, struct siw_txmsg *m)
{
	m->kind = SIW_TXM_RTR;
	if (ep->rtr == RPCRDMA_RTR_READ) {
		/* RFC 6581 §6: zero-length RDMA Read Request as RTR */
		msg_untagged(m, RDMAP_READ_REQ, RDMAP_QN_READ_REQ, ep->tx_msn[RDMAP_QN_READ_REQ]++);
		memset(m->ext, 0, RDMAP_RREQ_LEN);
		m->ext_len = RDMAP_RREQ_LEN;
		ep->rtr_read_pending = true;
	} else {
		/* zero-length RDMA Write, STag 0, TO 0 */
		msg_tagged(m, RDMAP_WRITE, 0, 0);
	}
	msg_src(m, NULL, 0);
	m->total = 0;
}

/* The Read Response to the oldest accepted Read Request (RFC 5040 §5.2);
 * false if its source failed the check and the stream terminates. */
static bool tx_read_resp_msg(struct siw_ep *ep, struct siw_txmsg *m)
{
	struct siw_irqe *q = &ep->irq[ep->irq_tx % ep->irq_cap];

	/* RFC 5042 §5: re-check the source at execution; it may have
	 * been invalidated since the request was accepted. */
	if (q->len && siw_mem_check_remote(ep, q->src_stag, RPCRDMA_ACCESS_REMOTE_READ, q->src_to,
					   q->len, NULL) != SIW_MEM_OK) {
		ep->term_hdr_len = 0;
		siw_ep_terminate(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT,
				 RDMAP_ECODE_INVALID_STAG);
		return false;
	}
	ep->irq_tx++;
	m->kind = SIW_TXM_READ_RESP;
	msg_tagged(m, RDMAP_READ_RESP, q->sink_stag, q->sink_to);
	m->one.addr = q->src_to;
	m->one.length = q->len;
	m->one.lkey = q->src_stag;
	msg_src(m, &m->one, 1);
	m->total = q->len;
	ep->stats.reads_in++;
	return true;
}

/* A send-queue entry that passed its checks, as the message to send: a
 * Send (with SE / Invalidate), an RDMA Write, or an RDMA Read's Read
 * Request (RFC 5040 §4.4, queue 1), which then waits in the ORQ for its
 * response. */
static void tx_wqe_msg(struct siw_ep *ep, struct siw_txmsg *m, struct siw_wqe *w)
{
	m->kind = SIW_TXM_WQE;
	m->wqe = w;
	switch (w->opcode) {
	case RPCRDMA_WR_SEND: {
		uint8_t op = RDMAP_SEND;

		if (w->flags & RPCRDMA_SEND_INVALIDATE)
			op = (w->flags & RPCRDMA_SEND_SOLICITED) ? RDMAP_SEND_SE_INV
								 : RDMAP_SEND_INV;
		else if (w->flags & RPCRDMA_SEND_SOLICITED)
			op = RDMAP_SEND_SE;
		msg_untagged(m, op, RDMAP_QN_SEND, ep->tx_msn[RDMAP_QN_SEND]++);
		if (w->flags & RPCRDMA_SEND_INVALIDATE)
			m->inv_stag = w->inv_stag;
		msg_src(m, w->sge, w->num_sge);
		m->total = w->len;
		ep->stats.sends++;
		break;
	}
	case RPCRDMA_WR_RDMA_WRITE:
		msg_tagged(m, RDMAP_WRITE, w->rstag, w->raddr);
		msg_src(m, w->sge, w->num_sge);
		m->total = w->len;
		ep->stats.writes_out++;
		break;
	default: /* RDMA Read: RFC 5040 §4.4 Read Request, queue 1 */
		msg_untagged(m, RDMAP_READ_REQ, RDMAP_QN_READ_REQ, ep->tx_msn[RDMAP_QN_READ_REQ]++);
		put_be32(m->ext + RDMAP_RREQ_SINK_STAG, w->num_sge ? w->sge[0].lkey : 0);
		put_be64(m->ext + RDMAP_RREQ_SINK_TO, w->num_sge ? w->sge[0].addr : 0);
		put_be32(m->ext + RDMAP_RREQ_SIZE, (uint32_t)w->len);
		put_be32(m->ext + RDMAP_RREQ_SRC_STAG, w->rstag);
		put_be64(m->ext + RDMAP_RREQ_SRC_TO, w->raddr);
		m->ext_len = RDMAP_RREQ_LEN;
		msg_src(m, NULL, 0);
		m->total = 0;
		w->state = SIW_WQE_READ_WAIT;
		w->read_got = 0;
		ep->orq[ep->orq_tail++ % ep->orq_cap] = ep->sq_tx - 1u;
		ep->stats.reads_out++;
		break;
	}
}

/* The next send-queue entry, if it may go now: false when the queue is
 * empty, waits on ORD or a fence, or the entry failed its local
 * protection check (which terminates the stream). */
static bool tx_sq_msg(struct siw_ep *ep, struct siw_txmsg *m)
{
	/* ORD 0 (ours, or the peer's IRD 0 after the RFC 6581 §9 exchange):
	 * a Read Request can never be issued. It completes in error instead
	 * of holding the send queue, and what follows it still goes. */
	while (ep->eff_ord == 0 && ep->sq_tx != ep->sq_tail &&
	       ep->sq[ep->sq_tx % ep->max_send_wr].opcode == RPCRDMA_WR_RDMA_READ) {
		struct siw_wqe *w = &ep->sq[ep->sq_tx % ep->max_send_wr];

		w->status = RPCRDMA_WC_LOC_QP_OP_ERR;
		w->state = SIW_WQE_DONE;
		ep->sq_tx++;
		siw_sq_retire(ep);
	}
	if (ep->sq_tx == ep->sq_tail)
		return false;

	struct siw_wqe *w = &ep->sq[ep->sq_tx % ep->max_send_wr];
	uint32_t outstanding = ep->orq_tail - ep->orq_head;

	if (w->opcode == RPCRDMA_WR_RDMA_READ && outstanding >= ep->eff_ord)
		return false; /* ORD reached: wait for a Read Response */
	if ((w->flags & RPCRDMA_SEND_FENCE) && outstanding)
		return false;
	if (!sges_ok(ep, w->sge, w->num_sge,
		     w->opcode == RPCRDMA_WR_RDMA_READ ? RPCRDMA_ACCESS_LOCAL_WRITE : 0)) {
		w->status = RPCRDMA_WC_LOC_PROT_ERR;
		w->state = SIW_WQE_DONE;
		ep->sq_tx++;
		siw_sq_retire(ep);
		ep->term_hdr_len = 0;
		siw_ep_terminate(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
				 RDMAP_ECODE_UNSPECIFIED);
		return false;
	}
	ep->sq_tx++;
	tx_wqe_msg(ep, m, w);
	return true;
}

/* Pick and set up the next message, in the priority order above; false
 * when there is none (or the send queue waits on ORD / a fence). */
static bool tx_next_msg(struct siw_ep *ep)
{
	struct siw_txmsg *m = &ep->tx.msg;

	if (ep->term_pending) {
		ep->term_pending = false;
		tx_term_msg(ep, m);
		return true;
	}
	if (ep->state != SIW_EP_RTS)
		return false;
	if (ep->rtr_pending) {
		ep->rtr_pending = false;
		tx_rtr_msg(ep, m);
		return true;
	}
	if (ep->irq_tx != ep->irq_tail)
		return tx_read_resp_msg(ep, m);
	return tx_sq_msg(ep, m);
}

/* Append one FPDU of the current message to the batch. Returns false if
 * the batch has no room for it. */
static bool tx_build_fpdu(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;
	struct siw_txmsg *m = &tx->msg;
	struct siw_fpdu_buf *fb;
	uint32_t hl = m->tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
	uint32_t room = ep->max_ulpdu - hl - m->ext_len;
	uint64_t left = m->total - m->done;
	uint32_t seg = left > room ? room : (uint32_t)left;
	uint32_t need_iov = 2u + (m->nsge - m->sge_idx);
	uint32_t ulpdu, hlen, pad;
	bool last;
	uint32_t crc = SIW_CRC_INIT;
	uint8_t *h;

	if (tx->nfb == SIW_TX_FPDUS || tx->iov_n + need_iov > SIW_TX_IOV)
		return false;
	fb = &tx->fb[tx->nfb++];
	h = fb->hdr;
	last = m->done + seg == m->total;
	ulpdu = hl + m->ext_len + seg;
	put_be16(h, (uint16_t)ulpdu);
	h[2] =
	    (uint8_t)((m->tagged ? DDP_FLAG_TAGGED : 0) | (last ? DDP_FLAG_LAST : 0) | DDP_VERSION);
	h[3] = (uint8_t)(RDMAP_VERSION << RDMAP_RV_SHIFT | m->op);
	if (m->tagged) {
		put_be32(h + 2 + DDP_T_OFF_STAG, m->stag);
		put_be64(h + 2 + DDP_T_OFF_TO, m->to);
	} else {
		put_be32(h + 2 + DDP_U_OFF_RSVDULP, m->inv_stag);
		put_be32(h + 2 + DDP_U_OFF_QN, m->qn);
		put_be32(h + 2 + DDP_U_OFF_MSN, m->msn);
		put_be32(h + 2 + DDP_U_OFF_MO, (uint32_t)m->done);
	}
	hlen = MPA_LEN_SIZE + hl;
	if (m->ext_len) {
		memcpy(h + hlen, m->ext, m->ext_len);
		hlen += m->ext_len;
	}
	tx->iov[tx->iov_n].iov_base = h;
	tx->iov[tx->iov_n].iov_len = hlen;
	tx->iov_n++;
	if (ep->crc)
		crc = siw_crc_update(crc, h, hlen);
	/* gather the payload straight from registered memory */
	for (uint32_t want = seg; want;) {
		const struct rpcrdma_sge *s = &m->sge[m->sge_idx];
		uint64_t avail = s->length - m->sge_off;
		uint32_t take = avail > want ? want : (uint32_t)avail;

		if (take) {
			void *p = (void *)(uintptr_t)(s->addr + m->sge_off);

			tx->iov[tx->iov_n].iov_base = p;
			tx->iov[tx->iov_n].iov_len = take;
			tx->iov_n++;
			if (ep->crc)
				crc = siw_crc_update(crc, p, take);
		}
		want -= take;
		m->sge_off += take;
		if (m->sge_off == s->length) {
			m->sge_idx++;
			m->sge_off = 0;
		}
	}
	/* skip zero-length SGEs at the end */
	while (m->sge_idx < m->nsge && m->sge[m->sge_idx].length == 0)
		m->sge_idx++;
	pad = mpa_pad(ulpdu);
	memset(fb->trl, 0, pad);
	if (ep->crc) {
		crc = siw_crc_update(crc, fb->trl, pad);
		put_le32(fb->trl + pad, ~crc);
	} else {
		/* RFC 5044 §4.1: CRC field present, zero when not negotiated */
		memset(fb->trl + pad, 0, MPA_CRC_SIZE);
	}
	tx->iov[tx->iov_n].iov_base = fb->trl;
	tx->iov[tx->iov_n].iov_len = pad + MPA_CRC_SIZE;
	tx->iov_n++;
	tx->left += hlen + seg + pad + MPA_CRC_SIZE;
	tx->built += hlen + seg + pad + MPA_CRC_SIZE;
	m->done += seg;
	if (m->tagged)
		m->to += seg;
	ep->stats.tx_fpdus++;
	if (last) {
		uint8_t kind = m->kind == SIW_TXM_WQE         ? SIW_DONE_WQE
			       : m->kind == SIW_TXM_READ_RESP ? SIW_DONE_IRQ
			       : m->kind == SIW_TXM_TERM      ? SIW_DONE_TERM
							      : SIW_DONE_RTR;

		tx->done[tx->ndone].kind = kind;
		tx->done[tx->ndone].wqe = m->wqe;
		tx->done[tx->ndone].end = tx->built;
		tx->ndone++;
		m->kind = SIW_TXM_NONE;
	}
	return true;
}

/* Finish the messages whose last byte TCP has accepted: a send-queue entry
 * completes (its memory may be reused), a Read Response frees its IRD slot
 * (the peer may issue the next Read as soon as it has this one: RFC 5040
 * §6.4 counts it from then), a Terminate is followed by our FIN. Runs after
 * every sendmsg(), not per batch: a batch can end mid-way in TCP. */
static void tx_retire_sent(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;
	bool retire = false, term = false;

	for (; tx->done_i < tx->ndone && tx->done[tx->done_i].end <= tx->sent; tx->done_i++) {
		struct siw_wqe *w = tx->done[tx->done_i].wqe;

		switch (tx->done[tx->done_i].kind) {
		case SIW_DONE_WQE:
			if (w->opcode != RPCRDMA_WR_RDMA_READ) {
				w->state = SIW_WQE_DONE;
				w->status = RPCRDMA_WC_SUCCESS;
				retire = true;
			}
			break;
		case SIW_DONE_IRQ:
			ep->irq_head++;
			break;
		case SIW_DONE_TERM:
			term = true;
			break;
		default:
			break;
		}
	}
	if (retire)
		siw_sq_retire(ep);
	if (term) {
		/* FIN right behind the Terminate; an abortive close (RST)
		 * could overtake it at the peer. The socket is closed once the
		 * peer closes too (qp_rx.c drains) or at the deadline. */
		ep->term_sent = true;
		shutdown(ep->fd, SHUT_WR);
	}
}

static void tx_batch_reset(struct siw_tx *tx)
{
	tx->ndone = tx->done_i = 0;
	tx->nfb = 0;
	tx->iov_n = tx->iov_i = 0;
	tx->built = tx->sent = 0;
}

/* The trailer of a one-FPDU Send (@trl: 8 bytes): @pad zero bytes, then the
 * CRC field, as tx_build_fpdu() fills it: with CRC the CRC32c of the
 * header, payload and pad (RFC 5044 §4.1), else zero. */
static void one_send_trailer(const struct siw_ep *ep, const uint8_t *h,
			     const struct rpcrdma_sge *sg, uint32_t nsge, uint8_t *trl,
			     uint32_t pad)
{
	uint32_t crc;

	memset(trl, 0, 8);
	if (!ep->crc)
		return;
	crc = siw_crc_update(SIW_CRC_INIT, h, MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN);
	for (uint32_t i = 0; i < nsge; i++)
		if (sg[i].length)
			crc =
			    siw_crc_update(crc, (const void *)(uintptr_t)sg[i].addr, sg[i].length);
	crc = siw_crc_update(crc, trl, pad);
	put_le32(trl + pad, ~crc);
}

/*
 * The common case of an idle transmitter, built directly: exactly one Send
 * queued, nothing else to send (no Terminate, RTR or Read Response), and
 * the message fits one FPDU. Produces the same batch state as
 * tx_next_msg() + tx_build_fpdu() would (one FPDU, its completion record),
 * so the sendmsg loop and a short write work unchanged. False: not that
 * case, nothing done.
 */
static bool tx_build_one_send(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;
	struct siw_wqe *w;
	struct siw_fpdu_buf *fb = &tx->fb[0];
	uint8_t *h = fb->hdr;
	uint32_t ulpdu, pad, n = 0;
	uint8_t op = RDMAP_SEND;

	if (ep->sq_tx + 1u != ep->sq_tail || ep->state != SIW_EP_RTS || ep->term_pending ||
	    ep->rtr_pending || ep->irq_tx != ep->irq_tail || tx->msg.kind != SIW_TXM_NONE ||
	    ep->fd < 0)
		return false;
	w = &ep->sq[ep->sq_tx % ep->max_send_wr];
	if (w->opcode != RPCRDMA_WR_SEND || w->len > ep->max_ulpdu - DDP_UNTAGGED_HDR_LEN ||
	    ((w->flags & RPCRDMA_SEND_FENCE) && ep->orq_tail != ep->orq_head) ||
	    w->num_sge + 2u > SIW_TX_IOV)
		return false;
	if (!sges_ok(ep, w->sge, w->num_sge, 0))
		return false; /* the general path fails it (Terminate) */
	if (w->flags & RPCRDMA_SEND_INVALIDATE)
		op = (w->flags & RPCRDMA_SEND_SOLICITED) ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV;
	else if (w->flags & RPCRDMA_SEND_SOLICITED)
		op = RDMAP_SEND_SE;
	ep->sq_tx++;
	/* RFC 5044 §4 FPDU: ULPDU_Length, untagged DDP header (RFC 5041
	 * §4.3: last, QN 0, MSN, MO 0), payload, pad, CRC field */
	ulpdu = DDP_UNTAGGED_HDR_LEN + (uint32_t)w->len;
	put_be16(h, (uint16_t)ulpdu);
	h[2] = (uint8_t)(DDP_FLAG_LAST | DDP_VERSION);
	h[3] = (uint8_t)(RDMAP_VERSION << RDMAP_RV_SHIFT | op);
	put_be32(h + 2 + DDP_U_OFF_RSVDULP,
		 (w->flags & RPCRDMA_SEND_INVALIDATE) ? w->inv_stag : 0u);
	put_be32(h + 2 + DDP_U_OFF_QN, RDMAP_QN_SEND);
	put_be32(h + 2 + DDP_U_OFF_MSN, ep->tx_msn[RDMAP_QN_SEND]++);
	put_be32(h + 2 + DDP_U_OFF_MO, 0);
	tx->iov[n].iov_base = h;
	tx->iov[n++].iov_len = MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		if (!w->sge[i].length)
			continue;
		tx->iov[n].iov_base = (void *)(uintptr_t)w->sge[i].addr;
		tx->iov[n++].iov_len = w->sge[i].length;
	}
	pad = mpa_pad(ulpdu);
	one_send_trailer(ep, h, w->sge, w->num_sge, fb->trl, pad);
	tx->iov[n].iov_base = fb->trl;
	tx->iov[n++].iov_len = pad + MPA_CRC_SIZE;
	tx->iov_n = n;
	tx->nfb = 1;
	tx->left = tx->built = MPA_LEN_SIZE + ulpdu + pad + MPA_CRC_SIZE;
	tx->done[0].kind = SIW_DONE_WQE;
	tx->done[0].wqe = w;
	tx->done[0].end = tx->built;
	tx->ndone = 1;
	ep->stats.sends++;
	ep->stats.tx_fpdus++;
	return true;
}

/* TCP took @n bytes (fewer than tx->left) of the batch (counted in
 * stats.tx_bytes by the caller): advance the iovec cursor past them and
 * finish what they completed. */
static void tx_took(struct siw_ep *ep, uint64_t n)
{
	struct siw_tx *tx = &ep->tx;

	tx->left -= n;
	tx->sent += n;
	while (n > 0) {
		struct iovec *v = &tx->iov[tx->iov_i];

		if (n >= v->iov_len) {
			n -= v->iov_len;
			tx->iov_i++;
		} else {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= (size_t)n;
			n = 0;
		}
	}
	if (tx->done_i < tx->ndone && tx->done[tx->done_i].end <= tx->sent)
		tx_retire_sent(ep);
}

/*
 * siw_post_send()'s direct path, device lock held: a lone plain Send (no
 * invalidate, solicited event or fence; no SIW_TX_IOV overflow, one FPDU) on
 * an idle transmitter goes out with one sendmsg() before it becomes
 * a send-queue entry; when TCP takes every byte, the caller only pushes the
 * completion of a signaled one. Returns 0: sent completely; -1:
 * not that case, or nothing sent (queue it as usual, siw_tx_process()
 * retries and deals with the error); n > 0: TCP took n bytes only (queue
 * it, then siw_tx_direct_rest(ep, n)). The FPDU is what
 * tx_build_one_send() would build, byte for byte.
 */
ssize_t siw_tx_direct(struct siw_ep *ep, const struct rpcrdma_send_wr *wr, uint64_t len)
{
	struct siw_tx *tx = &ep->tx;
	struct iovec iov[SIW_TX_IOV];
	uint8_t h[MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN], trl[8];
	uint32_t ulpdu, pad, n = 0;
	struct msghdr mh;
	ssize_t r;

	if (wr->opcode != RPCRDMA_WR_SEND ||
	    (wr->flags & (RPCRDMA_SEND_INVALIDATE | RPCRDMA_SEND_SOLICITED | RPCRDMA_SEND_FENCE |
			  RPCRDMA_SEND_DEFER)) ||
	    ep->sq_head != ep->sq_tail || ep->state != SIW_EP_RTS || tx->blocked || ep->fd < 0 ||
	    tx->left || tx->mpa_off < tx->mpa_len || ep->tx_deferred || ep->term_pending ||
	    ep->rtr_pending || ep->irq_tx != ep->irq_tail || tx->msg.kind != SIW_TXM_NONE ||
	    len > ep->max_ulpdu - DDP_UNTAGGED_HDR_LEN || wr->num_sge + 2u > SIW_TX_IOV ||
	    !sges_ok(ep, wr->sg, wr->num_sge, 0))
		return -1;
	/* RFC 5044 §4 FPDU, RFC 5041 §4.3 untagged DDP header: as in
	 * tx_build_one_send() (the MSN is taken only once all of it went) */
	ulpdu = DDP_UNTAGGED_HDR_LEN + (uint32_t)len;
	put_be16(h, (uint16_t)ulpdu);
	h[2] = (uint8_t)(DDP_FLAG_LAST | DDP_VERSION);
	h[3] = (uint8_t)(RDMAP_VERSION << RDMAP_RV_SHIFT | RDMAP_SEND);
	put_be32(h + 2 + DDP_U_OFF_RSVDULP, 0);
	put_be32(h + 2 + DDP_U_OFF_QN, RDMAP_QN_SEND);
	put_be32(h + 2 + DDP_U_OFF_MSN, ep->tx_msn[RDMAP_QN_SEND]);
	put_be32(h + 2 + DDP_U_OFF_MO, 0);
	iov[n].iov_base = h;
	iov[n++].iov_len = sizeof(h);
	for (uint32_t i = 0; i < wr->num_sge; i++) {
		if (!wr->sg[i].length)
			continue;
		iov[n].iov_base = (void *)(uintptr_t)wr->sg[i].addr;
		iov[n++].iov_len = wr->sg[i].length;
	}
	pad = mpa_pad(ulpdu);
	one_send_trailer(ep, h, wr->sg, wr->num_sge, trl, pad);
	iov[n].iov_base = trl;
	iov[n++].iov_len = pad + MPA_CRC_SIZE;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = n;
	/* raw system call: see siw_tx_process() */
	r = siw_tx_sendmsg(ep, &mh);
	if (r <= 0)
		return -1;
	ep->stats.tx_bytes += (uint64_t)r;
	if ((uint64_t)r < MPA_LEN_SIZE + ulpdu + pad + MPA_CRC_SIZE)
		return r;
	ep->tx_msn[RDMAP_QN_SEND]++;
	ep->stats.sends++;
	ep->stats.tx_fpdus++;
	return 0;
}

/* The Send siw_tx_direct() left @sent bytes of was queued as the send
 * queue's only entry: build its batch as the normal path would (the same
 * bytes), count what TCP took, and carry on with the rest. */
void siw_tx_direct_rest(struct siw_ep *ep, uint64_t sent)
{
	struct siw_tx *tx = &ep->tx;

	tx_batch_reset(tx);
	if (!tx_build_one_send(ep)) {
		/* cannot happen: siw_tx_direct() checked the same */
		siw_ep_fail(ep, -EPROTO, RPCRDMA_WC_GENERAL_ERR, 0);
		return;
	}
	tx_took(ep, sent);
	(void)siw_tx_process(ep);
}

static void tx_build_batch(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;

	for (;;) {
		uint64_t cap;

		if (tx->msg.kind == SIW_TXM_NONE) {
			if (ep->fd < 0 || !tx_next_msg(ep))
				break;
		}
		/* a message that does not fit stays in tx->msg for the next
		 * batch */
		cap = ep->crc                             ? ep->tx_cap_crc
		      : tx->msg.kind == SIW_TXM_READ_RESP ? ep->tx_cap_rresp
							  : ep->tx_cap;
		if (tx->left >= cap || !tx_build_fpdu(ep))
			break;
	}
}

/* Whether tx_next_msg() could have a message now (a cheap superset: it
 * may still find the send queue waiting on ORD or a fence). */
static bool tx_more(const struct siw_ep *ep)
{
	return ep->sq_tx != ep->sq_tail || ep->irq_tx != ep->irq_tail || ep->term_pending ||
	       ep->rtr_pending || ep->tx.msg.kind != SIW_TXM_NONE;
}

bool siw_tx_pending(const struct siw_ep *ep)
{
	return ep->tx.left || ep->tx.mpa_off < ep->tx.mpa_len || tx_more(ep);
}

int siw_tx_process(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;

	/* whatever was held by RPCRDMA_SEND_DEFER goes now (or waits for
	 * EPOLLOUT / the connection like any other work) */
	if (ep->tx_deferred) {
		ep->tx_deferred = false;
		__atomic_store_n(&ep->dev->ndeferred, ep->dev->ndeferred - 1u, __ATOMIC_RELAXED);
	}
	if (ep->fd < 0)
		return 0;
	if (tx->mpa_off < tx->mpa_len) {
		int rc = siw_cm_flush_mpa_out(ep);

		if (rc || tx->mpa_off < tx->mpa_len)
			return rc == -EAGAIN ? 0 : rc;
	}
	for (;;) {
		struct msghdr mh;
		ssize_t n;

		if (!tx->left) {
			if (tx->iov_n)
				tx_batch_reset(tx);
			if (!tx_build_one_send(ep))
				tx_build_batch(ep);
			if (!tx->left) {
				if (tx->blocked) {
					tx->blocked = false;
					siw_ep_want_write(ep, false);
				}
				return 0;
			}
		}
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &tx->iov[tx->iov_i];
		mh.msg_iovlen = tx->iov_n - tx->iov_i;
		/* The raw system call: glibc's sendmsg() is a cancellation
		 * point, and a thread cancelled here would leave the device
		 * lock held (it also skips the cancellation bookkeeping on
		 * every message). Same result and errno. */
		n = siw_tx_sendmsg(ep, &mh);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				ep->stats.send_eagain++;
				if (!tx->blocked) {
					tx->blocked = true;
					siw_ep_want_write(ep, true);
				}
				return 0;
			}
			siw_ep_fail(ep, -errno, RPCRDMA_WC_TRANSPORT_ERR, 0);
			return 0;
		}
		ep->stats.tx_bytes += (uint64_t)n;
		if ((uint64_t)n == tx->left) {
			/* the whole batch went (the common case) */
			tx->left = 0;
			tx->sent += (uint64_t)n;
			tx->iov_i = tx->iov_n;
			tx_retire_sent(ep);
			if (!tx_more(ep)) {
				tx_batch_reset(tx);
				if (tx->blocked) {
					tx->blocked = false;
					siw_ep_want_write(ep, false);
				}
				return 0;
			}
			continue;
		}
		tx_took(ep, (uint64_t)n);
	}
}
