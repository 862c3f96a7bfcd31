// SPDX-License-Identifier: MIT
/*
 * The backchannel (RFC 8167) over RPC-over-RDMA Version Two (the early
 * draft; docs/rpcrdma2.md), with the same API: a Version Two client and a
 * Version Two capable server exchange forward calls and reverse calls of
 * every size class (inline, Read chunk + Long Reply, Long Call), each
 * checked by the peer's checksum; every message the client receives is
 * checked to be Version Two, the reverse calls saying CALL in
 * rdma_direction. Then an `auto` client against a Version One server
 * falls back and runs its reverse traffic in Version One.
 * Without RFC 8797 private data, Version Two's 4096-byte thresholds hold in
 * the reverse direction too, and the transport properties raise them
 * further (issue 32): reverse calls and replies between 1 KiB and the
 * threshold go Short, as the server reports.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "bidi/bidi_test.h"
#include "util/be.h"

static _Atomic uint32_t rx_v1, rx_v2, rx_v2_calls;

static void on_recv(void *arg, const uint8_t *buf, size_t len)
{
	(void)arg;
	if (len < 20)
		return;
	if (get_be32(buf + 4) == 1)
		rx_v1++;
	if (get_be32(buf + 4) != 2)
		return;
	rx_v2++;
	/* RDMA2_MSG / RDMA2_NOMSG, rdma_direction CALL: a reverse call */
	if (get_be32(buf + 12) <= 1 && get_be32(buf + 16) == 0)
		rx_v2_calls++;
}

static void traffic(struct rpcrdma_clnt *c, bool chunks)
{
	struct bt_ctl_res res;

	BT_CHECK(rpcrdma_clnt_bc_enable(c) == 0);
	for (int i = 0; i < 3; i++)
		BT_CHECK(bt_ctl(c, CTL_TRY, 0, 0, 0, &res) == 0 && res.rc == 0);
	/* reverse calls with the forward calls' XIDs, while those are served */
	bt_mirror(c, 4, 3000, 100, 900, &res);
	if (!chunks)
		return;
	/* Read chunk for the argument, Long Reply in the Reply chunk */
	BT_CHECK(bt_ctl(c, CTL_REV_BULK, 65536, 40000, 0, &res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1 && res.v[1] == 1 && res.v[2] == 1 && res.v[3] == 1);
	/* Long Call (Position-Zero Read chunk) */
	BT_CHECK(bt_ctl(c, CTL_REV_BULK, 300, 100, RPCRDMA_CALL_F_LONG | RPCRDMA_CALL_F_NO_DDP,
			&res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1 && res.v[4] == 1);
}

/* A sync CB_BULK of @arg bytes (kept inline) whose reply is @rep bytes:
 * ok, and sent as a Short call (@long_call 0) or a Long one. The reply is
 * Short always: the call says its size, which fits the threshold. */
static void rev_short(struct rpcrdma_clnt *c, uint32_t arg, uint32_t rep, uint32_t long_call)
{
	struct bt_ctl_res res;

	BT_CHECK(bt_ctl(c, CTL_REV_BULK, arg, rep, RPCRDMA_CALL_F_NO_DDP, &res) == 0);
	printf("reverse %u/%u bytes: rc %d ok %u, call proc %u, read chunks %u, reply chunk "
	       "%u, reply proc %u\n",
	       arg, rep, res.rc, res.v[5], res.v[4], res.v[1], res.v[2], res.v[3]);
	BT_CHECK(res.rc == 0 && res.v[5] == 1);
	/* RDMA2_MSG, or RDMA2_NOMSG with its Position-Zero Read chunk */
	BT_CHECK(res.v[4] == long_call && res.v[1] == long_call);
	BT_CHECK(res.v[2] == 0 && res.v[3] == 0); /* no Reply chunk, RDMA2_MSG */
}

/* A Version Two client that sends no RFC 8797 private data (both sides
 * then start at 1024 bytes each way), thresholds @thr on both sides. */
static void nopd(uint32_t thr)
{
	struct bt_srv_cfg cfg = {.slots = 4, .v2 = 1, .inline_thr = thr};
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt_opts co;
	struct rpcrdma_clnt *c = NULL;
	struct tl_server s;
	struct bt_ctl_res res;

	if (bt_server_start(&s, &cfg)) {
		bt_failures++;
		return;
	}
	bt_client_defaults(&co, 16, RPCRDMA_VERSION_2);
	co.comp_mask |= RPCRDMA_CLNT_OPT_PRIVATE_DATA | RPCRDMA_CLNT_OPT_INLINE;
	co.private_data = 0;
	co.inline_send = co.inline_recv = thr;
	BT_CHECK(bt_client_opts(s.port, NULL, &co, &c) == 0);
	if (c) {
		BT_CHECK(rpcrdma_clnt_bc_enable(c) == 0);
		BT_CHECK(bt_ctl(c, CTL_TRY, 0, 0, 0, &res) == 0 && res.rc == 0);
		BT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
		printf("no private data, %u: inline send %u recv %u\n", thr, st.inline_send,
		       st.inline_recv);
		/* the forward direction: draft §2.3, then the properties */
		BT_CHECK(st.inline_send == thr && st.inline_recv == thr);
		/* over 1024, within the threshold: Short both ways */
		rev_short(c, 1100, 1100, 0);
		rev_short(c, thr - 1096, thr - 1096, 0);
		/* over the threshold: a Long Call, still a Short reply */
		rev_short(c, thr + 100, 100, 1);
		rpcrdma_clnt_destroy(c);
	}
	BT_CHECK(bt_server_stop(&s) == 0);
}

int main(void)
{
	struct bt_srv_cfg cfg2 = {.slots = 4, .v2 = 1}, cfg1 = {.slots = 4};
	struct clnt_testhook h = {.on_recv = on_recv};
	struct tl_server s2, s1;
	struct rpcrdma_clnt *c = NULL;

	if (bt_server_start(&s2, &cfg2) || bt_server_start(&s1, &cfg1))
		return 1;
	BT_CHECK(bt_client_vers(s2.port, NULL, 16, RPCRDMA_VERSION_2, &c) == 0);
	if (c) {
		rpcrdma_clnt_set_testhook(c, &h);
		traffic(c, true);
		printf("v2: received %u v1, %u v2 messages, %u v2 reverse calls\n", rx_v1, rx_v2,
		       rx_v2_calls);
		BT_CHECK(rx_v1 == 0 && rx_v2 > 20 && rx_v2_calls >= 9);
		rpcrdma_clnt_destroy(c);
	}
	rx_v1 = rx_v2 = rx_v2_calls = 0;
	c = NULL;
	BT_CHECK(bt_client_vers(s1.port, NULL, 16, RPCRDMA_VERSION_AUTO, &c) == 0);
	if (c) {
		rpcrdma_clnt_set_testhook(c, &h);
		traffic(c, false);
		/* one Version Two message: the ERR_VERS answering the probe,
		 * which echoes the probe's rdma_vers (issue 32, as Linux) */
		BT_CHECK(rx_v2 == 1 && rx_v2_calls == 0 && rx_v1 > 10);
		rpcrdma_clnt_destroy(c);
	}
	BT_CHECK(bt_server_stop(&s2) == 0);
	BT_CHECK(bt_server_stop(&s1) == 0);
	nopd(4096); /* draft §2.3's 4096 bytes */
	nopd(8192); /* then the transport properties' */
	return bt_failures ? 1 : 0;
}
