// SPDX-License-Identifier: MIT
/*
 * The combination matrix's server child (matrix.h): one per cell, in its
 * own process (tests/lib/test_server.h), configured as the cell says. It
 * checks every forward argument, answers with checked data, drives the
 * reverse calls a client asks for (RFC 8167), each checked both ways, and
 * reports what it holds: exposed replies, valid registrations.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix/matrix.h"
#include "transport/responder.h" /* struct rpcrdma_svc: its device */

#define CHECK_WITH_PID
#include "lib/check.h"

static atomic_uint rev_started, rev_done, rev_bad, rev_wrong_proc, rev_refused, arg_bad;
static atomic_int rev_first_err;
static atomic_uint rev_first_id;

/* ---- reverse calls ---- */

struct rev_call {
	struct mx_echo_args a;
	struct mx_echo_res r;
	uint64_t want;
	uint32_t want_proc;       /* the call: RDMA_MSG (0) or RDMA_NOMSG (1) */
	uint32_t want_reply_proc; /* its reply: inline or in the Reply chunk */
	bool want_refused;        /* ERR_CHUNK by design: its reply fits nothing */
	struct rpcrdma_call_result res;
	struct rpcrdma_call_opts o;
};

static void rev_fail(uint32_t id, int status)
{
	int zero = 0;

	if (atomic_compare_exchange_strong(&rev_first_err, &zero, status ? status : -EBADMSG))
		atomic_store(&rev_first_id, id);
	atomic_fetch_add(&rev_bad, 1);
}

static void rev_cb(struct rpcrdma_svc_client *cl, int status, void *res, void *arg)
{
	struct rev_call *rc = arg;

	(void)cl;
	(void)res;
	if (rc->want_refused && status == -EREMOTEIO && rc->res.rdma_err == 2) {
		atomic_fetch_add(&rev_refused, 1); /* RFC 8166 §4.5.2 */
	} else if (rc->want_refused || status || rc->r.id != rc->a.id || rc->r.hash != rc->want ||
		   rc->r.len != rc->a.reply_len ||
		   !mx_data_ok(rc->r.val, rc->r.len, rc->a.seed + 1)) {
		fprintf(
		    stderr,
		    "[server] reverse call %u (arg %u, reply %u bytes %s): %d (%s), rdma_err %u, "
		    "id %u, hash ok %d, reply %u bytes%s\n",
		    rc->a.id, rc->a.len, rc->a.reply_len,
		    rc->o.comp_mask & RPCRDMA_CALL_OPT_REPLY_SIZE ? "declared" : "unknown", status,
		    rpcrdma_strerror(status), rc->res.rdma_err, rc->r.id, rc->r.hash == rc->want,
		    rc->r.len, rc->want_refused ? ", want ERR_CHUNK" : "");
		rev_fail(rc->a.id, status);
	} else if (rc->res.call_proc != rc->want_proc ||
		   rc->res.reply_proc != rc->want_reply_proc) {
		fprintf(stderr,
			"[server] reverse call %u (arg %u, reply %u bytes) sent as proc %u, its "
			"reply as %u; want %u, %u\n",
			rc->a.id, rc->a.len, rc->a.reply_len, rc->res.call_proc, rc->res.reply_proc,
			rc->want_proc, rc->want_reply_proc);
		atomic_fetch_add(&rev_wrong_proc, 1);
	}
	free(rc->a.val);
	free(rc->r.val);
	free(rc);
	atomic_fetch_add(&rev_done, 1);
}

struct rev_job {
	struct rpcrdma_svc_client *cl;
	struct mx_rev_args a;
};

static void rev_start(struct rpcrdma_svc_client *cl, const struct mx_rev_args *a, uint32_t i)
{
	struct rev_call *rc = calloc(1, sizeof(*rc));
	bool fits;
	int r;

	if (!rc) {
		rev_fail(i, -ENOMEM);
		atomic_fetch_add(&rev_done, 1);
		return;
	}
	rc->a.id = i;
	rc->a.seed = 0x52455600u + i * 977u;
	rc->a.len = a->arg_len[i];
	rc->a.reply_len = a->reply_len[i];
	rc->a.val = malloc(rc->a.len + 1);
	rc->r.cap = rc->a.reply_len;
	rc->r.val = malloc(rc->a.reply_len + 1);
	tl_fill(rc->a.val, rc->a.len, rc->a.seed);
	rc->want = tl_hash(rc->a.val, rc->a.len);
	fits = mx_reply_fits(rc->a.reply_len, a->inline_thr, a->hdr);
	rc->want_reply_proc = !fits;
	rc->want_refused = i >= a->nknown && !fits;
	/* a reply declared too large to come inline gets a Reply chunk */
	rc->want_proc = mx_call_proc(rc->a.len, a->inline_thr, a->hdr, i < a->nknown && !fits);
	rc->o.comp_mask =
	    RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_TIMEOUT |
	    (i < a->nknown ? RPCRDMA_CALL_OPT_REPLY_SIZE : RPCRDMA_CALL_OPT_UNKNOWN_REPLY);
	rc->o.result = &rc->res;
	rc->o.timeout_ms = a->timeout_ms;
	rc->o.reply_size = mx_reply_size(rc->a.reply_len);
	atomic_fetch_add(&rev_started, 1);
	r = rpcrdma_svc_client_call_async(cl, MXCB_PROG, MXCB_VERS, MXCB_ECHO,
					  (xdrproc_t)xdr_mx_echo_args, &rc->a,
					  (xdrproc_t)xdr_mx_echo_res, &rc->r, &rc->o, rev_cb, rc);
	if (r) {
		fprintf(stderr, "[server] reverse call %u did not start: %d (%s)\n", i, r,
			rpcrdma_strerror(r));
		rev_fail(i, r);
		atomic_fetch_add(&rev_done, 1);
		free(rc->a.val);
		free(rc->r.val);
		free(rc);
	}
}

static void *rev_thread(void *p)
{
	struct rev_job *j = p;

	for (uint32_t i = 0; i < j->a.n; i++)
		rev_start(j->cl, &j->a, i);
	free(j);
	return NULL;
}

/* ---- dispatch ---- */

static void echo(struct rpcrdma_svc_req *req)
{
	struct mx_echo_args a = {0};
	struct mx_echo_res r = {0};

	if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_mx_echo_args, &a) || a.reply_len > MX_MAX_LEN) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	if (!mx_data_ok(a.val, a.len, a.seed)) {
		fprintf(stderr, "[server] call %u: the %u argument bytes differ\n", a.id, a.len);
		atomic_fetch_add(&arg_bad, 1);
	}
	r.id = a.id;
	r.hash = tl_hash(a.val, a.len);
	r.len = r.cap = a.reply_len;
	r.val = malloc(r.len + 1);
	tl_fill(r.val, r.len, a.seed + 1);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_mx_echo_res, &r);
	free(r.val);
	rpcrdma_svc_freeargs(req, (xdrproc_t)xdr_mx_echo_args, &a);
}

static void rev(struct rpcrdma_svc_req *req)
{
	struct rev_job *j = calloc(1, sizeof(*j));
	pthread_t t;
	int rc = -ENOMEM;

	if (j && rpcrdma_svc_getargs(req, (xdrproc_t)xdr_mx_rev_args, &j->a)) {
		free(j);
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	if (j) {
		j->cl = rpcrdma_svc_req_client(req);
		rc = j->cl ? -pthread_create(&t, NULL, rev_thread, j) : -ENOENT;
		if (!rc)
			pthread_detach(t);
		else
			free(j);
	}
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_int, &rc);
}

static void result(struct rpcrdma_svc_req *req, struct rpcrdma_svc *svc)
{
	struct mx_result r = {0};
	struct rpcrdma_xprt_stats st;

	r.rev_started = atomic_load(&rev_started);
	r.rev_done = atomic_load(&rev_done);
	r.rev_bad = atomic_load(&rev_bad);
	r.rev_wrong_proc = atomic_load(&rev_wrong_proc);
	r.rev_refused = atomic_load(&rev_refused);
	r.rev_first_err = atomic_load(&rev_first_err);
	r.rev_first_id = atomic_load(&rev_first_id);
	r.arg_bad = atomic_load(&arg_bad);
	CHECK(rpcrdma_svc_stats(svc, &st) == 0);
	r.rr_exposed = st.rr_exposed;
	r.rr_reclaimed = (uint32_t)st.rr_reclaimed;
	r.rr_replies = (uint32_t)st.rr_replies;
	r.pull_bytes = (uint32_t)st.pull_bytes;
	mx_dev_regs(svc->dev, &r.regs_remote, &r.regs_all);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_mx_result, &r);
}

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	switch (proc) {
	case MX_NULL:
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_mx_void, NULL);
		return;
	case MX_ECHO:
		echo(req);
		return;
	case MX_REV:
		rev(req);
		return;
	case MX_RESULT:
		result(req, ctx);
		return;
	default:
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

static int child_start(void *arg, struct rpcrdma_svc **out)
{
	const struct mx_srv_cfg *cfg = arg;
	struct rpcrdma_svc_opts so = {0};
	struct rpcrdma_bc_opts bo = {0};
	struct rpcrdma_svc *svc = NULL;
	int rc;

	so.comp_mask = RPCRDMA_SVC_OPT_WORKERS | RPCRDMA_SVC_OPT_CREDITS |
		       RPCRDMA_SVC_OPT_RDMA_VERSION | RPCRDMA_SVC_OPT_INLINE |
		       RPCRDMA_SVC_OPT_PRIVATE_DATA | RPCRDMA_SVC_OPT_RELIABLE_REPLY;
	so.workers = 2;
	so.credits = 16;
	so.rdma_version = cfg->vers;
	so.rdma_props = 1;
	so.inline_send = so.inline_recv = cfg->inline_thr;
	so.private_data = cfg->pdata;
	so.reliable_reply = cfg->rr;
	rc = rpcrdma_svc_create_any(tl_addr(), &so, &svc);
	if (!rc)
		rc = rpcrdma_svc_register(svc, MX_PROG, MX_VERS, dispatch, svc);
	if (!rc && cfg->bc) {
		bo.comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS |
			       RPCRDMA_BC_OPT_TIMEOUT | RPCRDMA_BC_OPT_CONN_WAIT;
		bo.credits = 4;
		bo.chunks = 1;
		bo.timeout_ms = 10000;
		bo.conn_wait_ms = 1000;
		rc = rpcrdma_svc_bc_init(svc, &bo, NULL, NULL);
	}
	if (!rc)
		rc = rpcrdma_svc_start(svc);
	*out = svc;
	return rc;
}

int mx_server_start(struct tl_server *srv, const struct mx_srv_cfg *cfg)
{
	static struct mx_srv_cfg cfg_copy; /* the child reads it after fork */
	const struct tl_child ch = {child_start, NULL, &failures, &cfg_copy};

	cfg_copy = *cfg;
	return tl_server_fork(srv, &ch);
}
