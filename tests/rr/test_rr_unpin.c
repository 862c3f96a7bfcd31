// SPDX-License-Identifier: MIT
/*
 * Issue 16, seen over Linux siw: a server kept the registration of each
 * reply's RDMA Write source (the Long Reply it wrote into the client's
 * Reply chunk) until that request slot replied again. On a kernel device
 * a registration pins its pages, and siw charges the pins to
 * RLIMIT_MEMLOCK, root or not: over a connection's request slots the kept
 * registrations added up until a reliable reply could no longer be
 * registered, and the client got ERR_CHUNK.
 *
 * Here (softiwarp, nothing pinned) the server child answers many calls
 * whose replies go by Reply chunk, each in a request slot of its own, then
 * reports how many request slots of the connection still hold a valid
 * registration (the server's own state, read under its lock): none may.
 * A reply too large for the limits the server was given (its exposed-bytes
 * bound) is refused with ERR_CHUNK and counted in rr_refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/test_server.h"
#include "rpcrdma.h"
#include "transport/responder.h"

#define UP_PROG 0x20000717u
#define UP_VERS 1u
enum { UP_READ = 1, UP_HELD = 2, UP_REFUSED = 3 };
#define UP_CALLS 40u /* more than a handful of request slots */
#define UP_LEN   (96u << 10)

#define CHECK_WITH_PID
#include "lib/check.h"

struct up_data {
	char *val;
	u_int len, cap;
};

static bool_t xdr_up_data(XDR *x, struct up_data *d)
{
	return xdr_bytes(x, &d->val, &d->len, d->cap);
}

static bool_t xdr_up_none(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

/* Request slots of @req's connection, @req's own aside, whose Write
 * source registrations are still valid. */
static uint32_t held_regs(struct rpcrdma_svc_req *req)
{
	struct svc_conn *c = req->conn;
	struct rpcrdma_svc *s = c->svc;
	uint32_t n = 0;

	futex_mutex_lock(&s->lock);
	for (uint32_t i = 0; c->reqs && i < c->nrecv; i++) {
		const struct rpcrdma_svc_req *r = c->reqs[i];

		if (!r || r == req)
			continue;
		if (r->lmr && rpcrdma_mr_valid(r->lmr))
			n++;
		for (uint32_t k = 0; k < RPCRDMA_MAX_WRITE_CHUNKS; k++)
			if (r->wmr[k] && rpcrdma_mr_valid(r->wmr[k]))
				n++;
	}
	futex_mutex_unlock(&s->lock);
	return n;
}

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct rpcrdma_svc *svc = ctx;
	u_int v = 0;

	(void)args;
	if (proc == UP_READ) {
		struct up_data d = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &v) || v > (8u << 20)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		d.val = malloc(v ? v : 1);
		d.len = d.cap = v;
		tl_fill(d.val, v, v);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_up_data, &d);
		free(d.val);
	} else if (proc == UP_HELD) {
		v = held_regs(req);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
	} else if (proc == UP_REFUSED) {
		struct rpcrdma_xprt_stats st;

		CHECK(rpcrdma_svc_stats(svc, &st) == 0);
		v = (u_int)st.rr_refused;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
	} else {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

static int srv_start(void *arg, struct rpcrdma_svc **out)
{
	struct rpcrdma_svc_opts o = {0};
	struct rpcrdma_svc *svc;
	int rc;

	(void)arg;
	o.comp_mask = RPCRDMA_SVC_OPT_WORKERS | RPCRDMA_SVC_OPT_RELIABLE_REPLY;
	o.workers = 2;
	o.reliable_reply = 1;
	/* smaller than the one reply that must be refused */
	o.max_exposed_conn_bytes = 1u << 20;
	rc = rpcrdma_svc_create_any(tl_addr(), &o, &svc);
	if (!rc)
		rc = rpcrdma_svc_register(svc, UP_PROG, UP_VERS, dispatch, svc);
	if (!rc)
		rc = rpcrdma_svc_start(svc);
	*out = svc;
	return rc;
}

static int read_call(struct rpcrdma_clnt *c, u_int len, const struct rpcrdma_call_opts *co)
{
	struct up_data d = {malloc(len), 0, len};
	int rc = rpcrdma_clnt_call(c, UP_READ, (xdrproc_t)xdr_u_int, &len, (xdrproc_t)xdr_up_data,
				   &d, co);

	if (!rc) {
		void *want = malloc(len);

		tl_fill(want, len, len);
		CHECK(d.len == len);
		CHECK(tl_hash(d.val, d.len) == tl_hash(want, len));
		free(want);
	}
	free(d.val);
	return rc;
}

static u_int ask(struct rpcrdma_clnt *c, uint32_t proc)
{
	u_int v = ~0u;

	CHECK(rpcrdma_clnt_call(c, proc, (xdrproc_t)xdr_up_none, NULL, (xdrproc_t)xdr_u_int, &v,
				NULL) == 0);
	return v;
}

int main(void)
{
	const struct tl_child ch = {srv_start, NULL, &failures, NULL};
	/* a Reply chunk large enough for every reply: a Long Reply each */
	const struct rpcrdma_call_opts reply_chunk = {
	    .comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE,
	    .reply_size = UP_LEN + 1024u,
	};
	const struct rpcrdma_call_opts unknown = {
	    .comp_mask = RPCRDMA_CALL_OPT_UNKNOWN_REPLY,
	};
	struct rpcrdma_clnt_opts o = {0};
	struct rpcrdma_clnt *c = NULL;
	struct tl_server srv;
	u_int held;
	int rc;

	if (tl_server_fork(&srv, &ch)) {
		fprintf(stderr, "server child did not start\n");
		return 1;
	}
	o.comp_mask = RPCRDMA_CLNT_OPT_RELIABLE_REPLY | RPCRDMA_CLNT_OPT_TIMEOUT;
	o.reliable_reply = 1;
	o.timeout_ms = 30000;
	CHECK(rpcrdma_clnt_create(tl_addr(), srv.port, UP_PROG, UP_VERS, &o, &c) == 0);
	for (uint32_t i = 0; c && i < UP_CALLS; i++)
		CHECK(read_call(c, UP_LEN - i * 64u, &reply_chunk) == 0);
	held = c ? ask(c, UP_HELD) : ~0u;
	printf("request slots still registered after %u Reply chunk replies: %u\n", UP_CALLS, held);
	CHECK(held == 0);
	/* beyond max_exposed_conn_bytes: refused, counted */
	rc = c ? read_call(c, 2u << 20, &unknown) : 0;
	printf("a 2 MiB reply over a 1 MiB bound: %d\n", rc);
	CHECK(rc != 0);
	CHECK(c && ask(c, UP_REFUSED) == 1);
	/* the connection goes on */
	CHECK(c && read_call(c, 300u << 10, &unknown) == 0);
	CHECK(tl_server_stop(&srv, 5000) == 0);
	if (c)
		rpcrdma_clnt_destroy(c);
	if (failures)
		fprintf(stderr, "FAIL: %d checks failed\n", failures);
	else
		printf("PASS\n");
	return failures ? 1 : 0;
}
