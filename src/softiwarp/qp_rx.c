/* SPDX-License-Identifier: MIT */
/*
 * Receive path: a resumable state machine over the TCP byte stream,
 * HDR -> DATA -> TRAILER per FPDU (RFC 5044 §4), that parses DDP (RFC 5041
 * §4) and RDMAP (RFC 5040 §4) headers, checks them (versions, opcodes,
 * queues, MSN/MO, protection per RFC 5042) *before* any byte is placed, and
 * places payload into its target: registered memory for tagged messages,
 * the posted receive for Sends.
 *
 * Headers and trailers are read through a small staging buffer (one recv()
 * usually brings a whole small FPDU). Bulk payload is not staged: once the
 * stage is empty, recvmsg() scatters the rest of the segment straight into
 * the target memory, with the stage as the last iovec to catch the trailer
 * and the next header. At most SIW_RX_STAGE bytes per FPDU are copied.
 *
 * With CRC negotiated, payload is placed before the FPDU's CRC is checked
 * (as on RNICs and in Linux siw); a mismatch terminates the connection, and
 * actions with side effects beyond placement (Read Request, Terminate,
 * completions, invalidation) wait until the CRC has been verified.
 *
 * RDMA Reads (a peer's Read Request, the Read Responses to ours and their
 * multi-FPDU receive) are qp_rx_read.c's; qp_rx.h is the interface between
 * the two. The per-FPDU state machine and the Send fast path stay here,
 * where the compiler inlines them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "softiwarp/qp_rx.h"
#include "softiwarp/siw.h"

static void rx_reset(struct siw_rx *rx)
{
	rx->state = SIW_RX_HDR;
	rx->hdr_have = 0;
	rx->hdr_need = 4;
	rx->crc = SIW_CRC_INIT;
}

/* A fatal error in the incoming stream: report it with a Terminate that
 * carries a copy of the offending header (RFC 5040 §4.8). */
int siw_rx_error(struct siw_ep *ep, uint8_t layer, uint8_t etype, uint8_t code)
{
	struct siw_rx *rx = &ep->rx;
	uint32_t hl = (rx->hdr[2] & DDP_FLAG_TAGGED) ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;

	ep->term_hdr_len = 0;
	ep->term_hdr_rreq = false;
	if (rx->hdr_have >= MPA_LEN_SIZE + hl) {
		uint32_t n = rx->hdr_have;

		if (n > sizeof(ep->term_hdr))
			n = sizeof(ep->term_hdr);
		memcpy(ep->term_hdr, rx->hdr, n);
		ep->term_hdr_len = n;
		ep->term_hdr_rreq = n == sizeof(ep->term_hdr);
	}
	siw_ep_terminate(ep, layer, etype, code);
	return -EPROTO;
}

/* Mapping of a protection failure to the Terminate codes: tagged
 * placement (RFC 5041 §7.2, "tagged buffer" errors, except access rights
 * which only RDMAP names) or an RDMA Read source (RFC 5040 §7.2). */
int siw_rx_tagged_error(struct siw_ep *ep, enum siw_mem_err e)
{
	switch (e) {
	case SIW_MEM_PD:
	case SIW_MEM_SCOPE:
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_TAGGED,
				    DDP_ECODE_T_STAG_NOT_ASSOC);
	case SIW_MEM_ACCESS:
		return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT,
				    RDMAP_ECODE_ACCESS_RIGHTS);
	case SIW_MEM_BOUNDS:
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_BASE_BOUNDS);
	case SIW_MEM_WRAP:
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_TO_WRAP);
	default:
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_INVALID_STAG);
	}
}

/* Point the placement targets at [off, off + len) of a receive's SGEs. */
static void rx_map_sges(struct siw_rx *rx, const struct rpcrdma_sge *sg, uint32_t n, uint64_t off,
			uint32_t len)
{
	rx->tgt_n = rx->tgt_i = 0;
	for (uint32_t i = 0; i < n && len; i++) {
		uint64_t l = sg[i].length;

		if (off >= l) {
			off -= l;
			continue;
		}
		uint64_t take = l - off;

		if (take > len)
			take = len;
		rx->tgt[rx->tgt_n].iov_base = (void *)(uintptr_t)(sg[i].addr + off);
		rx->tgt[rx->tgt_n].iov_len = (size_t)take;
		rx->tgt_n++;
		len -= (uint32_t)take;
		off = 0;
	}
}

/* Terminate payload: keep what fits for decoding, discard the rest into
 * the device's scratch area. */
static void rx_map_term(struct siw_ep *ep, uint32_t len)
{
	struct siw_rx *rx = &ep->rx;
	uint32_t keep = len < sizeof(rx->term) ? len : (uint32_t)sizeof(rx->term);

	rx->term_len = keep;
	siw_rx_map_one(rx, rx->term, keep);
	len -= keep;
	while (len && rx->tgt_n < SIW_MAX_SGE + 1) {
		uint32_t d =
		    len < sizeof(ep->dev->scratch) ? len : (uint32_t)sizeof(ep->dev->scratch);

		rx->tgt[rx->tgt_n].iov_base = ep->dev->scratch;
		rx->tgt[rx->tgt_n].iov_len = d;
		rx->tgt_n++;
		len -= d;
	}
}

static int rx_hdr_tagged(struct siw_ep *ep, uint32_t seg)
{
	struct siw_rx *rx = &ep->rx;
	const uint8_t *d = rx->hdr + MPA_LEN_SIZE;
	uint32_t stag = get_be32(d + DDP_T_OFF_STAG);
	uint64_t to = get_be64(d + DDP_T_OFF_TO);
	enum siw_mem_err e;

	if (rx->op == RDMAP_WRITE) {
		if (seg == 0) {
			/* zero-length Write (e.g. RFC 6581 RTR): nothing is
			 * accessed, so nothing to validate */
			rx->kind = SIW_RXK_ZERO;
			return 0;
		}
		/* RFC 5040 §5.1, RFC 5042 §5: remote write access to
		 * [to, to + seg) of an STag in this stream's PD */
		e = siw_mem_check_remote(ep, stag,
					 RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_LOCAL_WRITE,
					 to, seg, NULL);
		if (e)
			return siw_rx_tagged_error(ep, e);
		rx->kind = SIW_RXK_WRITE;
		siw_rx_map_one(rx, (void *)(uintptr_t)to, seg);
		return 0;
	}
	/* Read Response: RFC 5040 §5.2 (qp_rx_read.c) */
	return siw_rx_hdr_read_resp(ep, stag, to, seg);
}

static int rx_hdr_send(struct siw_ep *ep, uint32_t seg)
{
	struct siw_rx *rx = &ep->rx;
	struct siw_rqe *r;

	if (rx->qn != RDMAP_QN_SEND)
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_INVALID_QN);
	/* RFC 5041 §5.3: Sends consume posted receives in MSN order */
	if (rx->msn != ep->rx_msn[RDMAP_QN_SEND])
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_INVALID_MSN_RANGE);
	/* a shared queue's receive is taken at a message's first segment */
	if (rx->mo == 0 ? !siw_rq_ready(ep) : ep->rq_head == ep->rq_tail)
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_INVALID_MSN_NOBUF);
	r = &ep->rq[ep->rq_head % ep->max_recv_wr];
	if (rx->mo != rx->msg_bytes)
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_INVALID_MO);
	if (rx->mo == 0) {
		for (uint32_t i = 0; i < r->num_sge; i++) {
			if (siw_mem_check(ep->dev, r->sge[i].lkey, ep->pd,
					  RPCRDMA_ACCESS_LOCAL_WRITE, r->sge[i].addr,
					  r->sge[i].length, NULL)) {
				(void)siw_rq_complete(ep, r, RPCRDMA_WC_LOC_PROT_ERR, 0, 0, 0);
				ep->rq_head++;
				return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
						    RDMAP_ECODE_UNSPECIFIED);
			}
		}
	}
	if ((uint64_t)rx->mo + seg > r->len) {
		(void)siw_rq_complete(ep, r, RPCRDMA_WC_LOC_LEN_ERR, 0, 0, 0);
		ep->rq_head++;
		return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				    DDP_ECODE_UT_MSG_TOO_LONG);
	}
	if (rx->last && (rx->op == RDMAP_SEND_INV || rx->op == RDMAP_SEND_SE_INV)) {
		/* RFC 5040 §6.2: only an STag of this stream's PD may be
		 * invalidated remotely (RFC 5042 §5.2) */
		struct siw_mr *mr = siw_mem_lookup(ep->dev, rx->inv_stag);

		if (!mr || mr->pd != ep->pd)
			return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
					    RDMAP_ECODE_CANNOT_INVALIDATE);
	}
	rx->kind = SIW_RXK_SEND;
	rx_map_sges(rx, r->sge, r->num_sge, rx->mo, seg);
	return 0;
}

static int rx_hdr_done(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	const uint8_t *d = rx->hdr + MPA_LEN_SIZE;
	bool tagged = d[0] & DDP_FLAG_TAGGED;
	uint32_t seg = rx->ulpdu_len - (rx->hdr_need - MPA_LEN_SIZE);
	int rc;

	rx->tgt_n = rx->tgt_i = 0;
	if (tagged) {
		rc = rx_hdr_tagged(ep, seg);
	} else {
		switch (rx->op) {
		case RDMAP_SEND:
		case RDMAP_SEND_INV:
		case RDMAP_SEND_SE:
		case RDMAP_SEND_SE_INV:
			rc = rx_hdr_send(ep, seg);
			break;
		case RDMAP_READ_REQ:
			rc = siw_rx_hdr_read_req(ep, seg);
			break;
		case RDMAP_TERMINATE:
			if (rx->qn != RDMAP_QN_TERMINATE)
				return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
						    DDP_ECODE_UT_INVALID_QN);
			rx->kind = SIW_RXK_TERM;
			rx_map_term(ep, seg);
			rc = 0;
			break;
		default:
			return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
					    RDMAP_ECODE_OPCODE);
		}
	}
	if (rc)
		return rc;
	rx->msg_open = !rx->last;
	rx->data_left = seg;
	rx->trl_have = 0;
	rx->trl_need = mpa_pad(rx->ulpdu_len) + MPA_CRC_SIZE;
	rx->state = seg ? SIW_RX_DATA : SIW_RX_TRAILER;
	return 0;
}

/* Header bytes arrived: the first 4 say the header's length. */
int siw_rx_hdr_step(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	const uint8_t *d = rx->hdr + MPA_LEN_SIZE;

	if (rx->hdr_need == 4) {
		bool tagged = d[0] & DDP_FLAG_TAGGED;
		uint32_t hl = tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;

		rx->ulpdu_len = get_be16(rx->hdr);
		rx->last = d[0] & DDP_FLAG_LAST;
		rx->op = d[1] & RDMAP_OPCODE_MASK;
		/* RFC 5044 §4: an FPDU shorter than a DDP header means the
		 * framing is lost */
		if (rx->ulpdu_len < hl)
			return siw_rx_error(ep, TERM_LAYER_LLP, LLP_ETYPE_MPA,
					    LLP_ECODE_FPDU_START);
		/* RFC 5041 §4.2 DV, RFC 5040 §4.2 RV */
		if ((d[0] & DDP_DV_MASK) != DDP_VERSION)
			return siw_rx_error(ep, TERM_LAYER_DDP,
					    tagged ? DDP_ETYPE_TAGGED : DDP_ETYPE_UNTAGGED,
					    tagged ? DDP_ECODE_T_VERSION : DDP_ECODE_UT_VERSION);
		if ((d[1] >> RDMAP_RV_SHIFT) != RDMAP_VERSION)
			return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
					    RDMAP_ECODE_VERSION);
		if (tagged && rx->op != RDMAP_WRITE && rx->op != RDMAP_READ_RESP)
			return siw_rx_error(ep, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
					    RDMAP_ECODE_OPCODE);
		rx->hdr_need = MPA_LEN_SIZE + hl;
		return 0;
	}
	if (!(d[0] & DDP_FLAG_TAGGED) && rx->hdr_need == MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN) {
		rx->qn = get_be32(d + DDP_U_OFF_QN);
		rx->msn = get_be32(d + DDP_U_OFF_MSN);
		rx->mo = get_be32(d + DDP_U_OFF_MO);
		rx->inv_stag = get_be32(d + DDP_U_OFF_RSVDULP);
		if (rx->op == RDMAP_READ_REQ) {
			if (rx->ulpdu_len < DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN)
				return siw_rx_error(ep, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
						    DDP_ECODE_UT_INVALID_MO);
			rx->hdr_need += RDMAP_RREQ_LEN;
			return 0;
		}
	}
	if (ep->crc)
		rx->crc = siw_crc_update(rx->crc, rx->hdr, rx->hdr_need);
	return rx_hdr_done(ep);
}

static void rx_term_received(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	uint8_t layer = 0, etype = 0, code = 0;
	enum rpcrdma_wc_status st = RPCRDMA_WC_REM_OP_ERR;

	if (rx->term_len >= RDMAP_TERM_CTRL_LEN)
		siw_term_decode(rx->term, &layer, &etype, &code);
	ep->term_layer = layer;
	ep->term_etype = etype;
	ep->term_code = code;
	ep->stats.terminates_rx++;
	if ((layer == TERM_LAYER_RDMAP && etype == RDMAP_ETYPE_REMOTE_PROT) ||
	    (layer == TERM_LAYER_DDP && etype == DDP_ETYPE_TAGGED))
		st = RPCRDMA_WC_REM_ACCESS_ERR;
	else if (layer == TERM_LAYER_DDP && etype == DDP_ETYPE_UNTAGGED)
		st = RPCRDMA_WC_REM_INV_REQ_ERR;
	else if (layer == TERM_LAYER_LLP)
		st = RPCRDMA_WC_TRANSPORT_ERR;
	rx->state = SIW_RX_DEAD;
	siw_ep_event(ep, RPCRDMA_EV_TERMINATE, -ECONNABORTED);
	siw_ep_fail(ep, -ECONNABORTED, st, (uint32_t)layer << 16 | (uint32_t)etype << 8 | code);
}

void siw_term_decode(const uint8_t *c, uint8_t *layer, uint8_t *etype, uint8_t *code)
{
	/* RFC 5040 §4.8 order: byte 0 = Layer<<4 | EType, M/D/R in the top
	 * bits of byte 2. Linux siw: byte 0 = EType<<4 | Layer, M/D/R in the
	 * low bits of byte 2. Layers are 0..2, so a high nibble above 2 or
	 * flags in the low bits of byte 2 identify the Linux order. */
	bool linux_order = (c[0] >> 4) > TERM_LAYER_LLP || ((c[2] & 0x07u) && !(c[2] & 0xe0u));

	if (linux_order) {
		*layer = c[0] & 0x0fu;
		*etype = c[0] >> 4;
	} else {
		*layer = c[0] >> 4;
		*etype = c[0] & 0x0fu;
	}
	*code = c[1];
}

/* A whole FPDU arrived with a good CRC: act on it. */
static void rx_fpdu_done(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	uint32_t seg = rx->ulpdu_len - (rx->hdr_need - MPA_LEN_SIZE);

	ep->stats.rx_fpdus++;
	switch (rx->kind) {
	case SIW_RXK_WRITE:
		if (rx->last)
			ep->stats.writes_in++;
		break;
	case SIW_RXK_ZERO:
		if (rx->op == RDMAP_READ_RESP && rx->last)
			ep->rtr_read_pending = false;
		break;
	case SIW_RXK_READ_RESP:
		siw_rx_read_resp_done(ep, seg);
		break;
	case SIW_RXK_SEND: {
		struct siw_rqe *r = &ep->rq[ep->rq_head % ep->max_recv_wr];

		rx->msg_bytes += seg;
		if (rx->last) {
			uint32_t flags = 0, inv = 0;

			if (rx->op == RDMAP_SEND_SE || rx->op == RDMAP_SEND_SE_INV)
				flags |= RPCRDMA_WC_F_SOLICITED;
			if (rx->op == RDMAP_SEND_INV || rx->op == RDMAP_SEND_SE_INV) {
				struct siw_mr *mr = siw_mem_lookup(ep->dev, rx->inv_stag);

				if (mr && mr->pd == ep->pd)
					mr->valid = false;
				flags |= RPCRDMA_WC_F_WITH_INV;
				inv = rx->inv_stag;
			}
			ep->rq_head++;
			ep->rx_msn[RDMAP_QN_SEND]++;
			ep->stats.recvs++;
			(void)siw_rq_complete(ep, r, RPCRDMA_WC_SUCCESS, (uint32_t)rx->msg_bytes,
					      flags, inv);
			rx->msg_bytes = 0;
		}
		break;
	}
	case SIW_RXK_READ_REQ:
		siw_rx_accept_read(ep);
		break;
	case SIW_RXK_TERM:
		rx_term_received(ep);
		return;
	default:
		break;
	}
	if (ep->rx.state == SIW_RX_DEAD)
		return;
	/* RFC 6581 §6: the responder is ready once the initiator's first
	 * FPDU (its RTR) arrived */
	if (ep->state == SIW_EP_MPA_REP_SENT) {
		siw_ep_enter_rts(ep);
		siw_ep_event(ep, RPCRDMA_EV_ESTABLISHED, 0);
	}
	rx_reset(rx);
}

/* Copy stage bytes into the targets (CRC over them). */
static void rx_place(struct siw_ep *ep, const uint8_t *src, uint32_t n)
{
	struct siw_rx *rx = &ep->rx;

	if (ep->crc)
		rx->crc = siw_crc_update(rx->crc, src, n);
	while (n) {
		struct iovec *t = &rx->tgt[rx->tgt_i];
		uint32_t k = t->iov_len < n ? (uint32_t)t->iov_len : n;

		memcpy(t->iov_base, src, k);
		t->iov_base = (uint8_t *)t->iov_base + k;
		t->iov_len -= k;
		src += k;
		n -= k;
		if (!t->iov_len)
			rx->tgt_i++;
	}
}

int siw_rx_trailer_done(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;

	if (ep->crc) {
		uint32_t pad = rx->trl_need - MPA_CRC_SIZE;
		uint32_t c = ~siw_crc_update(rx->crc, rx->trl, pad);

		/* RFC 5044 §4.1; little-endian on the wire (crc.c) */
		if (c != get_le32(rx->trl + pad)) {
			ep->stats.crc_errors++;
			return siw_rx_error(ep, TERM_LAYER_LLP, LLP_ETYPE_MPA, LLP_ECODE_CRC);
		}
	}
	rx_fpdu_done(ep);
	return 0;
}

/* Use the staged bytes for the current state. */
static int rx_consume(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	uint32_t avail = rx->st_len - rx->st_off;
	const uint8_t *src = rx->stage + rx->st_off;
	uint32_t k;

	switch (rx->state) {
	case SIW_RX_HDR:
		k = rx->hdr_need - rx->hdr_have;
		if (k > avail)
			k = avail;
		memcpy(rx->hdr + rx->hdr_have, src, k);
		rx->hdr_have += k;
		rx->st_off += k;
		if (rx->hdr_have == rx->hdr_need)
			return siw_rx_hdr_step(ep);
		return 0;
	case SIW_RX_DATA:
		k = rx->data_left < avail ? rx->data_left : avail;
		rx_place(ep, src, k);
		rx->st_off += k;
		rx->data_left -= k;
		if (!rx->data_left)
			rx->state = SIW_RX_TRAILER;
		return 0;
	case SIW_RX_TRAILER:
		k = rx->trl_need - rx->trl_have;
		if (k > avail)
			k = avail;
		memcpy(rx->trl + rx->trl_have, src, k);
		rx->trl_have += k;
		rx->st_off += k;
		if (rx->trl_have == rx->trl_need)
			return siw_rx_trailer_done(ep);
		return 0;
	default:
		rx->st_off = rx->st_len; /* dead: drop */
		return 0;
	}
}

/* Account for @n payload bytes the kernel placed at the targets. */
void siw_rx_placed(struct siw_ep *ep, uint32_t n)
{
	struct siw_rx *rx = &ep->rx;

	for (uint32_t left = n; left;) {
		struct iovec *t = &rx->tgt[rx->tgt_i];
		uint32_t k = t->iov_len < left ? (uint32_t)t->iov_len : left;

		if (ep->crc)
			rx->crc = siw_crc_update(rx->crc, t->iov_base, k);
		t->iov_base = (uint8_t *)t->iov_base + k;
		t->iov_len -= k;
		left -= k;
		if (!t->iov_len)
			rx->tgt_i++;
	}
	rx->data_left -= n;
	if (!rx->data_left)
		rx->state = SIW_RX_TRAILER;
}

/* recvmsg() straight into the placement targets, then the stage; *stage_n
 * is how many bytes went to the stage. */
ssize_t siw_rx_recv_direct(struct siw_ep *ep, uint32_t *stage_n, size_t *asked)
{
	struct siw_rx *rx = &ep->rx;
	struct iovec iov[SIW_MAX_SGE + 2];
	struct msghdr mh;
	uint32_t n = 0, want = rx->data_left;
	ssize_t got;

	for (uint32_t i = rx->tgt_i; i < rx->tgt_n && want; i++) {
		size_t l = rx->tgt[i].iov_len < want ? rx->tgt[i].iov_len : want;

		iov[n].iov_base = rx->tgt[i].iov_base;
		iov[n].iov_len = l;
		want -= (uint32_t)l;
		n++;
	}
	iov[n].iov_base = rx->stage;
	iov[n].iov_len = SIW_RX_STAGE;
	n++;
	*asked = (size_t)(rx->data_left - want) + SIW_RX_STAGE;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = n;
	got = siw_sock_recvmsg(ep->fd, &mh);
	if (got <= 0)
		return got;
	uint32_t p = (uint64_t)got < rx->data_left ? (uint32_t)got : rx->data_left;

	siw_rx_placed(ep, p);
	*stage_n = (uint32_t)got - p;
	return got;
}

/* Whether the rest of this Read Response FPDU and those expected after it
 * are received with one recvmsg() (qp_rx_read.c); asked on every DATA pass,
 * so it stays here where it is inlined. */
static bool rx_can_predict(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;

	if (rx->last || rx->pred_off || rx->tgt_n != 1 || rx->ulpdu_len <= DDP_TAGGED_HDR_LEN)
		return false;
	return rx->kind == SIW_RXK_READ_RESP && rx->pred_read && siw_orq_head_wqe(ep) != NULL;
}

/* Local write check of a posted receive's single SGE, the MR cached like
 * qp_tx.c sges_ok() (valid while dev->mr_gen is unchanged); every check of
 * siw_mem_check() but the table lookup is made again. */
static bool rx_fast_sge_ok(struct siw_ep *ep, const struct rpcrdma_sge *sg)
{
	struct siw_mr *mr = ep->rx_mr;

	if (mr && ep->rx_mr_gen == ep->dev->mr_gen && mr->stag == sg->lkey && mr->valid &&
	    mr->pd == ep->pd && (mr->access & RPCRDMA_ACCESS_LOCAL_WRITE) &&
	    sg->addr <= UINT64_MAX - sg->length && sg->addr >= mr->addr &&
	    sg->addr + sg->length <= mr->addr + mr->len)
		return true;
	if (siw_mem_check(ep->dev, sg->lkey, ep->pd, RPCRDMA_ACCESS_LOCAL_WRITE, sg->addr,
			  sg->length, &mr) != SIW_MEM_OK)
		return false;
	ep->rx_mr = mr;
	ep->rx_mr_gen = ep->dev->mr_gen;
	return true;
}

/*
 * Fast path for whole small Sends in the stage, at an FPDU boundary: the
 * common case of RPC traffic. Only an FPDU the state machine would accept
 * with the same result is taken here (one-segment untagged Send or Send
 * with SE, RFC 5041 §4.3 DV 1, RFC 5040 §4.2 RV 1, queue 0, the expected
 * MSN, MO 0, a posted receive with one SGE that passes the local write
 * check and is long enough, no CRC, RFC 5044 §4); its completion, MSN, RQ
 * and statistics are those of rx_fpdu_done(). Anything else is left at the
 * boundary for rx_consume(), so errors and Terminates stay where they are.
 */
static void rx_fast_sends(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;

	if (ep->crc || rx->msg_bytes || ep->state == SIW_EP_MPA_REP_SENT)
		return;
	while (rx->st_len - rx->st_off >= MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN + MPA_CRC_SIZE) {
		const uint8_t *h = rx->stage + rx->st_off;
		const uint8_t *d = h + MPA_LEN_SIZE;
		uint32_t ulpdu_len = get_be16(h);
		uint32_t total = MPA_LEN_SIZE + ulpdu_len + mpa_pad(ulpdu_len) + MPA_CRC_SIZE;
		uint8_t op = d[1] & RDMAP_OPCODE_MASK;
		uint32_t seg, flags = 0;
		struct siw_rqe *r;

		if (ulpdu_len < DDP_UNTAGGED_HDR_LEN || total > rx->st_len - rx->st_off)
			return;
		if ((d[0] & (DDP_FLAG_TAGGED | DDP_FLAG_LAST)) != DDP_FLAG_LAST ||
		    (d[0] & DDP_DV_MASK) != DDP_VERSION ||
		    (d[1] >> RDMAP_RV_SHIFT) != RDMAP_VERSION)
			return;
		if (op != RDMAP_SEND && op != RDMAP_SEND_SE)
			return;
		if (get_be32(d + DDP_U_OFF_QN) != RDMAP_QN_SEND ||
		    get_be32(d + DDP_U_OFF_MSN) != ep->rx_msn[RDMAP_QN_SEND] ||
		    get_be32(d + DDP_U_OFF_MO) != 0 || !siw_rq_ready(ep))
			return;
		r = &ep->rq[ep->rq_head % ep->max_recv_wr];
		seg = ulpdu_len - DDP_UNTAGGED_HDR_LEN;
		if (r->num_sge != 1 || seg > r->len || seg > r->sge[0].length ||
		    !rx_fast_sge_ok(ep, &r->sge[0]))
			return;
		if (seg)
			memcpy((void *)(uintptr_t)r->sge[0].addr, d + DDP_UNTAGGED_HDR_LEN, seg);
		if (op == RDMAP_SEND_SE)
			flags = RPCRDMA_WC_F_SOLICITED;
		rx->st_off += total;
		ep->stats.rx_fpdus++;
		ep->rq_head++;
		ep->rx_msn[RDMAP_QN_SEND]++;
		ep->stats.recvs++;
		(void)siw_rq_complete(ep, r, RPCRDMA_WC_SUCCESS, seg, flags, 0);
	}
}

/* After an error nothing is placed any more: input is read and dropped
 * (level-triggered epoll would spin on it otherwise) until the peer
 * closes, which ends the connection. */
static void rx_drain(struct siw_ep *ep)
{
	for (;;) {
		ssize_t n = siw_sock_recv_raw(ep->fd, ep->dev->scratch, sizeof(ep->dev->scratch));

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		/* the peer closed (or reset) too: the end of an orderly
		 * release, or of an error */
		siw_ep_fail(ep,
			    ep->state == SIW_EP_CLOSING ? 0
			    : ep->term_sent             ? -EPROTO
							: -ECONNABORTED,
			    RPCRDMA_WC_WR_FLUSH_ERR, 0);
		return;
	}
}

/* The socket is empty for now. If this pass received bytes (@got) and left
 * a message half received (inside an FPDU, or after one with L clear), the
 * peer is still sending: tell progress, which may spin for the rest rather
 * than sleep (verbs.c). A pass that found nothing new starts no spin. */
static int rx_stop(struct siw_ep *ep, bool got)
{
	const struct siw_rx *rx = &ep->rx;

	if (got &&
	    (rx->state == SIW_RX_DATA || rx->state == SIW_RX_TRAILER ||
	     (rx->state == SIW_RX_HDR && (rx->hdr_have > 0 || rx->msg_open))) &&
	    ep->rx_spin_ns > __atomic_load_n(&ep->dev->rx_spin_want, __ATOMIC_RELAXED))
		__atomic_store_n(&ep->dev->rx_spin_want, ep->rx_spin_ns, __ATOMIC_RELAXED);
	return 0;
}

int siw_rx_process(struct siw_ep *ep)
{
	struct siw_rx *rx = &ep->rx;
	bool drained = false, got = false;

	for (;;) {
		ssize_t n;
		uint32_t stage_n = 0;
		size_t asked = SIW_RX_STAGE;

		if (ep->fd < 0)
			return 0;
		if (rx->state == SIW_RX_DEAD) {
			rx_drain(ep);
			return 0;
		}
		if (rx->state == SIW_RX_MPA) {
			int rc = siw_cm_rx_mpa(ep);

			if (rc)
				return rc == -EAGAIN ? 0 : rc;
			continue;
		}
		if (rx->st_off < rx->st_len) {
			int rc = rx_consume(ep);

			if (rc)
				return 0; /* the endpoint is terminating */
			continue;
		}
		rx->st_off = rx->st_len = 0;
		if (rx->replay_off < rx->replay_len) {
			/* bytes of a misprediction, parsed again */
			uint32_t k = rx->replay_len - rx->replay_off;

			if (k > SIW_RX_STAGE)
				k = SIW_RX_STAGE;
			memcpy(rx->stage, rx->replay + rx->replay_off, k);
			rx->replay_off += k;
			rx->st_len = k;
			continue;
		}
		/* A short read emptied the socket: return to epoll (level
		 * triggered) rather than pay a recv() that says EAGAIN. */
		if (drained)
			return rx_stop(ep, got);
		if (rx->state == SIW_RX_DATA && rx_can_predict(ep)) {
			n = siw_rx_recv_predict(ep, &stage_n, &asked);
		} else if (rx->state == SIW_RX_DATA) {
			n = siw_rx_recv_direct(ep, &stage_n, &asked);
		} else {
			/* raw: glibc's recv() is a cancellation point,
			 * bookkeeping a non-blocking call does not need */
			n = siw_sock_recv_raw(ep->fd, rx->stage, SIW_RX_STAGE);
			stage_n = n > 0 ? (uint32_t)n : 0;
		}
		if (n == 0) {
			/* orderly close by the peer */
			siw_ep_fail(ep, 0, RPCRDMA_WC_WR_FLUSH_ERR, 0);
			return 0;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return rx_stop(ep, got);
			siw_ep_fail(ep, -errno, RPCRDMA_WC_TRANSPORT_ERR, 0);
			return 0;
		}
		ep->stats.rx_bytes += (uint64_t)n;
		got = true;
		/* what went past the placed payload landed in the stage */
		rx->st_len = stage_n;
		drained = (size_t)n < asked;
		if (rx->state == SIW_RX_HDR && rx->hdr_have == 0 && rx->st_off == 0) {
			rx_fast_sends(ep);
			/* all of it taken and the socket empty: what the next
			 * pass of the loop would find, without the pass */
			if (drained && rx->st_off == rx->st_len && rx->state == SIW_RX_HDR &&
			    rx->replay_off >= rx->replay_len) {
				rx->st_off = rx->st_len = 0;
				return rx_stop(ep, got);
			}
		}
	}
}
