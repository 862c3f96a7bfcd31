// SPDX-License-Identifier: MIT
/*
 * Traffic for the transport's wire check (xprt_wire.sh, label wire): one
 * call of every RPC-over-RDMA message type between two processes, MPA CRC
 * on (the default), the server on $XPRT_WIRE_PORT (any port when unset, so
 * the program is also an e2e test of its own):
 *   NULL                 Short (RDMA_MSG, no chunks) both ways
 *   WRITE 64 KiB         Read chunk (RDMA Read Request / Responses)
 *   READ 64 KiB          Write chunk filled exactly
 *   READ 4097 B into 8 KiB  Write chunk offered larger than written
 *   ECHO 8 KiB           Long Call (RDMA_NOMSG + Position-Zero Read chunk)
 *                        and Long Reply (RDMA_NOMSG, Reply chunk)
 *   ECHO 3000 B          reply too large, no Reply chunk: RDMA_ERROR
 *                        ERR_CHUNK
 * Prints what it did, one line per call; exit 0 when every call ended as
 * expected with the right data.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

/* 1 KiB inline thresholds, which the sizes here are chosen around (our
 * peers advertise 4096 by default since issue 32). */
static const struct rpcrdma_clnt_opts kib1 = {
    .comp_mask = RPCRDMA_CLNT_OPT_INLINE, .inline_send = 1024, .inline_recv = 1024};

int main(void)
{
	const char *ps = getenv("XPRT_WIRE_PORT");
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o;
	uint32_t n = 64u << 10;
	uint8_t *buf = malloc(n), *in = calloc(1, n), *exp = malloc(n);
	int rc;

	signal(SIGPIPE, SIG_IGN);
	xt_fill(buf, n, 3);
	if (xt_server_start_port(&srv, ps ? (uint16_t)atoi(ps) : 0, NULL, NULL))
		return 1;
	if (rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &kib1, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	printf("NULL: short\n");
	{
		struct xt_write_args a = {.seed = 9, .data = {buf, n, 0}};
		struct xt_write_res res = {0};

		memset(&o, 0, sizeof(o));
		o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
		o.result = &r;
		rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				       (xdrproc_t)xdr_xt_write_res, &res, &o);
		XT_CHECK(rc == 0 && res.hash == (xt_hash(buf, n) ^ 9) && r.read_chunks == 1);
		printf("WRITE %u: Read chunk\n", n);
	}
	{
		struct xt_read_args a = {n, 4};
		rpcrdma_bulk b = {0};

		xt_fill(exp, n, 4);
		memset(&o, 0, sizeof(o));
		o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_RECV_BULK;
		o.result = &r;
		o.nrecv_bulk = 1;
		o.recv_bulk[0].base = in;
		o.recv_bulk[0].len = n;
		rc = rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &a,
				       (xdrproc_t)xdr_rpcrdma_bulk, &b, &o);
		XT_CHECK(rc == 0 && b.len == n && memcmp(in, exp, n) == 0 && r.write_chunks == 1);
		printf("READ %u: Write chunk, filled\n", n);
		/* 4097 bytes into an 8 KiB Write chunk (the reply's Write list
		 * says 4097, RFC 8166 §3.4.6). */
		a.len = 4097;
		o.recv_bulk[0].len = 8192;
		rc = rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &a,
				       (xdrproc_t)xdr_rpcrdma_bulk, &b, &o);
		XT_CHECK(rc == 0 && b.len == 4097 && memcmp(in, exp, 4097) == 0);
		printf("READ 4097: Write chunk of 8192, partly written\n");
	}
	{
		struct xt_opaque a = {(char *)buf, 8192}, out = {0};

		memset(&o, 0, sizeof(o));
		o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE;
		o.result = &r;
		o.reply_size = 8192 + 64;
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				       (xdrproc_t)xdr_xt_opaque, &out, &o);
		XT_CHECK(rc == 0 && out.len == 8192 && memcmp(out.val, buf, 8192) == 0);
		XT_CHECK(r.call_proc == 1 && r.reply_proc == 1);
		xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&out);
		printf("ECHO 8192: Long Call, Long Reply\n");
	}
	{
		struct xt_opaque a = {(char *)buf, 3000}, out = {0};

		memset(&o, 0, sizeof(o));
		o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
		o.result = &r;
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				       (xdrproc_t)xdr_xt_opaque, &out, &o);
		XT_CHECK(rc == -EREMOTEIO && r.reply_proc == 4 && r.rdma_err == 2);
		printf("ECHO 3000: RDMA_ERROR ERR_CHUNK\n");
	}
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	free(buf);
	free(in);
	free(exp);
	return xt_result();
}
