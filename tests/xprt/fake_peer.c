// SPDX-License-Identifier: MIT
/*
 * The misbehaving responder of fake_peer.h: RPC-over-RDMA Version One
 * messages built word by word (RFC 8166 §4.2, RFC 5531 §9) and sent
 * through the provider API.
 */
#include "xprt/fake_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/be.h"

#define FP_NRECV 32u
#define FP_NSEND 64u

static uint64_t fp_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Give receive @id back to the endpoint. */
static void fp_post_recv(struct fake_peer *p, uint32_t id)
{
	struct rpcrdma_sge s = {(uint64_t)(uintptr_t)p->buf[id], 1024, rpcrdma_mr_stag(p->mr)};

	(void)rpcrdma_post_recv(p->ep, id, &s, 1);
}

static void fp_send(struct fake_peer *p, const uint32_t *w, size_t n)
{
	uint8_t *b = p->buf[FP_NRECV + p->nsend % FP_NSEND];
	struct rpcrdma_sge s = {(uint64_t)(uintptr_t)b, (uint32_t)(4 * n), rpcrdma_mr_stag(p->mr)};
	struct rpcrdma_send_wr wr = {.wr_id = 1000u + p->nsend % FP_NSEND,
				     .opcode = RPCRDMA_WR_SEND,
				     .sg = &s,
				     .num_sge = 1,
				     .flags = RPCRDMA_SEND_SIGNALED};

	if (!p->ep)
		return;
	/* strict: the receives consumed are posted again before the reply
	 * that grants them */
	for (uint32_t i = 0; i < p->nrepost; i++)
		fp_post_recv(p, p->repost[i]);
	p->nrepost = 0;
	p->nsend++;
	for (size_t i = 0; i < n; i++)
		put_be32(b + 4 * i, w[i]);
	if (rpcrdma_post_send(p->ep, &wr) == 0)
		atomic_fetch_add(&p->sent, 1);
}

/* RDMA_MSG, three empty lists; RPC REPLY, MSG_ACCEPTED, AUTH_NONE
 * verifier, SUCCESS; one u_int result. */
static void fp_reply(struct fake_peer *p, uint32_t rdma_xid, uint32_t rpc_xid, uint32_t res)
{
	const uint32_t w[] = {
	    rdma_xid, 1, atomic_load(&p->credit), 0, 0, 0, 0, rpc_xid, 1, 0, 0, 0, 0, res};

	fp_send(p, w, sizeof(w) / 4);
	p->last[0] = rdma_xid;
	p->last[1] = rpc_xid;
	p->last[2] = res;
	p->have_last = true;
}

/* An RPC CALL (msg_type 0) to the client, both headers carrying @xid. */
static void fp_call(struct fake_peer *p, uint32_t xid)
{
	const uint32_t w[] = {
	    xid, 1, atomic_load(&p->credit), 0, 0, 0, 0, xid, 0, 2, 0x20000099u, 1, 1, 0, 0, 0,
	    0,   7};

	fp_send(p, w, sizeof(w) / 4);
}

/* RDMA_NOMSG (Version Two: RDMA2_NOMSG, direction REPLY) whose one
 * Position-Zero Read chunk exposes the RPC reply of fp_reply (28 bytes). */
static void fp_rr_reply(struct fake_peer *p, uint32_t rdma_xid, uint32_t rpc_xid, uint32_t res,
			uint32_t vers)
{
	uint32_t k = p->nexp++ % FP_NRR, cr = atomic_load(&p->credit);
	const uint32_t m[7] = {rpc_xid, 1, 0, 0, 0, 0, res};
	uint64_t off = rpcrdma_mr_offset(p->rrmr) + (uint64_t)k * sizeof(p->rrbuf[0]);
	uint32_t w[16], n = 0;

	for (int i = 0; i < 7; i++)
		put_be32(p->rrbuf[k] + 4 * i, m[i]);
	p->exp_xid[k] = rdma_xid;
	w[n++] = rdma_xid;
	w[n++] = vers;
	w[n++] = cr;
	w[n++] = 1; /* NOMSG */
	if (vers == 2)
		w[n++] = 1; /* rdma_direction REPLY */
	w[n++] = 1;         /* a Read segment */
	w[n++] = 0;         /* position zero */
	w[n++] = rpcrdma_mr_stag(p->rrmr);
	w[n++] = 28;
	w[n++] = (uint32_t)(off >> 32);
	w[n++] = (uint32_t)off;
	w[n++] = 0; /* end of the Read list */
	w[n++] = 0; /* no Write list */
	w[n++] = 0; /* no Reply chunk */
	fp_send(p, w, n);
}

/* A notification for @xid: counted, and once more when it was exposed. */
static void fp_note_done(struct fake_peer *p, uint32_t xid)
{
	atomic_fetch_add(&p->dones, 1);
	for (uint32_t i = 0; i < FP_NRR; i++) {
		if (p->exp_xid[i] == xid && xid) {
			p->exp_xid[i] = 0;
			atomic_fetch_add(&p->dones_ok, 1);
			return;
		}
	}
}

/* Keep the device going for @ms without taking completions. */
static void fp_pause(struct fake_peer *p, int ms)
{
	uint64_t end = fp_ms() + (uint64_t)ms;

	while (fp_ms() < end)
		(void)rpcrdma_dev_progress(p->dev, 5);
}

static void fp_flush_held(struct fake_peer *p)
{
	for (uint32_t i = 0; i < p->nheld; i++)
		fp_reply(p, p->held[i][0], p->held[i][1], p->held[i][2] + 1);
	p->nheld = 0;
}

static void fp_vanish(struct fake_peer *p)
{
	if (p->ep)
		rpcrdma_ep_destroy(p->ep);
	p->ep = NULL;
	if (p->l)
		rpcrdma_listener_destroy(p->l);
	p->l = NULL;
	atomic_store(&p->gone, true);
}

/* Version Two: RDMA2_MSG in direction @dir, three empty lists, the same
 * RPC reply as fp_reply. */
static void fp_reply2(struct fake_peer *p, uint32_t rdma_xid, uint32_t dir, uint32_t res)
{
	const uint32_t w[] = {
	    rdma_xid, 2, atomic_load(&p->credit), 0, dir, 0, 0, 0, rdma_xid, 1, 0, 0, 0, 0, res};

	fp_send(p, w, sizeof(w) / 4);
}

/* A Version Two message from the client that is not a call: an
 * RDMA2_ERROR (counted) or its transport properties (kept). */
static void fp_on_other2(struct fake_peer *p, const uint32_t *w, size_t n)
{
	if (n >= 5 && w[3] == 4) {
		atomic_store(&p->err_xid, w[0]);
		atomic_store(&p->err_code, w[4]);
		atomic_fetch_add(&p->errs_rx, 1);
	} else if (n >= 7 && w[3] == 5 && w[5] == 0x52444d01u) {
		size_t k = n - 7 < 48 ? n - 7 : 48;

		int32_t d = atomic_load(&p->props_delay_ms);
		uint32_t a[64];

		memcpy(p->props, w + 7, k * 4);
		atomic_store(&p->props_words, (uint32_t)k);
		atomic_fetch_add(&p->props_rx, 1);
		if (d < 0 || n > 64)
			return;
		/* the same properties back, as the answer (its xid, optdir
		 * REPLY), with our credit */
		fp_pause(p, d);
		memcpy(a, w, n * 4);
		a[2] = atomic_load(&p->credit);
		a[4] = 1;
		fp_send(p, a, n);
	}
}

/* The Version Two modes: @w a Short RDMA2_MSG call (32-byte header). */
static void fp_on_call2(struct fake_peer *p, const uint32_t *w, size_t n, int mode)
{
	uint32_t rx = w[0], arg = n > 18 ? w[18] : 0, cr = atomic_load(&p->credit);
	uint32_t bc = atomic_load(&p->bad_credit), vc = atomic_load(&p->vers_credit);

	if (mode == FP_V1_DROP2) {
		atomic_fetch_add(&p->v2_dropped, 1);
		return;
	}
	if (mode < FP_V2_OK) {
		/* a Version One server (RFC 8166 §4.5.1) */
		const uint32_t e[] = {rx, 1, vc == UINT32_MAX ? cr : vc, 4, 1, 1, 1};

		if (atomic_load(&p->vers_delay_ms))
			fp_pause(p, (int)atomic_load(&p->vers_delay_ms));
		fp_send(p, e, 7);
		return;
	}
	if (n < 18 || w[3] != 0 || w[4] != 0 || w[9] != 0) {
		fp_on_other2(p, w, n);
		return; /* not a Short call */
	}
	atomic_fetch_add(&p->calls, 1);
	if (mode == FP_V2_OPT) {
		const uint32_t o[] = {rx, 2, cr, 5, 1, 0x1234, 0};

		fp_send(p, o, 7);
	} else if (mode == FP_V2_OPTCALL) {
		const uint32_t o[] = {atomic_load(&p->opt_xid), 2, cr, 5, 0, 0x1235, 4, 0xabcd};

		fp_send(p, o, 8);
	} else if (mode == FP_V2_ERRX) {
		const uint32_t e[] = {rx, 2, bc, 4, 9};

		fp_send(p, e, 5);
	} else if (mode == FP_V2_REFUSE) {
		const uint32_t e[] = {rx, 2, bc, 4, 2};

		fp_send(p, e, 5);
		return;
	} else if (mode == FP_V2_DIR) {
		const uint32_t d[] = {rx, 2, bc, 0, 0, 0, 0, 0, rx, 1, 0, 0, 0, 0, 0xbad};

		fp_send(p, d, 15);
	} else if (mode == FP_V2_TRUNC) {
		const uint32_t t[] = {rx, 2, bc, 0};

		fp_send(p, t, 4);
	} else if (mode == FP_V2_EARLY) {
		fp_reply2(p, rx ^ 0x5a5a0000u, 1, 0xbad);
	} else if (mode == FP_V2_RR) {
		fp_rr_reply(p, rx, rx, arg + 1, 2);
		return;
	}
	fp_reply2(p, rx, 1, arg + 1);
}

/* FP_FIT: @w a Version One call (RDMA_MSG, no Read or Write list, a
 * Reply chunk or none). */
static void fp_on_fit(struct fake_peer *p, const uint32_t *w, size_t n)
{
	uint32_t cr = atomic_load(&p->credit), rpc = 7, nseg = 0, len, o[256];

	if (n < 7 || w[1] != 1 || w[3] != 0 || w[4] != 0 || w[5] != 0)
		return;
	if (w[6]) {
		nseg = n > 7 ? w[7] : 0;
		if (nseg != 1 || n < 12)
			return; /* one segment is all this responder takes */
		rpc = 12;
		atomic_fetch_add(&p->reply_chunks, 1);
	}
	if (n < rpc + 11 || w[rpc + 1] != 0)
		return;
	len = w[rpc + 10];
	if (len < 28 || len % 4 || len > sizeof(p->wbuf))
		return;
	atomic_fetch_add(&p->calls, 1);
	/* The RPC reply, in host-order words: xid, REPLY, MSG_ACCEPTED,
	 * AUTH_NONE verifier, SUCCESS, opaque<len - 28>. */
	uint32_t m[6] = {w[rpc], 1, 0, 0, 0, 0};
	uint8_t *b = p->wbuf;

	for (uint32_t i = 0; i < 6; i++)
		put_be32(b + 4 * i, m[i]);
	put_be32(b + 24, len - 28);
	for (uint32_t i = 28; i < len; i++)
		b[i] = (uint8_t)((i - 28) & 0xff);
	if (28 + len <= 1024) {
		/* RFC 8166 §3.5.1: header and reply inline */
		const uint32_t h[] = {w[0], 1, cr, 0, 0, 0, 0};

		memcpy(o, h, sizeof(h));
		for (uint32_t i = 0; i < len / 4; i++)
			o[7 + i] = get_be32(b + 4 * i);
		fp_send(p, o, 7 + len / 4);
	} else if (nseg && w[9] >= len) {
		/* §3.5.3.2: the reply into the Reply chunk, then RDMA_NOMSG
		 * with the chunk's length written */
		struct rpcrdma_sge s = {(uint64_t)(uintptr_t)b, len, rpcrdma_mr_stag(p->mr)};
		struct rpcrdma_send_wr wr = {.wr_id = 999,
					     .opcode = RPCRDMA_WR_RDMA_WRITE,
					     .sg = &s,
					     .num_sge = 1,
					     .remote_offset = (uint64_t)w[10] << 32 | w[11],
					     .remote_stag = w[8]};
		const uint32_t h[] = {w[0], 1, cr, 1, 0, 0, 1, 1, w[8], len, w[10], w[11], 0};

		if (p->ep && rpcrdma_post_send(p->ep, &wr) == 0)
			fp_send(p, h, sizeof(h) / 4);
	} else {
		/* §4.5.2: the reply fits nowhere the requester offered */
		const uint32_t e[] = {w[0], 1, cr, 4, 2};

		atomic_fetch_add(&p->err_chunks, 1);
		fp_send(p, e, 5);
	}
}

static void fp_on_call(struct fake_peer *p, const uint32_t *w, size_t n)
{
	uint32_t rx, px, arg;
	int mode = atomic_load(&p->mode);

	/* pull completion: RDMA_DONE (RFC 5666 §4.3), or RDMA2_OPTIONAL
	 * opttype 0x52444d02 (docs/rpcrdma2-extensions.md) */
	if ((n >= 4 && w[1] == 1 && w[3] == 3) ||
	    (n >= 6 && w[1] == 2 && w[3] == 5 && w[5] == 0x52444d02u)) {
		fp_note_done(p, w[0]);
		return;
	}
	if (mode == FP_FIT) {
		fp_on_fit(p, w, n);
		return;
	}
	if (n >= 4 && w[1] == 2) {
		fp_on_call2(p, w, n, mode);
		return;
	}

	if (n < 17 || w[3] != 0 || w[8] != 0)
		return; /* not a Short call */
	if (atomic_load(&p->ccp_on) && n >= 20 && w[10] == 100417u && w[11] == 1 && w[12] == 1) {
		const uint32_t r[] = {w[0],
				      1,
				      atomic_load(&p->credit),
				      0,
				      0,
				      0,
				      0,
				      w[7],
				      1,
				      0,
				      0,
				      0,
				      0,
				      atomic_load(&p->ccp_reply[0]),
				      atomic_load(&p->ccp_reply[1]),
				      atomic_load(&p->ccp_reply[2])};

		for (int i = 0; i < 3; i++)
			atomic_store(&p->ccp_args[i], w[17 + i]);
		atomic_fetch_add(&p->ccp_calls, 1);
		fp_send(p, r, sizeof(r) / 4);
		return;
	}
	rx = w[0];
	px = w[7];
	arg = n > 17 ? w[17] : 0;
	atomic_fetch_add(&p->calls, 1);
	if (mode != FP_HOLD && p->nheld)
		fp_flush_held(p); /* late replies first */
	switch (mode) {
	case FP_OK:
	case FP_V1_DROP2:
		fp_reply(p, rx, px, arg + 1);
		break;
	case FP_SILENT:
		break;
	case FP_BAD_RPC_XID:
		fp_reply(p, rx, px ^ 0x5a5a0000u, 0xbad);
		fp_reply(p, rx, px, arg + 1);
		break;
	case FP_BAD_RDMA_XID:
		fp_reply(p, rx ^ 0x5a5a0000u, px, 0xbad);
		fp_reply(p, rx, px, arg + 1);
		break;
	case FP_CALL:
		fp_call(p, px);
		fp_reply(p, rx, px, arg + 1);
		break;
	case FP_UNMATCHED:
		fp_reply(p, rx ^ 0x5a5a0000u, px ^ 0x5a5a0000u, arg + 1);
		break;
	case FP_SOME:
		if ((p->odd++ & 1u) == 0)
			fp_reply(p, rx, px, arg + 1);
		break;
	case FP_HOLD:
		if (p->nheld < FP_MAXHELD) {
			p->held[p->nheld][0] = rx;
			p->held[p->nheld][1] = px;
			p->held[p->nheld][2] = arg;
			p->nheld++;
		}
		if (p->nheld >= atomic_load(&p->batch)) {
			if (p->have_last) {
				const uint32_t d[3] = {p->last[0], p->last[1], p->last[2]};

				fp_reply(p, d[0], d[1], d[2]); /* a duplicate */
				fp_pause(p, 100);
			}
			fp_flush_held(p);
		}
		break;
	case FP_VANISH:
		fp_vanish(p);
		break;
	case FP_RR_EXTRA:
		fp_rr_reply(p, rx ^ 0x5a5a0000u, px ^ 0x5a5a0000u, 0xbad, 1);
		fp_rr_reply(p, rx, px, arg + 1, 1);
		break;
	case FP_RR:
		fp_rr_reply(p, rx, px, arg + 1, 1);
		break;
	default:
		break;
	}
}

static void fp_accept(struct fake_peer *p, struct rpcrdma_conn_req *req)
{
	struct rpcrdma_ep_attr ea = {0};

	if (p->ep)
		rpcrdma_ep_destroy(p->ep); /* the client made a new connection */
	p->ep = NULL;
	p->nheld = 0;
	p->have_last = false;
	p->nrepost = 0;
	memset(p->exp_xid, 0, sizeof(p->exp_xid));
	ea.comp_mask = RPCRDMA_EP_ATTR_CAPS;
	ea.send_cq = ea.recv_cq = p->cq;
	ea.evch = p->ch;
	ea.max_send_wr = 128;
	ea.max_recv_wr = FP_NRECV;
	ea.max_send_sge = 1;
	ea.max_recv_sge = 1;
	if (rpcrdma_ep_create(p->pd, &ea, &p->ep)) {
		rpcrdma_reject(req, NULL, 0);
		return;
	}
	uint32_t nr = atomic_load(&p->recvs);

	for (uint32_t i = 0; i < (nr && nr < FP_NRECV ? nr : FP_NRECV); i++)
		fp_post_recv(p, i);
	uint32_t ps = atomic_load(&p->pdata_size);
	uint8_t pd[8];

	/* RFC 8797 §4: magic, version 1, no flags, sizes as KiB - 1 */
	put_be32(pd, 0xf6ab0e18u);
	pd[4] = 1;
	pd[5] = 0;
	pd[6] = pd[7] = (uint8_t)(ps / 1024u - 1u);
	if (rpcrdma_accept(req, p->ep, ps ? pd : NULL, ps ? sizeof(pd) : 0) == 0)
		atomic_fetch_add(&p->conns, 1);
}

static void *fp_main(void *arg)
{
	struct fake_peer *p = arg;
	struct rpcrdma_event ev;
	struct rpcrdma_wc wc[16];

	while (!atomic_load(&p->stop)) {
		(void)rpcrdma_dev_progress(p->dev, 10);
		while (rpcrdma_evch_get(p->ch, &ev) == 0) {
			if (ev.type == RPCRDMA_EV_CONNECT_REQUEST)
				fp_accept(p, ev.req);
		}
		int n = rpcrdma_cq_poll(p->cq, wc, 16);

		for (int i = 0; i < n; i++) {
			if (wc[i].opcode != RPCRDMA_WC_RECV || wc[i].status != RPCRDMA_WC_SUCCESS ||
			    wc[i].wr_id >= FP_NRECV || !p->ep)
				continue;
			uint32_t w[64];
			size_t nw = wc[i].byte_len / 4;

			nw = nw > 64 ? 64 : nw;
			for (size_t k = 0; k < nw; k++)
				w[k] = get_be32(p->buf[wc[i].wr_id] + 4 * k);
			if (atomic_load(&p->strict) && p->nrepost < FP_NRECV)
				p->repost[p->nrepost++] = (uint32_t)wc[i].wr_id;
			else
				fp_post_recv(p, (uint32_t)wc[i].wr_id);
			fp_on_call(p, w, nw);
		}
	}
	return NULL;
}

int fp_start(struct fake_peer *p, uint16_t port, enum fp_mode mode)
{
	struct rpcrdma_cq_attr ca = {.cqe = 512};
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage la;

	memset(p, 0, sizeof(*p));
	atomic_store(&p->mode, (int)mode);
	atomic_store(&p->credit, 8);
	atomic_store(&p->batch, 1);
	atomic_store(&p->vers_credit, UINT32_MAX);
	atomic_store(&p->bad_credit, 3);
	atomic_store(&p->opt_xid, 0x0ff10001u);
	atomic_store(&p->props_delay_ms, -1);
	if (rpcrdma_dev_open(NULL, NULL, &p->dev) || rpcrdma_pd_alloc(p->dev, &p->pd) ||
	    rpcrdma_cq_create(p->dev, &ca, &p->cq) || rpcrdma_evch_create(p->dev, NULL, &p->ch) ||
	    rpcrdma_mr_reg(p->pd, p->buf, sizeof(p->buf) + sizeof(p->wbuf),
			   RPCRDMA_ACCESS_LOCAL_WRITE, &p->mr) ||
	    rpcrdma_mr_reg(p->pd, p->rrbuf, sizeof(p->rrbuf), RPCRDMA_ACCESS_REMOTE_READ,
			   &p->rrmr) ||
	    rpcrdma_listen(p->dev, p->ch, (struct sockaddr *)&sin, sizeof(sin), 8, NULL, &p->l) ||
	    rpcrdma_listener_addr(p->l, &la)) {
		fp_stop(p);
		return -1;
	}
	p->port = ntohs(((struct sockaddr_in *)&la)->sin_port);
	if (pthread_create(&p->thr, NULL, fp_main, p)) {
		fp_stop(p);
		return -1;
	}
	return 0;
}

void fp_stop(struct fake_peer *p)
{
	if (p->thr) {
		atomic_store(&p->stop, true);
		pthread_join(p->thr, NULL);
		p->thr = 0;
	}
	if (p->ep)
		rpcrdma_ep_destroy(p->ep);
	if (p->l)
		rpcrdma_listener_destroy(p->l);
	if (p->mr)
		rpcrdma_mr_dereg(p->mr);
	if (p->rrmr)
		rpcrdma_mr_dereg(p->rrmr);
	if (p->ch)
		rpcrdma_evch_destroy(p->ch);
	if (p->cq)
		rpcrdma_cq_destroy(p->cq);
	if (p->pd)
		rpcrdma_pd_free(p->pd);
	if (p->dev)
		rpcrdma_dev_close(p->dev);
	p->ep = NULL;
	p->l = NULL;
	p->mr = NULL;
	p->rrmr = NULL;
	p->ch = NULL;
	p->cq = NULL;
	p->pd = NULL;
	p->dev = NULL;
}

static void *mute_main(void *arg)
{
	struct tcp_mute *t = arg;
	int fds[64], n = 0;
	char junk[4096];

	while (!atomic_load(&t->stop)) {
		struct pollfd pf[65];

		pf[0].fd = t->fd;
		pf[0].events = POLLIN;
		for (int i = 0; i < n; i++) {
			pf[i + 1].fd = fds[i];
			pf[i + 1].events = POLLIN;
		}
		if (poll(pf, (nfds_t)n + 1, 20) <= 0)
			continue;
		for (int i = 0; i < n; i++)
			if (pf[i + 1].revents)
				(void)!read(fds[i], junk,
					    sizeof(junk)); /* MPA request: no answer */
		if ((pf[0].revents & POLLIN) && n < 64) {
			int fd = accept(t->fd, NULL, NULL);

			if (fd >= 0) {
				fds[n++] = fd;
				atomic_fetch_add(&t->accepted, 1);
			}
		}
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return NULL;
}

int tcp_mute_start(struct tcp_mute *t, uint16_t port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;

	memset(t, 0, sizeof(*t));
	t->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (t->fd < 0)
		return -1;
	(void)setsockopt(t->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(t->fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(t->fd, 8) ||
	    pthread_create(&t->thr, NULL, mute_main, t)) {
		close(t->fd);
		t->fd = -1;
		return -1;
	}
	return 0;
}

void tcp_mute_stop(struct tcp_mute *t)
{
	atomic_store(&t->stop, true);
	pthread_join(t->thr, NULL);
	close(t->fd);
}
