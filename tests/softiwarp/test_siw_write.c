/* SPDX-License-Identifier: MIT */
/*
 * RDMA Write between two processes (RFC 5040 §4.3/§5.1, RFC 5041 tagged
 * model). The parent owns a 20 MiB region registered for remote write and
 * a model copy of what it should hold; the forked child writes into it at
 * unaligned Tagged Offsets (the region's virtual address + offset) from
 * unaligned, multi-SGE sources, 0 bytes to 16 MiB, then posts a Send that
 * carries the (offset, length, seed) of what it wrote and the checksum of
 * its source bytes.
 *
 * Asserts: every Write and Send completes SUCCESS on the writer; when the
 * Send completes at the parent the written bytes are already there (RFC
 * 5040 §5.5 ordering: checked before any further progress call), their
 * checksum equals the writer's, and the bytes around them (and finally the
 * whole region) equal the model — nothing else was touched. A burst of 8
 * Writes followed by one Send checks ordering in volume. A second
 * connection with CRC off and a 100-byte maximum ULPDU checks segmentation.
 */
#include "siw_test_util.h"
#include "softiwarp/siw.h" /* siw_ep_rx_pred_stats */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_DONE, MSG_BYE, MSG_ACK };

#define REG_LEN ((size_t)20 * 1024 * 1024)
#define SRC_LEN ((size_t)16 * 1024 * 1024 + 65536)
#define MAXW    8

/* What the child's Send tells the parent. Copied out of the receive buffer
 * with memcpy; both processes are the same binary. */
struct note {
	uint32_t id, n;
	uint64_t off[MAXW], len[MAXW], seed[MAXW];
	uint64_t hash; /* checksum of the writer's source bytes of write 0 */
};

struct wcase {
	size_t off, len;
	unsigned nsge;
	unsigned burst; /* >0: that many 1 MiB Writes before one Send */
};

static const struct wcase cases[] = {
    {100, 0, 0, 0},
    {1, 1, 1, 0},
    {4093, 3, 1, 0},
    {12345, 65516, 1, 0},
    {777, 65517, 3, 0},
    {(1u << 20) + 5, (1u << 20) - 3, 2, 0},
    {(3u << 20) + 1, 16u << 20, 1, 0},
    {0, 0, 0, 8},
    {7, 16u << 20, 4, 0},
    {1007, 16u << 20, 1, 0},
    {(2u << 20) + 2007, 16u << 20, 2, 0},
    {3007, 16u << 20, 1, 0},
    {(1u << 20) + 4007, 16u << 20, 3, 0},
    {(4u << 20) - 1, 16u << 20, 1, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child: the writer                                                   */
/* ------------------------------------------------------------------ */

/* Posts one Write of len bytes (pattern seed) split over nsge SGEs taken
 * from scattered, unaligned places in src. Returns the source checksum. */
static uint64_t post_write(struct siwt_node *n, uint64_t wr_id, uint8_t *src, uint32_t lkey,
			   size_t len, unsigned nsge, uint64_t seed, uint32_t rstag, uint64_t to)
{
	struct rpcrdma_sge sg[4];
	uint8_t *tmp = malloc(len ? len : 1);
	size_t done = 0, pos = 3;

	siwt_fill(tmp, len, seed);
	uint64_t h = siwt_hash(tmp, len);
	for (unsigned i = 0; i < nsge; i++) {
		size_t piece = i + 1 == nsge ? len - done : len / nsge + i;
		memcpy(src + pos, tmp + done, piece);
		sg[i] = (struct rpcrdma_sge){(uintptr_t)(src + pos), (uint32_t)piece, lkey};
		done += piece;
		pos += piece + 5; /* gaps between the pieces */
	}
	free(tmp);
	siwt_post(n, wr_id, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, sg, nsge, rstag, to, 0);
	return h;
}

static int child_conn(struct siwt_node *n, int ctl, uint16_t port, bool small_ulpdu)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est;
	struct rpcrdma_mr *mr, *nmr;
	struct siwt_msg m;
	struct note note;
	uint8_t *src = siwt_alloc_buf(SRC_LEN);
	int rc;

	siwt_ep_attr(n, &a);
	if (small_ulpdu) {
		a.comp_mask |= RPCRDMA_EP_ATTR_MAX_ULPDU | RPCRDMA_EP_ATTR_CRC;
		a.max_ulpdu = 100;
		a.mpa_crc = false;
	}
	if (!src || siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est))
		return -1;
	if (siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return -1;
	uint32_t rstag = (uint32_t)m.u[0];
	uint64_t base = m.u[1];
	rc = rpcrdma_mr_reg(n->pd, src, SRC_LEN, 0, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	rc = rpcrdma_mr_reg(n->pd, &note, sizeof(note), 0, &nmr);
	SIWT_CHECK(rc == 0, "mr_reg note: %s", strerror(-rc));
	if (siwt_failures)
		return -1;
	uint32_t lkey = rpcrdma_mr_stag(mr);

	unsigned ncases = small_ulpdu ? 2 : NCASES;
	for (unsigned c = 0; c < ncases; c++) {
		struct wcase wc = cases[c];
		if (small_ulpdu)
			wc = c ? (struct wcase){3, 300001, 2, 0} : (struct wcase){65, 1, 1, 0};
		memset(&note, 0, sizeof(note));
		note.id = c;
		unsigned nw = wc.burst ? wc.burst : 1;
		note.n = nw;
		for (unsigned k = 0; k < nw; k++) {
			size_t off = wc.burst ? k * (2u << 20) + k * 3 + 1 : wc.off;
			size_t len = wc.burst ? (1u << 20) + k : wc.len;
			unsigned nsge = wc.burst ? 1 : wc.nsge;
			uint64_t seed = 0x3717000 + c * 16 + k + (small_ulpdu ? 0x100000 : 0);
			note.off[k] = off;
			note.len[k] = len;
			note.seed[k] = seed;
			/* burst Writes use separate source ranges: all in flight */
			uint8_t *s = wc.burst ? src + k * ((1u << 20) + 64) : src;
			uint64_t h =
			    post_write(n, 10 + k, s, lkey, len, nsge, seed, rstag, base + off);
			if (k == 0)
				note.hash = h;
		}
		struct rpcrdma_sge sg = {(uintptr_t)&note, sizeof(note), rpcrdma_mr_stag(nmr)};
		if (siwt_post(n, 99, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0))
			return -1;
		for (unsigned k = 0; k < nw; k++) {
			struct rpcrdma_wc w;
			if (siwt_expect_wc(n, false, 10 + k, RPCRDMA_WC_SUCCESS,
					   RPCRDMA_WC_RDMA_WRITE, &w))
				return -1;
			SIWT_EQ(w.byte_len, note.len[k]);
		}
		if (siwt_expect_wc(n, false, 99, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL))
			return -1;
		/* lockstep: the next case may overwrite the same bytes, so
		 * wait until the parent has checked this one */
		if (siwt_expect_pumped(n, ctl, MSG_ACK, &m))
			return -1;
	}
	struct rpcrdma_ep_stats st;
	rc = rpcrdma_ep_query_stats(n->ep, &st);
	SIWT_CHECK(rc == 0, "query_stats: %s", strerror(-rc));
	SIWT_CHECK(st.writes_out >= ncases, "stats.writes_out %llu < %u",
		   (unsigned long long)st.writes_out, ncases);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	siwt_expect_pumped(n, ctl, MSG_BYE, &m);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	rpcrdma_mr_dereg(nmr);
	siwt_free_buf(src, SRC_LEN);
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
/* parent: the target                                                  */
/* ------------------------------------------------------------------ */

static uint64_t quiet_hash(const uint8_t *p, size_t len)
{
	uint64_t saved = siwt_bytes_hashed, h = siwt_hash(p, len);
	siwt_bytes_hashed = saved;
	return h;
}

static int parent_conn(struct siwt_node *n, int ctl, uint8_t *reg, uint8_t *model, bool small)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_mr *mr, *rmr;
	static uint8_t rbuf[8][512];
	struct siwt_msg m;
	int rc;

	rc = rpcrdma_mr_reg(n->pd, reg, REG_LEN,
			    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &mr);
	SIWT_CHECK(rc == 0, "mr_reg region: %s", strerror(-rc));
	rc |= rpcrdma_mr_reg(n->pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &rmr);
	SIWT_CHECK(rc == 0, "mr_reg recv: %s", strerror(-rc));
	if (rc)
		return -1;
	SIWT_EQ(rpcrdma_mr_offset(mr), (uintptr_t)reg);
	SIWT_EQ(rpcrdma_mr_length(mr), REG_LEN);
	siwt_ep_attr(n, &a);
	if (siwt_accept(n, &a, NULL, NULL, NULL, 0, &req, &est))
		return -1;
	for (unsigned i = 0; i < 8; i++)
		siwt_post_recv1(n, i, rbuf[i], sizeof(rbuf[i]), rpcrdma_mr_stag(rmr));
	struct siwt_msg info = {.type = MSG_INFO};
	info.u[0] = rpcrdma_mr_stag(mr);
	info.u[1] = rpcrdma_mr_offset(mr);
	siwt_send_msg(ctl, &info);

	unsigned ncases = small ? 2 : NCASES;
	for (unsigned c = 0; c < ncases; c++) {
		struct rpcrdma_wc wc;
		struct note note;
		if (siwt_expect_wc(n, true, c % 8, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc))
			return -1;
		SIWT_EQ(wc.byte_len, sizeof(note));
		memcpy(&note, rbuf[c % 8], sizeof(note));
		SIWT_EQ(note.id, c);
		if (note.n == 0 || note.n > MAXW) {
			SIWT_CHECK(0, "bad note");
			return -1;
		}
		/* Ordering: checked before any further progress call. */
		if (siwt_hash(reg + note.off[0], note.len[0]) != note.hash) {
			/* tell an ordering violation (the bytes arrive later)
			 * from corruption (they never do) */
			siwt_pump_for(n, 300);
			bool later = siwt_hash(reg + note.off[0], note.len[0]) == note.hash;
			uint8_t *want = malloc(note.len[0]);
			if (want && !later) {
				siwt_fill(want, note.len[0], note.seed[0]);
				size_t first = 0, last = 0, bad = 0;
				for (size_t i = 0; i < note.len[0]; i++) {
					if (reg[note.off[0] + i] != want[i]) {
						if (!bad)
							first = i;
						last = i;
						bad++;
					}
				}
				size_t outside = 0;
				for (size_t i = 0; i < REG_LEN; i++)
					if ((i < note.off[0] || i >= note.off[0] + note.len[0]) &&
					    reg[i] != model[i])
						outside++;
				fprintf(stderr,
					"case %u: %zu bytes differ, first at write offset %zu, "
					"last at %zu; %zu bytes outside the target changed\n",
					c, bad, first, last, outside);
			}
			free(want);
			SIWT_CHECK(0,
				   "case %u: Write of %llu bytes at offset %llu %s when the "
				   "following Send completed",
				   c, (unsigned long long)note.len[0],
				   (unsigned long long)note.off[0],
				   later ? "not yet placed (placed later: ordering violated)"
					 : "differs from the source (and still does 300 ms later)");
		}
		verified += note.len[0];
		for (unsigned k = 0; k < note.n; k++) {
			size_t off = note.off[k], len = note.len[k];
			siwt_fill(model + off, len, note.seed[k]);
			size_t lo = off > 4096 ? off - 4096 : off;
			size_t hi = off + len + 4096 < REG_LEN ? off + len + 4096 : off + len;
			SIWT_CHECK(quiet_hash(reg + lo, hi - lo) == quiet_hash(model + lo, hi - lo),
				   "case %u write %u (%zu bytes at %zu): region differs from the "
				   "model around the write",
				   c, k, len, off);
			if (k)
				verified += len;
		}
		siwt_post_recv1(n, c % 8, rbuf[c % 8], sizeof(rbuf[c % 8]), rpcrdma_mr_stag(rmr));
		siwt_send4(ctl, MSG_ACK, c, 0, 0);
	}
	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	SIWT_CHECK(quiet_hash(reg, REG_LEN) == quiet_hash(model, REG_LEN),
		   "the region differs from the model");
	uint64_t pf = 0, pm = 0;
	siw_ep_rx_pred_stats(n->ep, &pf, &pm);
	printf("receiver: %llu Write FPDUs received by prediction, %llu misses\n",
	       (unsigned long long)pf, (unsigned long long)pm);
	/* Writes are never received by prediction (only Read Responses) */
	SIWT_CHECK(pf == 0, "%llu Write FPDUs predicted", (unsigned long long)pf);
	struct rpcrdma_ep_stats st;
	rc = rpcrdma_ep_query_stats(n->ep, &st);
	SIWT_CHECK(rc == 0 && st.writes_in >= ncases, "stats.writes_in %llu",
		   (unsigned long long)st.writes_in);
	if (small)
		SIWT_CHECK(st.rx_fpdus > 3000, "max_ulpdu 100 but only %llu FPDUs received",
			   (unsigned long long)st.rx_fpdus);
	siwt_send4(ctl, MSG_BYE, 0, 0, 0);
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	/* the 8 receives still posted are flushed by the disconnect */
	for (unsigned i = 0; i < 8; i++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, true, &wc, 2000) != 0) {
			SIWT_CHECK(0, "posted receive %u not flushed at disconnect", i);
			break;
		}
		SIWT_EQ(wc.status, RPCRDMA_WC_WR_FLUSH_ERR);
	}
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	rpcrdma_mr_dereg(rmr);
	/* (the child reconnects as soon as it has MSG_BYE: its next
	 * CONNECT_REQUEST may be queued already; dropping it made the next
	 * accept wait 15 s, once under load) */
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
	uint8_t *reg = siwt_alloc_buf(REG_LEN), *model = siwt_alloc_buf(REG_LEN);
	if (reg && model && siwt_node_open(&n) == 0 && siwt_listen(&n) == 0) {
		siwt_fill(reg, REG_LEN, 0xfeed);
		memcpy(model, reg, REG_LEN);
		siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
		if (parent_conn(&n, ctl, reg, model, false) == 0)
			parent_conn(&n, ctl, reg, model, true);
	}
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	siwt_node_close(&n);
	siwt_free_buf(reg, REG_LEN);
	siwt_free_buf(model, REG_LEN);
	close(ctl);
	return siwt_finish("test_siw_write", verified, t0);
}
