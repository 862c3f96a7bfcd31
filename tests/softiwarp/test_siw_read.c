/* SPDX-License-Identifier: MIT */
/*
 * RDMA Read between two processes (RFC 5040 §4.4-4.5/§5.2). The parent
 * exposes a 20 MiB region for remote read; the forked child reads ranges of
 * it (unaligned Tagged Offsets, 0 bytes to 16 MiB) into unaligned places
 * of its own buffer and asks the parent, over the control socket, for the
 * checksum of the same source range.
 *
 * Asserts: each Read completes SUCCESS with byte_len = length, the bytes
 * placed match the source checksum computed in the other process, the sink
 * bytes around the target are untouched; 8 Reads in flight complete in
 * order with their own data; the MPA v2 IRD/ORD exchange (RFC 6581 §5)
 * reaches both sides as configured and the effective ORD is bounded by the
 * peer's IRD; with ORD 2 a queue of 12 Reads still completes in order.
 * The source region is unchanged at the end.
 */
#include "siw_test_util.h"
#include "softiwarp/siw.h" /* siw_ep_rx_pred_stats */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_HASHREQ, MSG_HASH, MSG_DONE };

#define REG_LEN  ((size_t)20 * 1024 * 1024)
#define SINK_LEN ((size_t)16 * 1024 * 1024 + 65536)

struct rcase {
	size_t off, len, sink_off;
};

static const struct rcase cases[] = {
    {100, 0, 10},
    {1, 1, 1},
    {4093, 3, 3},
    {12345, 4095, 7},
    {777, 65516, 5},
    {65535, 65517, 11},
    {(1u << 20) + 5, (1u << 20) - 3, 13},
    {(3u << 20) + 1, 16u << 20, 17},
    {7, 16u << 20, 1},
    {(2u << 20) + 2007, 16u << 20, 2},
    {(4u << 20) - 1, 16u << 20, 3},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child: the reader                                                   */
/* ------------------------------------------------------------------ */

static uint64_t remote_hash(struct siwt_node *n, int ctl, size_t off, size_t len)
{
	struct siwt_msg m;

	siwt_send4(ctl, MSG_HASHREQ, 0, off, len);
	if (siwt_expect_pumped(n, ctl, MSG_HASH, &m))
		return 0;
	return m.u[0];
}

static uint64_t quiet_hash(const uint8_t *p, size_t len)
{
	uint64_t saved = siwt_bytes_hashed, h = siwt_hash(p, len);
	siwt_bytes_hashed = saved;
	return h;
}

static int post_read(struct siwt_node *n, uint64_t wr_id, uint8_t *sink, uint32_t lkey, size_t len,
		     uint32_t rstag, uint64_t to)
{
	struct rpcrdma_sge sg = {(uintptr_t)sink, (uint32_t)len, lkey};

	return siwt_post(n, wr_id, RPCRDMA_WR_RDMA_READ, RPCRDMA_SEND_SIGNALED, &sg, len ? 1 : 0,
			 rstag, to, 0);
}

static int check_read(struct siwt_node *n, int ctl, uint64_t wr_id, uint8_t *sink, size_t off,
		      size_t len, uint64_t g0, uint64_t g1)
{
	struct rpcrdma_wc wc;

	if (siwt_expect_wc(n, false, wr_id, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_READ, &wc))
		return -1;
	SIWT_EQ(wc.byte_len, len);
	uint64_t want = remote_hash(n, ctl, off, len);
	SIWT_CHECK(siwt_hash(sink, len) == want,
		   "Read of %zu bytes at offset %zu: checksum differs from the source", len, off);
	SIWT_CHECK(quiet_hash(sink - 64, 64) == g0, "sink bytes before the target changed");
	SIWT_CHECK(quiet_hash(sink + len, 64) == g1, "sink bytes after the target changed");
	verified += len;
	return 0;
}

static int child_conn(struct siwt_node *n, int ctl, uint16_t port, bool limited)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est;
	struct rpcrdma_ep_conn_info ci;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;
	uint8_t *sink = siwt_alloc_buf(SINK_LEN);
	int rc;

	siwt_ep_attr(n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_IRD_ORD;
	a.ird = limited ? 1 : 3;
	a.ord = limited ? 2 : 5;
	if (!sink || siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est))
		return -1;
	/* the responder's IRD/ORD as it sent them: its IRD (7, or 2) and its
	 * ORD (4, or 1) already bounded by our IRD (3, or 1), RFC 6581 §5 */
	SIWT_EQ(est.mpa_rev, 2);
	SIWT_EQ(est.ird, limited ? 2 : 7);
	SIWT_EQ(est.ord, limited ? 1 : 3);
	rc = rpcrdma_ep_query_conn(n->ep, &ci);
	SIWT_CHECK(rc == 0, "query_conn: %s", strerror(-rc));
	/* RFC 6581 §5: our ORD may not exceed the peer's IRD */
	SIWT_EQ(ci.ord, limited ? 2 : 5);
	if (siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return -1;
	uint32_t rstag = (uint32_t)m.u[0];
	uint64_t base = m.u[1];
	siwt_fill(sink, SINK_LEN, 0x5151);
	rc = rpcrdma_mr_reg(n->pd, sink, SINK_LEN, RPCRDMA_ACCESS_LOCAL_WRITE, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		return -1;
	uint32_t lkey = rpcrdma_mr_stag(mr);

	if (!limited) {
		for (unsigned c = 0; c < NCASES; c++) {
			uint8_t *s = sink + 64 + cases[c].sink_off;
			size_t len = cases[c].len;
			uint64_t g0 = quiet_hash(s - 64, 64), g1 = quiet_hash(s + len, 64);
			if (post_read(n, 20 + c, s, lkey, len, rstag, base + cases[c].off) ||
			    check_read(n, ctl, 20 + c, s, cases[c].off, len, g0, g1))
				return -1;
		}
		/* 8 Reads in flight (ORD 5: three of them wait in the queue) */
		uint64_t g0[8], g1[8];
		for (unsigned k = 0; k < 8; k++) {
			uint8_t *s = sink + 64 + k * ((1u << 20) + 256) + k;
			size_t len = (1u << 20) + 3 * k;
			g0[k] = quiet_hash(s - 64, 64);
			g1[k] = quiet_hash(s + len, 64);
			if (post_read(n, 50 + k, s, lkey, len, rstag,
				      base + k * (2u << 20) + 5 * k))
				return -1;
		}
		for (unsigned k = 0; k < 8; k++) {
			uint8_t *s = sink + 64 + k * ((1u << 20) + 256) + k;
			if (check_read(n, ctl, 50 + k, s, k * (2u << 20) + 5 * k,
				       (1u << 20) + 3 * k, g0[k], g1[k]))
				return -1;
		}
	} else {
		/* ORD 2: twelve Reads posted at once still all complete in
		 * order (the provider holds back the ones beyond ORD). */
		uint64_t g0[12], g1[12];
		for (unsigned k = 0; k < 12; k++) {
			uint8_t *s = sink + 64 + k * 200000;
			g0[k] = quiet_hash(s - 64, 64);
			g1[k] = quiet_hash(s + 100001, 64);
			if (post_read(n, 70 + k, s, lkey, 100001, rstag, base + 1 + k * 300000))
				return -1;
		}
		for (unsigned k = 0; k < 12; k++)
			if (check_read(n, ctl, 70 + k, sink + 64 + k * 200000, 1 + k * 300000,
				       100001, g0[k], g1[k]))
				return -1;
	}
	struct rpcrdma_ep_stats st;
	rc = rpcrdma_ep_query_stats(n->ep, &st);
	SIWT_CHECK(rc == 0 && st.reads_out >= (limited ? 12 : NCASES + 8), "stats.reads_out %llu",
		   (unsigned long long)st.reads_out);
	/* multi-FPDU Read Response receive (qp_rx.c prediction, opt-in with
	 * RPCRDMA_SIW_RX_PREDICT=1, ctest test_siw_read_pred): used, and our
	 * responder's cut always matched; otherwise never used */
	uint64_t pf = 0, pm = 0;
	const char *pe = getenv("RPCRDMA_SIW_RX_PREDICT");
	siw_ep_rx_pred_stats(n->ep, &pf, &pm);
	if (pe && strcmp(pe, "1") == 0)
		SIWT_CHECK(pf > 0 && pm == 0, "Read Response prediction: %llu FPDUs, %llu misses",
			   (unsigned long long)pf, (unsigned long long)pm);
	else
		SIWT_CHECK(pf == 0, "predicted %llu FPDUs without RPCRDMA_SIW_RX_PREDICT=1",
			   (unsigned long long)pf);
	printf("reader: %llu Read Response FPDUs received by prediction, %llu misses\n",
	       (unsigned long long)pf, (unsigned long long)pm);
	/* the reader counts verified bytes; the parent reports them */
	siwt_send4(ctl, MSG_DONE, 0, verified, 0);
	rc = rpcrdma_disconnect(n->ep);
	SIWT_CHECK(rc == 0, "disconnect: %s", strerror(-rc));
	struct rpcrdma_event ev;
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	SIWT_EQ(ev.status, 0);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_free_buf(sink, SINK_LEN);
	siwt_forget(n);
	return 0;
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	if (child_conn(&n, ctl, (uint16_t)m.a, false) == 0)
		child_conn(&n, ctl, (uint16_t)m.a, true);
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent: the data source                                             */
/* ------------------------------------------------------------------ */

static int parent_conn(struct siwt_node *n, int ctl, uint8_t *reg, uint64_t reg_hash, bool limited)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_ep_conn_info ci;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;
	int rc;

	rc = rpcrdma_mr_reg(n->pd, reg, REG_LEN, RPCRDMA_ACCESS_REMOTE_READ, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		return -1;
	siwt_ep_attr(n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_IRD_ORD;
	a.ird = limited ? 2 : 7;
	a.ord = limited ? 1 : 4;
	if (siwt_accept(n, &a, NULL, NULL, NULL, 0, &req, &est))
		return -1;
	/* the initiator's values from its MPA v2 request */
	SIWT_EQ(req.mpa_rev, 2);
	SIWT_EQ(req.ird, limited ? 1 : 3);
	SIWT_EQ(req.ord, limited ? 2 : 5);
	rc = rpcrdma_ep_query_conn(n->ep, &ci);
	SIWT_CHECK(rc == 0, "query_conn: %s", strerror(-rc));
	SIWT_EQ(ci.ord, limited ? 1 : 3); /* min(our ORD, peer IRD) */
	SIWT_CHECK(ci.ird >= (limited ? 2u : 5u), "effective IRD %u below the peer's ORD", ci.ird);

	struct siwt_msg info = {.type = MSG_INFO};
	info.u[0] = rpcrdma_mr_stag(mr);
	info.u[1] = rpcrdma_mr_offset(mr);
	siwt_send_msg(ctl, &info);
	for (;;) {
		if (siwt_pump_until_msg(n, ctl, &m, 30000)) {
			SIWT_CHECK(0, "no control message from the reader");
			return -1;
		}
		if (m.type == MSG_DONE) {
			verified = m.u[0];
			break;
		}
		if (m.type != MSG_HASHREQ || m.u[0] + m.u[1] > REG_LEN) {
			SIWT_CHECK(0, "bad control message %u", m.type);
			return -1;
		}
		siwt_send4(ctl, MSG_HASH, 0, siwt_hash(reg + m.u[0], m.u[1]), 0);
	}
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	SIWT_EQ(ev.status, 0);
	uint64_t saved = siwt_bytes_hashed;
	SIWT_CHECK(siwt_hash(reg, REG_LEN) == reg_hash, "the Read source region changed");
	siwt_bytes_hashed = saved;
	SIWT_CHECK(n->swc_n == 0 && n->rwc_n == 0, "unexpected completions at the data source");
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

	alarm(150);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 140);
	if (pid < 0)
		return 1;
	uint8_t *reg = siwt_alloc_buf(REG_LEN);
	if (reg && siwt_node_open(&n) == 0 && siwt_listen(&n) == 0) {
		siwt_fill(reg, REG_LEN, 0xdada);
		uint64_t saved = siwt_bytes_hashed, h = siwt_hash(reg, REG_LEN);
		siwt_bytes_hashed = saved;
		siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
		if (parent_conn(&n, ctl, reg, h, false) == 0)
			parent_conn(&n, ctl, reg, h, true);
	}
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	siwt_node_close(&n);
	siwt_free_buf(reg, REG_LEN);
	close(ctl);
	return siwt_finish("test_siw_read", verified, t0);
}
