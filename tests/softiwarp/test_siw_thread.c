/* SPDX-License-Identifier: MIT */
/*
 * The provider's internal progress thread (RPCRDMA_DEV_F_PROGRESS_THREAD),
 * both processes: nothing calls rpcrdma_dev_progress() (it must refuse with
 * -EINVAL); completions and events are awaited on the CQ and event channel
 * file descriptors (arm, poll the CQ, wait, acknowledge).
 *
 * Asserts: connection setup through the event channel fd; a 16 MiB + 1
 * Send, a 16 MiB Write followed by a Send (placed when the Send
 * completes), a 16 MiB Read, each checksummed across the processes; a
 * solicited-only armed receive CQ whose fd stays quiet for a plain Send
 * (whose completion is nevertheless in the CQ) and becomes readable for a
 * Send with Solicited Event; orderly disconnect seen on both sides.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_HASH, MSG_GO, MSG_DONE };

#define BIG ((size_t)16 << 20)
#define LEN (BIG + 4096)

static uint64_t verified;

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m, info;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_mr *mr;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m) ||
	    siwt_node_open_flags(&n, RPCRDMA_DEV_F_PROGRESS_THREAD))
		return -1;
	SIWT_EQ(rpcrdma_dev_progress(n.dev, 0), -EINVAL);
	uint8_t *buf = siwt_alloc_buf(LEN);
	if (!buf || rpcrdma_mr_reg(n.pd, buf, LEN, RPCRDMA_ACCESS_LOCAL_WRITE, &mr))
		return -1;
	uint32_t lkey = rpcrdma_mr_stag(mr);
	siwt_ep_attr(&n, &a);
	if (siwt_connect(&n, &a, NULL, NULL, (uint16_t)m.a, NULL, 0, &est) ||
	    siwt_expect_pumped(&n, ctl, MSG_INFO, &info))
		return -1;

	/* Send 16 MiB + 1 */
	struct rpcrdma_sge sg = {(uintptr_t)(buf + 1), (uint32_t)(BIG + 1), lkey};
	siwt_fill(buf + 1, BIG + 1, 0x7401);
	uint64_t h = siwt_hash(buf + 1, BIG + 1);
	siwt_post(&n, 1, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0);
	siwt_expect_wc(&n, false, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL);
	siwt_send4(ctl, MSG_HASH, 1, h, BIG + 1);

	/* Write 16 MiB at offset 3 of the parent's region, then a Send */
	struct rpcrdma_sge wsg = {(uintptr_t)(buf + 2), (uint32_t)BIG, lkey};
	siwt_fill(buf + 2, BIG, 0x7402);
	h = siwt_hash(buf + 2, BIG);
	struct rpcrdma_sge ssg = {(uintptr_t)buf, 8, lkey};
	siwt_post(&n, 2, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &wsg, 1, (uint32_t)info.u[0],
		  info.u[1] + 3, 0);
	siwt_post(&n, 3, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &ssg, 1, 0, 0, 0);
	siwt_expect_wc(&n, false, 2, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_WRITE, NULL);
	siwt_expect_wc(&n, false, 3, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL);
	siwt_send4(ctl, MSG_HASH, 2, h, BIG);

	/* Read 16 MiB from offset 5 of the parent's second region */
	struct rpcrdma_sge rsg = {(uintptr_t)(buf + 7), (uint32_t)BIG, lkey};
	siwt_post(&n, 4, RPCRDMA_WR_RDMA_READ, RPCRDMA_SEND_SIGNALED, &rsg, 1, (uint32_t)info.u[2],
		  info.u[3] + 5, 0);
	if (siwt_expect_wc(&n, false, 4, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_READ, NULL) == 0)
		siwt_send4(ctl, MSG_HASH, 4, siwt_hash(buf + 7, BIG), BIG);

	/* a plain Send, then one with Solicited Event, each on the parent's
	 * signal */
	for (uint64_t i = 0; i < 2; i++) {
		if (siwt_expect_pumped(&n, ctl, MSG_GO, &m))
			return -1;
		siwt_post(&n, 5 + i, RPCRDMA_WR_SEND,
			  RPCRDMA_SEND_SIGNALED | (i ? RPCRDMA_SEND_SOLICITED : 0), &ssg, 1, 0, 0,
			  0);
		siwt_expect_wc(&n, false, 5 + i, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL);
	}
	if (siwt_expect_pumped(&n, ctl, MSG_DONE, &m) == 0) {
		int rc = rpcrdma_disconnect(n.ep);
		SIWT_CHECK(rc == 0, "disconnect: %s", strerror(-rc));
		if (siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000) == 0)
			SIWT_EQ(ev.status, 0);
	}
	rpcrdma_ep_destroy(n.ep);
	n.ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_free_buf(buf, LEN);
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

static uint8_t *rbuf, *wreg, *rreg;
static struct rpcrdma_mr *rmr, *wmr, *rrmr;

static int post_recvs(struct siwt_node *n, void *arg)
{
	(void)arg;
	if (siwt_post_recv1(n, 1, rbuf, (uint32_t)(BIG + 64), rpcrdma_mr_stag(rmr)))
		return -1;
	for (uint64_t i = 2; i <= 4; i++)
		if (siwt_post_recv1(n, i, rbuf + BIG + 64 * i, 64, rpcrdma_mr_stag(rmr)))
			return -1;
	return 0;
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_wc wc;
	struct siwt_msg m;
	int ctl, rc;

	memset(&n, 0, sizeof(n));
	alarm(60);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 50);
	if (pid < 0)
		return 1;
	rbuf = siwt_alloc_buf(LEN);
	wreg = siwt_alloc_buf(LEN);
	rreg = siwt_alloc_buf(LEN);
	if (!rbuf || !wreg || !rreg || siwt_node_open_flags(&n, RPCRDMA_DEV_F_PROGRESS_THREAD) ||
	    siwt_listen(&n))
		goto out;
	SIWT_EQ(rpcrdma_dev_progress(n.dev, 0), -EINVAL);
	/* the solicited-only check below must own the receive CQ's arming */
	n.no_rcq_notify = true;
	siwt_fill(wreg, LEN, 0x7403);
	siwt_fill(rreg, LEN, 0x7404);
	rc = rpcrdma_mr_reg(n.pd, rbuf, LEN, RPCRDMA_ACCESS_LOCAL_WRITE, &rmr);
	rc = rc ? rc
		: rpcrdma_mr_reg(n.pd, wreg, LEN,
				 RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &wmr);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, rreg, LEN, RPCRDMA_ACCESS_REMOTE_READ, &rrmr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		goto out;
	siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
	siwt_ep_attr(&n, &a);
	if (siwt_accept(&n, &a, post_recvs, NULL, NULL, 0, &req, &est))
		goto out;
	m = (struct siwt_msg){.type = MSG_INFO};
	m.u[0] = rpcrdma_mr_stag(wmr);
	m.u[1] = rpcrdma_mr_offset(wmr);
	m.u[2] = rpcrdma_mr_stag(rrmr);
	m.u[3] = rpcrdma_mr_offset(rrmr);
	siwt_send_msg(ctl, &m);

	if (siwt_expect_wc(&n, true, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) == 0 &&
	    siwt_expect_pumped(&n, ctl, MSG_HASH, &m) == 0) {
		SIWT_EQ(wc.byte_len, BIG + 1);
		SIWT_CHECK(siwt_hash(rbuf, BIG + 1) == m.u[0], "16 MiB Send differs");
		verified += BIG + 1;
	}
	if (siwt_expect_wc(&n, true, 2, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) == 0 &&
	    siwt_expect_pumped(&n, ctl, MSG_HASH, &m) == 0) {
		SIWT_CHECK(siwt_hash(wreg + 3, BIG) == m.u[0],
			   "16 MiB Write not placed when the Send behind it completed");
		verified += BIG;
	}
	if (siwt_expect_pumped(&n, ctl, MSG_HASH, &m) == 0) {
		SIWT_CHECK(siwt_hash(rreg + 5, BIG) == m.u[0], "16 MiB Read differs");
		verified += BIG;
	}

	/* Solicited-only notification (RFC 5040 §5.3 "Solicited Event") */
	rc = rpcrdma_cq_req_notify(n.rcq, true);
	SIWT_CHECK(rc == 0, "cq_req_notify: %s", strerror(-rc));
	struct pollfd pfd = {.fd = rpcrdma_cq_fd(n.rcq), .events = POLLIN};
	siwt_send4(ctl, MSG_GO, 0, 0, 0);
	/* the plain Send's completion arrives in the CQ ... */
	int got = 0;
	for (int i = 0; i < 500 && got == 0; i++) {
		got = rpcrdma_cq_poll(n.rcq, &wc, 1);
		if (got == 0)
			usleep(2000);
	}
	SIWT_CHECK(got == 1 && wc.wr_id == 3 && !(wc.wc_flags & RPCRDMA_WC_F_SOLICITED),
		   "plain Send: no RECV completion (%d)", got);
	/* ... without waking a solicited-only waiter */
	SIWT_CHECK(poll(&pfd, 1, 200) == 0, "solicited-only CQ fd readable after a plain Send");
	siwt_send4(ctl, MSG_GO, 0, 0, 0);
	SIWT_CHECK(poll(&pfd, 1, 5000) == 1, "solicited-only CQ fd not readable after SE Send");
	rpcrdma_cq_ack_notify(n.rcq);
	got = rpcrdma_cq_poll(n.rcq, &wc, 1);
	SIWT_CHECK(got == 1 && wc.wr_id == 4 && (wc.wc_flags & RPCRDMA_WC_F_SOLICITED),
		   "Send with SE: completion missing or not flagged");
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	if (siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000) == 0)
		SIWT_EQ(ev.status, 0);
out:
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	if (n.ep) {
		rpcrdma_ep_destroy(n.ep);
		n.ep = NULL;
	}
	if (rmr)
		rpcrdma_mr_dereg(rmr);
	if (wmr)
		rpcrdma_mr_dereg(wmr);
	if (rrmr)
		rpcrdma_mr_dereg(rrmr);
	siwt_node_close(&n);
	siwt_free_buf(rbuf, LEN);
	siwt_free_buf(wreg, LEN);
	siwt_free_buf(rreg, LEN);
	close(ctl);
	return siwt_finish("test_siw_thread", verified, t0);
}
