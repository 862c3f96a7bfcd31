/* SPDX-License-Identifier: MIT */
/*
 * Receive path, the RDMA Read half (RFC 5040 §4.4, §5.2): an inbound Read
 * Request, checked (IRD, RFC 5042 §5 protection of the source) and queued
 * for qp_tx.c to answer; and the opt-in receive of several Read Response
 * FPDUs with one recvmsg() into the sink of our oldest outstanding Read.
 * Parsing, header checks and placement are qp_rx.c's (qp_rx.h), so a
 * predicted FPDU is checked exactly like any other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "softiwarp/qp_rx.h"
#include "softiwarp/siw.h"

/* ---------------- Read Request ---------------- */

/* Mapping of a protection failure of a Read's source to the Terminate
 * codes (RFC 5040 §7.2). */
static int rx_rread_error(struct siw_ep *ep, enum siw_mem_err e)
{
	static const uint8_t code[] = {
	    [SIW_MEM_INVALID_STAG] = RDMAP_ECODE_INVALID_STAG,
	    [SIW_MEM_PD] = RDMAP_ECODE_STAG_NOT_ASSOC,
	    [SIW_MEM_ACCESS] = RDMAP_ECODE_ACCESS_RIGHTS,
	    [SIW_MEM_BOUNDS] = RDMAP_ECODE_BASE_BOUNDS,
	    [SIW_MEM_WRAP] = RDMAP_ECODE_TO_WRAP,
	    [SIW_MEM_SCOPE] = RDMAP_ECODE_STAG_NOT_ASSOC,
	};

	return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT, code[e]);
}

/* The header of a Read Request (RFC 5040 §4.4) on queue 1, in MSN order
 * (RFC 5041 §5.3). It is acted on once its CRC is checked
 * (siw_rx_accept_read). */
int siw_rx_hdr_read_req(struct siw_ep *ep, uint32_t seg)
{
	struct siw_rx *rx = &ep->rx;

	if (rx->qn != RDMAP_QN_READ_REQ)
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_INVALID_QN);
	if (rx->msn != ep->rx_msn[RDMAP_QN_READ_REQ])
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_INVALID_MSN_RANGE);
	/* RFC 5040 §4.4: a Read Request is one segment of exactly its
	 * header */
	if (seg != 0 || !rx->last || rx->mo != 0)
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_MSG_TOO_LONG);
	rx->kind = SIW_RXK_READ_REQ;
	return 0;
}

/* A Read Request whose FPDU arrived whole with a good CRC: queue it for
 * the transmit path, or terminate the stream. */
void siw_rx_accept_read(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	const uint8_t *r = rx->hdr + MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN;
	struct siw_irqe q;
	enum siw_mem_err e;

	q.sink_stag = get_be32(r + RDMAP_RREQ_SINK_STAG);
	q.sink_to = get_be64(r + RDMAP_RREQ_SINK_TO);
	q.len = get_be32(r + RDMAP_RREQ_SIZE);
	q.src_stag = get_be32(r + RDMAP_RREQ_SRC_STAG);
	q.src_to = get_be64(r + RDMAP_RREQ_SRC_TO);
	/* IRD enforced (RFC 5040 §6.4, RFC 6581): more outstanding Reads
	 * than we advertised is a protocol violation */
	if (ep->irq_tail - ep->irq_head >= ep->irq_cap || ep->ird == 0) {
		(void)siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				   DDP_ECODE_UT_INVALID_MSN_RANGE);
		return;
	}
	if (q.len) {
		e = siw_mem_check_remote(ep, q.src_stag, RPCRDMA_ACCESS_REMOTE_READ, q.src_to,
					 q.len, NULL);
		if (e) {
			(void)rx_rread_error(ep, e);
			return;
		}
	}
#ifdef RPCRDMA_TEST_HOOKS
	if (siw_fault_mute_read(ep)) {
		ep->rx_msn[RDMAP_QN_READ_REQ]++;
		return;
	}
#endif
	ep->irq[ep->irq_tail++ % ep->irq_cap] = q;
	ep->rx_msn[RDMAP_QN_READ_REQ]++;
}

/* ---------------- Read Response ---------------- */

/* The header of a Read Response segment (RFC 5040 §5.2): it answers the
 * oldest outstanding Read and may only land inside that Read's sink. */
int siw_rx_hdr_read_resp(struct siw_ep *ep, uint32_t stag, uint64_t to, uint32_t seg)
{
	struct siw_rx *rx = &ep->rx;
	struct siw_wqe *w = siw_orq_head_wqe(ep);
	enum siw_mem_err e;

	/* the answer to a zero-length Read Request sent as RTR (RFC 6581) */
	if (ep->rtr_read_pending && w == NULL && seg == 0) {
		rx->kind = SIW_RXK_ZERO;
		return 0;
	}
	if (!w)
		return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				    RDMAP_ECODE_OPCODE);
	if (seg == 0 && w->len == 0) {
		rx->kind = SIW_RXK_READ_RESP;
		rx->tgt_n = rx->tgt_i = 0;
		return 0;
	}
	if (w->num_sge == 0 || stag != w->sge[0].lkey)
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_INVALID_STAG);
	if (to < w->sge[0].addr + w->read_got || to - w->sge[0].addr > w->len ||
	    seg > w->len - (to - w->sge[0].addr))
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_BASE_BOUNDS);
	e = siw_mem_check(ep->dev, stag, ep->pd, RPCRDMA_ACCESS_LOCAL_WRITE, to, seg, NULL);
	if (e)
		return siw_rx_tagged_error(ep, e);
	rx->kind = SIW_RXK_READ_RESP;
	siw_rx_map_one(rx, (void *)(uintptr_t)to, seg);
	return 0;
}

/* A Read Response FPDU of @seg payload bytes arrived with a good CRC; the
 * last one completes the Read. */
void siw_rx_read_resp_done(struct siw_ep *ep, uint32_t seg)
{
	struct siw_wqe *w = siw_orq_head_wqe(ep);

	if (!w) /* zero-length response to a zero-length Read */
		return;
	w->read_got += seg;
	if (ep->rx.last) {
		w->state = SIW_WQE_DONE;
		w->status = RPCRDMA_WC_SUCCESS;
		ep->orq_head++;
		siw_sq_retire(ep);
	}
}

/* ---------------- Read Response prediction ---------------- */

/*
 * Read Response prediction: several FPDUs in one recvmsg(). While the
 * current Read Response FPDU is not the last of its message, one recvmsg()
 * may scatter the rest of it (payload, trailer) and then, for each FPDU
 * expected next (same size as the current one, the last one up to the end
 * of the Read's sink), its header and trailer into rx->pred_rx and its
 * payload straight into the sink. Afterwards every header is compared with
 * the one expected, byte for byte, and then checked like any other
 * (siw_rx_hdr_step: STag, key, PD, access, bounds, RFC 5042 §5). From the
 * first header that differs on, what arrived is copied into rx->replay and
 * parsed normally, and prediction stays off for this connection.
 *
 * Bytes can land before their header is checked only in the sink of the
 * oldest outstanding Read (its SGE and length are ours), which the
 * response overwrites anyway. Opt-in (RPCRDMA_SIW_RX_PREDICT=1): one
 * recvmsg() per FPDU lets the requester take its socket more often, which
 * moves receive work off the responder's CPU (bench/provider/README.md).
 */

/* FPDUs received through prediction, and mispredictions (siw.h). */
void siw_ep_rx_pred_stats(struct rpcrdma_ep *rep, uint64_t *fpdus, uint64_t *miss)
{
	struct siw_ep *ep = to_siw_ep(rep);

	siw_dev_lock(ep->dev);
	*fpdus = ep->rx.pred_fpdus;
	*miss = ep->rx.pred_miss;
	siw_dev_unlock(ep->dev);
}

/* A misprediction: keep @bytes of what arrived, from iov[idx] on, for
 * parsing again, and predict no more on this connection. */
static int rx_replay_from(struct siw_ep *ep, const struct iovec *iov, uint32_t niov, uint32_t idx,
			  size_t bytes)
{
	struct siw_rx *rx = &ep->rx;

	rx->pred_miss++;
	rx->pred_off = true;
	if (!rx->replay) {
		rx->replay = malloc(SIW_REPLAY_MAX);
		if (!rx->replay)
			return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
					    RDMAP_ECODE_UNSPECIFIED);
	}
	rx->replay_off = rx->replay_len = 0;
	for (uint32_t i = idx; i < niov && bytes; i++) {
		size_t k = iov[i].iov_len;

		if (k > bytes)
			k = bytes;
		memcpy(rx->replay + rx->replay_len, iov[i].iov_base, k);
		rx->replay_len += (uint32_t)k;
		bytes -= k;
	}
	rx->state = SIW_RX_HDR;
	rx->hdr_have = 0;
	rx->hdr_need = 4;
	rx->crc = SIW_CRC_INIT;
	return 0;
}

/* The iovecs of a predicting recvmsg(): the rest of the current FPDU, then
 * header, payload (into the sink, up to @end) and trailer of each FPDU
 * expected, then the stage. Returns how many FPDUs are expected; *n is the
 * iovec count, *asked their bytes, plen[] the payload of each. */
static uint32_t rx_pred_iov(struct siw_rx *rx, uint32_t stag, uint64_t end, struct iovec *iov,
			    uint32_t *n, uint32_t *plen, size_t *asked)
{
	const uint32_t hl = MPA_LEN_SIZE + DDP_TAGGED_HDR_LEN;
	uint32_t full = rx->ulpdu_len - DDP_TAGGED_HDR_LEN;
	uint64_t to = (uint64_t)(uintptr_t)rx->tgt[0].iov_base + rx->data_left;
	uint32_t k = 0, npred = 0;

	iov[k++] = (struct iovec){rx->tgt[0].iov_base, rx->data_left};
	iov[k++] = (struct iovec){rx->trl, rx->trl_need};
	*asked = rx->data_left + rx->trl_need;
	for (; to < end && npred < SIW_PRED_FPDUS; npred++) {
		uint32_t p = end - to < full ? (uint32_t)(end - to) : full;
		uint32_t ul = DDP_TAGGED_HDR_LEN + p;
		uint8_t *e = rx->pred_exp[npred];

		/* the header our peer sends if it keeps cutting as so far */
		put_be16(e, (uint16_t)ul);
		e[2] =
		    (uint8_t)(DDP_FLAG_TAGGED | (to + p == end ? DDP_FLAG_LAST : 0) | DDP_VERSION);
		e[3] = (uint8_t)(RDMAP_VERSION << RDMAP_RV_SHIFT | RDMAP_READ_RESP);
		put_be32(e + 2 + DDP_T_OFF_STAG, stag);
		put_be64(e + 2 + DDP_T_OFF_TO, to);
		plen[npred] = p;
		iov[k++] = (struct iovec){rx->pred_rx[npred], hl};
		iov[k++] = (struct iovec){(void *)(uintptr_t)to, p};
		iov[k++] = (struct iovec){rx->pred_rx[npred] + hl, mpa_pad(ul) + MPA_CRC_SIZE};
		*asked += hl + p + mpa_pad(ul) + MPA_CRC_SIZE;
		to += p;
	}
	iov[k++] = (struct iovec){rx->stage, SIW_RX_STAGE};
	*asked += SIW_RX_STAGE;
	*n = k;
	return npred;
}

/* After a predicting recvmsg() brought @pos bytes past the current FPDU:
 * check each expected FPDU's header and act on it as rx_consume() would.
 * *stage_n: the bytes left in the stage. */
static void rx_pred_walk(struct siw_ep *ep, const struct iovec *iov, uint32_t n, uint32_t npred,
			 const uint32_t *plen, size_t pos, uint32_t *stage_n)
{
	struct siw_rx *rx = &ep->rx;
	const uint32_t hl = MPA_LEN_SIZE + DDP_TAGGED_HDR_LEN;

	for (uint32_t k = 0; k < npred; k++) {
		uint8_t *h = rx->pred_rx[k];
		uint32_t tl = mpa_pad(DDP_TAGGED_HDR_LEN + plen[k]) + MPA_CRC_SIZE;
		uint32_t m;

		if (pos < hl) {
			/* a partial header: parse it the ordinary way */
			memcpy(rx->stage, h, pos);
			*stage_n = (uint32_t)pos;
			return;
		}
		if (memcmp(h, rx->pred_exp[k], hl) != 0) {
			(void)rx_replay_from(ep, iov, n, 2u + 3u * k, pos);
			return;
		}
		rx->pred_fpdus++;
		/* the expected header; now checked like any other */
		memcpy(rx->hdr, h, hl);
		rx->hdr_have = rx->hdr_need = hl;
		rx->ulpdu_len = DDP_TAGGED_HDR_LEN + plen[k];
		rx->last = h[2] & DDP_FLAG_LAST;
		rx->op = RDMAP_READ_RESP;
		if (siw_rx_hdr_step(ep))
			return;
		pos -= hl;
		m = pos < plen[k] ? (uint32_t)pos : plen[k];
		if (m)
			siw_rx_placed(ep, m);
		pos -= m;
		if (rx->state == SIW_RX_DATA)
			return;
		m = pos < tl ? (uint32_t)pos : tl;
		memcpy(rx->trl, h + hl, m);
		rx->trl_have = m;
		pos -= m;
		if (m < tl || siw_rx_trailer_done(ep) || rx->state != SIW_RX_HDR)
			return;
	}
	*stage_n = (uint32_t)pos; /* what is left went to the stage */
}

ssize_t siw_rx_recv_predict(struct siw_ep *ep, uint32_t *stage_n, size_t *asked)
{
	struct siw_rx *rx = &ep->rx;
	struct siw_wqe *w = siw_orq_head_wqe(ep);
	struct iovec iov[3u * SIW_PRED_FPDUS + 3u];
	uint32_t plen[SIW_PRED_FPDUS];
	uint32_t n, k, npred;
	uint64_t to = (uint64_t)(uintptr_t)rx->tgt[0].iov_base + rx->data_left;
	struct msghdr mh;
	ssize_t got;
	size_t pos;

	if (!w || w->num_sge != 1 || to >= w->sge[0].addr + w->len)
		return siw_rx_recv_direct(ep, stage_n, asked);
	npred = rx_pred_iov(rx, w->sge[0].lkey, w->sge[0].addr + w->len, iov, &n, plen, asked);
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = n;
	got = siw_sock_recvmsg(ep->fd, &mh);
	*stage_n = 0;
	if (got <= 0)
		return got;
	/* the current FPDU: payload, then trailer */
	pos = (size_t)got;
	k = pos < rx->data_left ? (uint32_t)pos : rx->data_left;
	siw_rx_placed(ep, k);
	pos -= k;
	if (rx->state == SIW_RX_DATA)
		return got;
	k = pos < rx->trl_need ? (uint32_t)pos : rx->trl_need;
	rx->trl_have = k;
	pos -= k;
	if (rx->trl_have < rx->trl_need || siw_rx_trailer_done(ep) || rx->state != SIW_RX_HDR)
		return got; /* incomplete, or terminating */
	rx_pred_walk(ep, iov, n, npred, plen, pos, stage_n);
	return got;
}
