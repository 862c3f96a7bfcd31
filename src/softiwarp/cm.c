/* SPDX-License-Identifier: MIT */
/*
 * Connection management: TCP connect/listen/accept and the MPA start-frame
 * exchange (RFC 5044 §7.1 "MPA ID Req Frame" / "MPA ID Rep Frame"), with
 * the RFC 6581 enhanced IRD/ORD word and peer-to-peer ready-to-receive
 * (RTR). Explicit states (siw.h enum siw_ep_state, enum siw_creq_state)
 * and a deadline for every state that waits on the peer.
 *
 * Decisions, each from the RFCs or from Linux siw's behaviour
 * (docs/linux-peer.md):
 *   - CRC is used when either side asks (RFC 5044 §7.1 "C");
 *   - markers are never used: a request or reply demanding them is refused
 *     (RFC 5044 §7.1 "M");
 *   - reserved flag bits (Linux sets 0x0800) are ignored on receipt;
 *   - a responder answers revision 1 and 2 requests in kind;
 *   - RTR: the initiator offers what its attribute says (zero-length Write
 *     preferred, Read accepted); as responder we pick Write when offered,
 *     else Read; a Send RTR is not offered/picked (peer-to-peer is then
 *     left off).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "softiwarp/siw.h"

struct mpa_parsed {
	uint16_t bits;
	uint8_t rev;
	bool enhanced;
	uint16_t ird_w, ord_w;
	const uint8_t *pd;
	uint16_t pd_len;
};

void siw_sock_tune(int fd, uint32_t sockbuf)
{
	int one = 1;

	/* latency: FPDUs are whole messages, never wait for more */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (sockbuf) {
		int sz = (int)sockbuf;

		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
}

uint32_t siw_mpa_build(uint8_t *buf, bool reply, uint16_t flags, uint8_t rev, bool enhanced,
		       uint16_t ird_word, uint16_t ord_word, const void *pdata, uint16_t len)
{
	uint32_t off = MPA_HDR_LEN;

	const char *key = reply ? MPA_KEY_REP : MPA_KEY_REQ;

	/* the 16-byte key goes on the wire without its NUL */
	for (uint32_t i = 0; i < MPA_KEY_LEN; i++)
		buf[i] = (uint8_t)key[i];
	put_be16(buf + 16, (uint16_t)(flags | rev | (enhanced ? MPA_FLAG_ENHANCED : 0)));
	put_be16(buf + 18, (uint16_t)(len + (enhanced ? MPA_V2_WORD_LEN : 0)));
	if (enhanced) {
		put_be16(buf + off, ird_word);
		put_be16(buf + off + 2, ord_word);
		off += MPA_V2_WORD_LEN;
	}
	if (len)
		memcpy(buf + off, pdata, len);
	return off + len;
}

/* A start frame that does not open with the MPA key we wait for: name the
 * protocol the peer seems to speak from its first bytes, so a client sent
 * to the wrong port says what it found (include/rpcrdma/common.h). */
static int mpa_not_mpa(const uint8_t *b, uint32_t n)
{
	/* an HTTP status line, e.g. "HTTP/1.1 400 Bad Request" */
	if (n >= 5 && memcmp(b, "HTTP/", 5) == 0)
		return -RPCRDMA_EPEER_HTTP;
	/* RFC 5531 §11: a record mark with the last-fragment bit set, then an
	 * RPC message whose msg_type (after the XID) is REPLY (1) */
	if (n >= 12 && (b[0] & 0x80) && get_be32(b + 8) == 1)
		return -RPCRDMA_EPEER_ONCRPC;
	return -EPROTO;
}

int siw_mpa_read(int fd, struct siw_mpa_in *in, const char *key)
{
	if (in->need == 0) {
		in->need = MPA_HDR_LEN;
		in->have = 0;
	}
	for (;;) {
		ssize_t n = siw_sock_recv(fd, in->buf + in->have, in->need - in->have);

		if (n == 0) {
			/* closed: say what the bytes before the close were */
			uint32_t k = in->have < MPA_KEY_LEN ? in->have : MPA_KEY_LEN;

			if (k && in->need == MPA_HDR_LEN && memcmp(in->buf, key, k) != 0)
				return mpa_not_mpa(in->buf, in->have);
			return -ECONNRESET;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		in->have += (uint32_t)n;
		if (in->have < in->need)
			continue;
		if (in->need == MPA_HDR_LEN) {
			uint16_t pdl;

			if (memcmp(in->buf, key, MPA_KEY_LEN) != 0)
				return mpa_not_mpa(in->buf, in->have);
			pdl = get_be16(in->buf + 18);
			/* RFC 5044 §7.1: at most 512 bytes (plus the RFC 6581
			 * word, tolerated on receipt) */
			if (pdl > MPA_MAX_PD + MPA_V2_WORD_LEN)
				return -EPROTO;
			in->need += pdl;
			if (pdl)
				continue;
		}
		return 1;
	}
}

static int mpa_parse(const struct siw_mpa_in *in, struct mpa_parsed *p)
{
	uint16_t pdl = get_be16(in->buf + 18);

	p->bits = get_be16(in->buf + 16);
	p->rev = (uint8_t)(p->bits & MPA_REV_MASK);
	p->enhanced = p->rev >= MPA_REV2 && (p->bits & MPA_FLAG_ENHANCED);
	p->ird_w = p->ord_w = 0;
	p->pd = in->buf + MPA_HDR_LEN;
	p->pd_len = pdl;
	if (p->enhanced) {
		/* RFC 6581 §9: the IRD/ORD word opens the private data */
		if (pdl < MPA_V2_WORD_LEN)
			return -EPROTO;
		p->ird_w = get_be16(p->pd);
		p->ord_w = get_be16(p->pd + 2);
		p->pd += MPA_V2_WORD_LEN;
		p->pd_len = (uint16_t)(pdl - MPA_V2_WORD_LEN);
	}
	if (p->pd_len > MPA_MAX_PD)
		return -EPROTO;
	return 0;
}

static void ep_event_pd(struct siw_ep *ep, enum rpcrdma_event_type type, int status,
			const uint8_t *pd, uint16_t len)
{
	struct siw_ev_node tmp;
	struct rpcrdma_event *ev = &tmp.ev;

	if (!ep->evch)
		return;
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->status = status;
	ev->ep = &ep->base;
	ev->context = ep->base.context;
	ev->ird = (uint16_t)ep->peer_ird;
	ev->ord = (uint16_t)ep->peer_ord;
	ev->mpa_rev = ep->rev;
	ev->crc = ep->crc;
	ev->peer = ep->peer;
	ev->private_data_len = len;
	if (len)
		memcpy(ev->private_data, pd, len);
	(void)siw_evch_push(ep->dev, ep->evch, ev);
}

int siw_cm_flush_mpa_out(struct siw_ep *ep)
{
	struct siw_tx *tx = &ep->tx;

	while (tx->mpa_off < tx->mpa_len) {
		ssize_t n = siw_sock_send(ep->fd, tx->mpa + tx->mpa_off, tx->mpa_len - tx->mpa_off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (!tx->blocked) {
					tx->blocked = true;
					siw_ep_want_write(ep, true);
				}
				return -EAGAIN;
			}
			siw_ep_fail(ep, -errno, RPCRDMA_WC_TRANSPORT_ERR, 0);
			return -EPIPE;
		}
		tx->mpa_off += (uint32_t)n;
		ep->stats.tx_bytes += (uint64_t)n;
	}
	return 0;
}

/*
 * A dual-stack listener (an IPv6 socket with IPV6_V6ONLY off) sees IPv4
 * peers as v4-mapped addresses (::ffff:a.b.c.d, RFC 4291 §2.5.5.2). Report
 * them as the plain IPv4 addresses they are, so a peer's address reads the
 * same whichever listener accepted it.
 */
static void sockaddr_unmap(struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	struct sockaddr_in sin = {0};

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	sin.sin_family = AF_INET;
	sin.sin_port = s6->sin6_port;
	memcpy(&sin.sin_addr, &s6->sin6_addr.s6_addr[12], sizeof(sin.sin_addr));
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &sin, sizeof(sin));
}

static int sock_open(const struct sockaddr *addr, socklen_t addrlen)
{
	int fd;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if ((addr->sa_family == AF_INET && addrlen < sizeof(struct sockaddr_in)) ||
	    (addr->sa_family == AF_INET6 && addrlen < sizeof(struct sockaddr_in6)))
		return -EINVAL;
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/*
 * First-frame nudge, active side only. Linux siw (6.1) hands the socket
 * from its connection manager to the QP receive path after it has sent its
 * MPA reply; an FPDU that arrived before that switch stays unread until the
 * next data-ready callback, i.e. until another frame arrives (about half of
 * all connections to the kernel NFS server in the interop guest). An RPC
 * client holding one credit then waits for its first reply for ever.
 * So: if after RTS we sent at least one frame and nothing at all arrived
 * SIW_NUDGE_MS after the first, we send a zero-length RDMA Write in the
 * RFC 6581 RTR Write form (tagged, STag 0, TO 0, no payload, Last; qp_tx.c
 * builds it for ep->rtr_pending). A slow peer (a loaded emulated guest
 * took 200 ms to establish) may switch even after that nudge arrived, so
 * while nothing arrives it is repeated with the delay doubled each time,
 * up to SIW_NUDGE_MAX nudges per connection (20, 40, ... 640 ms apart with
 * the default: 1.26 s in all). A zero-length
 * tagged Write accesses no memory, so the data sink validates no STag:
 * Linux siw_proc_write() returns before its STag lookup when the segment
 * is empty, as qp_rx.c rx_hdr_tagged() does, in any state.
 * The delay is ep->nudge_ms, the device's RPCRDMA_SIW_NUDGE_MS (tunables.c;
 * 0 disables), copied when the endpoint was created: the public endpoint
 * attributes (include/rpcrdma/provider.h) have no field for it yet.
 * Timing without a hook in the send path: from RTS on, siw_cm_timers looks
 * every quarter delay (the watch step) whether a first frame has gone out,
 * during the first SIW_NUDGE_WINDOW_MS (a frame sent later reaches the
 * kernel after its switch); once one has, the nudge is due one delay after
 * that check, i.e. one delay to one delay + one step after the frame.
 * Nothing is sent if any byte arrived meanwhile.
 */
#define SIW_NUDGE_WINDOW_MS 1000u
#define SIW_NUDGE_MAX       6u

enum siw_nudge_phase {
	SIW_NUDGE_OFF = 0,
	SIW_NUDGE_WATCH, /* no frame sent yet: look again every step */
	SIW_NUDGE_DUE,   /* first frame seen: nudge at the deadline */
};

static uint32_t nudge_step(const struct siw_ep *ep)
{
	return ep->nudge_ms >= 4u ? ep->nudge_ms / 4u : 1u;
}

/* At RTS (active side). Not with a Read RTR: its Read Response is the
 * peer's answer, and a Write would not be that RTR form. */
static void nudge_arm(struct siw_ep *ep)
{
	uint64_t now;

	ep->nudge_phase = SIW_NUDGE_OFF;
	ep->nudges = 0;
	if (!ep->nudge_ms || ep->rtr == RPCRDMA_RTR_READ)
		return;
	now = siw_now_ms();
	ep->nudge_tx_mark = ep->stats.tx_bytes;
	ep->nudge_rx_mark = ep->stats.rx_bytes;
	ep->nudge_until = now + SIW_NUDGE_WINDOW_MS;
	ep->nudge_phase = SIW_NUDGE_WATCH;
	ep->deadline_ms = now + nudge_step(ep);
	siw_timer_rearm(ep->dev);
}

/* The RTS deadline passed (siw_cm_timers re-arms the timer after). */
static void nudge_check(struct siw_ep *ep, uint64_t now)
{
	uint8_t phase = ep->nudge_phase;

	ep->nudge_phase = SIW_NUDGE_OFF;
	if (phase == SIW_NUDGE_OFF || ep->stats.rx_bytes != ep->nudge_rx_mark)
		return; /* the peer is heard from: nothing is stuck */
	if (phase == SIW_NUDGE_WATCH) {
		if (ep->stats.tx_bytes != ep->nudge_tx_mark) {
			/* the first frame left during the last step */
			ep->nudge_phase = SIW_NUDGE_DUE;
			ep->deadline_ms = now + ep->nudge_ms;
		} else if (now < ep->nudge_until) {
			ep->nudge_phase = SIW_NUDGE_WATCH;
			ep->deadline_ms = now + nudge_step(ep);
		}
		return;
	}
	ep->rtr_pending = true;
	(void)siw_tx_process(ep);
	if (++ep->nudges < SIW_NUDGE_MAX && ep->state == SIW_EP_RTS) {
		ep->nudge_phase = SIW_NUDGE_DUE;
		ep->deadline_ms = now + ((uint64_t)ep->nudge_ms << ep->nudges);
	}
}

int siw_cm_connect(struct siw_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		   const void *pdata, size_t len)
{
	int fd, rc;

	if (ep->used)
		return -EISCONN;
	if (len + (ep->want_rev >= MPA_REV2 ? MPA_V2_WORD_LEN : 0) > MPA_MAX_PD)
		return -EINVAL;
	fd = sock_open(addr, addrlen);
	if (fd < 0)
		return fd;
	siw_sock_tune(fd, ep->sockbuf);
	if (connect(fd, addr, addrlen) < 0 && errno != EINPROGRESS) {
		rc = -errno;
		close(fd);
		return rc;
	}
	ep->fd = fd;
	rc = siw_poll_add(ep->dev, &ep->poll, fd, EPOLLIN | EPOLLOUT);
	if (rc) {
		close(fd);
		ep->fd = -1;
		return rc;
	}
	memcpy(&ep->peer, addr, addrlen < sizeof(ep->peer) ? addrlen : sizeof(ep->peer));
	ep->used = true;
	ep->active = true;
	ep->state = SIW_EP_CONNECTING;
	ep->pdata_len = (uint16_t)len;
	if (len)
		memcpy(ep->pdata, pdata, len);
	ep->deadline_ms = siw_now_ms() + ep->timeout_ms;
	siw_timer_rearm(ep->dev);
	return 0;
}

/* Active side: the MPA request, RFC 5044 §7.1 + RFC 6581 §9. */
static void send_mpa_request(struct siw_ep *ep)
{
	bool enh = ep->want_rev >= MPA_REV2;
	uint16_t ird_w = (uint16_t)(ep->ird & MPA_V2_IRD_ORD_MASK);
	uint16_t ord_w = (uint16_t)(ep->ord & MPA_V2_IRD_ORD_MASK);

	if (enh && ep->want_rtr != RPCRDMA_RTR_NONE) {
		ird_w |= MPA_V2_PEER_TO_PEER;
		ord_w |= ep->want_rtr == RPCRDMA_RTR_READ ? MPA_V2_READ_RTR : MPA_V2_WRITE_RTR;
	}
	ep->tx.mpa_len =
	    siw_mpa_build(ep->tx.mpa, false, ep->want_crc ? MPA_FLAG_CRC : 0,
			  enh ? MPA_REV2 : MPA_REV1, enh, ird_w, ord_w, ep->pdata, ep->pdata_len);
	ep->tx.mpa_off = 0;
	(void)siw_cm_flush_mpa_out(ep);
#ifdef RPCRDMA_TEST_HOOKS
	siw_fault_setup(ep);
#endif
}

void siw_cm_ep_ready(struct siw_ep *ep, uint32_t events)
{
	int err = 0;
	socklen_t l = sizeof(err);

	(void)events;
	if (ep->state != SIW_EP_CONNECTING)
		return;
	if (getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		err = errno;
	if (err) {
		siw_ep_fail(ep, -err, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		return;
	}
	l = sizeof(ep->local);
	(void)getsockname(ep->fd, (struct sockaddr *)&ep->local, &l);
	ep->state = SIW_EP_MPA_REQ_SENT;
	ep->rx.state = SIW_RX_MPA;
	ep->mpa_in.need = 0;
	ep->tx.blocked = false;
	siw_ep_want_write(ep, false);
	send_mpa_request(ep);
}

/* Active side: an MPA reply we cannot work with although it is well-formed
 * and not a reject. Both sides are in FPDU mode now (RFC 5044 §7.1), so the
 * error goes to the peer as an MPA-layer Terminate (RFC 6581 §10 codes),
 * then the stream is closed as after any Terminate (qp_tx.c: FIN behind it,
 * qp.c/siw_cm_timers: closed when the peer closes, or after a second). The
 * application sees CONNECT_ERROR -EPROTO (never ESTABLISHED), with the
 * Terminate's layer/type/code; posted work is flushed. */
static void mpa_reply_refuse(struct siw_ep *ep, uint8_t code)
{
	ep->rx.state = SIW_RX_DEAD;
	ep->state = SIW_EP_ERROR;
	ep->rtr = RPCRDMA_RTR_NONE;
	ep->term_layer = TERM_LAYER_LLP;
	ep->term_etype = LLP_ETYPE_MPA;
	ep->term_code = code;
	ep->term_hdr_len = 0;
	ep->term_pending = true;
	ep->stats.terminates_tx++;
	siw_ep_flush(ep, RPCRDMA_WC_WR_FLUSH_ERR, 0);
	ep->disc_reported = true; /* the one event is this CONNECT_ERROR */
	siw_ep_event(ep, RPCRDMA_EV_CONNECT_ERROR, -EPROTO);
	ep->deadline_ms = siw_now_ms() + 1000u;
	siw_timer_rearm(ep->dev);
	(void)siw_tx_process(ep);
}

/* Active side: the MPA reply (RFC 5044 §7.1, RFC 6581 §9). */
int siw_cm_rx_mpa(struct siw_ep *ep)
{
	struct mpa_parsed p;
	int rc = siw_mpa_read(ep->fd, &ep->mpa_in, MPA_KEY_REP);

	if (rc == 0)
		return -EAGAIN;
	if (rc > 0)
		rc = mpa_parse(&ep->mpa_in, &p);
	if (rc < 0) {
		siw_ep_fail(ep, rc, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		return rc;
	}
	if (p.bits & MPA_FLAG_REJECT) {
		ep->rev = p.rev;
		ep_event_pd(ep, RPCRDMA_EV_REJECTED, -ECONNREFUSED, p.pd, p.pd_len);
		ep->disc_reported = true;
		siw_ep_fail(ep, -ECONNREFUSED, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		return -ECONNREFUSED;
	}
	/* markers refused; a reply must not raise the revision */
	if ((p.bits & MPA_FLAG_MARKERS) || p.rev < MPA_REV1 || p.rev > ep->want_rev) {
		siw_ep_fail(ep, -EPROTO, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		return -EPROTO;
	}
	ep->rev = p.rev;
	ep->crc = ep->want_crc || (p.bits & MPA_FLAG_CRC);
	ep->rtr = RPCRDMA_RTR_NONE;
	if (p.enhanced) {
		ep->peer_ird = p.ird_w & MPA_V2_IRD_ORD_MASK;
		ep->peer_ord = p.ord_w & MPA_V2_IRD_ORD_MASK;
		/* our outbound Reads are bounded by the peer's IRD */
		ep->eff_ord = ep->ord < ep->peer_ird ? ep->ord : ep->peer_ird;
		if (ep->want_rtr != RPCRDMA_RTR_NONE && (p.ird_w & MPA_V2_PEER_TO_PEER)) {
			if (p.ord_w & MPA_V2_WRITE_RTR)
				ep->rtr = RPCRDMA_RTR_WRITE;
			else if (p.ord_w & MPA_V2_READ_RTR)
				ep->rtr = RPCRDMA_RTR_READ;
		}
		/* A zero-length Read Request is still a Read Request: it takes
		 * one of the responder's IRD slots (RFC 5040 §6.4, RFC 6581 §5).
		 * With IRD 0 the responder has none (Linux 6.1's iwcm BUG()s on
		 * such a Read), so the Read RTR is unusable; Write was preferred
		 * above, so the peer allowed no other: no matching RTR model. */
		if (ep->rtr == RPCRDMA_RTR_READ && ep->peer_ird == 0) {
			mpa_reply_refuse(ep, LLP_ECODE_NO_MATCHING_RTR);
			return -EPROTO;
		}
	} else {
		ep->eff_ord = ep->ord;
	}
	ep->rtr_pending = ep->rtr != RPCRDMA_RTR_NONE;
	siw_ep_enter_rts(ep);
	nudge_arm(ep);
	ep_event_pd(ep, RPCRDMA_EV_ESTABLISHED, 0, p.pd, p.pd_len);
	(void)siw_tx_process(ep);
	return 0;
}

int siw_cm_listen(struct siw_dev *dev, struct siw_evch *evch, const struct sockaddr *addr,
		  socklen_t addrlen, int backlog, void *context, struct siw_listener **out)
{
	struct siw_listener *l;
	int fd, one = 1, rc;

	fd = sock_open(addr, addrlen);
	if (fd < 0)
		return fd;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* IPv6 listeners take IPv4 connections too (v4-mapped), whatever
	 * net.ipv6.bindv6only says: "::" is then the one dual-stack
	 * wildcard. */
	if (addr->sa_family == AF_INET6) {
		int zero = 0;

		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	if (bind(fd, addr, addrlen) < 0 || listen(fd, backlog > 0 ? backlog : 128) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->base.dev = &dev->base;
	l->base.context = context;
	l->dev = dev;
	l->evch = evch;
	l->fd = fd;
	l->poll.kind = SIW_POLL_LISTENER;
	rc = siw_poll_add(dev, &l->poll, fd, EPOLLIN);
	if (rc) {
		close(fd);
		free(l);
		return rc;
	}
	evch->refs++;
	dev->nobjs++;
	*out = l;
	return 0;
}

void siw_cm_creq_free(struct siw_creq *req)
{
	struct siw_dev *dev = req->dev;
	struct siw_creq **pp;

	for (pp = &dev->creqs; *pp; pp = &(*pp)->next) {
		if (*pp == req) {
			*pp = req->next;
			break;
		}
	}
	if (req->fd >= 0) {
		siw_poll_del(dev, &req->poll, req->fd);
		close(req->fd);
	}
	free(req);
}

void siw_cm_listener_destroy(struct siw_listener *l)
{
	struct siw_dev *dev = l->dev;
	struct siw_creq *r, *next;

	for (r = dev->creqs; r; r = next) {
		next = r->next;
		if (r->listener == l)
			siw_cm_creq_free(r); /* unanswered: closing rejects them */
	}
	siw_poll_del(dev, &l->poll, l->fd);
	close(l->fd);
	l->evch->refs--;
	dev->nobjs--;
	free(l);
}

void siw_cm_listener_ready(struct siw_listener *l)
{
	struct siw_dev *dev = l->dev;

	for (;;) {
		struct sockaddr_storage ss = {0};
		socklen_t sl = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct siw_creq *req;

		if (fd < 0)
			return; /* EAGAIN, or a transient error: try on the next event */
		req = calloc(1, sizeof(*req));
		if (!req) {
			close(fd);
			continue;
		}
		req->base.dev = &dev->base;
		req->dev = dev;
		req->listener = l;
		req->fd = fd;
		sockaddr_unmap(&ss);
		req->peer = ss;
		req->poll.kind = SIW_POLL_CREQ;
		req->state = SIW_CREQ_READING;
		req->deadline_ms = siw_now_ms() + SIW_DEF_TIMEOUT;
		if (siw_poll_add(dev, &req->poll, fd, EPOLLIN)) {
			close(fd);
			free(req);
			continue;
		}
		req->next = dev->creqs;
		dev->creqs = req;
		siw_timer_rearm(dev);
	}
}

/* Send a reply frame on a bare socket (reject path): one attempt, the
 * socket is closed right after. */
static void creq_send_reject(struct siw_creq *req, const void *pdata, size_t len)
{
	bool enh = req->enhanced;
	uint8_t rev = req->rev == MPA_REV1 ? MPA_REV1 : MPA_REV2;
	uint32_t n;

	if (len + (enh ? MPA_V2_WORD_LEN : 0) > MPA_MAX_PD)
		len = MPA_MAX_PD - (enh ? MPA_V2_WORD_LEN : 0);
	n = siw_mpa_build(req->out, true, MPA_FLAG_REJECT, rev, enh, 0, 0, pdata, (uint16_t)len);
	(void)siw_sock_send(req->fd, req->out, n);
	shutdown(req->fd, SHUT_WR);
}

void siw_cm_creq_ready(struct siw_creq *req, uint32_t events)
{
	struct mpa_parsed p;
	int rc;

	(void)events;
	if (req->state != SIW_CREQ_READING)
		return;
	rc = siw_mpa_read(req->fd, &req->mpa_in, MPA_KEY_REQ);
	if (rc == 0)
		return;
	if (rc > 0)
		rc = mpa_parse(&req->mpa_in, &p);
	if (rc < 0) {
		siw_cm_creq_free(req); /* not MPA, or malformed: just close */
		return;
	}
	req->flags = p.bits;
	req->rev = p.rev;
	req->enhanced = p.enhanced;
	req->peer_ird_word = p.ird_w;
	req->peer_ord_word = p.ord_w;
	req->pd = p.pd;
	req->pd_len = p.pd_len;
	/* RFC 5044 §7.1: we never use markers; revisions 1 and 2 only */
	if ((p.bits & MPA_FLAG_MARKERS) || p.rev < MPA_REV1 || p.rev > MPA_REV2) {
		if (p.rev > MPA_REV2)
			req->rev = MPA_REV2;
		creq_send_reject(req, NULL, 0);
		siw_cm_creq_free(req);
		return;
	}
	/* the application answers; stop watching the socket until then */
	req->state = SIW_CREQ_PENDING;
	req->deadline_ms = 0;
	siw_poll_del(req->dev, &req->poll, req->fd);

	struct siw_ev_node tmp;
	struct rpcrdma_event *ev = &tmp.ev;

	memset(ev, 0, sizeof(*ev));
	ev->type = RPCRDMA_EV_CONNECT_REQUEST;
	ev->listener = &req->listener->base;
	ev->req = &req->base;
	ev->context = req->listener->base.context;
	ev->ird = p.ird_w & MPA_V2_IRD_ORD_MASK;
	ev->ord = p.ord_w & MPA_V2_IRD_ORD_MASK;
	ev->mpa_rev = p.rev;
	ev->crc = p.bits & MPA_FLAG_CRC;
	ev->peer = req->peer;
	ev->private_data_len = p.pd_len;
	if (p.pd_len)
		memcpy(ev->private_data, p.pd, p.pd_len);
	(void)siw_evch_push(req->dev, req->listener->evch, ev);
}

int siw_cm_reject(struct siw_creq *req, const void *pdata, size_t len)
{
	int rc = 0;

	/* RFC 5044 §7.1 + RFC 6581 §9: the 512 bytes include the IRD/ORD word */
	if (len + (req->enhanced ? MPA_V2_WORD_LEN : 0) > MPA_MAX_PD) {
		pdata = NULL;
		len = 0;
		rc = -EINVAL;
	}
	if (req->state == SIW_CREQ_PENDING)
		creq_send_reject(req, pdata, len);
	siw_cm_creq_free(req);
	return rc;
}

int siw_cm_accept(struct siw_creq *req, struct siw_ep *ep, const void *pdata, size_t len)
{
	uint16_t ird_w, ord_w;
	socklen_t sl;
	int rc;

	if (req->state != SIW_CREQ_PENDING || ep->used) {
		siw_cm_reject(req, NULL, 0);
		return ep->used ? -EISCONN : -EINVAL;
	}
	if (len + (req->enhanced ? MPA_V2_WORD_LEN : 0) > MPA_MAX_PD) {
		siw_cm_reject(req, NULL, 0);
		return -EINVAL;
	}
	/* The initiator's zero-length Read RTR would need one of our IRD
	 * slots (RFC 5040 §6.4, RFC 6581 §5); with IRD 0 and no Write RTR
	 * offered there is no RTR model we can take (the initiator would
	 * otherwise send a Read we must answer with a Terminate): reject the
	 * request (MPA reply with the Reject bit, RFC 5044 §7.1). */
	if (req->enhanced && (req->peer_ird_word & MPA_V2_PEER_TO_PEER) &&
	    !(req->peer_ord_word & MPA_V2_WRITE_RTR) && (req->peer_ord_word & MPA_V2_READ_RTR) &&
	    ep->ird == 0) {
		siw_cm_reject(req, NULL, 0);
		return -EPROTO;
	}
	ep->fd = req->fd;
	req->fd = -1;
	ep->peer = req->peer;
	sl = sizeof(ep->local);
	(void)getsockname(ep->fd, (struct sockaddr *)&ep->local, &sl);
	sockaddr_unmap(&ep->local);
	siw_sock_tune(ep->fd, ep->sockbuf);
	ep->used = true;
	ep->active = false;
	ep->rev = req->rev;
	/* RFC 5044 §7.1: CRC when either side wants it */
	ep->crc = (req->flags & MPA_FLAG_CRC) || ep->want_crc;
	ep->rtr = RPCRDMA_RTR_NONE;
	if (req->enhanced) {
		ep->peer_ird = req->peer_ird_word & MPA_V2_IRD_ORD_MASK;
		ep->peer_ord = req->peer_ord_word & MPA_V2_IRD_ORD_MASK;
		ep->eff_ord = ep->ord < ep->peer_ird ? ep->ord : ep->peer_ird;
		if (req->peer_ird_word & MPA_V2_PEER_TO_PEER) {
			/* RFC 6581 §6: pick one RTR the initiator offered */
			if (req->peer_ord_word & MPA_V2_WRITE_RTR)
				ep->rtr = RPCRDMA_RTR_WRITE;
			else if (req->peer_ord_word & MPA_V2_READ_RTR)
				ep->rtr = RPCRDMA_RTR_READ;
		}
		ird_w = (uint16_t)(ep->ird & MPA_V2_IRD_ORD_MASK);
		ord_w = (uint16_t)(ep->eff_ord & MPA_V2_IRD_ORD_MASK);
		if (ep->rtr != RPCRDMA_RTR_NONE) {
			ird_w |= MPA_V2_PEER_TO_PEER;
			ord_w |= ep->rtr == RPCRDMA_RTR_WRITE ? MPA_V2_WRITE_RTR : MPA_V2_READ_RTR;
		}
	} else {
		ep->eff_ord = ep->ord;
		ird_w = ord_w = 0;
	}
	ep->tx.mpa_len = siw_mpa_build(ep->tx.mpa, true, ep->crc ? MPA_FLAG_CRC : 0, ep->rev,
				       req->enhanced, ird_w, ord_w, pdata, (uint16_t)len);
	ep->tx.mpa_off = 0;
	ep->rx.state = SIW_RX_HDR;
	ep->rx.hdr_have = 0;
	ep->rx.hdr_need = 4;
	ep->rx.crc = SIW_CRC_INIT;
	siw_cm_creq_free(req);
	rc = siw_poll_add(ep->dev, &ep->poll, ep->fd, EPOLLIN);
	if (rc) {
		close(ep->fd);
		ep->fd = -1;
		ep->state = SIW_EP_CLOSED;
		return rc;
	}
	if (ep->rtr != RPCRDMA_RTR_NONE) {
		/* RFC 6581 §6: say nothing until the initiator's RTR */
		ep->state = SIW_EP_MPA_REP_SENT;
		ep->deadline_ms = siw_now_ms() + ep->timeout_ms;
		siw_timer_rearm(ep->dev);
	} else {
		siw_ep_enter_rts(ep);
		ep_event_pd(ep, RPCRDMA_EV_ESTABLISHED, 0, NULL, 0);
	}
	(void)siw_tx_process(ep);
	/* FPDUs may already be waiting behind the request (the peer sends
	 * as soon as it has our reply); what they ask for (Read Responses)
	 * must go out now: no socket event will come for it */
	(void)siw_rx_process(ep);
	if (ep->fd >= 0)
		(void)siw_tx_process(ep);
	return 0;
}

void siw_cm_timers(struct siw_dev *dev, uint64_t now)
{
	struct siw_creq *r, *rn;

	for (struct siw_ep *ep = dev->eps; ep; ep = ep->next) {
		if (!ep->deadline_ms || now < ep->deadline_ms)
			continue;
		ep->deadline_ms = 0;
		if (ep->state == SIW_EP_CLOSING)
			siw_ep_fail(ep, 0, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		else if (ep->state == SIW_EP_ERROR)
			siw_ep_fail(ep, -EPROTO, RPCRDMA_WC_WR_FLUSH_ERR, 0);
		else if (ep->state == SIW_EP_RTS)
			nudge_check(ep, now);
		else if (ep->state != SIW_EP_RTS && ep->state != SIW_EP_CLOSED)
			siw_ep_fail(ep, -ETIMEDOUT, RPCRDMA_WC_WR_FLUSH_ERR, 0);
	}
	for (r = dev->creqs; r; r = rn) {
		rn = r->next;
		if (r->state == SIW_CREQ_READING && r->deadline_ms && now >= r->deadline_ms)
			siw_cm_creq_free(r);
	}
}
