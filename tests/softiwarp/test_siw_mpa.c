/* SPDX-License-Identifier: MIT */
/*
 * Connection setup between two processes (RFC 5044 §7, RFC 6581): the
 * parent listens, the forked child connects, once per case.
 *
 * Asserts:
 *  - CRC negotiation, all four combinations: CRC is in use on both sides
 *    (ESTABLISHED ev.crc and rpcrdma_ep_query_conn) exactly when either side
 *    asked (RFC 5044 §7.1 "C" bit); 1 MiB + 1 byte Send and a 100001-byte
 *    RDMA Read checksummed over each;
 *  - MPA revision 1 (no IRD/ORD word: the request reports IRD = ORD = 0)
 *    and revision 2, both sides see the revision; data moves on both;
 *  - RFC 6581 peer-to-peer ready-to-receive with a zero-length Write and
 *    with a zero-length Read: rtr reported on both sides, and the responder
 *    may send first right after ESTABLISHED;
 *  - private data byte-exact on the other side, each way: 0, 1, 255, 507,
 *    508 bytes with revision 2 (RFC 5044 §7.1 caps PD_Length at 512 and
 *    the RFC 6581 IRD/ORD word takes 4 of them), 512 with revision 1; one
 *    byte more is refused locally (-EINVAL) by connect, accept and reject,
 *    and a refused connect never reaches the listener;
 *  - reject with 508, 40 (revision 2) and 512 (revision 1) bytes of
 *    private data: REJECTED, -ECONNREFUSED, the bytes intact;
 *  - connect to a closed port: CONNECT_ERROR -ECONNREFUSED; connect to a
 *    TCP listener that never answers MPA: CONNECT_ERROR within the
 *    configured timeout.
 */
#include "siw_test_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_CASE, MSG_INFO, MSG_HASH, MSG_DONE, MSG_NOREQ };

enum kind { K_CRC, K_REV, K_RTR, K_PDATA, K_PD_OVER, K_ACCEPT_OVER, K_REJECT, K_REJECT_OVER };

struct mcase {
	enum kind kind;
	int a, b; /* K_CRC: child, parent CRC; K_REV: revision; K_RTR: rtr;
		     K_PDATA / K_REJECT: request / reply private data length;
		     K_*_OVER: the oversized length */
	int rev;  /* MPA revision the child asks for (0: default 2) */
};

/* RFC 5044 §7.1: PD_Length <= 512 in every start frame; in revision 2 the
 * RFC 6581 IRD/ORD word is part of it, leaving 508 bytes to the caller. */
static const struct mcase cases[] = {
    {K_CRC, 1, 1, 0},
    {K_CRC, 1, 0, 0},
    {K_CRC, 0, 1, 0},
    {K_CRC, 0, 0, 0},
    {K_REV, 1, 0, 1},
    {K_REV, 2, 0, 0},
    {K_RTR, RPCRDMA_RTR_WRITE, 0, 0},
    {K_RTR, RPCRDMA_RTR_READ, 0, 0},
    {K_PDATA, 0, 508, 0},
    {K_PDATA, 1, 255, 0},
    {K_PDATA, 255, 1, 0},
    {K_PDATA, 507, 0, 0},
    {K_PDATA, 508, 508, 0},
    {K_PDATA, 512, 512, 1},
    {K_PDATA, 0, 512, 1},
    {K_PD_OVER, 509, 0, 0},
    {K_PD_OVER, 513, 0, 1},
    {K_ACCEPT_OVER, 0, 509, 0},
    {K_ACCEPT_OVER, 0, 513, 1},
    {K_REJECT, 0, 508, 0},
    {K_REJECT, 7, 40, 0},
    {K_REJECT, 3, 512, 1},
    {K_REJECT_OVER, 0, 509, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

#define REG_LEN  ((size_t)1 << 20)
#define REG_SEED 0x4d5041ull

static uint64_t verified;

static void pdata(uint8_t *p, size_t len, uint64_t seed)
{
	siwt_fill(p, len, seed);
}

/* ------------------------------------------------------------------ */
/* child: the active side                                              */
/* ------------------------------------------------------------------ */

static int child_traffic(struct siwt_node *n, int ctl)
{
	struct siwt_msg m;
	struct rpcrdma_mr *mr;
	uint8_t *buf = siwt_alloc_buf(REG_LEN + 4096), *want = siwt_alloc_buf(REG_LEN);
	int rc = -1;

	if (!buf || !want || siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		goto out;
	if (rpcrdma_mr_reg(n->pd, buf, REG_LEN + 4096, RPCRDMA_ACCESS_LOCAL_WRITE, &mr))
		goto out;
	/* Send 1 MiB + 1 */
	size_t len = REG_LEN + 1;
	struct rpcrdma_sge sg = {(uintptr_t)(buf + 3), (uint32_t)len, rpcrdma_mr_stag(mr)};
	siwt_fill(buf + 3, len, 0x11);
	uint64_t h = siwt_hash(buf + 3, len);
	if (siwt_post(n, 1, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0) ||
	    siwt_expect_wc(n, false, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL))
		goto dereg;
	siwt_send4(ctl, MSG_HASH, 0, h, len);
	/* Read 100001 bytes from offset 77 of the parent's region, whose
	 * content both processes derive from REG_SEED */
	struct rpcrdma_sge rs = {(uintptr_t)(buf + 5), 100001, rpcrdma_mr_stag(mr)};
	if (siwt_post(n, 2, RPCRDMA_WR_RDMA_READ, RPCRDMA_SEND_SIGNALED, &rs, 1, (uint32_t)m.u[0],
		      m.u[1] + 77, 0) ||
	    siwt_expect_wc(n, false, 2, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_READ, NULL))
		goto dereg;
	siwt_fill(want, REG_LEN, REG_SEED);
	SIWT_CHECK(siwt_hash(buf + 5, 100001) == siwt_hash(want + 77, 100001),
		   "RDMA Read placed wrong bytes");
	verified += 100001;
	rc = 0;
dereg:
	rpcrdma_mr_dereg(mr);
out:
	siwt_free_buf(buf, REG_LEN + 4096);
	siwt_free_buf(want, REG_LEN);
	return rc;
}

static uint8_t rtr_buf[256];
static struct rpcrdma_mr *rtr_mr;

static int pre_post(struct siwt_node *n, void *arg)
{
	(void)arg;
	return siwt_post_recv1(n, 9, rtr_buf, sizeof(rtr_buf), rpcrdma_mr_stag(rtr_mr));
}

static void child_teardown(struct siwt_node *n, int ctl)
{
	struct siwt_msg m;

	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	if (n->ep)
		rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	siwt_forget(n);
}

static int child_case(struct siwt_node *n, int ctl, uint16_t port, unsigned c)
{
	const struct mcase *mc = &cases[c];
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event ev;
	struct rpcrdma_ep_conn_info ci;
	uint8_t pd[600], want[600];
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int rc;

	static const char *const kinds[] = {"crc",          "mpa revision",    "rtr",
					    "private data", "connect pd over", "accept pd over",
					    "reject",       "reject pd over"};
	printf("case %u: %s %d %d (rev %d)\n", c, kinds[mc->kind], mc->a, mc->b,
	       mc->rev ? mc->rev : 2);
	fflush(stdout);
	siwt_send4(ctl, MSG_CASE, c, 0, 0);
	siwt_ep_attr(n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_TIMEOUT;
	a.connect_timeout_ms = 3000;
	if (mc->rev) {
		a.comp_mask |= RPCRDMA_EP_ATTR_MPA_REV;
		a.mpa_rev = (uint8_t)mc->rev;
	}
	switch (mc->kind) {
	case K_CRC:
		a.comp_mask |= RPCRDMA_EP_ATTR_CRC;
		a.mpa_crc = mc->a;
		break;
	case K_REV:
		a.comp_mask |= RPCRDMA_EP_ATTR_MPA_REV;
		a.mpa_rev = (uint8_t)mc->a;
		break;
	case K_RTR:
		a.comp_mask |= RPCRDMA_EP_ATTR_RTR;
		a.rtr = (enum rpcrdma_rtr)mc->a;
		break;
	default:
		break;
	}
	switch (mc->kind) {
	case K_CRC:
	case K_REV:
	case K_RTR:
		if (siwt_connect(n, &a, mc->kind == K_RTR ? pre_post : NULL, NULL, port, NULL, 0,
				 &ev))
			return -1;
		rc = rpcrdma_ep_query_conn(n->ep, &ci);
		SIWT_CHECK(rc == 0, "query_conn: %s", strerror(-rc));
		if (mc->kind == K_CRC) {
			SIWT_EQ(ev.crc, mc->a || mc->b);
			SIWT_EQ(ci.crc, mc->a || mc->b);
		} else if (mc->kind == K_REV) {
			SIWT_EQ(ev.mpa_rev, mc->a);
			SIWT_EQ(ci.mpa_rev, mc->a);
		} else {
			struct rpcrdma_wc wc;
			SIWT_EQ(ci.rtr, mc->a);
			SIWT_EQ(ci.mpa_rev, 2);
			/* the responder's first Send, sent right after its
			 * ESTABLISHED */
			if (siwt_expect_wc(n, true, 9, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) ==
			    0) {
				SIWT_EQ(wc.byte_len, 200);
				uint8_t w[200];
				siwt_fill(w, 200, 0x777);
				SIWT_CHECK(memcmp(w, rtr_buf, 200) == 0, "first Send corrupted");
				verified += 200;
			}
		}
		child_traffic(n, ctl);
		break;
	case K_PDATA:
		pdata(pd, (size_t)mc->a, 0x100 + c);
		if (siwt_connect(n, &a, NULL, NULL, port, pd, (size_t)mc->a, &ev))
			return -1;
		pdata(want, (size_t)mc->b, 0x200 + c);
		SIWT_EQ(ev.private_data_len, mc->b);
		SIWT_CHECK(memcmp(ev.private_data, want, (size_t)mc->b) == 0,
			   "reply private data (%d bytes) differs", mc->b);
		verified += (uint64_t)mc->b;
		break;
	case K_PD_OVER:
		rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
		SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
		rc = rpcrdma_connect(n->ep, (struct sockaddr *)&sa, sizeof(sa), pd, (size_t)mc->a);
		SIWT_EQ(rc, -EINVAL);
		siwt_send4(ctl, MSG_NOREQ, 0, 0, 0);
		break;
	case K_ACCEPT_OVER:
	case K_REJECT_OVER:
	case K_REJECT:
		rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
		SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
		pdata(pd, (size_t)mc->a, 0x300 + c);
		rc = rpcrdma_connect(n->ep, (struct sockaddr *)&sa, sizeof(sa), pd, (size_t)mc->a);
		SIWT_CHECK(rc == 0, "connect: %s", strerror(-rc));
		if (siwt_event(n, &ev, 8000)) {
			SIWT_CHECK(0, "no outcome for a connection the listener refused");
			break;
		}
		if (mc->kind == K_REJECT) {
			SIWT_CHECK(ev.type == RPCRDMA_EV_REJECTED, "got %s, want REJECTED",
				   siwt_event_str(ev.type));
			SIWT_EQ(ev.status, -ECONNREFUSED);
			pdata(want, (size_t)mc->b, 0x400 + c);
			SIWT_EQ(ev.private_data_len, mc->b);
			SIWT_CHECK(memcmp(ev.private_data, want, (size_t)mc->b) == 0,
				   "reject private data differs");
		} else {
			/* the listener's accept/reject refused our oversized
			 * reply locally; the request was still consumed: we
			 * must not be connected */
			SIWT_CHECK(
			    ev.type == RPCRDMA_EV_REJECTED || ev.type == RPCRDMA_EV_CONNECT_ERROR,
			    "got %s, want REJECTED or CONNECT_ERROR", siwt_event_str(ev.type));
		}
		break;
	}
	child_teardown(n, ctl);
	return 0;
}

/* Failures that involve no listener of ours. */
static void child_no_listener(struct siwt_node *n)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event ev;
	uint16_t port = 0;
	int fd = siwt_tcp_listen(&port), rc;

	/* a port nobody listens on: take one, close it */
	close(fd);
	siwt_ep_attr(n, &a);
	rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
	SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	rc = rpcrdma_connect(n->ep, (struct sockaddr *)&sa, sizeof(sa), NULL, 0);
	if (rc == 0) {
		if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_ERROR, &ev, 5000) == 0)
			SIWT_EQ(ev.status, -ECONNREFUSED);
	} else {
		SIWT_EQ(rc, -ECONNREFUSED); /* refused synchronously: also fine */
	}
	rpcrdma_ep_destroy(n->ep);

	/* a TCP listener that never speaks MPA: the MPA exchange times out */
	fd = siwt_tcp_listen(&port);
	a.comp_mask |= RPCRDMA_EP_ATTR_TIMEOUT;
	a.connect_timeout_ms = 500;
	rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
	SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
	sa.sin_port = htons(port);
	uint64_t t = siwt_now_ms();
	rc = rpcrdma_connect(n->ep, (struct sockaddr *)&sa, sizeof(sa), NULL, 0);
	SIWT_CHECK(rc == 0, "connect: %s", strerror(-rc));
	if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_ERROR, &ev, 5000) == 0) {
		uint64_t el = siwt_now_ms() - t;
		SIWT_CHECK(el >= 400 && el < 3000, "MPA timeout after %llu ms, configured 500",
			   (unsigned long long)el);
		SIWT_CHECK(ev.status < 0, "CONNECT_ERROR status %d", ev.status);
	}
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	close(fd);
	siwt_forget(n);
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	if (rpcrdma_mr_reg(n.pd, rtr_buf, sizeof(rtr_buf), RPCRDMA_ACCESS_LOCAL_WRITE, &rtr_mr))
		return -1;
	for (unsigned c = 0; c < NCASES && !siwt_failures; c++)
		child_case(&n, ctl, (uint16_t)m.a, c);
	siwt_send4(ctl, MSG_DONE, 0, verified, 0);
	if (!siwt_failures)
		child_no_listener(&n);
	rpcrdma_mr_dereg(rtr_mr);
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent: the listener                                                */
/* ------------------------------------------------------------------ */

static uint8_t *reg;
static struct rpcrdma_mr *reg_mr;
static uint8_t rbuf[REG_LEN + 64];
static struct rpcrdma_mr *rbuf_mr;
static uint8_t first[200];
static struct rpcrdma_mr *fmr;

static int parent_pre(struct siwt_node *n, void *arg)
{
	(void)arg;
	return siwt_post_recv1(n, 1, rbuf, sizeof(rbuf), rpcrdma_mr_stag(rbuf_mr));
}

static void parent_traffic(struct siwt_node *n, int ctl)
{
	struct siwt_msg m = {.type = MSG_INFO};
	struct rpcrdma_wc wc;

	m.u[0] = rpcrdma_mr_stag(reg_mr);
	m.u[1] = rpcrdma_mr_offset(reg_mr);
	siwt_send_msg(ctl, &m);
	if (siwt_expect_wc(n, true, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) ||
	    siwt_expect_pumped(n, ctl, MSG_HASH, &m))
		return;
	SIWT_EQ(wc.byte_len, m.u[1]);
	SIWT_CHECK(siwt_hash(rbuf, wc.byte_len) == m.u[0], "Send checksum mismatch");
	verified += wc.byte_len;
}

static void parent_case(struct siwt_node *n, int ctl, unsigned c)
{
	const struct mcase *mc = &cases[c];
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_ep_conn_info ci;
	uint8_t pd[600], want[600];
	struct siwt_msg m;
	int rc;

	siwt_ep_attr(n, &a);
	if (mc->kind == K_CRC) {
		a.comp_mask |= RPCRDMA_EP_ATTR_CRC;
		a.mpa_crc = mc->b;
	}
	switch (mc->kind) {
	case K_CRC:
	case K_REV:
	case K_RTR:
		if (siwt_accept(n, &a, parent_pre, NULL, NULL, 0, &req, &est))
			return;
		rc = rpcrdma_ep_query_conn(n->ep, &ci);
		SIWT_CHECK(rc == 0, "query_conn: %s", strerror(-rc));
		if (mc->kind == K_CRC) {
			SIWT_EQ(est.crc, mc->a || mc->b);
			SIWT_EQ(ci.crc, mc->a || mc->b);
		} else if (mc->kind == K_REV) {
			SIWT_EQ(req.mpa_rev, mc->a);
			SIWT_EQ(ci.mpa_rev, mc->a);
			if (mc->a == 1) {
				/* RFC 5044 rev 1 carries no IRD/ORD word */
				SIWT_EQ(req.ird, 0);
				SIWT_EQ(req.ord, 0);
			}
		} else {
			SIWT_EQ(ci.rtr, mc->a);
			/* RFC 6581 §5: once ESTABLISHED (after the RTR) the
			 * responder may send */
			siwt_fill(first, 200, 0x777);
			struct rpcrdma_sge sg = {(uintptr_t)first, 200, rpcrdma_mr_stag(fmr)};
			siwt_post(n, 5, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0);
			siwt_expect_wc(n, false, 5, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL);
		}
		parent_traffic(n, ctl);
		break;
	case K_PDATA:
		pdata(pd, (size_t)mc->b, 0x200 + c);
		if (siwt_accept(n, &a, NULL, NULL, pd, (size_t)mc->b, &req, &est))
			return;
		pdata(want, (size_t)mc->a, 0x100 + c);
		SIWT_EQ(req.private_data_len, mc->a);
		SIWT_CHECK(memcmp(req.private_data, want, (size_t)mc->a) == 0,
			   "request private data (%d bytes) differs", mc->a);
		verified += (uint64_t)mc->a;
		break;
	case K_PD_OVER:
		/* the child's oversized connect must not have produced a
		 * request */
		siwt_expect_pumped(n, ctl, MSG_NOREQ, &m);
		siwt_pump_for(n, 300);
		SIWT_CHECK(n->ev_n == 0, "a refused connect still reached the listener (%s)",
			   siwt_event_str(n->ev[0].type));
		break;
	case K_ACCEPT_OVER:
		if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_REQUEST, &req, 10000))
			return;
		rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
		SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
		rc = rpcrdma_accept(req.req, n->ep, pd, (size_t)mc->b);
		SIWT_EQ(rc, -EINVAL);
		break;
	case K_REJECT_OVER:
		if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_REQUEST, &req, 10000))
			return;
		rc = rpcrdma_reject(req.req, pd, (size_t)mc->b);
		SIWT_EQ(rc, -EINVAL);
		break;
	case K_REJECT:
		if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_REQUEST, &req, 10000))
			return;
		pdata(want, (size_t)mc->a, 0x300 + c);
		SIWT_EQ(req.private_data_len, mc->a);
		SIWT_CHECK(memcmp(req.private_data, want, (size_t)mc->a) == 0,
			   "request private data differs");
		pdata(pd, (size_t)mc->b, 0x400 + c);
		rc = rpcrdma_reject(req.req, pd, (size_t)mc->b);
		SIWT_CHECK(rc == 0, "reject: %s", strerror(-rc));
		break;
	}
	/* let the child see its outcome before we tear down */
	siwt_pump_for(n, 50);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	if (n->ep) {
		/* drain whatever the endpoint reported, then destroy it */
		while (siwt_event(n, &ev, 0) == 0)
			;
		rpcrdma_ep_destroy(n->ep);
		n->ep = NULL;
	}
	siwt_forget(n); /* keeps a next CONNECT_REQUEST */
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct siwt_msg m;
	int ctl;

	memset(&n, 0, sizeof(n));

	alarm(120);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 110);
	if (pid < 0)
		return 1;
	reg = siwt_alloc_buf(REG_LEN);
	if (reg && siwt_node_open(&n) == 0 && siwt_listen(&n) == 0) {
		siwt_fill(reg, REG_LEN, REG_SEED);
		if (rpcrdma_mr_reg(n.pd, reg, REG_LEN, RPCRDMA_ACCESS_REMOTE_READ, &reg_mr) ||
		    rpcrdma_mr_reg(n.pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE,
				   &rbuf_mr) ||
		    rpcrdma_mr_reg(n.pd, first, sizeof(first), 0, &fmr))
			SIWT_CHECK(0, "mr_reg failed");
		siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
		for (unsigned c = 0; c < NCASES && !siwt_failures; c++) {
			if (siwt_expect_pumped(&n, ctl, MSG_CASE, &m))
				break;
			SIWT_EQ(m.a, c);
			parent_case(&n, ctl, c);
		}
		if (!siwt_failures && siwt_expect_pumped(&n, ctl, MSG_DONE, &m) == 0)
			verified += m.u[0];
	}
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	if (reg_mr)
		rpcrdma_mr_dereg(reg_mr);
	if (rbuf_mr)
		rpcrdma_mr_dereg(rbuf_mr);
	if (fmr)
		rpcrdma_mr_dereg(fmr);
	siwt_node_close(&n);
	siwt_free_buf(reg, REG_LEN);
	close(ctl);
	return siwt_finish("test_siw_mpa", verified, t0);
}
