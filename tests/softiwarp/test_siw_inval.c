/* SPDX-License-Identifier: MIT */
/*
 * Send with Invalidate (RFC 5040 §4.3, §6.2 "Invalidate STag") between two
 * processes. The parent registers M1 in the connection's PD and M2 in a
 * second PD; the forked child names them in Sends with Invalidate.
 *
 * Asserts:
 *  - Send with Invalidate of M1: RECV SUCCESS with WC_F_WITH_INV and
 *    invalidated_stag = M1's STag, payload checksum, M1 no longer valid;
 *  - re-registration gives the same 24-bit index with a new 8-bit key
 *    (RFC 5042 §5.3) and a valid STag that accepts a Write (checksummed);
 *  - Send with Solicited Event and Invalidate: both flags, invalidated;
 *  - a Write to the remotely invalidated STag: Terminate (DDP tagged,
 *    invalid STag), M1's bytes unchanged;
 *  - Send with Invalidate of M2 (another PD) and of an STag that does not
 *    exist: refused with a Terminate (RDMAP layer, "STag cannot be
 *    invalidated" or "not associated"), the receive does not succeed, M2
 *    stays valid and unchanged.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_GO, MSG_HASH, MSG_DONE, MSG_NEXT };

#define M_LEN 65536

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child                                                               */
/* ------------------------------------------------------------------ */

static uint8_t cbuf[M_LEN];
static struct rpcrdma_mr *cmr;

static int csend(struct siwt_node *n, int ctl, uint64_t id, uint32_t flags, uint32_t inv,
		 size_t len, uint64_t seed, bool expect_ok)
{
	struct rpcrdma_sge sg = {(uintptr_t)cbuf, (uint32_t)len, rpcrdma_mr_stag(cmr)};

	siwt_fill(cbuf, len, seed);
	uint64_t h = siwt_hash(cbuf, len);
	if (siwt_post(n, id, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED | flags, &sg, 1, 0, 0, inv))
		return -1;
	if (expect_ok && siwt_expect_wc(n, false, id, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL))
		return -1;
	return siwt_send4(ctl, MSG_HASH, 0, h, len);
}

static int child_refused(struct siwt_node *n, int ctl, uint16_t port, bool foreign)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct siwt_msg m;
	struct rpcrdma_wc wc;

	siwt_ep_attr(n, &a);
	if (siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est) ||
	    siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return -1;
	uint32_t target = foreign ? (uint32_t)m.u[2] : 0xfffffe11u;
	csend(n, ctl, 1, RPCRDMA_SEND_INVALIDATE, target, 100, 5, false);
	static const uint32_t terms[] = {SIWT_TERM(0, 1, 9), SIWT_TERM(0, 2, 9), SIWT_TERM(0, 1, 3),
					 SIWT_TERM(0, 1, 0)};
	siwt_expect_terminate(n, false, terms, foreign ? 3 : 4);
	if (siwt_wc(n, false, &wc, 5000) == 0) {
		SIWT_EQ(wc.wr_id, 1);
	} else {
		SIWT_CHECK(0, "refused Send with Invalidate never completed");
	}
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	siwt_expect_pumped(n, ctl, MSG_NEXT, &m);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	siwt_forget(n);
	return 0;
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	uint16_t port = (uint16_t)m.a;
	if (rpcrdma_mr_reg(n.pd, cbuf, sizeof(cbuf), 0, &cmr))
		return -1;
	siwt_ep_attr(&n, &a);
	if (siwt_connect(&n, &a, NULL, NULL, port, NULL, 0, &est) ||
	    siwt_expect_pumped(&n, ctl, MSG_INFO, &m))
		return -1;
	uint32_t m1 = (uint32_t)m.u[0];
	uint64_t m1_to = m.u[1];

	/* 1. Send with Invalidate of M1 */
	csend(&n, ctl, 1, RPCRDMA_SEND_INVALIDATE, m1, 1000, 11, true);
	/* 2. the re-registered STag accepts a Write */
	if (siwt_expect_pumped(&n, ctl, MSG_INFO, &m))
		return -1;
	uint32_t m1b = (uint32_t)m.u[0];
	siwt_fill(cbuf + 1, 4096, 12);
	uint64_t h = siwt_hash(cbuf + 1, 4096);
	struct rpcrdma_sge sg = {(uintptr_t)(cbuf + 1), 4096, rpcrdma_mr_stag(cmr)};
	siwt_post(&n, 2, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &sg, 1, m1b, m1_to + 333, 0);
	siwt_expect_wc(&n, false, 2, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_WRITE, NULL);
	siwt_send4(ctl, MSG_HASH, 0, h, 4096);
	/* a Send after the Write: when it completes there, the Write is placed */
	csend(&n, ctl, 21, 0, 0, 10, 14, true);
	/* 3. Send with Solicited Event and Invalidate of the new STag */
	csend(&n, ctl, 3, RPCRDMA_SEND_INVALIDATE | RPCRDMA_SEND_SOLICITED, m1b, 77, 13, true);
	/* 4. a Write to the invalidated STag: the peer terminates */
	if (siwt_expect_pumped(&n, ctl, MSG_GO, &m))
		return -1;
	siwt_post(&n, 4, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &sg, 1, m1b, m1_to + 333, 0);
	static const uint32_t inv_stag = SIWT_TERM(1, 1, 0);
	siwt_expect_terminate(&n, false, &inv_stag, 1);
	siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	siwt_expect_pumped(&n, ctl, MSG_NEXT, &m);
	rpcrdma_ep_destroy(n.ep);
	n.ep = NULL;
	siwt_forget(&n);

	if (!siwt_failures)
		child_refused(&n, ctl, port, true);
	if (!siwt_failures)
		child_refused(&n, ctl, port, false);
	rpcrdma_mr_dereg(cmr);
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent                                                              */
/* ------------------------------------------------------------------ */

static uint8_t m1buf[M_LEN], m2buf[M_LEN], rbuf[4][2048];
static struct rpcrdma_mr *m1, *m2, *rmr;
static struct rpcrdma_pd *pd2;

static int post_recvs(struct siwt_node *n, void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 4; i++)
		if (siwt_post_recv1(n, i, rbuf[i], sizeof(rbuf[i]), rpcrdma_mr_stag(rmr)))
			return -1;
	return 0;
}

static void send_info(int ctl)
{
	struct siwt_msg m = {.type = MSG_INFO};

	m.u[0] = rpcrdma_mr_stag(m1);
	m.u[1] = rpcrdma_mr_offset(m1);
	m.u[2] = rpcrdma_mr_stag(m2);
	siwt_send_msg(ctl, &m);
}

static int precv(struct siwt_node *n, int ctl, uint64_t id, uint32_t flags, uint32_t inv)
{
	struct rpcrdma_wc wc;
	struct siwt_msg m;

	if (siwt_expect_wc(n, true, id, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) ||
	    siwt_expect_pumped(n, ctl, MSG_HASH, &m))
		return -1;
	SIWT_EQ(wc.byte_len, m.u[1]);
	SIWT_EQ(wc.wc_flags, flags);
	if (flags & RPCRDMA_WC_F_WITH_INV)
		SIWT_EQ(wc.invalidated_stag, inv);
	SIWT_CHECK(siwt_hash(rbuf[id], m.u[1]) == m.u[0], "Send payload checksum mismatch");
	verified += m.u[1];
	return 0;
}

static void parent_refused(struct siwt_node *n, int ctl, bool foreign)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_wc wc;
	struct siwt_msg m;
	uint64_t saved = siwt_bytes_hashed, h2 = siwt_hash(m2buf, M_LEN);

	siwt_ep_attr(n, &a);
	if (siwt_accept(n, &a, post_recvs, NULL, NULL, 0, &req, &est))
		return;
	send_info(ctl);
	static const uint32_t terms[] = {SIWT_TERM(0, 1, 9), SIWT_TERM(0, 2, 9), SIWT_TERM(0, 1, 3),
					 SIWT_TERM(0, 1, 0)};
	siwt_expect_terminate(n, true, terms, foreign ? 3 : 4);
	/* no receive completes successfully: the first one fails or is
	 * flushed, the others are flushed */
	for (uint64_t i = 0; i < 4; i++) {
		if (siwt_wc(n, true, &wc, 5000)) {
			SIWT_CHECK(0, "receive %llu not completed", (unsigned long long)i);
			break;
		}
		SIWT_EQ(wc.wr_id, i);
		SIWT_CHECK(wc.status != RPCRDMA_WC_SUCCESS,
			   "a refused Send with Invalidate completed a receive successfully");
	}
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_expect_pumped(n, ctl, MSG_HASH, &m); /* of the refused Send: unused */
	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	SIWT_CHECK(rpcrdma_mr_valid(m2), "M2 (another PD) was invalidated by the peer");
	SIWT_CHECK(siwt_hash(m2buf, M_LEN) == h2, "M2 changed");
	siwt_bytes_hashed = saved;
	siwt_send4(ctl, MSG_NEXT, 0, 0, 0);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	siwt_forget(n); /* keeps a next CONNECT_REQUEST */
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct siwt_msg m;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	int ctl, rc;
	const unsigned acc = RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE;

	memset(&n, 0, sizeof(n));

	alarm(60);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 50);
	if (pid < 0)
		return 1;
	if (siwt_node_open(&n) || siwt_listen(&n))
		goto out;
	rc = rpcrdma_pd_alloc(n.dev, &pd2);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, m1buf, M_LEN, acc, &m1);
	rc = rc ? rc : rpcrdma_mr_reg(pd2, m2buf, M_LEN, acc, &m2);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &rmr);
	SIWT_CHECK(rc == 0, "setup: %s", strerror(-rc));
	if (rc)
		goto out;
	siwt_fill(m1buf, M_LEN, 1);
	siwt_fill(m2buf, M_LEN, 2);
	siwt_send4(ctl, MSG_PORT, n.port, 0, 0);

	siwt_ep_attr(&n, &a);
	if (siwt_accept(&n, &a, post_recvs, NULL, NULL, 0, &req, &est))
		goto out;
	uint32_t s1 = rpcrdma_mr_stag(m1);
	send_info(ctl);
	/* 1 */
	precv(&n, ctl, 0, RPCRDMA_WC_F_WITH_INV, s1);
	SIWT_CHECK(!rpcrdma_mr_valid(m1), "M1 still valid after Send with Invalidate");
	SIWT_CHECK(rpcrdma_mr_valid(m2), "M2 invalidated");
	/* 2: RFC 5042 §5.3: same index, new key */
	rc = rpcrdma_mr_rereg(m1, m1buf, M_LEN, acc);
	SIWT_CHECK(rc == 0, "mr_rereg: %s", strerror(-rc));
	uint32_t s1b = rpcrdma_mr_stag(m1);
	SIWT_CHECK(s1b != s1, "re-registration kept the STag 0x%08x", s1);
	SIWT_CHECK((s1b >> 8) == (s1 >> 8) && (s1b & 0xff) != (s1 & 0xff),
		   "re-registration: STag 0x%08x -> 0x%08x, want same index, new key", s1, s1b);
	SIWT_CHECK(rpcrdma_mr_valid(m1), "re-registered M1 not valid");
	send_info(ctl);
	if (siwt_expect_pumped(&n, ctl, MSG_HASH, &m) == 0) {
		/* the Write's checksum arrives first; the plain Send behind
		 * the Write completing (precv) means the Write is placed */
		precv(&n, ctl, 1, 0, 0);
		SIWT_CHECK(siwt_hash(m1buf + 333, 4096) == m.u[0], "Write to new STag misplaced");
		verified += 4096;
	}
	/* 3 */
	precv(&n, ctl, 2, RPCRDMA_WC_F_WITH_INV | RPCRDMA_WC_F_SOLICITED, s1b);
	SIWT_CHECK(!rpcrdma_mr_valid(m1), "M1 still valid after Send with SE and Invalidate");
	/* 4: the invalidated STag refuses a Write; M1 untouched */
	uint64_t saved = siwt_bytes_hashed, h1 = siwt_hash(m1buf, M_LEN);
	siwt_send4(ctl, MSG_GO, 0, 0, 0);
	static const uint32_t inv_stag = SIWT_TERM(1, 1, 0);
	siwt_expect_terminate(&n, true, &inv_stag, 1);
	siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_expect_pumped(&n, ctl, MSG_DONE, &m);
	SIWT_CHECK(siwt_hash(m1buf, M_LEN) == h1, "invalidated M1 was written");
	siwt_bytes_hashed = saved;
	siwt_send4(ctl, MSG_NEXT, 0, 0, 0);
	rpcrdma_ep_destroy(n.ep);
	n.ep = NULL;
	siwt_forget(&n); /* keeps a next CONNECT_REQUEST */

	if (!siwt_failures)
		parent_refused(&n, ctl, true);
	if (!siwt_failures)
		parent_refused(&n, ctl, false);
out:
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	if (m1)
		rpcrdma_mr_dereg(m1);
	if (m2)
		rpcrdma_mr_dereg(m2);
	if (rmr)
		rpcrdma_mr_dereg(rmr);
	if (pd2)
		rpcrdma_pd_free(pd2);
	siwt_node_close(&n);
	close(ctl);
	return siwt_finish("test_siw_inval", verified, t0);
}
