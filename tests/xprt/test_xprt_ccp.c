// SPDX-License-Identifier: MIT
/*
 * The Connection Configuration Protocol (RFC 5666 §6, program 100417;
 * src/transport/ccp.h, docs/ccp.md), one ctest entry per path:
 *   serve    our client asks our server (both without RFC 8797 private
 *            data, so 1024 each way until CONF_RDMA): the answer says the
 *            server's 4096 / align 4 / its Read depth, and both sides
 *            apply it: a 3000-byte call then goes inline (without the
 *            option: a Long Call), its reply still in the Reply chunk
 *            (the server's send buffers are 1024 on such a connection
 *            and bound what it applies); with private data on both
 *            sides nothing changes (applied 0)
 *   off      RPCRDMA_SVC_OPT_CCP off: PROG_UNAVAIL, and the client works
 *            as without the option
 *   hostile  calls of our own making to our server: arguments cut to 8
 *            bytes (GARBAGE_ARGS), sizes 0 (answered, not applied: the
 *            reply of a 3000-byte echo still travels by chunk), sizes
 *            0xffffffff (answered, bounded by the connection's 1024-byte
 *            send buffers: the reply still travels by chunk), procedure 2 (PROC_UNAVAIL), version 2
 *            (PROG_MISMATCH 1..1), procedure 0 (answered); the server
 *            serves the next call every time
 *   peer     a responder of our own (fake_peer.c) answering CONF_RDMA with
 *            chosen values: the client sends its thresholds and 128; it
 *            applies maxcall_sendsize 2048 (inline send 2048), bounds a
 *            huge one to its buffers, ignores 512, keeps what RFC 8797
 *            private data said when the peer sent it (private data wins),
 *            and with maxrdmaread 0 refuses a call that needs a Read chunk
 *            (-EMSGSIZE, nothing sent) while small calls go on
 *   wire     (not run alone: ccp_wire.sh captures it) a CONF_RDMA as the
 *            client connects, one with its arguments cut, one echo
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "transport/backchannel_hooks.h"
#include "xprt/fake_peer.h"
#include "xprt/xprt_test.h"

struct words {
	uint32_t n, w[4];
};

/* n raw words as the argument (any number: a truncated config_rdma_req). */
static bool_t xdr_words(XDR *x, struct words *a)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (!xdr_u_int32_t(x, &a->w[i]))
			return FALSE;
	return TRUE;
}

static bool_t xdr_nothing(XDR *x, struct words *a)
{
	(void)x;
	a->n = 0;
	return TRUE;
}

static bool_t xdr_reply3(XDR *x, struct words *a)
{
	a->n = 3;
	return xdr_words(x, a);
}

/* A 3000-byte echo offering a Reply chunk: how did it travel? */
static void echo(struct rpcrdma_clnt *c, struct rpcrdma_call_result *r)
{
	u_int len = 3000;
	struct xt_opaque a = {malloc(len), len}, res = {NULL, 0};
	struct rpcrdma_call_opts co = {.comp_mask =
					   RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE,
				       .result = r,
				       .reply_size = 24 + 4 + 3000};

	memset(r, 0, sizeof(*r));
	xt_fill(a.val, len, 9);
	XT_CHECK(rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				   (xdrproc_t)xdr_xt_opaque, &res, &co) == 0);
	XT_CHECK(res.len == len && res.val && memcmp(res.val, a.val, len) == 0);
	xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&res);
	free(a.val);
}

static struct rpcrdma_clnt *client(uint16_t port, bool ccp, bool pdata)
{
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_PRIVATE_DATA |
						   RPCRDMA_CLNT_OPT_CCP | RPCRDMA_CLNT_OPT_TIMEOUT,
				      .private_data = pdata,
				      .ccp = ccp,
				      .timeout_ms = 10000};
	struct rpcrdma_clnt *c = NULL;

	XT_CHECK(rpcrdma_clnt_create(tl_addr(), port, XTEST_PROG, XTEST_VERS, &o, &c) == 0);
	return c;
}

static void path_serve(void)
{
	struct tl_server srv;
	struct rpcrdma_ccp_info ci;
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c;

	if (xt_server_start(&srv, NULL, NULL)) {
		XT_CHECK(0);
		return;
	}
	/* without the option: 1024 each way (no private data) */
	c = client(srv.port, false, false);
	if (c) {
		XT_CHECK(rpcrdma_clnt_ccp(c, &ci) == 0 && ci.status == -ENODATA);
		echo(c, &r);
		XT_CHECK(r.call_proc == 1 && r.reply_chunk && r.reply_proc == 1);
		rpcrdma_clnt_destroy(c);
	}
	c = client(srv.port, true, false);
	if (c) {
		XT_CHECK(rpcrdma_clnt_ccp(c, &ci) == 0);
		fprintf(
		    stderr,
		    "serve: status %d maxcall %u align %u maxrdmaread %u applied %u inline %u\n",
		    ci.status, ci.maxcall_sendsize, ci.align, ci.maxrdmaread, ci.applied,
		    ci.inline_send);
		XT_CHECK(ci.status == 0 && ci.accept_stat == 0);
		XT_CHECK(ci.maxcall_sendsize == 4096 && ci.align == 4);
		XT_CHECK(ci.maxrdmaread >= 1 && ci.maxrdmaread <= 128);
		XT_CHECK(ci.applied == 1 && ci.inline_send == 4096);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.inline_send == 4096);
		/* the call inline (the client applied maxcall_sendsize, the
		 * server's shared receive buffers take it); the reply in the
		 * Reply chunk: the server's send buffers on this connection
		 * were sized to 1024 at accept, and bound what it applies */
		echo(c, &r);
		XT_CHECK(r.call_proc == 0 && r.reply_chunk && r.reply_proc == 1);
		rpcrdma_clnt_destroy(c);
	}
	/* private data both ways: it already said 4096, nothing to apply */
	c = client(srv.port, true, true);
	if (c) {
		XT_CHECK(rpcrdma_clnt_ccp(c, &ci) == 0);
		XT_CHECK(ci.status == 0 && ci.maxcall_sendsize == 4096 && ci.applied == 0 &&
			 ci.inline_send == 4096);
		rpcrdma_clnt_destroy(c);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
}

static void path_off(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_CCP, .ccp = 0};
	struct tl_server srv;
	struct rpcrdma_ccp_info ci;
	struct rpcrdma_call_result r;
	struct rpcrdma_clnt *c;

	if (xt_server_start(&srv, &so, NULL)) {
		XT_CHECK(0);
		return;
	}
	c = client(srv.port, true, false);
	if (c) {
		XT_CHECK(rpcrdma_clnt_ccp(c, &ci) == 0);
		XT_CHECK(ci.status < 0 && ci.accept_stat == RPCRDMA_RPC_PROG_UNAVAIL);
		XT_CHECK(ci.applied == 0 && ci.inline_send == 1024);
		echo(c, &r);
		XT_CHECK(r.call_proc == 1 && r.reply_proc == 1);
		rpcrdma_clnt_destroy(c);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
}

/* One CONF_RDMA of our making on @c: its rc, the answer in *@ans. */
static int raw_ccp(struct rpcrdma_clnt *c, uint32_t vers, uint32_t proc, const struct words *a,
		   struct words *ans, struct rpcrdma_call_result *r)
{
	struct rpcrdma_call_opts co = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = r};
	struct words args = *a;

	memset(r, 0, sizeof(*r));
	memset(ans, 0, sizeof(*ans));
	return clnt_call_prog(c, 100417u, vers, proc, (xdrproc_t)xdr_words, &args,
			      proc ? (xdrproc_t)xdr_reply3 : (xdrproc_t)xdr_nothing, ans, &co);
}

static void path_hostile(void)
{
	struct tl_server srv;
	struct rpcrdma_call_result r, e;
	struct words ans, cut = {2, {4096, 4096}}, zero = {3, {0, 0, 0}},
			  huge = {3, {UINT32_MAX, UINT32_MAX, UINT32_MAX}}, none = {0, {0}};
	struct rpcrdma_clnt *c;
	int rc;

	if (xt_server_start(&srv, NULL, NULL)) {
		XT_CHECK(0);
		return;
	}
	/* no private data: the server's thresholds are CONF_RDMA's to move */
	c = client(srv.port, false, false);
	if (!c) {
		xt_server_stop(&srv);
		return;
	}
	rc = raw_ccp(c, 1, 1, &cut, &ans, &r);
	XT_CHECK(rc < 0 && r.accept_stat == RPCRDMA_RPC_GARBAGE_ARGS);
	echo(c, &e);
	XT_CHECK(e.reply_proc == 1); /* nothing applied */
	rc = raw_ccp(c, 1, 1, &zero, &ans, &r);
	XT_CHECK(rc == 0 && ans.w[0] == 4096 && ans.w[1] == 4);
	echo(c, &e);
	XT_CHECK(e.reply_chunk && e.reply_proc == 1); /* 0 is below 1 KiB: not taken */
	rc = raw_ccp(c, 1, 1, &huge, &ans, &r);
	XT_CHECK(rc == 0 && ans.w[0] == 4096 && ans.w[1] == 4);
	echo(c, &e);
	/* bounded by the connection's 1024-byte send buffers: by chunk, and
	 * nothing written past them (this caught a heap overflow) */
	XT_CHECK(e.reply_chunk && e.reply_proc == 1);
	rc = raw_ccp(c, 1, 2, &zero, &ans, &r);
	XT_CHECK(rc < 0 && r.accept_stat == RPCRDMA_RPC_PROC_UNAVAIL);
	rc = raw_ccp(c, 2, 1, &zero, &ans, &r);
	XT_CHECK(rc < 0 && r.accept_stat == RPCRDMA_RPC_PROG_MISMATCH && r.mismatch_low == 1 &&
		 r.mismatch_high == 1);
	rc = raw_ccp(c, 1, 0, &none, &ans, &r);
	XT_CHECK(rc == 0 && r.accept_stat == 0);
	echo(c, &e);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
}

static struct fake_peer fp;

/* A client of the fake peer after CONF_RDMA answered @a (private data of
 * @pdata bytes each way, or none). */
static struct rpcrdma_clnt *peer_client(uint32_t pdata, uint32_t m, uint32_t al, uint32_t rd,
					struct rpcrdma_ccp_info *ci)
{
	struct rpcrdma_clnt *c;

	atomic_store(&fp.pdata_size, pdata);
	atomic_store(&fp.ccp_reply[0], m);
	atomic_store(&fp.ccp_reply[1], al);
	atomic_store(&fp.ccp_reply[2], rd);
	atomic_store(&fp.ccp_on, true);
	c = client(fp.port, true, true);
	memset(ci, 0, sizeof(*ci));
	if (c)
		XT_CHECK(rpcrdma_clnt_ccp(c, ci) == 0 && ci->status == 0);
	return c;
}

static void small_call(struct rpcrdma_clnt *c)
{
	u_int a = 41, res = 0;

	XT_CHECK(rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &a, (xdrproc_t)xdr_u_int, &res,
				   NULL) == 0 &&
		 res == 42);
}

static void path_peer(void)
{
	struct rpcrdma_ccp_info ci;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c;
	uint32_t calls;

	if (fp_start(&fp, 0, FP_OK)) {
		XT_CHECK(0);
		return;
	}
	/* no private data: 1024 until CONF_RDMA says 2048 */
	c = peer_client(0, 2048, 8, 16, &ci);
	if (c) {
		XT_CHECK(atomic_load(&fp.ccp_calls) == 1);
		XT_CHECK(atomic_load(&fp.ccp_args[0]) == 4096 &&
			 atomic_load(&fp.ccp_args[1]) == 4096 &&
			 atomic_load(&fp.ccp_args[2]) == 128);
		XT_CHECK(ci.maxcall_sendsize == 2048 && ci.align == 8 && ci.maxrdmaread == 16);
		XT_CHECK(ci.applied == 1 && ci.inline_send == 2048);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.inline_send == 2048);
		small_call(c);
		rpcrdma_clnt_destroy(c);
	}
	/* huge: bounded by our send buffers (4096) */
	c = peer_client(0, UINT32_MAX, 0, 1, &ci);
	if (c) {
		XT_CHECK(ci.applied == 1 && ci.inline_send == 4096);
		rpcrdma_clnt_destroy(c);
	}
	/* below 1 KiB: ignored */
	c = peer_client(0, 512, 0, 1, &ci);
	if (c) {
		XT_CHECK(ci.applied == 0 && ci.inline_send == 1024);
		rpcrdma_clnt_destroy(c);
	}
	/* private data (1024) and CONF_RDMA (4096): private data wins */
	c = peer_client(1024, 4096, 4, 1, &ci);
	if (c) {
		XT_CHECK(ci.maxcall_sendsize == 4096 && ci.applied == 0 && ci.inline_send == 1024);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.inline_send == 1024);
		rpcrdma_clnt_destroy(c);
	}
	/* maxrdmaread 0: no call that needs the peer to Read */
	c = peer_client(0, 1024, 4, 0, &ci);
	if (c) {
		u_int len = 3000;
		struct xt_opaque a = {calloc(1, len), len}, res = {NULL, 0};

		XT_CHECK(ci.applied == 1);
		calls = atomic_load(&fp.calls);
		XT_CHECK(rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
					   (xdrproc_t)xdr_xt_opaque, &res, NULL) == -EMSGSIZE);
		XT_CHECK(atomic_load(&fp.calls) == calls); /* nothing sent */
		small_call(c);
		free(a.val);
		rpcrdma_clnt_destroy(c);
	}
	fp_stop(&fp);
}

/* The traffic of the wire check (ccp_wire.sh, under tcpdump): a server on
 * $CCP_WIRE_PORT, a client asking CONF_RDMA as it connects, one CONF_RDMA
 * with its arguments cut (GARBAGE_ARGS), one echo. */
static void path_wire(void)
{
	const char *ps = getenv("CCP_WIRE_PORT");
	struct tl_server srv;
	struct rpcrdma_ccp_info ci;
	struct rpcrdma_call_result r;
	struct words ans, cut = {2, {4096, 4096}};
	struct rpcrdma_clnt *c;

	if (xt_server_start_port(&srv, ps ? (uint16_t)atoi(ps) : 0, NULL, NULL)) {
		XT_CHECK(0);
		return;
	}
	c = client(srv.port, true, true);
	if (c) {
		XT_CHECK(rpcrdma_clnt_ccp(c, &ci) == 0 && ci.status == 0);
		XT_CHECK(raw_ccp(c, 1, 1, &cut, &ans, &r) < 0 &&
			 r.accept_stat == RPCRDMA_RPC_GARBAGE_ARGS);
		echo(c, &r);
		rpcrdma_clnt_destroy(c);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
}

int main(int argc, char **argv)
{
	const char *p = argc > 1 ? argv[1] : NULL;

	signal(SIGPIPE, SIG_IGN);
	if (!p || !strcmp(p, "serve"))
		path_serve();
	if (!p || !strcmp(p, "off"))
		path_off();
	if (!p || !strcmp(p, "hostile"))
		path_hostile();
	if (!p || !strcmp(p, "peer"))
		path_peer();
	if (p && !strcmp(p, "wire"))
		path_wire();
	return xt_result();
}
