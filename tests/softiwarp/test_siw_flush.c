/* SPDX-License-Identifier: MIT */
/*
 * Disconnect with outstanding work, between two processes.
 *
 * 1. Orderly: the parent posts a 16 MiB RDMA Write into the child's region
 *    and four Sends, then disconnects at once. Asserts: every one of the
 *    parent's requests completes exactly once, in posting order, SUCCESS
 *    or WR_FLUSH_ERR, never a success after a flush; its posted receives
 *    are flushed; both sides get DISCONNECTED with status 0; on the child
 *    every delivered Send carries the right bytes (checksums), a delivered
 *    Send implies the whole Write before it is placed (RFC 5040 §5.5), and
 *    each of its 16 receives completes exactly once (SUCCESS for delivered
 *    Sends, WR_FLUSH_ERR for the rest). Work posted after the disconnect
 *    is flushed (or refused with -ENOTCONN).
 * 2. Abortive: the child has a 16 MiB RDMA Read and two Sends outstanding
 *    and receives posted when the parent destroys its endpoint: the
 *    child's requests each complete once (a Read that did complete carries
 *    the right bytes), its receives are flushed, DISCONNECTED follows; the
 *    parent's receives are flushed into its CQ by the destroy.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_HASHES, MSG_DONE, MSG_NEXT };

#define BIG   ((size_t)16 * 1024 * 1024)
#define NRECV 16

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child                                                               */
/* ------------------------------------------------------------------ */

static uint8_t rbuf[NRECV][2048];
static struct rpcrdma_mr *rmr;

static int child_pre(struct siwt_node *n, void *arg)
{
	unsigned cnt = *(unsigned *)arg;

	for (unsigned i = 0; i < cnt; i++)
		if (siwt_post_recv1(n, i, rbuf[i], sizeof(rbuf[i]), rpcrdma_mr_stag(rmr)))
			return -1;
	return 0;
}

static int child_orderly(struct siwt_node *n, int ctl, uint16_t port, uint8_t *big)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_mr *mr;
	struct siwt_msg m, hm;
	unsigned cnt = NRECV;
	int rc;

	siwt_fill(big, BIG, 0xc0);
	rc = rpcrdma_mr_reg(n->pd, big, BIG,
			    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	siwt_ep_attr(n, &a);
	if (rc || siwt_connect(n, &a, child_pre, &cnt, port, NULL, 0, &est))
		return -1;
	m = (struct siwt_msg){.type = MSG_INFO};
	m.u[0] = rpcrdma_mr_stag(mr);
	m.u[1] = rpcrdma_mr_offset(mr);
	siwt_send_msg(ctl, &m);
	/* the parent's checksums of the Write source and the four Sends */
	if (siwt_expect_pumped(n, ctl, MSG_HASHES, &hm))
		return -1;
	if (siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 15000) == 0)
		SIWT_EQ(ev.status, 0);
	/* "Outstanding work has been flushed to the CQs before this event" */
	unsigned ok = 0;
	for (unsigned i = 0; i < NRECV; i++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, true, &wc, 100)) {
			SIWT_CHECK(0, "receive %u not completed by DISCONNECTED", i);
			break;
		}
		SIWT_EQ(wc.wr_id, i);
		if (wc.status == RPCRDMA_WC_SUCCESS) {
			SIWT_CHECK(i == ok, "receive %u succeeded after a flushed one", i);
			SIWT_CHECK(i < 4, "receive %u succeeded: only 4 Sends were posted", i);
			ok++;
			SIWT_EQ(wc.byte_len, 1000 + i);
			SIWT_CHECK(siwt_hash(rbuf[i], 1000 + i) == hm.u[1 + i],
				   "delivered Send %u: checksum mismatch", i);
			verified += 1000 + i;
		} else {
			SIWT_CHECK(wc.status == RPCRDMA_WC_WR_FLUSH_ERR, "receive %u: %s", i,
				   siwt_status_str(wc.status));
		}
	}
	if (ok) {
		/* RFC 5040 §5.5: the Write before a delivered Send is placed */
		SIWT_CHECK(siwt_hash(big + 5, BIG - 10) == hm.u[0],
			   "a Send was delivered but the Write posted before it is not placed");
		verified += BIG - 10;
	}
	printf("orderly disconnect: %u of 4 Sends delivered before the close\n", ok);
	struct rpcrdma_sge sg = {(uintptr_t)big, 16, rpcrdma_mr_stag(mr)};
	struct rpcrdma_send_wr wr = {.wr_id = 77,
				     .opcode = RPCRDMA_WR_SEND,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &sg,
				     .num_sge = 1};
	rc = rpcrdma_post_send(n->ep, &wr);
	if (rc == 0)
		siwt_expect_wc(n, false, 77, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_SEND, NULL);
	else
		SIWT_EQ(rc, -ENOTCONN);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	siwt_expect_pumped(n, ctl, MSG_NEXT, &m);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_forget(n);
	return 0;
}

static int child_abort(struct siwt_node *n, int ctl, uint16_t port, uint8_t *big)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;
	unsigned cnt = 4;
	int rc;

	memset(big, 0, BIG);
	rc = rpcrdma_mr_reg(n->pd, big, BIG, RPCRDMA_ACCESS_LOCAL_WRITE, &mr);
	siwt_ep_attr(n, &a);
	if (rc || siwt_connect(n, &a, child_pre, &cnt, port, NULL, 0, &est) ||
	    siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return -1;
	uint64_t want = m.u[2];
	struct rpcrdma_sge sg = {(uintptr_t)big, (uint32_t)BIG, rpcrdma_mr_stag(mr)};
	struct rpcrdma_sge s2 = {(uintptr_t)big, 100, rpcrdma_mr_stag(mr)};
	siwt_post(n, 1, RPCRDMA_WR_RDMA_READ, RPCRDMA_SEND_SIGNALED, &sg, 1, (uint32_t)m.u[0],
		  m.u[1], 0);
	siwt_post(n, 2, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &s2, 1, 0, 0, 0);
	siwt_post(n, 3, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &s2, 1, 0, 0, 0);
	/* the parent destroys its endpoint without serving us */
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	/* The Sends went out behind the unanswered Read and may report
	 * SUCCESS after the Read failed: still one completion each, in
	 * posting order. */
	for (uint64_t id = 1; id <= 3; id++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, false, &wc, 10000)) {
			SIWT_CHECK(0, "request %llu never completed after the peer's reset",
				   (unsigned long long)id);
			break;
		}
		SIWT_EQ(wc.wr_id, id);
		printf("abortive close: request %llu completed %s\n", (unsigned long long)id,
		       siwt_status_str(wc.status));
		SIWT_CHECK(wc.status == RPCRDMA_WC_SUCCESS ||
			       wc.status == RPCRDMA_WC_WR_FLUSH_ERR ||
			       wc.status == RPCRDMA_WC_TRANSPORT_ERR,
			   "request %llu: %s", (unsigned long long)id, siwt_status_str(wc.status));
		if (id == 1 && wc.status == RPCRDMA_WC_SUCCESS) {
			SIWT_CHECK(siwt_hash(big, BIG) == want, "completed Read: wrong bytes");
			verified += BIG;
		}
	}
	if (siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000) == 0)
		printf("abortive close seen with status %d (%s)\n", ev.status,
		       strerror(-ev.status));
	for (uint64_t i = 0; i < 4; i++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, true, &wc, 100)) {
			SIWT_CHECK(0, "receive %llu not flushed", (unsigned long long)i);
			break;
		}
		SIWT_EQ(wc.wr_id, i);
		SIWT_EQ(wc.status, RPCRDMA_WC_WR_FLUSH_ERR);
	}
	siwt_expect_pumped(n, ctl, MSG_NEXT, &m);
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
	uint8_t *big = siwt_alloc_buf(BIG);

	(void)arg;
	if (!big || siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	if (rpcrdma_mr_reg(n.pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &rmr))
		return -1;
	if (child_orderly(&n, ctl, (uint16_t)m.a, big) == 0)
		child_abort(&n, ctl, (uint16_t)m.a, big);
	siwt_send4(ctl, MSG_DONE, 0, verified, 0);
	rpcrdma_mr_dereg(rmr);
	siwt_node_close(&n);
	siwt_free_buf(big, BIG);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent                                                              */
/* ------------------------------------------------------------------ */

static uint8_t prbuf[4][256];
static struct rpcrdma_mr *prmr;

static int parent_pre(struct siwt_node *n, void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 4; i++)
		if (siwt_post_recv1(n, 100 + i, prbuf[i], sizeof(prbuf[i]), rpcrdma_mr_stag(prmr)))
			return -1;
	return 0;
}

static void parent_orderly(struct siwt_node *n, int ctl, uint8_t *big)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_mr *mr;
	struct siwt_msg m, hm = {.type = MSG_HASHES};
	int rc;

	siwt_ep_attr(n, &a);
	if (siwt_accept(n, &a, parent_pre, NULL, NULL, 0, &req, &est) ||
	    siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return;
	rc = rpcrdma_mr_reg(n->pd, big, BIG, 0, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		return;
	uint32_t lkey = rpcrdma_mr_stag(mr);
	siwt_fill(big, BIG, 0xf1);
	hm.u[0] = siwt_hash(big + 5, BIG - 10);
	struct rpcrdma_sge wsg = {(uintptr_t)(big + 5), (uint32_t)(BIG - 10), lkey};
	siwt_post(n, 1, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &wsg, 1, (uint32_t)m.u[0],
		  m.u[1] + 5, 0);
	for (unsigned i = 0; i < 4; i++) {
		uint8_t *p = big + 100 + i * 2000;
		hm.u[1 + i] = siwt_hash(p, 1000 + i);
		struct rpcrdma_sge sg = {(uintptr_t)p, 1000 + i, lkey};
		siwt_post(n, 2 + i, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0);
	}
	rc = rpcrdma_disconnect(n->ep);
	SIWT_CHECK(rc == 0, "disconnect: %s", strerror(-rc));
	siwt_send_msg(ctl, &hm);
	if (siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 15000) == 0)
		SIWT_EQ(ev.status, 0);
	bool flushed = false;
	unsigned ok = 0;
	for (uint64_t id = 1; id <= 5; id++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, false, &wc, 100)) {
			SIWT_CHECK(0, "request %llu not completed by DISCONNECTED",
				   (unsigned long long)id);
			break;
		}
		SIWT_EQ(wc.wr_id, id);
		if (wc.status == RPCRDMA_WC_SUCCESS) {
			SIWT_CHECK(!flushed, "request %llu succeeded after a flushed one",
				   (unsigned long long)id);
			ok++;
		} else {
			SIWT_CHECK(wc.status == RPCRDMA_WC_WR_FLUSH_ERR, "request %llu: %s",
				   (unsigned long long)id, siwt_status_str(wc.status));
			flushed = true;
		}
	}
	printf("orderly disconnect: %u of 5 requests completed before the close\n", ok);
	for (uint64_t i = 0; i < 4; i++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, true, &wc, 100)) {
			SIWT_CHECK(0, "receive %llu not flushed", (unsigned long long)i);
			break;
		}
		SIWT_EQ(wc.wr_id, 100 + i);
		SIWT_EQ(wc.status, RPCRDMA_WC_WR_FLUSH_ERR);
	}
	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	siwt_send4(ctl, MSG_NEXT, 0, 0, 0);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_forget(n); /* keeps a next CONNECT_REQUEST */
}

static void parent_abort(struct siwt_node *n, int ctl, uint8_t *big)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est;
	struct rpcrdma_mr *mr;
	struct siwt_msg m = {.type = MSG_INFO};
	int rc;

	siwt_ep_attr(n, &a);
	if (siwt_accept(n, &a, parent_pre, NULL, NULL, 0, &req, &est))
		return;
	siwt_fill(big, BIG, 0xab);
	rc = rpcrdma_mr_reg(n->pd, big, BIG, RPCRDMA_ACCESS_REMOTE_READ, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	m.u[0] = rpcrdma_mr_stag(mr);
	m.u[1] = rpcrdma_mr_offset(mr);
	m.u[2] = siwt_hash(big, BIG);
	siwt_send_msg(ctl, &m);
	/* wait WITHOUT driving progress: the child's Read stays unserved */
	siwt_expect(ctl, MSG_DONE, &m);
	rc = rpcrdma_ep_destroy(n->ep);
	SIWT_CHECK(rc == 0, "ep_destroy of a connected endpoint: %s", strerror(-rc));
	n->ep = NULL;
	/* our receives were flushed into the CQ by the destroy */
	for (uint64_t i = 0; i < 4; i++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, true, &wc, 1000)) {
			SIWT_CHECK(0, "receive %llu not flushed by ep_destroy",
				   (unsigned long long)i);
			break;
		}
		SIWT_EQ(wc.wr_id, 100 + i);
		SIWT_EQ(wc.status, RPCRDMA_WC_WR_FLUSH_ERR);
	}
	siwt_send4(ctl, MSG_NEXT, 0, 0, 0);
	rpcrdma_mr_dereg(mr);
	siwt_forget(n); /* keeps a next CONNECT_REQUEST */
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct siwt_msg m;
	int ctl;

	memset(&n, 0, sizeof(n));

	alarm(90);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 80);
	if (pid < 0)
		return 1;
	uint8_t *big = siwt_alloc_buf(BIG);
	if (big && siwt_node_open(&n) == 0 && siwt_listen(&n) == 0 &&
	    rpcrdma_mr_reg(n.pd, prbuf, sizeof(prbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &prmr) == 0) {
		siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
		parent_orderly(&n, ctl, big);
		if (!siwt_failures)
			parent_abort(&n, ctl, big);
		if (!siwt_failures && siwt_expect(ctl, MSG_DONE, &m) == 0)
			verified += m.u[0];
		rpcrdma_mr_dereg(prmr);
	}
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	siwt_node_close(&n);
	siwt_free_buf(big, BIG);
	close(ctl);
	return siwt_finish("test_siw_flush", verified, t0);
}
