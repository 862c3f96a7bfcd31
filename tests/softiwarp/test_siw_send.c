/* SPDX-License-Identifier: MIT */
/*
 * Send / Receive between two processes over softiwarp on 127.0.0.1
 * (RFC 5040 §5.3, RFC 5041 untagged model). The parent listens and
 * receives, the forked child connects and sends. Asserts, per message:
 * RECV completion status, opcode, byte_len, flags (Solicited Event), the
 * checksum of the bytes placed against the sender's checksum of its source,
 * and that bytes outside the placed range (guards, the rest of the posted
 * buffer, gaps between SGEs) were not touched. Sizes from 0 to 16 MiB,
 * unaligned buffers, multi-SGE on both sides, in-order delivery of a burst.
 * Error paths: a receive buffer too small (RFC 5041 §7: DDP untagged,
 * "message too long", code 5) and no receive posted ("no buffer
 * available", code 2): Terminate from the receiver, TERMINATE events on
 * both sides, LOC_LEN_ERR / flushes.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_GO, MSG_HASH, MSG_DONE };

#define SBUF_LEN ((size_t)16 * 1024 * 1024 + 65536)
#define RBUF_LEN ((size_t)16 * 1024 * 1024 + 65536)
#define GUARD    64

static const size_t sizes[] = {0,       1,        3,        17,       4095,    4096,
			       4097,    65515,    65516,    65517,    131077,  1048575,
			       4194307, 16777216, 16777216, 16777216, 16777216};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define BURST  32

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child: the sender                                                  */
/* ------------------------------------------------------------------ */

static int send_one(struct siwt_node *n, int ctl, uint64_t wr_id, uint8_t *buf, uint32_t lkey,
		    size_t len, uint64_t seed, uint32_t flags)
{
	struct rpcrdma_sge sg = {.addr = (uintptr_t)buf, .length = (uint32_t)len, .lkey = lkey};
	struct rpcrdma_wc wc;

	siwt_fill(buf, len, seed);
	uint64_t h = siwt_hash(buf, len);
	if (siwt_post(n, wr_id, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED | flags, &sg, len ? 1 : 0, 0,
		      0, 0))
		return -1;
	if (siwt_expect_wc(n, false, wr_id, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, &wc))
		return -1;
	SIWT_EQ(wc.byte_len, len);
	return siwt_send4(ctl, MSG_HASH, 0, h, len);
}

static int child_data(struct siwt_node *n, int ctl, uint16_t port)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est;
	struct rpcrdma_mr *mr, *m1, *m2;
	struct siwt_msg m;
	uint8_t *sbuf = siwt_alloc_buf(SBUF_LEN);
	uint8_t small[2048];
	int rc;

	if (!sbuf)
		return -1;
	siwt_ep_attr(n, &a);
	if (siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est))
		return -1;
	/* Source memory needs no access flag: local read is always allowed. */
	rc = rpcrdma_mr_reg(n->pd, sbuf, SBUF_LEN, 0, &mr);
	SIWT_CHECK(rc == 0, "mr_reg source: %s", strerror(-rc));
	rc = rpcrdma_mr_reg(n->pd, small, 1500, 0, &m1);
	SIWT_CHECK(rc == 0, "mr_reg small: %s", strerror(-rc));
	rc = rpcrdma_mr_reg(n->pd, small + 1500, 548, 0, &m2);
	SIWT_CHECK(rc == 0, "mr_reg small2: %s", strerror(-rc));
	if (siwt_failures)
		return -1;

	/* 1. every size, unaligned source */
	for (unsigned i = 0; i < NSIZES; i++) {
		size_t off = (i * 13) % 61 + 1;
		if (siwt_expect_pumped(n, ctl, MSG_GO, &m))
			return -1;
		if (send_one(n, ctl, 100 + i, sbuf + off, rpcrdma_mr_stag(mr), sizes[i],
			     0x5e0d0000 + i, 0))
			return -1;
	}

	/* 2. three SGEs from three registrations */
	if (siwt_expect_pumped(n, ctl, MSG_GO, &m))
		return -1;
	{
		struct rpcrdma_sge sg[3] = {
		    {(uintptr_t)(small + 3), 1000, rpcrdma_mr_stag(m1)},
		    {(uintptr_t)(small + 1501), 1, rpcrdma_mr_stag(m2)},
		    {(uintptr_t)(sbuf + 5), 70001, rpcrdma_mr_stag(mr)},
		};
		uint8_t *cat = malloc(71002);
		siwt_fill(small + 3, 1000, 71);
		siwt_fill(small + 1501, 1, 72);
		siwt_fill(sbuf + 5, 70001, 73);
		memcpy(cat, small + 3, 1000);
		memcpy(cat + 1000, small + 1501, 1);
		memcpy(cat + 1001, sbuf + 5, 70001);
		uint64_t h = siwt_hash(cat, 71002);
		free(cat);
		if (siwt_post(n, 200, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, sg, 3, 0, 0, 0) ||
		    siwt_expect_wc(n, false, 200, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL))
			return -1;
		siwt_send4(ctl, MSG_HASH, 0, h, 71002);
	}

	/* 3. plain Send, then Send with Solicited Event (two rounds) */
	for (int i = 0; i < 2; i++) {
		if (siwt_expect_pumped(n, ctl, MSG_GO, &m))
			return -1;
		if (send_one(n, ctl, 300 + (unsigned)i, sbuf + 7, rpcrdma_mr_stag(mr), 333,
			     0x5e + (unsigned)i, i ? RPCRDMA_SEND_SOLICITED : 0))
			return -1;
	}

	/* 4. a burst of BURST Sends posted back to back */
	if (siwt_expect_pumped(n, ctl, MSG_GO, &m))
		return -1;
	{
		uint64_t h[BURST];
		size_t off = 1;
		for (unsigned i = 0; i < BURST; i++) {
			size_t len = (i * 2039u) % 65000u;
			struct rpcrdma_sge sg = {(uintptr_t)(sbuf + off), (uint32_t)len,
						 rpcrdma_mr_stag(mr)};
			siwt_fill(sbuf + off, len, 0xb0 + i);
			h[i] = siwt_hash(sbuf + off, len);
			if (siwt_post(n, 400 + i, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg,
				      len ? 1 : 0, 0, 0, 0))
				return -1;
			off += len + 3;
		}
		for (unsigned i = 0; i < BURST; i++)
			if (siwt_expect_wc(n, false, 400 + i, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND,
					   NULL))
				return -1;
		for (unsigned i = 0; i < BURST; i++)
			siwt_send4(ctl, MSG_HASH, i, h[i], (i * 2039u) % 65000u);
	}
	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	rpcrdma_mr_dereg(mr);
	rpcrdma_mr_dereg(m1);
	rpcrdma_mr_dereg(m2);
	siwt_free_buf(sbuf, SBUF_LEN);
	rc = rpcrdma_ep_destroy(n->ep);
	SIWT_CHECK(rc == 0, "ep_destroy: %s", strerror(-rc));
	n->ep = NULL;
	siwt_forget(n);
	return 0;
}

/* Error cases: the receiver refuses our Send with a Terminate. */
static int child_refused(struct siwt_node *n, int ctl, uint16_t port, size_t len, uint32_t term)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;
	static uint8_t buf[4096];
	struct rpcrdma_wc wc;

	siwt_ep_attr(n, &a);
	if (siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est))
		return -1;
	if (rpcrdma_mr_reg(n->pd, buf, sizeof(buf), 0, &mr))
		return -1;
	if (siwt_expect_pumped(n, ctl, MSG_GO, &m))
		return -1;
	struct rpcrdma_sge sg = {(uintptr_t)buf, (uint32_t)len, rpcrdma_mr_stag(mr)};
	siwt_fill(buf, len, 9);
	if (siwt_post(n, 1, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0))
		return -1;
	/* The Send itself may complete before the Terminate comes back (it
	 * was handed to TCP: RFC 5040 §5.3 completes Sends locally); if it
	 * completes after, it is an error. Either way exactly once. */
	if (siwt_wc(n, false, &wc, 10000) == 0) {
		SIWT_EQ(wc.wr_id, 1);
		SIWT_CHECK(
		    wc.status == RPCRDMA_WC_SUCCESS || wc.status == RPCRDMA_WC_REM_INV_REQ_ERR ||
			wc.status == RPCRDMA_WC_REM_OP_ERR || wc.status == RPCRDMA_WC_WR_FLUSH_ERR,
		    "refused Send completed %s", siwt_status_str(wc.status));
	} else {
		SIWT_CHECK(0, "refused Send never completed");
	}
	siwt_expect_terminate(n, false, &term, 1);
	/* Work posted after the Terminate is flushed, never sent. */
	if (siwt_post(n, 2, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0) == 0)
		siwt_expect_wc(n, false, 2, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_SEND, NULL);
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_forget(n);
	return 0;
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m))
		return -1;
	if (siwt_node_open(&n))
		return -1;
	uint16_t port = (uint16_t)m.a;
	child_data(&n, ctl, port);
	if (!siwt_failures)
		child_refused(&n, ctl, port, 101, SIWT_TERM(1, 2, 5));
	if (!siwt_failures)
		child_refused(&n, ctl, port, 10, SIWT_TERM(1, 2, 2));
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent: the receiver                                                */
/* ------------------------------------------------------------------ */

static uint64_t guard_hash(const uint8_t *p, size_t len)
{
	/* not counted as verified payload */
	uint64_t saved = siwt_bytes_hashed, h = siwt_hash(p, len);
	siwt_bytes_hashed = saved;
	return h;
}

static int recv_case(struct siwt_node *n, int ctl, uint8_t *rbuf, uint32_t lkey, size_t off,
		     size_t len, uint32_t want_flags)
{
	struct rpcrdma_wc wc;
	struct siwt_msg m;
	size_t cap = len + 100;
	uint8_t *p = rbuf + off;
	uint64_t g0 = guard_hash(p - GUARD, GUARD), g1 = guard_hash(p + len, 100 + GUARD);

	if (siwt_post_recv1(n, 7, p, (uint32_t)cap, lkey))
		return -1;
	siwt_send4(ctl, MSG_GO, 0, 0, 0);
	if (siwt_expect_wc(n, true, 7, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc))
		return -1;
	if (siwt_expect_pumped(n, ctl, MSG_HASH, &m))
		return -1;
	SIWT_EQ(wc.byte_len, len);
	SIWT_EQ(m.u[1], len);
	SIWT_CHECK((wc.wc_flags & ~RPCRDMA_WC_F_SOLICITED) == 0, "unexpected wc_flags 0x%x",
		   wc.wc_flags);
	SIWT_EQ(wc.wc_flags & RPCRDMA_WC_F_SOLICITED, want_flags);
	SIWT_CHECK(wc.ep == n->ep, "wc.ep is not the endpoint");
	uint64_t h = siwt_hash(p, len);
	SIWT_CHECK(h == m.u[0],
		   "len %zu at offset %zu: placed bytes checksum %016llx != sent %016llx", len, off,
		   (unsigned long long)h, (unsigned long long)m.u[0]);
	SIWT_CHECK(guard_hash(p - GUARD, GUARD) == g0, "bytes before the buffer changed (len %zu)",
		   len);
	SIWT_CHECK(guard_hash(p + len, 100 + GUARD) == g1,
		   "bytes after the message (inside/after the posted buffer) changed (len %zu)",
		   len);
	verified += len;
	return 0;
}

static int parent_data(struct siwt_node *n, int ctl)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;
	uint8_t *rbuf = siwt_alloc_buf(RBUF_LEN);
	int rc;

	if (!rbuf)
		return -1;
	siwt_fill(rbuf, RBUF_LEN, 0x6a6a);
	rc = rpcrdma_mr_reg(n->pd, rbuf, RBUF_LEN, RPCRDMA_ACCESS_LOCAL_WRITE, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	siwt_ep_attr(n, &a);
	if (rc || siwt_accept(n, &a, NULL, NULL, NULL, 0, &req, &est))
		return -1;
	uint32_t lkey = rpcrdma_mr_stag(mr);

	for (unsigned i = 0; i < NSIZES; i++)
		if (recv_case(n, ctl, rbuf, lkey, GUARD + (i * 7) % 53 + 1, sizes[i], 0))
			return -1;

	/* multi-SGE: 4 receive SGEs with gaps between them */
	{
		static const size_t so[4] = {1, 100, 60000, 70001}, sl[4] = {17, 50000, 3, 30000};
		uint8_t *base = rbuf + 4096;
		struct rpcrdma_sge sg[4];
		struct rpcrdma_wc wc;
		for (int i = 0; i < 4; i++)
			sg[i] =
			    (struct rpcrdma_sge){(uintptr_t)(base + so[i]), (uint32_t)sl[i], lkey};
		siwt_fill(rbuf, 200000, 0x77);
		uint64_t gaps = guard_hash(base + 18, 82) ^ guard_hash(base + 50100, 9900) ^
				guard_hash(base + 60003, 9998) ^
				guard_hash(base + 70001 + 20982, 30000 - 20982);
		rc = rpcrdma_post_recv(n->ep, 8, sg, 4);
		SIWT_CHECK(rc == 0, "post_recv 4 SGEs: %s", strerror(-rc));
		siwt_send4(ctl, MSG_GO, 0, 0, 0);
		if (siwt_expect_wc(n, true, 8, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) ||
		    siwt_expect_pumped(n, ctl, MSG_HASH, &m))
			return -1;
		SIWT_EQ(wc.byte_len, 71002);
		uint8_t *cat = malloc(71002);
		size_t k = 0;
		for (int i = 0; i < 4 && k < 71002; i++) {
			size_t take = sl[i] < 71002 - k ? sl[i] : 71002 - k;
			memcpy(cat + k, base + so[i], take);
			k += take;
		}
		SIWT_CHECK(siwt_hash(cat, 71002) == m.u[0], "scattered Send checksum mismatch");
		free(cat);
		SIWT_CHECK((guard_hash(base + 18, 82) ^ guard_hash(base + 50100, 9900) ^
			    guard_hash(base + 60003, 9998) ^
			    guard_hash(base + 70001 + 20982, 30000 - 20982)) == gaps,
			   "bytes between / after the receive SGEs changed");
		verified += 71002;
	}

	/* Solicited Event: flag on the RECV, and a solicited-only armed CQ
	 * becomes readable for the SE Send only (RFC 5040 §5.3). */
	rc = rpcrdma_cq_req_notify(n->rcq, true);
	SIWT_CHECK(rc == 0, "cq_req_notify: %s", strerror(-rc));
	for (int i = 0; i < 2; i++) {
		if (recv_case(n, ctl, rbuf, lkey, 1000 + (size_t)i, 333,
			      i ? RPCRDMA_WC_F_SOLICITED : 0))
			return -1;
		struct pollfd pfd = {.fd = rpcrdma_cq_fd(n->rcq), .events = POLLIN};
		int pr = poll(&pfd, 1, i ? 1000 : 0);
		if (i == 0)
			SIWT_CHECK(pr == 0, "solicited-only CQ fd readable after a plain Send");
		else
			SIWT_CHECK(pr == 1, "solicited-only CQ fd not readable after Send with SE");
	}
	rpcrdma_cq_ack_notify(n->rcq);

	/* burst: completions in posting order, each with its own bytes */
	{
		size_t slot = 70000;
		for (unsigned i = 0; i < BURST; i++)
			if (siwt_post_recv1(n, 500 + i, rbuf + 3 + i * slot, (uint32_t)slot, lkey))
				return -1;
		siwt_send4(ctl, MSG_GO, 0, 0, 0);
		struct rpcrdma_wc wc[BURST];
		for (unsigned i = 0; i < BURST; i++)
			if (siwt_expect_wc(n, true, 500 + i, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV,
					   &wc[i]))
				return -1;
		for (unsigned i = 0; i < BURST; i++) {
			if (siwt_expect_pumped(n, ctl, MSG_HASH, &m))
				return -1;
			SIWT_EQ(m.a, i);
			SIWT_EQ(wc[i].byte_len, m.u[1]);
			SIWT_CHECK(siwt_hash(rbuf + 3 + i * slot, m.u[1]) == m.u[0],
				   "burst Send %u: checksum mismatch (out of order?)", i);
			verified += m.u[1];
		}
	}
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	/* the child destroys its endpoint: we see DISCONNECTED */
	struct rpcrdma_event ev;
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_free_buf(rbuf, RBUF_LEN);
	siwt_forget(n);
	return 0;
}

/* Receiver side of the refused Sends: posted is the receive length (0:
 * none posted). A second receive is posted to show it is flushed. */
static int parent_refuse(struct siwt_node *n, int ctl, uint32_t posted, uint32_t term)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_mr *mr;
	struct rpcrdma_wc wc;
	struct siwt_msg m;
	static uint8_t buf[8192];

	siwt_ep_attr(n, &a);
	if (rpcrdma_mr_reg(n->pd, buf, sizeof(buf), RPCRDMA_ACCESS_LOCAL_WRITE, &mr))
		return -1;
	if (siwt_accept(n, &a, NULL, NULL, NULL, 0, &req, &est))
		return -1;
	if (posted) {
		siwt_post_recv1(n, 1, buf, posted, rpcrdma_mr_stag(mr));
		siwt_post_recv1(n, 2, buf + 4096, 4096, rpcrdma_mr_stag(mr));
	}
	siwt_send4(ctl, MSG_GO, 0, 0, 0);
	if (posted) {
		/* RFC 5041 §7.2 / RFC 5040 §5.3: the receive completes in error */
		siwt_expect_wc(n, true, 1, RPCRDMA_WC_LOC_LEN_ERR, RPCRDMA_WC_RECV, &wc);
	}
	siwt_expect_terminate(n, true, &term, 1);
	if (posted)
		siwt_expect_wc(n, true, 2, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_RECV, NULL);
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	/* Receives posted on an endpoint in error are flushed at once. */
	if (siwt_post_recv1(n, 3, buf, 100, rpcrdma_mr_stag(mr)) == 0)
		siwt_expect_wc(n, true, 3, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_RECV, NULL);
	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	SIWT_CHECK(n->rwc_n == 0, "%u extra receive completions", n->rwc_n);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_forget(n);
	return 0;
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	int ctl;

	memset(&n, 0, sizeof(n));

	alarm(120);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 100);
	if (pid < 0)
		return 1;
	if (siwt_node_open(&n) == 0 && siwt_listen(&n) == 0) {
		siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
		parent_data(&n, ctl);
		if (!siwt_failures)
			parent_refuse(&n, ctl, 100, SIWT_TERM(1, 2, 5));
		if (!siwt_failures)
			parent_refuse(&n, ctl, 0, SIWT_TERM(1, 2, 2));
	}
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	siwt_node_close(&n);
	close(ctl);
	return siwt_finish("test_siw_send", verified, t0);
}
