// SPDX-License-Identifier: MIT
/*
 * Fault tests, two processes over loopback: the server drops the
 * connection at exactly chosen points (server test hooks, api_int.h) and
 * every call must complete exactly once with the right data, or fail once
 * with a clear error:
 *   mid-Read-chunk pull    WRITE 256 KiB: the Reads are posted, then the
 *                          connection goes; the client re-connects and
 *                          retransmits (same XID); the server pulls again
 *   mid-Reply-chunk write  ECHO 8 KiB (Long Reply): the RDMA Writes into
 *                          the Reply chunk are posted, then the connection
 *                          goes before the reply's Send
 *   mid-Write-chunk write  READ 1 MiB (Write chunk), same
 *   always killed          a WRITE whose pull always breaks the connection
 *                          fails with -ECONNRESET after `retries`
 *                          retransmissions (no endless loop); the next call
 *                          works (the client connects again)
 * A control program in the server (FAULTCTL) arms the hooks. Each async
 * call's callback must run exactly once. Run under ASan: no leak.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "xprt/xprt_test.h"

#define FAULTCTL_PROG 0x20000098u

enum { ARM_NONE = 0, ARM_PULL_ONCE, ARM_WRITES_ONCE, ARM_PULL_ALWAYS };

/* ---- server child ---- */

static atomic_int armed;
static atomic_int fired;

static bool on_pull(void *arg, uint32_t xid)
{
	int a = atomic_load(&armed);

	(void)arg;
	(void)xid;
	if (a == ARM_PULL_ONCE) {
		atomic_store(&armed, ARM_NONE);
		atomic_fetch_add(&fired, 1);
		return true;
	}
	if (a == ARM_PULL_ALWAYS) {
		atomic_fetch_add(&fired, 1);
		return true;
	}
	return false;
}

static bool on_reply_writes(void *arg, uint32_t xid)
{
	(void)arg;
	(void)xid;
	if (atomic_load(&armed) == ARM_WRITES_ONCE) {
		atomic_store(&armed, ARM_NONE);
		atomic_fetch_add(&fired, 1);
		return true;
	}
	return false;
}

/* FAULTCTL proc 1: arm (u_int) -> times a hook fired so far (u_int). */
static void faultctl(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	u_int a = 0, f;

	(void)args;
	(void)ctx;
	if (proc != 1 || rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &a)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	atomic_store(&armed, (int)a);
	f = (u_int)atomic_load(&fired);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &f);
}

static void extra(struct rpcrdma_svc *svc)
{
	struct svc_testhook h = {.on_pull = on_pull, .on_reply_writes = on_reply_writes};

	rpcrdma_svc_set_testhook(svc, &h);
	if (rpcrdma_svc_register(svc, FAULTCTL_PROG, 1, faultctl, NULL))
		xt_failures++;
}

/* ---- client ---- */

static struct rpcrdma_clnt *ctl;

static u_int arm(int a)
{
	u_int v = (u_int)a, f = 0;

	XT_CHECK(rpcrdma_clnt_call(ctl, 1, (xdrproc_t)xdr_u_int, &v, (xdrproc_t)xdr_u_int, &f,
				   NULL) == 0);
	return f;
}

static atomic_int ncb;
static atomic_int cb_status;

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	atomic_store(&cb_status, status);
	atomic_fetch_add(&ncb, 1);
}

static void wait_cb(int n)
{
	for (int i = 0; i < 1000 && atomic_load(&ncb) < n; i++)
		usleep(10000);
}

int main(void)
{
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_RETRIES |
						    RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT,
				       .retries = 2,
				       .connect_timeout_ms = 2000};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
	struct rpcrdma_xprt_stats st;
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	uint32_t wlen = 256u << 10, rlen = 1u << 20;
	uint8_t *wbuf = malloc(wlen), *rbuf = calloc(1, rlen), *exp = malloc(rlen);
	int rc;

	signal(SIGPIPE, SIG_IGN);
	xt_fill(wbuf, wlen, 5);
	xt_fill(exp, rlen, 6);
	if (xt_server_start(&srv, NULL, extra))
		return 1;
	if (rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &co, &c) ||
	    rpcrdma_clnt_create(tl_addr(), srv.port, FAULTCTL_PROG, 1, NULL, &ctl)) {
		xt_server_stop(&srv);
		return 1;
	}

	/* 1. Mid-Read-chunk pull, asynchronous call: exactly one callback. */
	{
		struct xt_write_args a = {.seed = 77, .data = {wbuf, wlen, 0}};
		struct xt_write_res res = {0};

		XT_CHECK(arm(ARM_PULL_ONCE) == 0);
		memset(&r, 0, sizeof(r));
		XT_CHECK(rpcrdma_clnt_call_async(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
						 (xdrproc_t)xdr_xt_write_res, &res, &o, cb,
						 NULL) == 0);
		wait_cb(1);
		usleep(100000); /* a second callback would show up here */
		XT_CHECK(atomic_load(&ncb) == 1 && atomic_load(&cb_status) == 0);
		XT_CHECK(res.len == wlen && res.hash == (xt_hash(wbuf, wlen) ^ 77));
		XT_CHECK(r.transmissions == 2 && r.read_chunks == 1);
		XT_CHECK(arm(ARM_NONE) == 1);
	}
	/* 2. Mid-Reply-chunk write: Long Reply, the Writes posted, no Send. */
	{
		struct xt_opaque a = {(char *)wbuf, 8192}, out = {0};

		o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE;
		o.reply_size = 8192 + 64;
		arm(ARM_WRITES_ONCE);
		memset(&r, 0, sizeof(r));
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				       (xdrproc_t)xdr_xt_opaque, &out, &o);
		XT_CHECK(rc == 0 && out.len == 8192 && memcmp(out.val, wbuf, 8192) == 0);
		XT_CHECK(r.transmissions == 2 && r.reply_chunk == 1 && r.reply_proc == 1);
		xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&out);
		XT_CHECK(arm(ARM_NONE) == 2);
	}
	/* 3. Mid-Write-chunk write: READ 1 MiB into our buffer. */
	{
		struct xt_read_args a = {rlen, 6};
		rpcrdma_bulk b = {0};

		o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_RECV_BULK;
		o.nrecv_bulk = 1;
		o.recv_bulk[0].base = rbuf;
		o.recv_bulk[0].len = rlen;
		arm(ARM_WRITES_ONCE);
		memset(&r, 0, sizeof(r));
		rc = rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &a,
				       (xdrproc_t)xdr_rpcrdma_bulk, &b, &o);
		XT_CHECK(rc == 0 && b.len == rlen && b.base == rbuf &&
			 memcmp(rbuf, exp, rlen) == 0);
		XT_CHECK(r.transmissions == 2 && r.write_chunks == 1);
		XT_CHECK(arm(ARM_NONE) == 3);
	}
	/* 4. A call that breaks every connection it is sent on fails once,
	 * clearly, after retries; then the client serves calls again. */
	{
		struct xt_write_args a = {.seed = 1, .data = {wbuf, wlen, 0}};
		struct xt_write_res res = {0};

		o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
		arm(ARM_PULL_ALWAYS);
		memset(&r, 0, sizeof(r));
		rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				       (xdrproc_t)xdr_xt_write_res, &res, &o);
		XT_CHECK(rc == -ECONNRESET && r.transmissions == 3);
		XT_CHECK(arm(ARM_NONE) == 6);
		XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
		a.seed = 2;
		XT_CHECK(rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
					   (xdrproc_t)xdr_xt_write_res, &res, NULL) == 0);
		XT_CHECK(res.hash == (xt_hash(wbuf, wlen) ^ 2));
	}
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	printf("reconnects %llu retransmits %llu conn_errors %llu\n",
	       (unsigned long long)st.reconnects, (unsigned long long)st.retransmits,
	       (unsigned long long)st.conn_errors);
	XT_CHECK(st.reconnects == 6 && st.conn_errors == 6 && st.retransmits == 5);
	XT_CHECK(atomic_load(&ncb) == 1);
	rpcrdma_clnt_destroy(c);
	rpcrdma_clnt_destroy(ctl);
	XT_CHECK(xt_server_stop(&srv) == 0);
	free(wbuf);
	free(rbuf);
	free(exp);
	return xt_result();
}
