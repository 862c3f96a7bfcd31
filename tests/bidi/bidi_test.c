// SPDX-License-Identifier: MIT
/* tests/bidi shared code: the BT server child and the CB client program
 * (see bidi_test.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/backchannel_hooks.h"
#include "bidi/bidi_test.h"

int bt_failures;
int bt_slow_budget;
int bt_slow_hold, bt_slow_hold_expired, bt_slow_entered;
int bt_client_rr;

uint64_t bt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool_t xdr_bt_echo_args(XDR *x, struct bt_echo_args *a)
{
	return xdr_u_int(x, &a->id) && xdr_bytes(x, &a->val, &a->len, ~0u);
}

bool_t xdr_bt_echo_res(XDR *x, struct bt_echo_res *r)
{
	return xdr_u_int(x, &r->id) && xdr_uint64_t(x, &r->hash);
}

bool_t xdr_bt_bulk_args(XDR *x, struct bt_bulk_args *a)
{
	return xdr_u_int(x, &a->id) && xdr_u_int(x, &a->reply_len) && xdr_rpcrdma_bulk(x, &a->data);
}

bool_t xdr_bt_bulk_res(XDR *x, struct bt_bulk_res *r)
{
	return xdr_u_int(x, &r->id) && xdr_uint64_t(x, &r->hash) &&
	       xdr_bytes(x, &r->val, &r->len, ~0u);
}

bool_t xdr_bt_ctl_args(XDR *x, struct bt_ctl_args *a)
{
	return xdr_u_int(x, &a->op) && xdr_u_int(x, &a->a) && xdr_u_int(x, &a->b) &&
	       xdr_u_int(x, &a->c);
}

bool_t xdr_bt_ctl_res(XDR *x, struct bt_ctl_res *r)
{
	if (!xdr_int(x, &r->rc))
		return FALSE;
	for (int i = 0; i < 8; i++)
		if (!xdr_u_int(x, &r->v[i]))
			return FALSE;
	return TRUE;
}

/* ================================================================== */
/* Server child                                                        */
/* ================================================================== */

#define MAX_XIDS 65536

static pthread_mutex_t sv_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t fwd_xids[MAX_XIDS], rev_xids[MAX_XIDS];
static uint32_t nfwd, nrev;
static atomic_uint rev_done, rev_bad, rev_maxtx;
/* CTL_ARM_TMO outcome */
static int tmo_armed, tmo_rc = 1;
static uint64_t tmo_ns;
static uint32_t sv_conn_wait_ms;
static struct rpcrdma_svc *sv_svc;

struct rev_call {
	struct rpcrdma_svc_client *cl;
	u_int ms; /* CB_SLOW argument: lives as long as the call */
	struct bt_echo_args a;
	struct bt_echo_res r;
	uint64_t want;
	struct rpcrdma_call_result res;
	struct rpcrdma_call_opts o;
	int slow;
};

static void rev_cb(struct rpcrdma_svc_client *cl, int status, void *res, void *arg)
{
	struct rev_call *rc = arg;

	(void)cl;
	(void)res;
	if (status || (!rc->slow && (rc->r.id != rc->a.id || rc->r.hash != rc->want))) {
		fprintf(stderr,
			"[server] reverse call %u: status %d id %u hash ok %d (reply proc %u "
			"accept_stat %u rdma_err %u tx %u)\n",
			rc->a.id, status, rc->r.id, rc->r.hash == rc->want, rc->res.reply_proc,
			rc->res.accept_stat, rc->res.rdma_err, rc->res.transmissions);
		atomic_fetch_add(&rev_bad, 1);
	}
	pthread_mutex_lock(&sv_lock);
	if (nrev < MAX_XIDS)
		rev_xids[nrev++] = rc->res.xid;
	pthread_mutex_unlock(&sv_lock);
	unsigned int m = atomic_load(&rev_maxtx);

	while (rc->res.transmissions > m &&
	       !atomic_compare_exchange_weak(&rev_maxtx, &m, rc->res.transmissions))
		;
	free(rc->a.val);
	free(rc);
	atomic_fetch_add(&rev_done, 1);
}

struct rev_job {
	struct rpcrdma_svc_client *cl;
	uint32_t op, n, arg;
};

/* Mirror mode: a reverse call with the XID of the forward call being
 * served, live at the same time (RFC 8167 §2.4.1). */
static atomic_uint mirror_left;
static uint32_t mirror_bytes;
static pthread_mutex_t mirror_lock = PTHREAD_MUTEX_INITIALIZER;

static void mirror(struct rpcrdma_svc_req *req, uint32_t id)
{
	struct rpcrdma_svc_client *cl = rpcrdma_svc_req_client(req);
	struct rev_call *rc;
	unsigned int left = atomic_load(&mirror_left);
	int r;

	do {
		if (!left)
			return;
	} while (!atomic_compare_exchange_weak(&mirror_left, &left, left - 1));
	rc = calloc(1, sizeof(*rc));
	rc->cl = cl;
	rc->a.id = id;
	rc->a.len = mirror_bytes ? (id * 31u) % mirror_bytes : 0;
	rc->a.val = malloc(rc->a.len + 1);
	bt_fill(rc->a.val, rc->a.len, id ^ 0x5a5a5a5au);
	rc->want = bt_hash(rc->a.val, rc->a.len);
	rc->o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
	rc->o.result = &rc->res;
	pthread_mutex_lock(&mirror_lock);
	bc_test_set_next_xid(cl, rpcrdma_svc_req_xid(req));
	r = rpcrdma_svc_client_call_async(cl, CB_PROG, CB_VERS, CB_ECHO,
					  (xdrproc_t)xdr_bt_echo_args, &rc->a,
					  (xdrproc_t)xdr_bt_echo_res, &rc->r, &rc->o, rev_cb, rc);
	pthread_mutex_unlock(&mirror_lock);
	if (r) {
		fprintf(stderr, "[server] mirror call start: %d\n", r);
		atomic_fetch_add(&rev_bad, 1);
		atomic_fetch_add(&rev_done, 1);
		free(rc->a.val);
		free(rc);
	}
}

static void *rev_thread(void *p)
{
	struct rev_job *j = p;

	for (uint32_t i = 0; i < j->n; i++) {
		struct rev_call *rc = calloc(1, sizeof(*rc));
		int r;

		rc->cl = j->cl;
		rc->a.id = i;
		rc->o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
		rc->o.result = &rc->res;
		if (j->op == CTL_REV_SLOW) {
			rc->slow = 1;
			rc->ms = j->arg;
			r = rpcrdma_svc_client_call_async(j->cl, CB_PROG, CB_VERS, CB_SLOW,
							  (xdrproc_t)xdr_u_int, &rc->ms, NULL, NULL,
							  &rc->o, rev_cb, rc);
		} else {
			rc->a.len = j->arg ? (uint32_t)(rand() % (int)j->arg) : 0;
			rc->a.val = malloc(rc->a.len + 1);
			bt_fill(rc->a.val, rc->a.len, i * 7919u + 1);
			rc->want = bt_hash(rc->a.val, rc->a.len);
			r = rpcrdma_svc_client_call_async(
			    j->cl, CB_PROG, CB_VERS, CB_ECHO, (xdrproc_t)xdr_bt_echo_args, &rc->a,
			    (xdrproc_t)xdr_bt_echo_res, &rc->r, &rc->o, rev_cb, rc);
		}
		if (r) {
			fprintf(stderr, "[server] reverse call start: %d\n", r);
			atomic_fetch_add(&rev_bad, 1);
			atomic_fetch_add(&rev_done, 1);
			free(rc->a.val);
			free(rc);
		}
	}
	free(j);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* How many reverse XID values were also used by forward calls. */
static uint32_t overlap(void)
{
	uint32_t n = 0, i = 0, k = 0;

	pthread_mutex_lock(&sv_lock);
	qsort(fwd_xids, nfwd, sizeof(uint32_t), cmp_u32);
	qsort(rev_xids, nrev, sizeof(uint32_t), cmp_u32);
	while (i < nfwd && k < nrev) {
		if (fwd_xids[i] == rev_xids[k]) {
			n++;
			i++;
			k++;
		} else if (fwd_xids[i] < rev_xids[k]) {
			i++;
		} else {
			k++;
		}
	}
	pthread_mutex_unlock(&sv_lock);
	return n;
}

static void *tmo_thread(void *p)
{
	struct rpcrdma_svc_client *cl = p;
	struct rpcrdma_bc_stats st;
	uint64_t t0;
	int rc;

	for (int i = 0; i < 1000; i++) {
		if (!rpcrdma_svc_client_stats(cl, &st) && !st.connected)
			break;
		usleep(10000);
	}
	t0 = bt_now_ns();
	rc = rpcrdma_svc_client_call(cl, CB_PROG, CB_VERS, CB_NULL, NULL, NULL, NULL, NULL, NULL);
	tmo_ns = bt_now_ns() - t0;
	/* published after tmo_ns: bt_child_closing polls tmo_rc, then reads
	 * tmo_ns (a data race under ThreadSanitizer before, issue 37) */
	__atomic_store_n(&tmo_rc, rc, __ATOMIC_RELEASE);
	return NULL;
}

static void ctl(struct rpcrdma_svc_req *req, struct bt_ctl_args *a, struct bt_ctl_res *res)
{
	struct rpcrdma_svc_client *cl = rpcrdma_svc_req_client(req);
	struct rpcrdma_bc_stats st = {0};
	pthread_t t;

	if (!cl) {
		res->rc = -ENOENT;
		return;
	}
	switch (a->op) {
	case CTL_MIRROR:
		mirror_bytes = a->b;
		atomic_store(&mirror_left, a->a);
		break;
	case CTL_REV_ECHO:
	case CTL_REV_SLOW: {
		struct rev_job *j = calloc(1, sizeof(*j));

		j->cl = cl;
		j->op = a->op;
		j->n = a->a;
		j->arg = a->b;
		res->rc = -pthread_create(&t, NULL, rev_thread, j);
		if (!res->rc)
			pthread_detach(t);
		break;
	}
	case CTL_RESULT:
		rpcrdma_svc_client_stats(cl, &st);
		res->v[0] = atomic_load(&rev_done);
		res->v[1] = atomic_load(&rev_bad);
		res->v[2] = overlap();
		res->v[3] = atomic_load(&rev_maxtx);
		res->v[4] = (uint32_t)st.calls_sent;
		res->v[5] = (uint32_t)st.credit_stalls;
		res->v[6] = (uint32_t)st.retransmits;
		res->v[7] = st.max_outstanding;
		break;
	case CTL_TRY:
		res->rc = rpcrdma_svc_client_call(cl, CB_PROG, CB_VERS, CB_NULL, NULL, NULL, NULL,
						  NULL, NULL);
		rpcrdma_svc_client_stats(cl, &st);
		res->v[0] = (uint32_t)st.calls_sent;
		res->v[1] = (uint32_t)st.gate_refusals;
		break;
	case CTL_REV_BULK: {
		struct bt_bulk_args ba = {.id = 77, .reply_len = a->b};
		struct bt_bulk_res br = {0};
		struct rpcrdma_call_result r = {0};
		struct rpcrdma_call_opts o = {
		    .comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE |
				 RPCRDMA_CALL_OPT_FLAGS,
		    .result = &r,
		    .reply_size = a->b + 64,
		    .flags = a->c,
		};
		uint8_t *data = malloc(a->a + 1), *want = malloc(a->b + 1);

		bt_fill(data, a->a, 4242);
		bt_fill(want, a->b, 77);
		ba.data.base = data;
		ba.data.len = a->a;
		res->rc = rpcrdma_svc_client_call(cl, CB_PROG, CB_VERS, CB_BULK,
						  (xdrproc_t)xdr_bt_bulk_args, &ba,
						  (xdrproc_t)xdr_bt_bulk_res, &br, &o);
		res->v[0] = r.rdma_err;
		res->v[1] = r.read_chunks;
		res->v[2] = r.reply_chunk;
		res->v[3] = r.reply_proc;
		res->v[4] = r.call_proc;
		res->v[5] = !res->rc && br.id == 77 && br.hash == bt_hash(data, a->a) &&
			    br.len == a->b && !memcmp(br.val, want, a->b);
		rpcrdma_svc_client_stats(cl, &st);
		res->v[6] = (uint32_t)st.credits_ignored;
		res->v[7] = st.credits;
		xdr_free((xdrproc_t)xdr_bt_bulk_res, &br);
		free(data);
		free(want);
		break;
	}
	case CTL_RR_STATS: {
		struct rpcrdma_xprt_stats xs;

		res->rc = rpcrdma_svc_stats(sv_svc, &xs);
		res->v[0] = xs.rr_exposed;
		res->v[1] = (uint32_t)xs.rr_replies;
		res->v[2] = (uint32_t)xs.rr_notifications;
		res->v[3] = (uint32_t)xs.rr_reclaimed;
		res->v[4] = (uint32_t)xs.rr_refused;
		res->v[5] = (uint32_t)xs.rr_exposed_bytes;
		break;
	}
	case CTL_ARM_TMO:
		__atomic_store_n(&tmo_armed, 1, __ATOMIC_RELAXED);
		res->rc = -pthread_create(&t, NULL, tmo_thread, cl);
		if (!res->rc)
			pthread_detach(t);
		break;
	default:
		res->rc = -EINVAL;
	}
}

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	switch (proc) {
	case BT_NULL:
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	case BT_ECHO: {
		struct bt_echo_args a = {0};
		struct bt_echo_res r;

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_bt_echo_args, &a)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		pthread_mutex_lock(&sv_lock);
		if (nfwd < MAX_XIDS)
			fwd_xids[nfwd++] = rpcrdma_svc_req_xid(req);
		pthread_mutex_unlock(&sv_lock);
		r.id = a.id;
		r.hash = bt_hash(a.val, a.len);
		mirror(req, a.id);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_bt_echo_res, &r);
		rpcrdma_svc_freeargs(req, (xdrproc_t)xdr_bt_echo_args, &a);
		return;
	}
	case BT_READ: {
		struct bt_ctl_args a = {0};
		struct bt_bulk_res r = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_bt_ctl_args, &a) || a.a > (8u << 20)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		r.id = a.b;
		r.len = a.a;
		r.val = malloc(r.len + 1);
		bt_fill(r.val, r.len, a.b);
		r.hash = bt_hash(r.val, r.len);
		mirror(req, a.b);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_bt_bulk_res, &r);
		free(r.val);
		return;
	}
	case BT_CTL: {
		struct bt_ctl_args a = {0};
		struct bt_ctl_res r = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_bt_ctl_args, &a)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		ctl(req, &a, &r);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_bt_ctl_res, &r);
		return;
	}
	default:
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

static int bt_child_start(void *arg, struct rpcrdma_svc **svc)
{
	const struct bt_srv_cfg *cfg = arg;
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_WORKERS,
				      .workers = cfg && cfg->workers ? cfg->workers : 2};
	struct rpcrdma_bc_opts bo = {
	    .comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS | RPCRDMA_BC_OPT_CONN_WAIT |
			 RPCRDMA_BC_OPT_TIMEOUT | RPCRDMA_BC_OPT_INLINE,
	    .inline_dispatch = cfg && cfg->inline_cb,
	    .credits = cfg && cfg->slots ? cfg->slots : 8,
	    .chunks = !(cfg && cfg->no_chunks),
	    .timeout_ms = 20000,
	    .conn_wait_ms = cfg && cfg->conn_wait_ms ? cfg->conn_wait_ms : 1000,
	};
	int rc;

	if (cfg && cfg->rr) {
		so.comp_mask |= RPCRDMA_SVC_OPT_RELIABLE_REPLY;
		so.reliable_reply = 1;
	}
	if (cfg && cfg->v2) {
		so.comp_mask |= RPCRDMA_SVC_OPT_RDMA_VERSION;
		so.rdma_version = RPCRDMA_VERSION_2;
		so.rdma_props = 1;
	}
	if (cfg && cfg->inline_thr) {
		so.comp_mask |= RPCRDMA_SVC_OPT_INLINE;
		so.inline_send = so.inline_recv = cfg->inline_thr;
	}

	sv_conn_wait_ms = bo.conn_wait_ms;
	if (cfg && cfg->port)
		rc = rpcrdma_svc_create(tl_addr(), cfg->port, &so, svc);
	else
		rc = rpcrdma_svc_create_any(tl_addr(), &so, svc);
	if (!rc) {
		sv_svc = *svc;
		rc = rpcrdma_svc_register(*svc, BT_PROG, BT_VERS, dispatch, NULL);
	}
	if (!rc)
		rc = rpcrdma_svc_bc_init(*svc, &bo, NULL, NULL);
	if (!rc)
		rc = rpcrdma_svc_start(*svc);
	return rc;
}

static void bt_child_closing(void *arg)
{
	(void)arg;
	if (__atomic_load_n(&tmo_armed, __ATOMIC_RELAXED)) {
		/* RFC 8167 §5.4: the call that waited for a connection
		 * timed out after about conn_wait_ms. */
		int rc = 1;

		for (int i = 0; i < 500 && (rc = __atomic_load_n(&tmo_rc, __ATOMIC_ACQUIRE)) == 1;
		     i++)
			usleep(10000);
		BT_CHECK(rc == -ETIMEDOUT);
		BT_CHECK(tmo_ns >= (uint64_t)sv_conn_wait_ms * 800000ull);
		BT_CHECK(tmo_ns < (uint64_t)sv_conn_wait_ms * 5000000ull);
		fprintf(stderr, "[server] reverse call without connection: %d after %.0f ms\n", rc,
			(double)tmo_ns / 1e6);
	}
}

int bt_server_start(struct tl_server *srv, const struct bt_srv_cfg *cfg)
{
	struct tl_child ch = {.start = bt_child_start,
			      .closing = bt_child_closing,
			      .failures = &bt_failures,
			      .arg = (void *)cfg};

	return tl_server_fork(srv, &ch);
}

int bt_server_stop(struct tl_server *srv)
{
	return tl_server_stop(srv, 10000);
}

/* ================================================================== */
/* Client: the CB program                                              */
/* ================================================================== */

static void cb_dispatch(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	switch (proc) {
	case CB_NULL:
		rpcrdma_bc_reply(req, NULL, NULL);
		return;
	case CB_ECHO: {
		struct bt_echo_args a = {0};
		struct bt_echo_res r;

		if (rpcrdma_bc_getargs(req, (xdrproc_t)xdr_bt_echo_args, &a)) {
			rpcrdma_bc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		r.id = a.id;
		r.hash = bt_hash(a.val, a.len);
		rpcrdma_bc_reply(req, (xdrproc_t)xdr_bt_echo_res, &r);
		xdr_free((xdrproc_t)xdr_bt_echo_args, &a);
		return;
	}
	case CB_BULK: {
		struct bt_bulk_args a = {0};
		struct bt_bulk_res r = {0};

		if (rpcrdma_bc_getargs(req, (xdrproc_t)xdr_bt_bulk_args, &a) ||
		    a.reply_len > (16u << 20)) {
			rpcrdma_bc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		r.id = a.id;
		r.hash = bt_hash(a.data.base, a.data.len);
		r.len = a.reply_len;
		r.val = malloc(r.len + 1);
		bt_fill(r.val, r.len, a.id);
		rpcrdma_bc_reply(req, (xdrproc_t)xdr_bt_bulk_res, &r);
		free(r.val);
		xdr_free((xdrproc_t)xdr_bt_bulk_args, &a);
		return;
	}
	case CB_SLOW: {
		u_int ms = 0;

		rpcrdma_bc_getargs(req, (xdrproc_t)xdr_u_int, &ms);
		__atomic_add_fetch(&bt_slow_entered, 1, __ATOMIC_SEQ_CST);
		for (int i = 0; __atomic_load_n(&bt_slow_hold, __ATOMIC_SEQ_CST); i++) {
			if (i == 3000) {
				__atomic_store_n(&bt_slow_hold_expired, 1, __ATOMIC_SEQ_CST);
				break;
			}
			usleep(10000);
		}
		if (__atomic_fetch_sub(&bt_slow_budget, 1, __ATOMIC_SEQ_CST) > 0)
			usleep(ms * 1000u);
		rpcrdma_bc_reply(req, NULL, NULL);
		return;
	}
	default:
		rpcrdma_bc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

int bt_client(uint16_t port, const struct rpcrdma_bc_opts *bc, uint32_t credits,
	      struct rpcrdma_clnt **out)
{
	return bt_client_vers(port, bc, credits, RPCRDMA_VERSION_1, out);
}

int bt_setup(struct tl_server *srv, const struct bt_srv_cfg *cfg, const struct rpcrdma_bc_opts *bc,
	     uint32_t credits, struct rpcrdma_clnt **out)
{
	int rc;

	*out = NULL;
	if (bt_server_start(srv, cfg))
		return -1;
	rc = bt_client(srv->port, bc, credits, out);
	if (!rc && rpcrdma_clnt_bc_enable(*out)) {
		rpcrdma_clnt_destroy(*out);
		*out = NULL;
		rc = 1;
	}
	return rc;
}

void bt_client_defaults(struct rpcrdma_clnt_opts *co, uint32_t credits,
			enum rpcrdma_version_policy vers)
{
	*co = (struct rpcrdma_clnt_opts){
	    .comp_mask = RPCRDMA_CLNT_OPT_CREDITS | RPCRDMA_CLNT_OPT_RETRIES |
			 RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT | RPCRDMA_CLNT_OPT_TIMEOUT |
			 RPCRDMA_CLNT_OPT_RDMA_VERSION,
	    .credits = credits ? credits : 32,
	    .retries = 3,
	    .connect_timeout_ms = 2000,
	    .timeout_ms = 20000,
	    .rdma_version = vers,
	    .rdma_props = 1,
	};
	if (bt_client_rr) {
		co->comp_mask |= RPCRDMA_CLNT_OPT_RELIABLE_REPLY;
		co->reliable_reply = 1;
	}
}

int bt_client_opts(uint16_t port, const struct rpcrdma_bc_opts *bc,
		   const struct rpcrdma_clnt_opts *co, struct rpcrdma_clnt **out)
{
	int rc = rpcrdma_clnt_create_bc(tl_addr(), port, BT_PROG, BT_VERS, co, bc, out);

	if (!rc)
		rc = rpcrdma_clnt_bc_register(*out, CB_PROG, CB_VERS, cb_dispatch, NULL);
	return rc;
}

int bt_client_vers(uint16_t port, const struct rpcrdma_bc_opts *bc, uint32_t credits,
		   enum rpcrdma_version_policy vers, struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt_opts co;

	bt_client_defaults(&co, credits, vers);
	return bt_client_opts(port, bc, &co, out);
}

void bt_mirror(struct rpcrdma_clnt *c, uint32_t n, uint32_t rev_len, uint32_t base, uint32_t step,
	       struct bt_ctl_res *res)
{
	char *buf = malloc(base + step * n + 1);

	BT_CHECK(buf != NULL);
	if (!buf)
		return;
	BT_CHECK(bt_ctl(c, CTL_MIRROR, n, rev_len, 0, res) == 0 && res->rc == 0);
	for (uint32_t i = 0; i < n; i++) {
		struct bt_echo_args a = {.id = i, .val = buf, .len = base + step * i};
		struct bt_echo_res r = {0};

		bt_fill(buf, a.len, i);
		BT_CHECK(rpcrdma_clnt_call(c, BT_ECHO, (xdrproc_t)xdr_bt_echo_args, &a,
					   (xdrproc_t)xdr_bt_echo_res, &r, NULL) == 0);
		BT_CHECK(r.id == i && r.hash == bt_hash(buf, a.len));
	}
	free(buf);
	for (int i = 0; i < 500; i++) {
		if (bt_ctl(c, CTL_RESULT, 0, 0, 0, res) || res->v[0] >= n)
			break;
		usleep(10000);
	}
	BT_CHECK(res->v[0] == n && res->v[1] == 0);
}

int bt_ctl(struct rpcrdma_clnt *c, uint32_t op, uint32_t a, uint32_t b, uint32_t cc,
	   struct bt_ctl_res *res)
{
	struct bt_ctl_args args = {op, a, b, cc};

	memset(res, 0, sizeof(*res));
	return rpcrdma_clnt_call(c, BT_CTL, (xdrproc_t)xdr_bt_ctl_args, &args,
				 (xdrproc_t)xdr_bt_ctl_res, res, NULL);
}
