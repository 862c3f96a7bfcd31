// SPDX-License-Identifier: MIT
/*
 * Version One, backchannel and reliable replies together (issue 32,
 * item 1). In RFC 5666 mode a forward reply too large for anything the
 * call offered comes as RDMA_NOMSG with a Position-Zero Read chunk: the
 * shape of a reverse Long Call. RFC 8167 §4.1: the direction is the RPC
 * message's msg_type, never the chunk shape. Server and client with
 * reliable replies and the backchannel (reverse chunks on); while the
 * server runs reverse calls of up to 4000 bytes (the larger ones Long
 * Calls in a Position-Zero Read chunk), the client makes forward calls
 * whose replies (no Reply chunk offered) come in Read chunks:
 *   every forward call completes with its bytes (checksum), every reverse
 *   call completes with its checksum;
 *   then reverse Long Calls that reuse the XIDs of forward calls whose
 *   replies come in Read chunks at the same time (RFC 8167 §2.4.1): the
 *   same two outcomes;
 *   the server's counters: every reply it exposed was notified (RDMA_DONE),
 *   nothing left exposed, nothing reclaimed; the client's agree.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bidi/bidi_test.h"

#define NREV    300u /* reverse calls alongside the forward ones */
#define NFWD    40u  /* forward calls with replies in Read chunks */
#define NMIRROR 24u  /* forward calls whose XIDs reverse Long Calls reuse */

static const uint32_t sizes[] = {3000, 70000, 1500, 300000, 9000, 1u << 20};

/* BT_READ of @len bytes: 0 when the reply came back intact. */
static int read_call(struct rpcrdma_clnt *c, uint32_t len, uint32_t seed)
{
	struct bt_ctl_args a = {0, len, seed, 0};
	struct bt_bulk_res r = {0};
	struct rpcrdma_call_opts o = {
	    .comp_mask = RPCRDMA_CALL_OPT_UNKNOWN_REPLY | RPCRDMA_CALL_OPT_TIMEOUT,
	    .timeout_ms = 5000,
	};
	int rc = rpcrdma_clnt_call(c, BT_READ, (xdrproc_t)xdr_bt_ctl_args, &a,
				   (xdrproc_t)xdr_bt_bulk_res, &r, &o);

	if (!rc) {
		char *want = malloc(len + 1);

		bt_fill(want, len, seed);
		if (r.id != seed || r.len != len || memcmp(r.val, want, len) ||
		    r.hash != bt_hash(want, len))
			rc = -EIO;
		free(want);
	}
	if (rc)
		fprintf(stderr, "forward BT_READ %u bytes (seed %u): %d (%s)\n", len, seed, rc,
			rpcrdma_strerror(rc));
	xdr_free((xdrproc_t)xdr_bt_bulk_res, &r);
	return rc;
}

/* Wait (10 s at most) until the server counts @n reverse calls done. */
static void rev_wait(struct rpcrdma_clnt *c, uint32_t n, struct bt_ctl_res *res)
{
	for (int i = 0; i < 1000; i++) {
		if (bt_ctl(c, CTL_RESULT, 0, 0, 0, res) || res->v[0] >= n)
			break;
		usleep(10000);
	}
}

int main(void)
{
	struct tl_server srv;
	struct bt_srv_cfg cfg = {.slots = 8, .rr = 1, .workers = 4};
	struct rpcrdma_bc_opts bo = {
	    .comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS, .credits = 8, .chunks = 1};
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_bc_stats bst;
	struct bt_ctl_res res;
	struct rpcrdma_clnt *c = NULL;
	uint32_t large = 0, thr = 0;
	int rc;

	bt_client_rr = 1; /* RFC 5666 mode on the client too */
	rc = bt_setup(&srv, &cfg, &bo, 16, &c);
	if (rc < 0)
		return 1;
	BT_CHECK(rc == 0);
	if (rc)
		goto out;

	/* replies beyond the inline threshold come in Read chunks: 4096 with
	 * RFC 8797 private data by default (issue 32), far from every size */
	BT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	thr = st.inline_recv;
	BT_CHECK(thr == 4096);

	/* 1. reverse calls running while forward replies come in Read chunks */
	BT_CHECK(bt_ctl(c, CTL_REV_ECHO, NREV, 4000, 0, &res) == 0 && res.rc == 0);
	for (uint32_t i = 0; i < NFWD; i++) {
		uint32_t len = sizes[i % 6u];

		large += len > thr;
		BT_CHECK(read_call(c, len, 1000u + i) == 0);
	}
	rev_wait(c, NREV, &res);
	BT_CHECK(res.v[0] == NREV && res.v[1] == 0);

	/* 2. reverse Long Calls with the XIDs of forward calls whose replies
	 * come in Read chunks at the same time */
	BT_CHECK(bt_ctl(c, CTL_MIRROR, NMIRROR, 6000, 0, &res) == 0 && res.rc == 0);
	for (uint32_t i = 0; i < NMIRROR; i++) {
		uint32_t len = sizes[i % 6u];

		large += len > thr;
		BT_CHECK(read_call(c, len, 5000u + i) == 0);
	}
	rev_wait(c, NREV + NMIRROR, &res);
	BT_CHECK(res.v[0] == NREV + NMIRROR && res.v[1] == 0);

	/* 3. every exposed reply notified, nothing left exposed */
	for (int i = 0; i < 500; i++) {
		if (bt_ctl(c, CTL_RR_STATS, 0, 0, 0, &res) || (!res.v[0] && res.v[2] >= large))
			break;
		usleep(10000);
	}
	BT_CHECK(res.rc == 0);
	BT_CHECK(res.v[0] == 0 && res.v[5] == 0); /* nothing exposed now */
	BT_CHECK(res.v[1] == large);              /* every large reply by Read chunk */
	BT_CHECK(res.v[2] == large);              /* each notified (RDMA_DONE) */
	BT_CHECK(res.v[3] == 0 && res.v[4] == 0); /* none reclaimed or refused */
	BT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	BT_CHECK(st.rr_replies == large && st.rr_notifications == large);
	BT_CHECK(st.unmatched_replies == 0 && st.reconnects == 0);
	/* the reverse Long Calls pulled as forward replies, then passed on */
	fprintf(stderr, "XID collisions told by msg_type: %llu\n",
		(unsigned long long)st.unexpected_calls);
	BT_CHECK(st.unexpected_calls > 0);
	BT_CHECK(rpcrdma_clnt_bc_stats(c, &bst) == 0);
	BT_CHECK(bst.calls_received == NREV + NMIRROR && bst.replies_sent == NREV + NMIRROR);
	BT_CHECK(bst.dropped == 0 && bst.err_chunk_tx == 0);
	printf("forward %u calls (%u replies in Read chunks, %llu notified), reverse %u calls "
	       "(%llu Long Calls)\n",
	       NFWD + NMIRROR, large, (unsigned long long)st.rr_notifications,
	       (unsigned)bst.calls_received, (unsigned long long)bst.long_calls);
	rpcrdma_clnt_destroy(c);
out:
	BT_CHECK(bt_server_stop(&srv) == 0);
	return bt_failures ? 1 : 0;
}
