// SPDX-License-Identifier: MIT
/*
 * The Version Two requester against a misbehaving responder (fake_peer.c,
 * the provider API in a thread; the early draft, docs/rpcrdma2.md). One
 * path per argument (every path without one):
 *   base        a Version Two reply: the call succeeds; a Version Two
 *               reply to no call while negotiating: dropped as unmatched;
 *               a Version One responder: `auto` gets ERR_VERS and goes on
 *               in Version One, `2` fails -EPROTONOSUPPORT (ERR_VERS 1..1)
 *   optional    an RDMA2_OPTIONAL of an unknown opttype, in place of a
 *               reply (optdir REPLY, the call's xid) or as the peer's own
 *               call (optdir CALL, another xid), to a client without a
 *               backchannel: each answered RDMA2_ERROR / ERR_INVAL_OPTION
 *               with its xid (draft §3.1), the call still gets its reply,
 *               the connection goes on
 *   optional_bc the same to a client with a backchannel: the call is
 *               answered by its reverse responder, the reply-direction one
 *               as above
 *   bad_header  before the real reply, a header in error carrying the
 *               call's xid and another credit value (an RDMA2_ERROR of an
 *               unknown code, a reply whose rdma_direction says CALL, a
 *               header cut short): discarded (RFC 8166 §4.5), the call
 *               completes with the real reply and the grant is the real
 *               reply's
 *   lost_probe  a Version One responder that drops Version Two messages
 *               without a word: `auto`'s probe fails at its deadline, the
 *               calls behind it go in Version One on a new connection
 *               (draft §5.2), and so does every later call
 *   errvers_credit  ERR_VERS with rdma_credit 500 or 0: the grant is not
 *               taken from it (draft §5): one call at a time until the
 *               first Version One reply grants 2
 *   rvrsdir     the reverse-direction property our client sends: NONE
 *               without a backchannel, SIMPLE with one (it takes no Write
 *               chunks, so not GENL)
 *   probe_refused the first call of a connection, our Version Two probe,
 *               refused with RDMA2_ERROR / ERR_BAD_HEADER: the responder
 *               speaks Version Two (negotiation ends), the call fails with
 *               the error (not as a bad header), the error's rdma_credit
 *               is not taken (draft §5) and the next call goes on
 *   props_credit a responder granting one credit: our properties take it
 *               until their answer, the calls wait meanwhile; answered
 *               100 ms later (a tick of the client's loop is 5 ms), no
 *               call is held for dead and the connection stays; never
 *               answered, the connection is made again once, at half the
 *               call timeout, and carries no properties after that
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "api/api_int.h"
#include "xprt/fake_peer.h"
#include "xprt/raw_peer.h"
#include "xprt/xprt_test.h"

static struct fake_peer fp;

static struct rpcrdma_clnt *client_with(enum rpcrdma_version_policy v, uint32_t credits, bool bc)
{
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_RDMA_VERSION |
						   RPCRDMA_CLNT_OPT_TIMEOUT |
						   RPCRDMA_CLNT_OPT_CREDITS,
				      .rdma_version = v,
				      .rdma_props = 1,
				      .timeout_ms = 3000,
				      .credits = credits};
	struct rpcrdma_clnt *c = NULL;
	int rc =
	    bc ? rpcrdma_clnt_create_bc("127.0.0.1", fp.port, XTEST_PROG, XTEST_VERS, &o, NULL, &c)
	       : rpcrdma_clnt_create("127.0.0.1", fp.port, XTEST_PROG, XTEST_VERS, &o, &c);

	XT_CHECK(rc == 0);
	return c;
}

static struct rpcrdma_clnt *client(enum rpcrdma_version_policy v)
{
	return client_with(v, 64, false);
}

/* Call 1 with @arg under mode @m: 0 and arg + 1, or the error. */
static int call(struct rpcrdma_clnt *c, int m, u_int arg, struct rpcrdma_call_result *r)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = r};
	u_int res = 0;
	int rc;

	atomic_store(&fp.mode, m);
	memset(r, 0, sizeof(*r));
	rc = rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &arg, (xdrproc_t)xdr_u_int, &res, &o);
	if (!rc && res != arg + 1)
		return -EIO;
	return rc;
}

/* Wait up to 2 s for the fake peer to have received @n RDMA2_ERRORs. */
static bool wait_errs(uint32_t n)
{
	for (int i = 0; i < 400 && atomic_load(&fp.errs_rx) < n; i++)
		usleep(5000);
	return atomic_load(&fp.errs_rx) == n;
}

static void path_base(void)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c = client(RPCRDMA_VERSION_2);

	if (c) {
		/* the first call: negotiation, with a stray reply first */
		XT_CHECK(call(c, FP_V2_EARLY, 1, &r) == 0);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.unmatched_replies == 1);
		XT_CHECK(st.rdma_version == 2);
		XT_CHECK(call(c, FP_V2_OK, 2, &r) == 0);
		rpcrdma_clnt_destroy(c);
	}
	/* a Version One responder */
	c = client(RPCRDMA_VERSION_AUTO);
	if (c) {
		XT_CHECK(call(c, FP_OK, 7, &r) == 0 && r.transmissions == 2);
		XT_CHECK(call(c, FP_OK, 8, &r) == 0 && r.transmissions == 1);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.err_vers_rx == 1);
		XT_CHECK(st.rdma_version == 1 && st.v2_probe_losses == 0);
		rpcrdma_clnt_destroy(c);
	}
	c = client(RPCRDMA_VERSION_2);
	if (c) {
		XT_CHECK(call(c, FP_OK, 9, &r) == -EPROTONOSUPPORT);
		XT_CHECK(r.rdma_err == 1 && r.mismatch_low == 1 && r.mismatch_high == 1);
		rpcrdma_clnt_destroy(c);
	}
}

/* Draft §3.1 at the requester (issue 32 item 5). */
static void path_optional(bool bc)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_bc_stats bst;
	struct rpcrdma_clnt *c = client_with(RPCRDMA_VERSION_2, 64, bc);
	uint32_t xid;

	if (!c)
		return;
	XT_CHECK(call(c, FP_V2_OK, 1, &r) == 0);
	atomic_store(&fp.errs_rx, 0);
	/* In place of a reply: the call's xid comes back in the error. */
	XT_CHECK(call(c, FP_V2_OPT, 3, &r) == 0);
	XT_CHECK(wait_errs(1));
	xid = atomic_load(&fp.err_xid);
	if (xid != r.xid || atomic_load(&fp.err_code) != 3)
		fprintf(stderr, "answer to optdir REPLY: xid %#x code %u, call xid %#x\n", xid,
			atomic_load(&fp.err_code), r.xid);
	XT_CHECK(xid == r.xid && atomic_load(&fp.err_code) == 3);
	/* The peer's own call: its xid. */
	atomic_store(&fp.opt_xid, 0x0ff10001u);
	XT_CHECK(call(c, FP_V2_OPTCALL, 4, &r) == 0);
	XT_CHECK(wait_errs(2));
	XT_CHECK(atomic_load(&fp.err_xid) == 0x0ff10001u && atomic_load(&fp.err_code) == 3);
	atomic_store(&fp.opt_xid, 0x0ff10002u);
	XT_CHECK(call(c, FP_V2_OPTCALL, 5, &r) == 0);
	XT_CHECK(wait_errs(3));
	XT_CHECK(atomic_load(&fp.err_xid) == 0x0ff10002u && atomic_load(&fp.err_code) == 3);
	/* The connection goes on. */
	for (u_int i = 0; i < 20; i++)
		XT_CHECK(call(c, FP_V2_OK, 10 + i, &r) == 0);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.reconnects == 0 && st.conn_errors == 0);
	XT_CHECK(st.rdma_version == 2 && atomic_load(&fp.conns) == 1);
	if (bc) {
		/* the reverse responder answered the optdir CALL ones */
		XT_CHECK(rpcrdma_clnt_bc_stats(c, &bst) == 0);
		if (bst.calls_received != 2 || bst.replies_sent != 2)
			fprintf(stderr, "backchannel: %llu calls, %llu replies\n",
				(unsigned long long)bst.calls_received,
				(unsigned long long)bst.replies_sent);
		XT_CHECK(bst.calls_received == 2 && bst.replies_sent == 2);
	}
	rpcrdma_clnt_destroy(c);
}

/* RFC 8166 §4.5 (issue 32 item 7). */
static void path_bad_header(void)
{
	static const int modes[] = {FP_V2_ERRX, FP_V2_DIR, FP_V2_TRUNC};
	static const char *const names[] = {"unknown errcode", "direction CALL", "cut short"};
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st, st0;
	struct rpcrdma_clnt *c = client(RPCRDMA_VERSION_2);
	int rc;

	if (!c)
		return;
	atomic_store(&fp.credit, 8);
	atomic_store(&fp.bad_credit, 3);
	XT_CHECK(call(c, FP_V2_OK, 1, &r) == 0);
	XT_CHECK(rpcrdma_clnt_stats(c, &st0) == 0 && st0.credits == 8);
	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		rc = call(c, modes[i], 100 + i, &r);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
		if (rc || st.credits != 8)
			fprintf(stderr, "%s first: call %d (%s), grant %u\n", names[i], rc,
				rpcrdma_strerror(rc), st.credits);
		XT_CHECK(rc == 0 && r.transmissions == 1);
		XT_CHECK(st.credits == 8);
		XT_CHECK(st.bad_headers == st0.bad_headers + i + 1);
	}
	XT_CHECK(call(c, FP_V2_OK, 6, &r) == 0);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.reconnects == 0 && st.credits == 8);
	rpcrdma_clnt_destroy(c);
}

static _Atomic uint32_t cb_done, cb_ok;

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	if (!status && *(u_int *)res == *(u_int *)arg + 1)
		atomic_fetch_add(&cb_ok, 1);
	atomic_fetch_add(&cb_done, 1);
}

/* Start @n async calls of @tmo ms at once: args[i] = base + i. */
static void start_calls(struct rpcrdma_clnt *c, u_int *args, u_int *res, uint32_t n, uint32_t tmo)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT, .timeout_ms = tmo};

	for (uint32_t i = 0; i < n; i++)
		XT_CHECK(rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &args[i],
						 (xdrproc_t)xdr_u_int, &res[i], &o, cb,
						 &args[i]) == 0);
}

static void wait_calls(uint32_t n, int ms)
{
	for (int i = 0; i < ms / 5 && atomic_load(&cb_done) < n; i++)
		usleep(5000);
}

/* Draft §5.2 (issue 32 item 6). */
static void path_lost_probe(void)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_TIMEOUT | RPCRDMA_CALL_OPT_RESULT,
				      .timeout_ms = 1000,
				      .result = &r};
	struct rpcrdma_clnt *c = client(RPCRDMA_VERSION_AUTO);
	u_int args[4] = {20, 21, 22, 23}, res[4] = {0}, a = 1, x = 0;
	uint64_t t0;
	int rc;

	if (!c)
		return;
	atomic_store(&fp.mode, FP_V1_DROP2);
	atomic_store(&cb_done, 0);
	atomic_store(&cb_ok, 0);
	t0 = raw_ms_now();
	/* the probe, dropped: it fails at its deadline (1 s) ... */
	memset(&r, 0, sizeof(r));
	rc = rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &a, (xdrproc_t)xdr_u_int, &x, &o);
	XT_CHECK(rc == -ETIMEDOUT);
	XT_CHECK(atomic_load(&fp.v2_dropped) == 1);
	/* ... then every call in Version One, on a new connection */
	start_calls(c, args, res, 4, 2500);
	wait_calls(4, 4000);
	if (atomic_load(&cb_ok) != 4)
		fprintf(stderr, "after the lost probe: %u of 4 calls done, %u ok, %llu ms\n",
			atomic_load(&cb_done), atomic_load(&cb_ok),
			(unsigned long long)(raw_ms_now() - t0));
	XT_CHECK(atomic_load(&cb_ok) == 4);
	XT_CHECK(call(c, FP_V1_DROP2, 30, &r) == 0 && r.transmissions == 1);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	if (st.rdma_version != 1 || st.v2_probe_losses != 1)
		fprintf(stderr, "version %u, %llu probe losses\n", st.rdma_version,
			(unsigned long long)st.v2_probe_losses);
	XT_CHECK(st.rdma_version == 1 && st.v2_probe_losses == 1 && st.timeouts == 1);
	XT_CHECK(atomic_load(&fp.v2_dropped) == 1 && atomic_load(&fp.conns) == 2);
	/* A reconnect stays in Version One (the responder was judged). */
	XT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	XT_CHECK(call(c, FP_V1_DROP2, 31, &r) == 0);
	XT_CHECK(atomic_load(&fp.v2_dropped) == 1);
	rpcrdma_clnt_destroy(c);
}

/* Draft §5 (issue 32 item 8): ERR_VERS reports no credit limit. */
static void path_errvers_credit(uint32_t vc)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c = client_with(RPCRDMA_VERSION_AUTO, 32, false);
	u_int args[12], res[12] = {0};

	if (!c)
		return;
	for (u_int i = 0; i < 12; i++)
		args[i] = 40 + i;
	atomic_store(&fp.mode, FP_OK);
	atomic_store(&fp.credit, 2);
	atomic_store(&fp.vers_credit, vc);
	/* The ERR_VERS comes 200 ms late: every call is queued by then. */
	atomic_store(&fp.vers_delay_ms, 200);
	atomic_store(&cb_done, 0);
	atomic_store(&cb_ok, 0);
	start_calls(c, args, res, 12, 3000);
	wait_calls(12, 3000);
	XT_CHECK(atomic_load(&cb_ok) == 12);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	if (st.max_outstanding > 2)
		fprintf(stderr, "ERR_VERS credit %u: %u calls were on the wire at once\n", vc,
			st.max_outstanding);
	XT_CHECK(st.max_outstanding <= 2 && st.credits == 2 && st.err_vers_rx == 1);
	atomic_store(&fp.vers_delay_ms, 0);
	atomic_store(&fp.vers_credit, UINT32_MAX);
	atomic_store(&fp.credit, 8);
	rpcrdma_clnt_destroy(c);
}

/* The value of property @id in the last properties the peer got, or -1. */
static int64_t prop(uint32_t id)
{
	uint32_t n = atomic_load(&fp.props_words), k = 1;

	for (uint32_t i = 0; n && i < fp.props[0] && k + 2 <= n; i++) {
		uint32_t len = fp.props[k + 1];

		if (fp.props[k] == id && len == 4 && k + 3 <= n)
			return fp.props[k + 2];
		k += 2 + (len + 3) / 4;
	}
	return -1;
}

/* version-two-07 §5.2.5 (issue 32 item 8). */
static void path_rvrsdir(bool bc)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_clnt *c = client_with(RPCRDMA_VERSION_2, 64, bc);
	int64_t v;

	if (!c)
		return;
	atomic_store(&fp.props_rx, 0);
	XT_CHECK(call(c, FP_V2_OK, 1, &r) == 0);
	for (int i = 0; i < 400 && !atomic_load(&fp.props_rx); i++)
		usleep(5000);
	XT_CHECK(atomic_load(&fp.props_rx) == 1);
	v = prop(5);
	if (v != (bc ? 1 : 0))
		fprintf(stderr, "reverse-direction property %lld with%s a backchannel\n",
			(long long)v, bc ? "" : "out");
	XT_CHECK(v == (bc ? 1 : 0));
	rpcrdma_clnt_destroy(c);
}

/* A Version Two probe refused (issue 32: the client called the refusal
 * a bad header, -EBADMSG, and went on negotiating). */
static void path_probe_refused(void)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c = client(RPCRDMA_VERSION_2);
	int rc;

	if (!c)
		return;
	atomic_store(&fp.bad_credit, 3);
	atomic_store(&fp.props_delay_ms, 0); /* answered: the calls need that credit */
	rc = call(c, FP_V2_REFUSE, 1, &r);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	if (rc != -EREMOTEIO || r.rdma_err != 2 || st.rdma_version != 2)
		fprintf(stderr,
			"probe refused: %d (%s), rdma_err %u, version %u, bad headers %llu\n", rc,
			rpcrdma_strerror(rc), r.rdma_err, st.rdma_version,
			(unsigned long long)st.bad_headers);
	XT_CHECK(rc == -EREMOTEIO && r.rdma_err == 2);
	XT_CHECK(st.rdma_version == 2 && st.bad_headers == 0 && st.credits == 1);
	XT_CHECK(call(c, FP_V2_OK, 2, &r) == 0);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.credits == 8 && st.reconnects == 0);
	rpcrdma_clnt_destroy(c);
	atomic_store(&fp.props_delay_ms, -1);
}

/* Our properties hold the only credit (issue 32: under load the client
 * closed the connection 5 ms into the wait, again on every connection). */
static void path_props_credit(int32_t delay_ms)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c;

	atomic_store(&fp.credit, 1);
	atomic_store(&fp.props_delay_ms, delay_ms);
	atomic_store(&fp.props_rx, 0);
	atomic_store(&fp.conns, 0);
	c = client_with(RPCRDMA_VERSION_2, 64, false);
	if (c) {
		for (u_int i = 0; i < 12; i++)
			XT_CHECK(call(c, FP_V2_OK, 20 + i, &r) == 0);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
		if (st.reconnects != (delay_ms < 0) || atomic_load(&fp.props_rx) != 1)
			fprintf(stderr,
				"properties answered after %d ms: %llu reconnects, %u properties "
				"sent, %u connections\n",
				delay_ms, (unsigned long long)st.reconnects,
				atomic_load(&fp.props_rx), atomic_load(&fp.conns));
		XT_CHECK(st.reconnects == (delay_ms < 0) && atomic_load(&fp.props_rx) == 1);
		XT_CHECK(atomic_load(&fp.conns) == (delay_ms < 0 ? 2u : 1u));
		XT_CHECK(st.rdma_version == 2 && st.credits == 1 && st.max_outstanding == 1);
		rpcrdma_clnt_destroy(c);
	}
	atomic_store(&fp.props_delay_ms, -1);
	atomic_store(&fp.credit, 8);
}

int main(int argc, char **argv)
{
	const char *p = argc > 1 ? argv[1] : NULL;

	signal(SIGPIPE, SIG_IGN);
	if (fp_start(&fp, 0, FP_V2_OK))
		return 1;
	if (!p || !strcmp(p, "base"))
		path_base();
	if (!p || !strcmp(p, "optional"))
		path_optional(false);
	if (!p || !strcmp(p, "optional_bc"))
		path_optional(true);
	if (!p || !strcmp(p, "bad_header"))
		path_bad_header();
	if (!p || !strcmp(p, "lost_probe"))
		path_lost_probe();
	if (!p || !strcmp(p, "errvers_credit")) {
		path_errvers_credit(500);
		path_errvers_credit(0);
	}
	if (!p || !strcmp(p, "probe_refused"))
		path_probe_refused();
	if (!p || !strcmp(p, "props_credit")) {
		path_props_credit(100);
		path_props_credit(-1);
	}
	if (!p || !strcmp(p, "rvrsdir")) {
		path_rvrsdir(false);
		path_rvrsdir(true);
	}
	fp_stop(&fp);
	return xt_result();
}
