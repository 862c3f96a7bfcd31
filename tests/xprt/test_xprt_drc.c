// SPDX-License-Identifier: MIT
/*
 * The server's duplicate request cache end to end (RPCRDMA_SVC_OPT_DRC),
 * two processes over loopback, a non-idempotent procedure (a counter):
 *   lost reply   the server runs the call, then its connection is cut as
 *                the reply is posted (RPCRDMA_SIW_FAULT=cut-op:1 on the
 *                server's device); the client reconnects and sends the
 *                call again with the same XID: it gets the first result,
 *                the handler ran once (drc_hits 1)
 *   in progress  the client's connection drops while the handler still
 *                runs (a worker); the retransmission waits for the first
 *                run and gets its reply: the handler ran once
 *   Write chunk  a reply with its data in a Write chunk, the connection
 *                dropped between the RDMA Writes and the Send (server
 *                test hook): the replay writes the same bytes again
 * Without the cache (control, same server program, DRC off) the lost
 * reply makes the handler run twice.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_int.h"
#include "xprt/xprt_test.h"

#define CTR_PROG 0x2000009bu
#define BULK_LEN (64u << 10)

/* ---- server child: CTR proc 1 (u_int ms -> u_int counter after +1;
 * sleeps ms first), proc 2 (void -> u_int handler runs), proc 3 (void ->
 * u_int drc_hits), proc 4 (void -> bulk of BULK_LEN bytes filled with
 * seed counter after +1), proc 5 (u_int arm the Writes hook). ---- */

static struct rpcrdma_svc *g_svc;
static atomic_uint counter, runs;
static atomic_int armed;
static uint8_t bulk[BULK_LEN];

static bool on_reply_writes(void *arg, uint32_t xid)
{
	(void)arg;
	(void)xid;
	return atomic_exchange(&armed, 0) != 0;
}

static void ctr(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct rpcrdma_xprt_stats st;
	u_int a = 0, r = 0;
	rpcrdma_bulk b;

	(void)args;
	(void)ctx;
	switch (proc) {
	case 1:
		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &a))
			break;
		atomic_fetch_add(&runs, 1);
		usleep(a * 1000u);
		r = atomic_fetch_add(&counter, 1) + 1;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &r);
		return;
	case 2:
		r = atomic_load(&runs);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &r);
		return;
	case 3:
		memset(&st, 0, sizeof(st));
		(void)rpcrdma_svc_stats(g_svc, &st);
		r = (u_int)st.drc_hits;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &r);
		return;
	case 4:
		atomic_fetch_add(&runs, 1);
		xt_fill(bulk, BULK_LEN, atomic_fetch_add(&counter, 1) + 1);
		b.base = bulk;
		b.len = BULK_LEN;
		b.flags = 0;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
		return;
	case 5:
		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &a))
			break;
		atomic_store(&armed, (int)a);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &a);
		return;
	default:
		break;
	}
	rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
}

static void extra(struct rpcrdma_svc *svc)
{
	struct svc_testhook h = {.on_reply_writes = on_reply_writes};

	g_svc = svc;
	rpcrdma_svc_set_testhook(svc, &h);
	if (rpcrdma_svc_register(svc, CTR_PROG, 1, ctr, NULL))
		xt_failures++;
}

/* ---- client ---- */

static u_int get(struct rpcrdma_clnt *c, uint32_t proc)
{
	u_int v = 0;

	XT_CHECK(rpcrdma_clnt_call(c, proc, NULL, NULL, (xdrproc_t)xdr_u_int, &v, NULL) == 0);
	return v;
}

static int start(struct tl_server *srv, bool drc, struct rpcrdma_clnt **c,
		 struct rpcrdma_clnt **ctl)
{
	struct rpcrdma_svc_opts so = {
	    .comp_mask = RPCRDMA_SVC_OPT_DRC | RPCRDMA_SVC_OPT_WORKERS, .drc = drc, .workers = 2};
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT, .timeout_ms = 20000};

	/* The server's device cuts the connection at its first posted Send:
	 * the reply to the first counter call (its clients connect first). */
	setenv("RPCRDMA_SIW_FAULT", "cut-op:1", 1);
	if (xt_server_start(srv, &so, extra)) {
		unsetenv("RPCRDMA_SIW_FAULT");
		return -1;
	}
	unsetenv("RPCRDMA_SIW_FAULT");
	if (rpcrdma_clnt_create("127.0.0.1", srv->port, CTR_PROG, 1, &co, c)) {
		xt_server_stop(srv);
		return -1;
	}
	if (rpcrdma_clnt_create("127.0.0.1", srv->port, CTR_PROG, 1, NULL, ctl)) {
		rpcrdma_clnt_destroy(*c);
		xt_server_stop(srv);
		return -1;
	}
	return 0;
}

/* lost reply: the counter call's reply is cut; returns what it got. */
static u_int lost_reply(struct rpcrdma_clnt *c, uint32_t *xid)
{
	struct rpcrdma_call_result r = {0};
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
	u_int ms = 0, v = 0;

	XT_CHECK(rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &ms, (xdrproc_t)xdr_u_int, &v, &o) ==
		 0);
	XT_CHECK(r.transmissions == 2);
	*xid = r.xid;
	return v;
}

static atomic_int ncb, cb_rc;

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	atomic_store(&cb_rc, status);
	atomic_fetch_add(&ncb, 1);
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c, *ctl;
	uint32_t xid;
	u_int v;

	signal(SIGPIPE, SIG_IGN);
	/* Control: no cache, the lost reply runs the handler twice. */
	if (start(&srv, false, &c, &ctl))
		return 1;
	v = lost_reply(c, &xid);
	printf("no DRC: got %u, handler runs %u\n", v, get(ctl, 2));
	XT_CHECK(v == 2 && get(ctl, 2) == 2);
	rpcrdma_clnt_destroy(c);
	rpcrdma_clnt_destroy(ctl);
	XT_CHECK(xt_server_stop(&srv) == 0);

	if (start(&srv, true, &c, &ctl))
		return 1;
	/* 1. lost reply */
	v = lost_reply(c, &xid);
	printf("DRC: got %u, handler runs %u, hits %u\n", v, get(ctl, 2), get(ctl, 3));
	XT_CHECK(v == 1 && get(ctl, 2) == 1 && get(ctl, 3) == 1);
	/* 2. in progress: the handler sleeps 500 ms; the connection drops
	 * after 100 ms; the retransmission waits for the first run. */
	{
		struct rpcrdma_call_result r = {0};
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
		u_int ms = 500, got = 0;

		XT_CHECK(rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &ms,
						 (xdrproc_t)xdr_u_int, &got, &o, cb, NULL) == 0);
		usleep(100000);
		XT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
		for (int i = 0; i < 1000 && atomic_load(&ncb) < 1; i++)
			usleep(10000);
		usleep(100000);
		printf("in progress: rc %d got %u transmissions %u, handler runs %u\n",
		       atomic_load(&cb_rc), got, r.transmissions, get(ctl, 2));
		XT_CHECK(atomic_load(&ncb) == 1 && atomic_load(&cb_rc) == 0);
		XT_CHECK(got == 2 && r.transmissions == 2 && get(ctl, 2) == 2);
	}
	/* 3. Write chunk, dropped between the Writes and the Send. */
	{
		uint8_t *buf = calloc(1, BULK_LEN), *exp = malloc(BULK_LEN);
		struct rpcrdma_call_result r = {0};
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT |
							   RPCRDMA_CALL_OPT_RECV_BULK,
					      .nrecv_bulk = 1,
					      .result = &r};
		rpcrdma_bulk b = {0};
		u_int one = 1, hits = get(ctl, 3);

		o.recv_bulk[0].base = buf;
		o.recv_bulk[0].len = BULK_LEN;
		XT_CHECK(rpcrdma_clnt_call(ctl, 5, (xdrproc_t)xdr_u_int, &one, (xdrproc_t)xdr_u_int,
					   &one, NULL) == 0);
		XT_CHECK(rpcrdma_clnt_call(c, 4, NULL, NULL, (xdrproc_t)xdr_rpcrdma_bulk, &b, &o) ==
			 0);
		xt_fill(exp, BULK_LEN, 3); /* the counter's 3rd value */
		XT_CHECK(b.len == BULK_LEN && memcmp(buf, exp, BULK_LEN) == 0);
		XT_CHECK(r.transmissions == 2 && r.write_chunks == 1);
		XT_CHECK(get(ctl, 2) == 3 && get(ctl, 3) == hits + 1);
		free(buf);
		free(exp);
	}
	rpcrdma_clnt_destroy(c);
	rpcrdma_clnt_destroy(ctl);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
