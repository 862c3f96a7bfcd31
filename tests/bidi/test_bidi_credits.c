// SPDX-License-Identifier: MIT
/*
 * RFC 8167 §4.1: forward and reverse credits are accounted separately, so
 * head-of-line blocking in one direction does not stall the other. The
 * client grants 2 reverse credits and holds the reverse calls in its
 * callback; the server queues 6 of them (its window is full, calls wait:
 * credit stalls). Meanwhile 2000 forward calls (or as many as 8 s allow,
 * at least 200) complete, all while every reverse call is still held; the
 * reverse window is never exceeded on either side; then, released, the
 * reverse calls all complete (slowly).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bidi/bidi_test.h"

#define NSLOW   6u
#define SLOW_MS 400u
#define NFWD    2000u
#define NWARM   4u
/* The forward calls stop after NFWD or, once NFWD_MIN are done, after
 * FWD_NS since the reverse calls went out: the held reverse calls time out
 * after 20 s (bidi_test.c), and 2000 forward calls took 13 s over verbs on
 * the guest's rxe, 26 s with ASan on a loaded host. */
#define NFWD_MIN 200u
#define FWD_NS   8000000000ull

int main(void)
{
	struct tl_server srv;
	struct bt_srv_cfg cfg = {.slots = 8};
	struct rpcrdma_bc_opts bo = {.comp_mask = RPCRDMA_BC_OPT_CREDITS, .credits = 2};
	struct rpcrdma_clnt *c;
	struct rpcrdma_bc_stats bst;
	struct bt_ctl_res res;
	uint8_t buf[256];
	uint32_t bad = 0, done_during, nfwd = 0;
	uint64_t t0, fwd_ns;
	int rc;

	bt_slow_budget = NSLOW;
	rc = bt_setup(&srv, &cfg, &bo, 16, &c);
	if (rc < 0)
		return 1;
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	/* Open the reverse window to the client's grant of 2 (it starts at
	 * one, RFC 8166 §3.3.1, and grows with the grants in the replies). */
	BT_CHECK(bt_ctl(c, CTL_REV_ECHO, NWARM, 100, 0, &res) == 0 && res.rc == 0);
	for (int i = 0; i < 500; i++) {
		if (bt_ctl(c, CTL_RESULT, 0, 0, 0, &res) || res.v[0] >= NWARM)
			break;
		usleep(10000);
	}
	BT_CHECK(res.v[0] == NWARM);
	/* The reverse calls are held in the client's callback until the
	 * forward calls are done, so none can complete in between however
	 * slowly a loaded machine runs them (with a 400 ms sleep alone, 2000
	 * ASan forward calls under load took up to 1.3 s, half the window).
	 * Forward calls waiting behind them would wait for the 30 s hold cap. */
	__atomic_store_n(&bt_slow_hold, 1, __ATOMIC_SEQ_CST);
	t0 = bt_now_ns();
	BT_CHECK(bt_ctl(c, CTL_REV_SLOW, NSLOW, SLOW_MS, 0, &res) == 0 && res.rc == 0);
	/* the reverse window fills: a call reached the callback and the
	 * server has had to hold one back (a credit stall) */
	for (int i = 0; i < 1000; i++) {
		if (__atomic_load_n(&bt_slow_entered, __ATOMIC_SEQ_CST) >= 1 &&
		    (bt_ctl(c, CTL_RESULT, 0, 0, 0, &res) || res.v[5] >= 1))
			break;
		usleep(10000);
	}
	for (uint32_t i = 0; i < NFWD; i++) {
		struct bt_echo_args a = {.id = i, .val = (char *)buf, .len = i % sizeof(buf)};
		struct bt_echo_res r = {0};

		if (i >= NFWD_MIN && bt_now_ns() - t0 > FWD_NS)
			break;
		nfwd++;

		bt_fill(buf, a.len, i);
		rc = rpcrdma_clnt_call(c, BT_ECHO, (xdrproc_t)xdr_bt_echo_args, &a,
				       (xdrproc_t)xdr_bt_echo_res, &r, NULL);
		if (rc || r.id != i || r.hash != bt_hash(buf, a.len))
			bad++;
	}
	fwd_ns = bt_now_ns() - t0;
	BT_CHECK(bt_ctl(c, CTL_RESULT, 0, 0, 0, &res) == 0);
	done_during = res.v[0] - NWARM;
	printf("%u forward calls in %.0f ms while %u of %u held reverse calls completed "
	       "(%d in the callback, reverse credit stalls %u, most outstanding %u)\n",
	       nfwd, (double)fwd_ns / 1e6, done_during, NSLOW,
	       __atomic_load_n(&bt_slow_entered, __ATOMIC_SEQ_CST), res.v[5], res.v[7]);
	BT_CHECK(bad == 0);
	/* The forward calls did not wait for the reverse direction: they all
	 * completed while every reverse call was still held. */
	BT_CHECK(done_during == 0);
	BT_CHECK(__atomic_load_n(&bt_slow_hold_expired, __ATOMIC_SEQ_CST) == 0);
	BT_CHECK(res.v[5] >= 1); /* the reverse window was exhausted ... */
	BT_CHECK(res.v[7] == 2); /* ... and never exceeded */
	__atomic_store_n(&bt_slow_hold, 0, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 1000; i++) {
		if (bt_ctl(c, CTL_RESULT, 0, 0, 0, &res) || res.v[0] >= NWARM + NSLOW)
			break;
		usleep(10000);
	}
	BT_CHECK(res.v[0] == NWARM + NSLOW);
	BT_CHECK(res.v[1] == 0);
	BT_CHECK(rpcrdma_clnt_bc_stats(c, &bst) == 0);
	BT_CHECK(bst.max_outstanding <= 2);
	BT_CHECK(bst.calls_received == NWARM + NSLOW);
	BT_CHECK(bst.dropped == 0);
	rpcrdma_clnt_destroy(c);
out:
	BT_CHECK(bt_server_stop(&srv) == 0);
	return bt_failures ? 1 : 0;
}
