// SPDX-License-Identifier: MIT
/*
 * Reconnect with reverse calls outstanding (RFC 8167 §4.3, §5.4). Four
 * reverse calls are on the wire (the first one held by a slow callback)
 * when the client's connection drops. The client reconnects, posts its
 * receives again and re-enables its backchannel by itself; the server
 * sends the four calls again with the same XIDs on the new connection and
 * each completes exactly once, correctly. Forward calls work across it.
 * Then the client goes away for good: a reverse call made now waits for a
 * connection for conn_wait_ms (1 s) and fails with -ETIMEDOUT (checked by
 * the server child, whose exit status the test asserts).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "bidi/bidi_test.h"

static int wait_done(struct rpcrdma_clnt *c, uint32_t n, struct bt_ctl_res *res)
{
	for (int i = 0; i < 1500; i++) {
		if (bt_ctl(c, CTL_RESULT, 0, 0, 0, res))
			return -1;
		if (res->v[0] >= n)
			return 0;
		usleep(10000);
	}
	return -1;
}

int main(void)
{
	struct tl_server srv;
	struct bt_srv_cfg cfg = {.slots = 4, .conn_wait_ms = 1000};
	struct rpcrdma_bc_opts bo = {.comp_mask = RPCRDMA_BC_OPT_CREDITS, .credits = 4};
	struct rpcrdma_clnt *c;
	struct rpcrdma_xprt_stats fst;
	struct rpcrdma_bc_stats bst;
	struct bt_ctl_res res;
	int rc;

	rc = bt_setup(&srv, &cfg, &bo, 16, &c);
	if (rc < 0)
		return 1;
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	/* Open the reverse window to the client's 4 credits. */
	BT_CHECK(bt_ctl(c, CTL_REV_ECHO, 8, 100, 0, &res) == 0 && res.rc == 0);
	BT_CHECK(wait_done(c, 8, &res) == 0);
	/* Four slow reverse calls; the first one's callback sleeps. */
	bt_slow_budget = 1;
	BT_CHECK(bt_ctl(c, CTL_REV_SLOW, 4, 700, 0, &res) == 0 && res.rc == 0);
	usleep(200000);
	BT_CHECK(bt_ctl(c, CTL_RESULT, 0, 0, 0, &res) == 0);
	BT_CHECK(res.v[0] == 8); /* none of the four is done */
	BT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	BT_CHECK(wait_done(c, 12, &res) == 0);
	printf("after reconnect: %u reverse calls done, %u bad, most transmissions %u, "
	       "retransmits %u\n",
	       res.v[0], res.v[1], res.v[3], res.v[6]);
	BT_CHECK(res.v[0] == 12);
	BT_CHECK(res.v[1] == 0);
	BT_CHECK(res.v[3] == 2); /* sent twice: same XID on the new connection */
	BT_CHECK(res.v[6] >= 1 && res.v[6] <= 4);
	BT_CHECK(rpcrdma_clnt_stats(c, &fst) == 0);
	BT_CHECK(fst.reconnects == 1);
	BT_CHECK(rpcrdma_clnt_bc_stats(c, &bst) == 0);
	BT_CHECK(bst.enables == 2); /* enabled again on the new connection */
	BT_CHECK(bst.enabled == 1);
	{
		struct bt_echo_args a = {.id = 5, .val = (char *)"after", .len = 5};
		struct bt_echo_res r = {0};

		BT_CHECK(rpcrdma_clnt_call(c, BT_ECHO, (xdrproc_t)xdr_bt_echo_args, &a,
					   (xdrproc_t)xdr_bt_echo_res, &r, NULL) == 0);
		BT_CHECK(r.id == 5 && r.hash == bt_hash("after", 5));
	}
	/* The client leaves: the server's next reverse call must time out. */
	BT_CHECK(bt_ctl(c, CTL_ARM_TMO, 0, 0, 0, &res) == 0 && res.rc == 0);
	rpcrdma_clnt_destroy(c);
	usleep(1500000);
out:
	rc = bt_server_stop(&srv);
	BT_CHECK(rc == 0);
	return bt_failures ? 1 : 0;
}
