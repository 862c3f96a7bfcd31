// SPDX-License-Identifier: MIT
/*
 * The gate (RFC 8167 §6) and chunks in the reverse direction (§5.3).
 *   - Before the client enabled its backchannel, a reverse call is refused
 *     by the server library itself with -ENOPROTOOPT and nothing is sent:
 *     the server sent no reverse call, the client received none.
 *   - After rpcrdma_clnt_bc_enable(), reverse calls go: a Short one, one
 *     whose 64 KiB bulk argument travels as a Read chunk and whose 40 KB
 *     result comes back as a Long Reply in the server's Reply chunk, and a
 *     Long Call (Position-Zero Read chunk); checksums on both sides.
 *   - A client with reverse chunks off answers a reverse call carrying a
 *     chunk with RDMA_ERROR / ERR_CHUNK (the call fails with -EREMOTEIO),
 *     and can still take Short ones.
 *   - A server with reverse chunks off sends only Short reverse calls: one
 *     that would need a chunk fails locally with -EMSGSIZE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bidi/bidi_test.h"

int main(void)
{
	struct tl_server srv, srv2;
	struct bt_srv_cfg cfg = {.slots = 4}, cfg2 = {.slots = 4, .no_chunks = 1};
	struct rpcrdma_bc_opts off = {.comp_mask = RPCRDMA_BC_OPT_CHUNKS, .chunks = 0};
	struct rpcrdma_clnt *a = NULL, *b = NULL, *c = NULL;
	struct rpcrdma_bc_stats bst;
	struct bt_ctl_res res;
	int rc;

	if (bt_server_start(&srv, &cfg) || bt_server_start(&srv2, &cfg2))
		return 1;

	/* ---- the gate ---- */
	rc = bt_client(srv.port, NULL, 16, &a);
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	BT_CHECK(bt_ctl(a, CTL_TRY, 0, 0, 0, &res) == 0);
	printf("reverse call before the gate: %d (%s)\n", res.rc, strerror(-res.rc));
	BT_CHECK(res.rc == -ENOPROTOOPT);
	BT_CHECK(res.v[0] == 0); /* the server sent no reverse call */
	BT_CHECK(res.v[1] == 1); /* it refused one */
	usleep(50000);
	BT_CHECK(rpcrdma_clnt_bc_stats(a, &bst) == 0);
	BT_CHECK(bst.calls_received == 0); /* and none arrived */
	BT_CHECK(bst.enabled == 0);
	BT_CHECK(rpcrdma_clnt_bc_enable(a) == 0);
	BT_CHECK(rpcrdma_clnt_bc_stats(a, &bst) == 0 && bst.enabled == 1 && bst.enables == 1);
	BT_CHECK(bt_ctl(a, CTL_TRY, 0, 0, 0, &res) == 0);
	BT_CHECK(res.rc == 0);
	BT_CHECK(res.v[0] == 1);

	/* ---- reverse chunks on ---- */
	/* Short */
	BT_CHECK(bt_ctl(a, CTL_REV_BULK, 200, 100, 0, &res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1);
	BT_CHECK(res.v[1] == 0 && res.v[2] == 0 && res.v[3] == 0 && res.v[4] == 0);
	/* Read chunk for the bulk argument, Long Reply in the Reply chunk */
	BT_CHECK(bt_ctl(a, CTL_REV_BULK, 65536, 40000, 0, &res) == 0);
	printf("chunked reverse call: rc %d read chunks %u reply chunk %u reply proc %u ok %u\n",
	       res.rc, res.v[1], res.v[2], res.v[3], res.v[5]);
	BT_CHECK(res.rc == 0 && res.v[5] == 1);
	BT_CHECK(res.v[1] == 1);
	BT_CHECK(res.v[2] == 1);
	BT_CHECK(res.v[3] == 1); /* RDMA_NOMSG: Long Reply */
	BT_CHECK(res.v[4] == 0); /* RDMA_MSG */
	/* Long Call (Position-Zero Read chunk) */
	BT_CHECK(bt_ctl(a, CTL_REV_BULK, 300, 100, RPCRDMA_CALL_F_LONG | RPCRDMA_CALL_F_NO_DDP,
			&res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1);
	BT_CHECK(res.v[4] == 1); /* RDMA_NOMSG */
	BT_CHECK(res.v[1] == 1);
	BT_CHECK(rpcrdma_clnt_bc_stats(a, &bst) == 0);
	BT_CHECK(bst.read_chunks == 2 && bst.read_bytes > 65536);
	BT_CHECK(bst.long_calls == 1 && bst.long_replies == 1 && bst.reply_chunks == 1);
	BT_CHECK(bst.reply_bytes > 40000);
	BT_CHECK(bst.err_chunk_tx == 0);

	/* ---- the client's reverse chunks off ---- */
	rc = bt_client(srv.port, &off, 16, &b);
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	BT_CHECK(rpcrdma_clnt_bc_enable(b) == 0);
	BT_CHECK(bt_ctl(b, CTL_REV_BULK, 65536, 100, 0, &res) == 0);
	printf("reverse call with a chunk to a client without reverse chunks: %d, rdma_err %u\n",
	       res.rc, res.v[0]);
	BT_CHECK(res.rc == -EREMOTEIO);
	BT_CHECK(res.v[0] == 2); /* ERR_CHUNK */
	BT_CHECK(res.v[3] == 4); /* RDMA_ERROR */
	/* RFC 8167 §4.1: the RDMA_ERROR carried the client's grant of 2, but
	 * its direction is not in the message: ignored, the reverse window is
	 * still at its initial 1 ... */
	BT_CHECK(res.v[6] == 1);
	BT_CHECK(res.v[7] == 1);
	/* A reply too large to send inline, and no chunk allowed. */
	BT_CHECK(bt_ctl(b, CTL_REV_BULK, 100, 8000, 0, &res) == 0);
	BT_CHECK(res.rc == -EREMOTEIO && res.v[0] == 2);
	BT_CHECK(bt_ctl(b, CTL_REV_BULK, 200, 100, 0, &res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1);
	BT_CHECK(res.v[7] == 2); /* ... until a reverse Reply grants 2 */
	BT_CHECK(rpcrdma_clnt_bc_stats(b, &bst) == 0);
	BT_CHECK(bst.err_chunk_tx == 2);
	BT_CHECK(bst.read_chunks == 0); /* nothing was pulled */

	/* ---- the server's reverse chunks off ---- */
	rc = bt_client(srv2.port, NULL, 16, &c);
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	BT_CHECK(rpcrdma_clnt_bc_enable(c) == 0);
	BT_CHECK(bt_ctl(c, CTL_REV_BULK, 65536, 100, 0, &res) == 0);
	BT_CHECK(res.rc == -EMSGSIZE);
	BT_CHECK(bt_ctl(c, CTL_REV_BULK, 300, 100, 0, &res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1 && res.v[1] == 0);
	BT_CHECK(rpcrdma_clnt_bc_stats(c, &bst) == 0);
	BT_CHECK(bst.calls_received == 1); /* only the Short one was sent */
out:
	if (a)
		rpcrdma_clnt_destroy(a);
	if (b)
		rpcrdma_clnt_destroy(b);
	if (c)
		rpcrdma_clnt_destroy(c);
	BT_CHECK(bt_server_stop(&srv) == 0);
	BT_CHECK(bt_server_stop(&srv2) == 0);
	return bt_failures ? 1 : 0;
}
