// SPDX-License-Identifier: MIT
/*
 * Traffic for the Version Two wire check (xprt_v2_wire.sh, label wire):
 * a client configured for Version Two with transport properties against a
 * v2-capable server with them off, the server on $XPRT_WIRE_PORT (any port
 * when unset, so the program is also an e2e test of its own). One call of
 * every message kind, each checked byte for byte:
 *   NULL               RDMA2_MSG both ways, inline (the negotiating call)
 *   ECHO 200 B         RDMA2_MSG both ways, inline
 *   WRITE 64 KiB       RDMA2_MSG call with a Read chunk
 *   READ 64 KiB        RDMA2_MSG call offering a Write chunk; reply with it
 *   ECHO 20000 B       RDMA2_NOMSG call (Position-Zero Read chunk) offering
 *                      a Reply chunk; RDMA2_NOMSG reply
 * After the first reply the client sends its properties (RDMA2_OPTIONAL);
 * the server answers RDMA2_ERROR ERR_INVAL_OPTION with the same XID.
 * Prints one line per call and a last line "granted N": the credit grant
 * the client holds, which every reply header must carry.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

static void echo(struct rpcrdma_clnt *c, const uint8_t *buf, u_int len)
{
	struct xt_opaque a = {(char *)(uintptr_t)buf, len}, out = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE,
				      .result = &r,
				      .reply_size = len + 64};
	int rc;

	memset(&r, 0, sizeof(r));
	rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a, (xdrproc_t)xdr_xt_opaque,
			       &out, &o);
	XT_CHECK(rc == 0 && out.len == len && memcmp(out.val, buf, len) == 0);
	printf("ECHO %u: call %s, reply %s, Reply chunk %u\n", len,
	       r.call_proc ? "RDMA2_NOMSG" : "RDMA2_MSG",
	       r.reply_proc ? "RDMA2_NOMSG" : "RDMA2_MSG", r.reply_chunk);
	if (len > 8192)
		XT_CHECK(r.call_proc == 1 && r.reply_proc == 1 && r.reply_chunk == 1);
	else
		XT_CHECK(r.call_proc == 0 && r.reply_proc == 0);
	xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&out);
}

static void write_read(struct rpcrdma_clnt *c, uint32_t n)
{
	uint8_t *buf = malloc(n), *in = calloc(1, n), *exp = malloc(n);
	struct xt_write_args wa = {.seed = 9, .data = {buf, n, 0}};
	struct xt_write_res wres = {0};
	struct xt_read_args ra = {n, 4};
	rpcrdma_bulk b = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};

	XT_CHECK(buf && in && exp);
	if (!buf || !in || !exp)
		goto out;
	xt_fill(buf, n, 3);
	memset(&r, 0, sizeof(r));
	XT_CHECK(rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &wa,
				   (xdrproc_t)xdr_xt_write_res, &wres, &o) == 0);
	XT_CHECK(wres.len == n && wres.hash == (xt_hash(buf, n) ^ 9) && r.read_chunks == 1);
	printf("WRITE %u: Read chunk\n", n);
	xt_fill(exp, n, 4);
	o.comp_mask |= RPCRDMA_CALL_OPT_RECV_BULK;
	o.nrecv_bulk = 1;
	o.recv_bulk[0].base = in;
	o.recv_bulk[0].len = n;
	memset(&r, 0, sizeof(r));
	XT_CHECK(rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &ra,
				   (xdrproc_t)xdr_rpcrdma_bulk, &b, &o) == 0);
	XT_CHECK(b.base == in && b.len == n && memcmp(in, exp, n) == 0 && r.write_chunks == 1);
	printf("READ %u: Write chunk\n", n);
out:
	free(buf);
	free(in);
	free(exp);
}

int main(void)
{
	const char *ps = getenv("XPRT_WIRE_PORT");
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_RDMA_VERSION,
				      .rdma_version = RPCRDMA_VERSION_2,
				      .rdma_props = 0};
	struct rpcrdma_clnt_opts co = {.comp_mask =
					   RPCRDMA_CLNT_OPT_RDMA_VERSION | RPCRDMA_CLNT_OPT_TIMEOUT,
				       .rdma_version = RPCRDMA_VERSION_2,
				       .rdma_props = 1,
				       .timeout_ms = 10000};
	struct rpcrdma_xprt_stats st;
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	uint8_t *buf = malloc(20000);

	signal(SIGPIPE, SIG_IGN);
	if (!buf)
		return 1;
	xt_fill(buf, 20000, 5);
	if (xt_server_start_port(&srv, ps ? (uint16_t)atoi(ps) : 0, &so, NULL))
		return 1;
	if (rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &co, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	printf("NULL: inline\n");
	echo(c, buf, 200);
	write_read(c, 64u << 10);
	echo(c, buf, 20000);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.err_vers_rx == 0 && st.bad_headers == 0 && st.unmatched_replies == 0);
	printf("granted %u\n", st.credits);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	free(buf);
	return xt_result();
}
