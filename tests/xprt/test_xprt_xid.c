// SPDX-License-Identifier: MIT
/*
 * XIDs are checked (RFC 8166 §4.2.1: rdma_xid repeats the XID of the RPC
 * message; RFC 5531 §9: a reply carries its call's XID), against a
 * misbehaving responder (fake_peer.c, the provider API in a thread):
 *   a reply with the call's rdma_xid but another RPC XID      dropped, counted
 *                                                              (xid_mismatches)
 *   a reply with another rdma_xid and the call's RPC XID      dropped, counted
 *                                                              (unmatched_replies)
 *   an RPC CALL carrying the call's XID in both headers, to a client without
 *   a backchannel (RFC 8167 §4.1 needs one)                    dropped, counted
 *                                                              (unexpected_calls)
 * each followed by the right reply, which completes the call with its
 * result. Then, with every credit in use (4 calls on the wire, 4 slots): a
 * duplicate of a reply already delivered arrives before the 4 replies; a
 * call times out and its reply arrives late, with the other credits in
 * use: every reply still lands (the dropped message's receive is posted
 * again at once), no connection is lost. Last, against our own server, the
 * reply of every form (Short, Long Reply, RDMA_ERROR) carries the call's
 * XID in both headers: the client above would drop it otherwise.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xprt/fake_peer.h"
#include "xprt/xprt_test.h"

static atomic_int ndone, nbad;

struct acall {
	u_int arg, res;
	int status;
};

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct acall *a = arg;

	(void)c;
	(void)res;
	a->status = status;
	if (status || a->res != a->arg + 1)
		atomic_fetch_add(&nbad, 1);
	atomic_fetch_add(&ndone, 1);
}

static int call1(struct rpcrdma_clnt *c, u_int arg, u_int *res, uint32_t tmo)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT, .timeout_ms = tmo};

	*res = 0;
	return rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &arg, (xdrproc_t)xdr_u_int, res, &o);
}

static void wait_done(int n, int ms)
{
	for (int i = 0; i < ms / 10 && atomic_load(&ndone) < n; i++)
		usleep(10000);
}

static void against_fake_peer(void)
{
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_CREDITS, .credits = 4};
	struct fake_peer p;
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_xprt_stats st;
	u_int res;
	int rc;

	XT_CHECK(fp_start(&p, 0, FP_OK) == 0);
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", p.port, XTEST_PROG, XTEST_VERS, &co, &c) == 0);
	if (!c) {
		fp_stop(&p);
		return;
	}
	XT_CHECK(call1(c, 1, &res, 2000) == 0 && res == 2);

	/* RFC 8166 §4.2.1: the RPC XID differs from the rdma_xid. */
	atomic_store(&p.mode, FP_BAD_RPC_XID);
	rc = call1(c, 10, &res, 2000);
	XT_CHECK(rc == 0 && res == 11);
	if (rc || res != 11)
		fprintf(stderr,
			"RFC 8166 §4.2.1: a reply with another RPC XID completed the call "
			"(rc %d, result %#x, expected 11 from the right reply)\n",
			rc, res);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.xid_mismatches == 1);

	/* The rdma_xid matches no call. */
	atomic_store(&p.mode, FP_BAD_RDMA_XID);
	rc = call1(c, 20, &res, 2000);
	XT_CHECK(rc == 0 && res == 21);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.unmatched_replies == 1);

	/* A CALL at a client without a backchannel (RFC 8167 §4.1). */
	atomic_store(&p.mode, FP_CALL);
	rc = call1(c, 30, &res, 2000);
	XT_CHECK(rc == 0 && res == 31);
	if (rc || res != 31)
		fprintf(stderr, "RFC 8167 §4.1: a CALL completed a forward call (rc %d, %s)\n", rc,
			rpcrdma_strerror(rc));
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.unexpected_calls == 1);

	/* Every credit in use, and a duplicate of the last reply arrives
	 * before their replies (RFC 8166 §3.3.1: one receive per credit). */
	struct acall a[4];

	atomic_store(&p.batch, 4);
	atomic_store(&p.mode, FP_HOLD);
	atomic_store(&ndone, 0);
	for (u_int i = 0; i < 4; i++) {
		a[i].arg = 100 + i;
		a[i].res = 0;
		XT_CHECK(rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &a[i].arg,
						 (xdrproc_t)xdr_u_int, &a[i].res, NULL, cb,
						 &a[i]) == 0);
	}
	wait_done(4, 5000);
	XT_CHECK(atomic_load(&ndone) == 4 && atomic_load(&nbad) == 0);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.unmatched_replies == 2 && st.conn_errors == 0 && st.reconnects == 0);
	if (st.conn_errors || atomic_load(&nbad))
		fprintf(
		    stderr,
		    "RFC 8166 §3.3.1: a duplicate reply cost a posted receive: %llu connections "
		    "lost, %d of 4 calls failed\n",
		    (unsigned long long)st.conn_errors, atomic_load(&nbad));

	/* A late reply: one call times out (its reply held), three more go
	 * with the other credits; the late reply then comes first. */
	atomic_store(&p.batch, 64);
	rc = call1(c, 200, &res, 300);
	XT_CHECK(rc == -ETIMEDOUT);
	atomic_store(&p.mode, FP_OK);
	atomic_store(&ndone, 0);
	for (u_int i = 0; i < 4; i++) {
		a[i].arg = 300 + i;
		a[i].res = 0;
		XT_CHECK(rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &a[i].arg,
						 (xdrproc_t)xdr_u_int, &a[i].res, NULL, cb,
						 &a[i]) == 0);
	}
	wait_done(4, 5000);
	XT_CHECK(atomic_load(&ndone) == 4 && atomic_load(&nbad) == 0);
	XT_CHECK(call1(c, 400, &res, 2000) == 0 && res == 401);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.unmatched_replies == 3 && st.conn_errors == 0 && st.timeouts == 1);
	printf("fake peer: %u calls, %u messages sent; unmatched %llu, xid mismatches %llu, "
	       "unexpected calls %llu, connections lost %llu\n",
	       atomic_load(&p.calls), atomic_load(&p.sent),
	       (unsigned long long)st.unmatched_replies, (unsigned long long)st.xid_mismatches,
	       (unsigned long long)st.unexpected_calls, (unsigned long long)st.conn_errors);
	rpcrdma_clnt_destroy(c);
	fp_stop(&p);
}

/* Our server answers with the call's XID in both headers, in every reply
 * form; the client checks both (a mismatch would be dropped and the call
 * would time out). */
static void against_our_server(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_call_result r;
	int rc;

	if (xt_server_start(&srv, NULL, NULL)) {
		xt_failures++;
		return;
	}
	XT_CHECK(rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, NULL, &c) == 0);
	if (c) {
		struct xt_opaque in = {malloc(6000), 6000}, out = {0};
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT |
							   RPCRDMA_CALL_OPT_REPLY_SIZE |
							   RPCRDMA_CALL_OPT_RESULT,
					      .timeout_ms = 3000,
					      .reply_size = 8192,
					      .result = &r};

		memset(in.val, 0x5c, in.len);
		/* Short */
		XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, &o) == 0);
		XT_CHECK(r.reply_proc == 0);
		/* Long Call, Long Reply (RDMA_NOMSG, Reply chunk) */
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &in,
				       (xdrproc_t)xdr_xt_opaque, &out, &o);
		XT_CHECK(rc == 0 && r.reply_proc == 1 && out.len == 6000 &&
			 memcmp(out.val, in.val, 6000) == 0);
		free(out.val);
		/* RDMA_ERROR (no Reply chunk for a long reply) */
		out.val = NULL;
		o.comp_mask &= ~(uint32_t)RPCRDMA_CALL_OPT_REPLY_SIZE;
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &in,
				       (xdrproc_t)xdr_xt_opaque, &out, &o);
		XT_CHECK(rc == -EREMOTEIO && r.reply_proc == 4);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
		XT_CHECK(st.xid_mismatches == 0 && st.unmatched_replies == 0 && st.timeouts == 0 &&
			 st.replies == 3);
		free(in.val);
		rpcrdma_clnt_destroy(c);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	against_fake_peer();
	against_our_server();
	return xt_result();
}
