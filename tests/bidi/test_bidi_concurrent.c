// SPDX-License-Identifier: MIT
/*
 * RFC 8167 bidirectional operation on one connection: thousands of
 * forward calls (client -> server) and reverse calls (server -> client)
 * at the same time, with the same XID values live in both directions on
 * purpose (RFC 8167 §2.4.1): serving each forward call, the server starts
 * a reverse call with that call's XID before it replies. Every reply must match its own call (id and
 * a checksum of the payload that crossed, computed by the other side), no
 * reply may be unmatched, and the counters of both directions must add up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bidi/bidi_test.h"

#define NTHREADS 4
#define NFWD     3000u /* forward calls, over NTHREADS threads */
#define NREV     NFWD  /* reverse calls: one per forward call, same XID */
#define MAXBYTES 900u  /* payload: every message fits the 1 KiB inline threshold */

static struct rpcrdma_clnt *clnt;
static atomic_uint fwd_bad;

static void *fwd_thread(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	uint8_t *buf = malloc(MAXBYTES);

	for (uint32_t i = 0; i < NFWD / NTHREADS; i++) {
		uint32_t id = t * 100000u + i;
		struct bt_echo_args a = {
		    .id = id, .val = (char *)buf, .len = (id * 37u) % MAXBYTES};
		struct bt_echo_res r = {0};
		int rc;

		bt_fill(buf, a.len, id);
		rc = rpcrdma_clnt_call(clnt, BT_ECHO, (xdrproc_t)xdr_bt_echo_args, &a,
				       (xdrproc_t)xdr_bt_echo_res, &r, NULL);
		if (rc || r.id != id || r.hash != bt_hash(buf, a.len)) {
			fprintf(stderr, "forward call %u: rc %d id %u\n", id, rc, r.id);
			atomic_fetch_add(&fwd_bad, 1);
		}
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	/* "inline": RPCRDMA_BC_OPT_INLINE on both sides (reverse dispatch on
	 * the client's receiving thread, async completions on the server's
	 * progress thread). */
	int inl = argc > 1 && !strcmp(argv[1], "inline");
	struct tl_server srv;
	struct bt_srv_cfg cfg = {.slots = 8, .inline_cb = inl};
	struct rpcrdma_bc_opts bo = {.comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_INLINE,
				     .credits = 8,
				     .inline_dispatch = inl};
	struct rpcrdma_xprt_stats fst;
	struct rpcrdma_bc_stats bst;
	struct bt_ctl_res res;
	pthread_t th[NTHREADS];
	uint64_t t0;
	int rc;

	rc = bt_server_start(&srv, &cfg);
	if (rc) {
		fprintf(stderr, "server: %d\n", rc);
		return 1;
	}
	rc = bt_client(srv.port, &bo, 32, &clnt);
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	BT_CHECK(rpcrdma_clnt_bc_enable(clnt) == 0);
	/* Every forward echo makes the server start a reverse echo with the
	 * same XID while the forward call is still open. */
	t0 = bt_now_ns();
	BT_CHECK(bt_ctl(clnt, CTL_MIRROR, NREV, MAXBYTES, 0, &res) == 0 && res.rc == 0);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, fwd_thread, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2000; i++) {
		if (bt_ctl(clnt, CTL_RESULT, 0, 0, 0, &res) || res.v[0] >= NREV)
			break;
		usleep(10000);
	}
	printf("forward %u calls, reverse %u calls in %.2f s; %u XID values used both ways\n", NFWD,
	       res.v[0], (double)(bt_now_ns() - t0) / 1e9, res.v[2]);
	BT_CHECK(atomic_load(&fwd_bad) == 0);
	BT_CHECK(res.v[0] == NREV); /* every reverse call completed ... */
	BT_CHECK(res.v[1] == 0);    /* ... with the right id and checksum */
	BT_CHECK(res.v[2] == NREV); /* every one used an XID live forward too */
	BT_CHECK(res.v[4] == NREV); /* each sent exactly once */
	BT_CHECK(res.v[7] <= 8);    /* never more than the reverse credits */

	BT_CHECK(rpcrdma_clnt_stats(clnt, &fst) == 0);
	BT_CHECK(rpcrdma_clnt_bc_stats(clnt, &bst) == 0);
	BT_CHECK(fst.unmatched_replies == 0);
	BT_CHECK(fst.replies >= NFWD);
	BT_CHECK(bst.calls_received == NREV);
	BT_CHECK(bst.replies_sent == NREV);
	BT_CHECK(bst.dropped == 0);
	BT_CHECK(bst.max_outstanding <= 8);
	BT_CHECK(bst.peer_credits == 8); /* the server's reverse credit request */
	printf("client: forward calls %llu replies %llu; reverse calls %llu replies %llu, "
	       "most at once %u\n",
	       (unsigned long long)fst.calls, (unsigned long long)fst.replies,
	       (unsigned long long)bst.calls_received, (unsigned long long)bst.replies_sent,
	       bst.max_outstanding);
	rpcrdma_clnt_destroy(clnt);
out:
	rc = bt_server_stop(&srv);
	BT_CHECK(rc == 0);
	return bt_failures ? 1 : 0;
}
