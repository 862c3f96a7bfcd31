/* SPDX-License-Identifier: MIT */
/*
 * Every RDMAP opcode once over one connection (RFC 5040 §4: Write 0, Read
 * Request 1, Read Response 2, Send 3, Send with Invalidate 4, Send with SE
 * 5, Send with SE and Invalidate 6, Terminate 7), between two processes,
 * with MPA CRC on. Small enough (about 4 MiB) to be captured and decoded by
 * tests/softiwarp/wire_tshark.sh, which runs this program with SIWT_WIRE=1
 * and SIWT_PORT set and checks the opcodes announced on the WIRE-OPCODES
 * line appear in the capture.
 *
 * Asserts: CRC in use; each Send variant completes with the right flags,
 * invalidated STag and checksummed payload; Write and Read bytes match on
 * the other side (multi-FPDU, unaligned); finally a Write to an STag that
 * does not exist draws a Terminate (DDP tagged, invalid STag) seen on both
 * sides, and the parent's region is unchanged by it.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_HASH, MSG_DONE };

#define REG_LEN ((size_t)2 << 20)
#define BUF_LEN ((size_t)2 << 20)

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child: issues every operation                                       */
/* ------------------------------------------------------------------ */

static uint8_t *cbuf;
static struct rpcrdma_mr *cmr;

static int do_send(struct siwt_node *n, int ctl, uint64_t id, uint32_t flags, uint32_t inv,
		   size_t off, size_t len)
{
	struct rpcrdma_sge sg = {(uintptr_t)(cbuf + off), (uint32_t)len, rpcrdma_mr_stag(cmr)};

	siwt_fill(cbuf + off, len, 0x0b00 + id);
	uint64_t h = siwt_hash(cbuf + off, len);
	if (siwt_post(n, id, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED | flags, &sg, 1, 0, 0, inv) ||
	    siwt_expect_wc(n, false, id, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL))
		return -1;
	return siwt_send4(ctl, MSG_HASH, (uint32_t)id, h, len);
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m, info;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_ep_conn_info ci;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	cbuf = siwt_alloc_buf(BUF_LEN);
	if (!cbuf || rpcrdma_mr_reg(n.pd, cbuf, BUF_LEN, RPCRDMA_ACCESS_LOCAL_WRITE, &cmr))
		return -1;
	siwt_ep_attr(&n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_CRC;
	a.mpa_crc = true;
	if (siwt_connect(&n, &a, NULL, NULL, (uint16_t)m.a, NULL, 0, &est) ||
	    siwt_expect_pumped(&n, ctl, MSG_INFO, &info))
		return -1;
	SIWT_CHECK(rpcrdma_ep_query_conn(n.ep, &ci) == 0 && ci.crc, "MPA CRC not in use");
	uint32_t rstag = (uint32_t)info.u[0], inv1 = (uint32_t)info.u[2],
		 inv2 = (uint32_t)info.u[3];
	uint64_t rto = info.u[1];

	/* Send (3), Send with SE (5), Send with Invalidate (4), Send with SE
	 * and Invalidate (6); 65537 bytes: two FPDUs */
	do_send(&n, ctl, 1, 0, 0, 1, 65537);
	do_send(&n, ctl, 2, RPCRDMA_SEND_SOLICITED, 0, 3, 100);
	do_send(&n, ctl, 3, RPCRDMA_SEND_INVALIDATE, inv1, 5, 200);
	do_send(&n, ctl, 4, RPCRDMA_SEND_INVALIDATE | RPCRDMA_SEND_SOLICITED, inv2, 7, 300);

	/* Write (0), 1 MiB + 3 at an unaligned offset, then a Send */
	size_t wlen = (1u << 20) + 3;
	siwt_fill(cbuf + 9, wlen, 0x0c01);
	uint64_t wh = siwt_hash(cbuf + 9, wlen);
	struct rpcrdma_sge wsg = {(uintptr_t)(cbuf + 9), (uint32_t)wlen, rpcrdma_mr_stag(cmr)};
	siwt_post(&n, 5, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &wsg, 1, rstag, rto + 11, 0);
	siwt_expect_wc(&n, false, 5, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_WRITE, NULL);
	siwt_send4(ctl, MSG_HASH, 5, wh, wlen);
	do_send(&n, ctl, 6, 0, 0, 13, 10);

	/* Read Request (1) / Read Response (2): 1 MiB - 1 from offset 4097
	 * of the parent's region, whose content is seed 0x0d01 */
	size_t rlen = (1u << 20) - 1;
	struct rpcrdma_sge rsg = {(uintptr_t)(cbuf + 15), (uint32_t)rlen, rpcrdma_mr_stag(cmr)};
	siwt_post(&n, 7, RPCRDMA_WR_RDMA_READ, RPCRDMA_SEND_SIGNALED, &rsg, 1, rstag, rto + 4097,
		  0);
	if (siwt_expect_wc(&n, false, 7, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_READ, NULL) == 0) {
		siwt_send4(ctl, MSG_HASH, 7, siwt_hash(cbuf + 15, rlen), rlen);
	}

	/* Terminate (7): a Write to an STag that does not exist */
	static const uint32_t inv_stag = SIWT_TERM(1, 1, 0);
	siwt_post(&n, 8, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &wsg, 1, rstag ^ 0x00ffff00u,
		  rto, 0);
	siwt_expect_terminate(&n, false, &inv_stag, 1);
	siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	rpcrdma_ep_destroy(n.ep);
	n.ep = NULL;
	rpcrdma_mr_dereg(cmr);
	siwt_free_buf(cbuf, BUF_LEN);
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent: the target                                                  */
/* ------------------------------------------------------------------ */

static uint8_t *reg, rbuf[8][70000], inv_buf[2][4096];
static struct rpcrdma_mr *reg_mr, *rb_mr, *inv_mr[2];

static int post_recvs(struct siwt_node *n, void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 8; i++)
		if (siwt_post_recv1(n, i, rbuf[i], sizeof(rbuf[i]), rpcrdma_mr_stag(rb_mr)))
			return -1;
	return 0;
}

static void expect_send(struct siwt_node *n, int ctl, unsigned slot, uint32_t flags, uint32_t inv)
{
	struct rpcrdma_wc wc;
	struct siwt_msg m;

	if (siwt_expect_wc(n, true, slot, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) ||
	    siwt_expect_pumped(n, ctl, MSG_HASH, &m))
		return;
	SIWT_EQ(wc.wc_flags, flags);
	if (flags & RPCRDMA_WC_F_WITH_INV)
		SIWT_EQ(wc.invalidated_stag, inv);
	SIWT_EQ(wc.byte_len, m.u[1]);
	SIWT_CHECK(siwt_hash(rbuf[slot], m.u[1]) == m.u[0], "Send %u: checksum mismatch", m.a);
	verified += m.u[1];
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct siwt_msg m;
	int ctl, rc;

	memset(&n, 0, sizeof(n));

	alarm(60);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 50);
	if (pid < 0)
		return 1;
	reg = siwt_alloc_buf(REG_LEN);
	if (!reg || siwt_node_open(&n) || siwt_listen(&n))
		goto out;
	siwt_fill(reg, REG_LEN, 0x0d01);
	rc = rpcrdma_mr_reg(n.pd, reg, REG_LEN,
			    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE |
				RPCRDMA_ACCESS_REMOTE_READ,
			    &reg_mr);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &rb_mr);
	for (int i = 0; i < 2 && !rc; i++)
		rc = rpcrdma_mr_reg(n.pd, inv_buf[i], sizeof(inv_buf[i]),
				    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE,
				    &inv_mr[i]);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		goto out;
	/* The wire test needs to know the opcodes this run puts on the wire. */
	printf("WIRE-OPCODES: 0 1 2 3 4 5 6 7\n");
	printf("WIRE-TERMINATE: 1 1 0\n"); /* DDP, tagged buffer, invalid STag */
	fflush(stdout);
	siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
	siwt_ep_attr(&n, &a);
	if (siwt_accept(&n, &a, post_recvs, NULL, NULL, 0, &req, &est))
		goto out;
	SIWT_CHECK(est.crc, "MPA CRC not in use");
	m = (struct siwt_msg){.type = MSG_INFO};
	m.u[0] = rpcrdma_mr_stag(reg_mr);
	m.u[1] = rpcrdma_mr_offset(reg_mr);
	m.u[2] = rpcrdma_mr_stag(inv_mr[0]);
	m.u[3] = rpcrdma_mr_stag(inv_mr[1]);
	siwt_send_msg(ctl, &m);

	expect_send(&n, ctl, 0, 0, 0);
	expect_send(&n, ctl, 1, RPCRDMA_WC_F_SOLICITED, 0);
	expect_send(&n, ctl, 2, RPCRDMA_WC_F_WITH_INV, rpcrdma_mr_stag(inv_mr[0]));
	expect_send(&n, ctl, 3, RPCRDMA_WC_F_WITH_INV | RPCRDMA_WC_F_SOLICITED,
		    rpcrdma_mr_stag(inv_mr[1]));
	SIWT_CHECK(!rpcrdma_mr_valid(inv_mr[0]) && !rpcrdma_mr_valid(inv_mr[1]),
		   "remotely invalidated STags still valid");
	/* the Write's checksum, then the Send behind it */
	if (siwt_expect_pumped(&n, ctl, MSG_HASH, &m) == 0) {
		uint64_t wh = m.u[0], wlen = m.u[1];
		expect_send(&n, ctl, 4, 0, 0);
		SIWT_CHECK(siwt_hash(reg + 11, wlen) == wh, "Write bytes differ");
		verified += wlen;
	}
	/* the Read's checksum, computed by the reader */
	if (siwt_expect_pumped(&n, ctl, MSG_HASH, &m) == 0) {
		SIWT_CHECK(siwt_hash(reg + 4097, m.u[1]) == m.u[0], "Read bytes differ");
		verified += m.u[1];
	}
	uint64_t saved = siwt_bytes_hashed, before = siwt_hash(reg, REG_LEN);
	static const uint32_t inv_stag = SIWT_TERM(1, 1, 0);
	siwt_expect_terminate(&n, true, &inv_stag, 1);
	siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	siwt_expect_pumped(&n, ctl, MSG_DONE, &m);
	SIWT_CHECK(siwt_hash(reg, REG_LEN) == before, "region changed by the refused Write");
	siwt_bytes_hashed = saved;
out:
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	if (n.ep) {
		rpcrdma_ep_destroy(n.ep);
		n.ep = NULL;
	}
	if (reg_mr)
		rpcrdma_mr_dereg(reg_mr);
	if (rb_mr)
		rpcrdma_mr_dereg(rb_mr);
	for (int i = 0; i < 2; i++)
		if (inv_mr[i])
			rpcrdma_mr_dereg(inv_mr[i]);
	siwt_node_close(&n);
	siwt_free_buf(reg, REG_LEN);
	close(ctl);
	return siwt_finish("test_siw_opcodes", verified, t0);
}
