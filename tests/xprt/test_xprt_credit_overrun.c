// SPDX-License-Identifier: MIT
/*
 * A requester that sends more messages than the credits it was granted is
 * cut off alone (issue 20, rogue client; RFC 8166 §3.3.1). Two processes
 * over loopback: a server child granting 4 credits, with 6 workers, and
 * here a good client and a raw rogue (raw_peer.c: the provider API, no
 * rpcrdma client).
 *
 * The rogue learns its grant from the reply to a NULL call (checked: 4),
 * then sends 4 calls that hold their receive buffer for 1.5 s (XT_SLOW) and
 * 4 more NULL calls behind them: the fifth Send finds no receive posted.
 * Checked:
 *   - the rogue's connection ends before any of its slow calls is
 *     answered (1.5 s): a Terminate arrives (DDP layer, untagged buffer error,
 *     "no buffer available", RFC 5041 §7) or, where the server ends the
 *     connection itself, a disconnect; its posted receives are flushed
 *   - a good client's 64 KiB WRITEs (Read chunks, checked by the server's
 *     hash) and 3000-byte echoes (Long Call + Reply chunk, checked here)
 *     run meanwhile, all complete, none takes a second
 *   - the server's counters: connection errors up by at least one,
 *     connected clients back to what they were without the rogue (the good
 *     client's connection is still up)
 *   - a new client is served afterwards.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/be.h"
#include "xprt/raw_peer.h"
#include "xprt/xprt_test.h"

#define CREDITS  4u
#define SLOW_MS  1500u
#define GOOD_LEN (64u << 10)
#define ECHO_LEN 3000u

/* ---- server child: STATS proc 1 (void -> {conn_errors, connections}) ---- */

/* ---- the good client, in a thread until told to stop ---- */

struct good {
	struct rpcrdma_clnt *c;
	uint8_t *buf;
	atomic_bool stop;
	atomic_int calls, bad;
	uint64_t slowest_us;
};

static bool good_call(struct good *g, uint32_t n)
{
	if (n % 2 == 0) {
		struct xt_write_args a = {.seed = n, .data = {g->buf, GOOD_LEN, 0}};
		struct xt_write_res r = {0};
		int rc = rpcrdma_clnt_call(g->c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
					   (xdrproc_t)xdr_xt_write_res, &r, NULL);

		return rc == 0 && r.len == GOOD_LEN &&
		       r.hash == (xt_hash(g->buf, GOOD_LEN) ^ (uint64_t)n);
	}
	/* larger than the inline threshold both ways: Long Call, Reply chunk */
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE,
				      .reply_size = ECHO_LEN + 64};
	struct xt_opaque a = {(char *)g->buf + n % 1024, ECHO_LEN}, r = {0};
	int rc = rpcrdma_clnt_call(g->c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				   (xdrproc_t)xdr_xt_opaque, &r, &o);
	bool ok = rc == 0 && r.len == ECHO_LEN && r.val && !memcmp(r.val, a.val, ECHO_LEN);

	xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&r);
	return ok;
}

static void *good_main(void *arg)
{
	struct good *g = arg;

	for (uint32_t n = 0; !atomic_load(&g->stop); n++) {
		uint64_t t0 = tl_now_us(), dt;

		if (!good_call(g, n))
			atomic_fetch_add(&g->bad, 1);
		dt = tl_now_us() - t0;
		g->slowest_us = dt > g->slowest_us ? dt : g->slowest_us;
		atomic_fetch_add(&g->calls, 1);
	}
	return NULL;
}

/* ---- the rogue ---- */

/* XT_SLOW (or XT_NULL when @ms is 0) as an RDMA_MSG with empty chunk
 * lists, in @w; its length in words. */
static size_t rogue_call(uint32_t *w, uint32_t xid, uint32_t ms)
{
	const uint32_t hdr[] = {
	    xid, 1, CREDITS, 0, 0, 0, 0, xid, 0, 2, XTEST_PROG, XTEST_VERS, ms ? XT_SLOW : XT_NULL,
	    0,   0, 0,       0};
	size_t n = sizeof(hdr) / 4;

	memcpy(w, hdr, sizeof(hdr));
	if (ms)
		w[n++] = ms;
	return n;
}

struct rogue_end {
	bool terminate, disconnected;
	uint8_t layer, etype, code;
	int flushed, answered, answered_slow;
	uint64_t ms;
};

/* Drive the rogue's device until its connection is gone (DISCONNECTED) or
 * @ms pass; what it saw in @e. */
static void rogue_wait_end(struct raw *r, uint64_t ms, struct rogue_end *e)
{
	uint64_t t0 = raw_ms_now();

	while (!e->disconnected && raw_ms_now() < t0 + ms) {
		struct rpcrdma_event ev;
		struct rpcrdma_wc wc;

		rpcrdma_dev_progress(r->dev, 5);
		while (rpcrdma_cq_poll(r->cq, &wc, 1) == 1) {
			if (wc.wr_id >= 8)
				continue; /* a Send's completion */
			if (wc.status == RPCRDMA_WC_SUCCESS) {
				uint32_t xid = get_be32(r->m.rbuf[wc.wr_id]);

				e->answered++;
				if (xid >= 0x600 && xid < 0x600 + CREDITS)
					e->answered_slow++;
			} else {
				e->flushed++;
			}
		}
		while (rpcrdma_evch_get(r->ch, &ev) == 0) {
			if (ev.type == RPCRDMA_EV_TERMINATE && !e->terminate) {
				e->terminate = true;
				e->layer = ev.term_layer;
				e->etype = ev.term_etype;
				e->code = ev.term_code;
				XT_CHECK(!ev.term_local);
			} else if (ev.type == RPCRDMA_EV_DISCONNECTED) {
				e->disconnected = true;
			}
		}
	}
	e->ms = raw_ms_now() - t0;
}

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask =
					  RPCRDMA_SVC_OPT_CREDITS | RPCRDMA_SVC_OPT_WORKERS,
				      .credits = CREDITS,
				      .workers = 6};
	struct tl_server srv;
	struct good g = {0};
	struct rogue_end e = {0};
	struct rpcrdma_clnt *late = NULL;
	struct raw *r = calloc(1, sizeof(*r));
	pthread_t thr;
	struct xt_srv_stats v0 = {0}, v1 = {0};
	uint32_t w[32], m[64];
	int n, before, during, sent = 0;
	uint64_t burst;

	signal(SIGPIPE, SIG_IGN);
	g.buf = malloc(GOOD_LEN);
	if (!r || !g.buf || xt_server_start(&srv, &so, xt_stats_register))
		return 1;
	xt_fill(g.buf, GOOD_LEN, 7);
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, NULL, &g.c) ==
		 0);
	if (!g.c)
		goto out;
	/* good client + the stats client */
	XT_CHECK(xt_server_stats(srv.port, &v0) == 0 && v0.connections == 2);
	if (pthread_create(&thr, NULL, good_main, &g)) {
		XT_CHECK(!"pthread_create");
		goto out;
	}

	if (raw_open(r, srv.port) != 0) {
		XT_CHECK(!"the rogue connects");
		atomic_store(&g.stop, true);
		pthread_join(thr, NULL);
		goto out;
	}
	/* the grant, from the credit field of a reply (RFC 8166 §3.3.1) */
	n = raw_send_recv(r, w, rogue_call(w, 0x500, 0), m, 64);
	XT_CHECK(n >= 7 && m[0] == 0x500 && m[2] == CREDITS);
	before = atomic_load(&g.calls);
	burst = raw_ms_now();
	/* CREDITS calls that keep their receive buffers, then more */
	for (uint32_t i = 0; i < 2 * CREDITS; i++) {
		size_t k = rogue_call(w, 0x600 + i, i < CREDITS ? SLOW_MS : 0);

		if (raw_send(r, w, k) != 0)
			break; /* the connection may already be gone */
		sent++;
	}
	XT_CHECK(sent > (int)CREDITS);
	rogue_wait_end(r, 3000, &e);
	printf("rogue: %d messages after the NULL call (grant %u); connection ended after %llu ms: "
	       "%s%s (layer %u type %u code %u), %d receives flushed, %d answered\n",
	       sent, CREDITS, (unsigned long long)e.ms, e.terminate ? "Terminate, " : "",
	       e.disconnected ? "disconnected" : "still up", e.layer, e.etype, e.code, e.flushed,
	       e.answered);
	XT_CHECK(e.disconnected && e.ms < SLOW_MS);
	/* the calls in the receives it was granted were still running: the
	 * connection was gone before their replies */
	XT_CHECK(e.answered_slow == 0 && e.flushed > 0);
	/* RFC 5041 §7: DDP layer (1), untagged buffer error (2), "invalid
	 * MSN - no buffer available" (2) */
	if (e.terminate)
		XT_CHECK(e.layer == 1 && e.etype == 2 && e.code == 2);
	raw_close(r);
	memset(r, 0, sizeof(*r));

	/* the good client, through the rogue's end and until its slow calls
	 * (which hold 4 of the 6 workers) are over */
	while (raw_ms_now() < burst + SLOW_MS + 300)
		usleep(20000);
	during = atomic_load(&g.calls) - before;
	atomic_store(&g.stop, true);
	pthread_join(thr, NULL);
	printf("good client: %d calls (%d from the rogue's burst on), %d bad, slowest %llu us\n",
	       atomic_load(&g.calls), during, atomic_load(&g.bad),
	       (unsigned long long)g.slowest_us);
	XT_CHECK(during > 0 && atomic_load(&g.bad) == 0 && g.slowest_us < 1000000u);

	/* one connection lost, the good one still there (the server counts
	 * its disconnect once the rogue's slow calls have ended) */
	for (int i = 0; i < 50; i++) {
		XT_CHECK(xt_server_stats(srv.port, &v1) == 0);
		if (v1.connections == v0.connections)
			break;
		usleep(100000);
	}
	printf("server: conn_errors %llu -> %llu, connections %llu -> %llu\n",
	       (unsigned long long)v0.conn_errors, (unsigned long long)v1.conn_errors,
	       (unsigned long long)v0.connections, (unsigned long long)v1.connections);
	XT_CHECK(v1.conn_errors > v0.conn_errors && v1.connections == v0.connections);
	XT_CHECK(good_call(&g, 1000) && good_call(&g, 1001));

	/* still serving: a new client */
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, NULL, &late) ==
		 0);
	if (late) {
		struct good l = {.c = late, .buf = g.buf};

		XT_CHECK(good_call(&l, 2000) && good_call(&l, 2001));
	}
out:
	if (late)
		rpcrdma_clnt_destroy(late);
	if (g.c)
		rpcrdma_clnt_destroy(g.c);
	if (r)
		raw_close(r);
	free(r);
	free(g.buf);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
