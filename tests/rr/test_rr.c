// SPDX-License-Identifier: MIT
/*
 * Reliable replies end to end (issue 16, docs/reliable-replies.md): a
 * server child and a client over loopback (softiwarp); replies of a size
 * the client did not say (no Reply chunk offered) come back in a
 * responder-provided Read chunk, are pulled and checked byte for byte
 * (hash), and the server's exposed memory goes back to zero once the
 * client has notified pull completion. One mode per ctest entry:
 *   big            a 64 MiB reply, Version One (RFC 5666 mode)
 *   mixed_vV_C     replies of 100 B .. 4 MiB, several in flight, the
 *                  server granting C credits (1 or 64), in Version V
 *                  (1 or 2)
 *   abort          a call that times out before its large reply comes:
 *                  the reply is still notified, the memory released
 *   off            the server without the option: a reply that fits
 *                  nothing offered fails as before (ERR_CHUNK)
 *   hostile        a raw requester: notification for an XID never sent
 *                  (dropped), twice for one XID (dropped), a Read beyond
 *                  the chunk (the connection ends, the memory is freed)
 *   reclaim        a raw requester that never notifies: reclaimed on the
 *                  timeout; its Read afterwards gets the server's
 *                  Terminate
 *   wire           (rr_wire.sh, server on $RR_WIRE_PORT) one reply by
 *                  Read chunk and one inline, for the capture
 *   badinv         a notification with Send With Invalidate of another
 *                  STag: the connection ends, the memory is freed
 *   dupxid         a raw requester that reuses an XID: two replies
 *                  exposed under it, each released by its own
 *                  notification, the connection kept (issue 32)
 *   scope          two connections: a raw peer on B RDMA-Reads the STag
 *                  of a reply exposed to A; B gets the server's Terminate,
 *                  A still pulls its reply intact, the server goes on
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/test_server.h"
#include "rpcrdma.h"

#define RR_PROG 0x20000716u
#define RR_VERS 1u
enum { RR_NULL = 0, RR_READ = 1, RR_STATS = 2 };

#define CHECK_WITH_PID
#include "lib/check.h"
#include "util/be.h"

struct rr_read_args {
	uint32_t len, seed, delay_ms;
};
/* The reply: opaque<> into a buffer of the caller's (cap bytes). */
struct rr_data {
	char *val;
	u_int len, cap;
};
/* What the server reports of its reliable-reply counters. */
struct rr_stats {
	uint32_t exposed, exposed_bytes, replies, notifications, reclaimed;
};

static bool_t xdr_rr_read_args(XDR *x, struct rr_read_args *a)
{
	return xdr_u_int(x, &a->len) && xdr_u_int(x, &a->seed) && xdr_u_int(x, &a->delay_ms);
}

static bool_t xdr_rr_data(XDR *x, struct rr_data *d)
{
	return xdr_bytes(x, &d->val, &d->len, d->cap);
}

static bool_t xdr_rr_none(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static bool_t xdr_rr_stats(XDR *x, struct rr_stats *s)
{
	return xdr_u_int(x, &s->exposed) && xdr_u_int(x, &s->exposed_bytes) &&
	       xdr_u_int(x, &s->replies) && xdr_u_int(x, &s->notifications) &&
	       xdr_u_int(x, &s->reclaimed);
}

/* ---- the server child ---- */

struct srv_cfg {
	bool rr;
	bool v2;
	uint32_t credits;
	uint32_t timeout_ms; /* exposed_timeout_ms, 0: the default */
	uint16_t port;       /* 0: any */
};

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct rpcrdma_svc *svc = ctx;

	(void)args;
	if (proc == RR_NULL) {
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rr_none, NULL);
	} else if (proc == RR_READ) {
		struct rr_read_args a = {0};
		struct rr_data d = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_rr_read_args, &a) ||
		    a.len > (64u << 20)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		if (a.delay_ms)
			usleep(a.delay_ms * 1000u);
		d.val = malloc(a.len ? a.len : 1);
		d.len = d.cap = a.len;
		tl_fill(d.val, a.len, a.seed);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rr_data, &d);
		free(d.val);
	} else if (proc == RR_STATS) {
		struct rpcrdma_xprt_stats st;
		struct rr_stats r = {0};

		CHECK(rpcrdma_svc_stats(svc, &st) == 0);
		r.exposed = st.rr_exposed;
		r.exposed_bytes = (uint32_t)st.rr_exposed_bytes;
		r.replies = (uint32_t)st.rr_replies;
		r.notifications = (uint32_t)st.rr_notifications;
		r.reclaimed = (uint32_t)st.rr_reclaimed;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rr_stats, &r);
	} else {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

static int srv_start(void *arg, struct rpcrdma_svc **out)
{
	const struct srv_cfg *cfg = arg;
	struct rpcrdma_svc_opts o = {0};
	struct rpcrdma_svc *svc;
	int rc;

	o.comp_mask = RPCRDMA_SVC_OPT_WORKERS | RPCRDMA_SVC_OPT_CREDITS;
	o.workers = 4;
	o.credits = cfg->credits;
	if (cfg->rr) {
		o.comp_mask |= RPCRDMA_SVC_OPT_RELIABLE_REPLY;
		o.reliable_reply = 1;
		o.exposed_timeout_ms = cfg->timeout_ms;
	}
	if (cfg->v2) {
		o.comp_mask |= RPCRDMA_SVC_OPT_RDMA_VERSION;
		o.rdma_version = RPCRDMA_VERSION_2;
		o.rdma_props = 1;
	}
	if (cfg->port)
		rc = rpcrdma_svc_create(tl_addr(), cfg->port, &o, &svc);
	else
		rc = rpcrdma_svc_create_any(tl_addr(), &o, &svc);
	if (!rc)
		rc = rpcrdma_svc_register(svc, RR_PROG, RR_VERS, dispatch, svc);
	if (!rc)
		rc = rpcrdma_svc_start(svc);
	*out = svc;
	return rc;
}

/* ---- the client ---- */

static struct rpcrdma_clnt *clnt_new(uint16_t port, bool v2, uint32_t credits, bool rr)
{
	struct rpcrdma_clnt_opts o = {0};
	struct rpcrdma_clnt *c = NULL;

	o.comp_mask = RPCRDMA_CLNT_OPT_CREDITS | RPCRDMA_CLNT_OPT_TIMEOUT;
	o.credits = credits;
	if (!v2) {
		/* the sizes of mode_mixed are chosen around 1 KiB (our peers
		 * advertise 4096 by default since issue 32) */
		o.comp_mask |= RPCRDMA_CLNT_OPT_INLINE;
		o.inline_send = o.inline_recv = 1024;
	}
	o.timeout_ms = 60000;
	if (rr) {
		o.comp_mask |= RPCRDMA_CLNT_OPT_RELIABLE_REPLY;
		o.reliable_reply = 1;
	}
	if (v2) {
		o.comp_mask |= RPCRDMA_CLNT_OPT_RDMA_VERSION;
		o.rdma_version = RPCRDMA_VERSION_2;
		o.rdma_props = 1;
	}
	CHECK(rpcrdma_clnt_create(tl_addr(), port, RR_PROG, RR_VERS, &o, &c) == 0);
	return c;
}

/* A call whose reply size is unknown: no Reply chunk offered. */
static const struct rpcrdma_call_opts unknown_reply = {
    .comp_mask = RPCRDMA_CALL_OPT_UNKNOWN_REPLY | RPCRDMA_CALL_OPT_REPLY_SIZE,
    .reply_size = 64u << 20, /* ignored: the size is said to be unknown */
};

static int read_call(struct rpcrdma_clnt *c, uint32_t len, uint32_t seed)
{
	struct rr_read_args a = {len, seed, 0};
	struct rr_data d = {malloc(len ? len : 1), 0, len};
	int rc = rpcrdma_clnt_call(c, RR_READ, (xdrproc_t)xdr_rr_read_args, &a,
				   (xdrproc_t)xdr_rr_data, &d, &unknown_reply);

	if (!rc) {
		void *want = malloc(len ? len : 1);

		tl_fill(want, len, seed);
		CHECK(d.len == len);
		CHECK(tl_hash(d.val, d.len) == tl_hash(want, len));
		free(want);
	}
	free(d.val);
	return rc;
}

/* The server's counters, once its exposed replies are all released (or
 * after 5 s). */
static struct rr_stats server_settled(struct rpcrdma_clnt *c)
{
	struct rr_stats s = {0};

	for (int i = 0; i < 500; i++) {
		CHECK(rpcrdma_clnt_call(c, RR_STATS, (xdrproc_t)xdr_rr_none, NULL,
					(xdrproc_t)xdr_rr_stats, &s, NULL) == 0);
		if (!s.exposed)
			break;
		usleep(10000);
	}
	return s;
}

static int mode_big(uint16_t port)
{
	struct rpcrdma_clnt *c = clnt_new(port, false, 8, true);
	struct rpcrdma_xprt_stats st;
	struct rr_stats s;

	if (!c)
		return 1;
	CHECK(read_call(c, 64u << 20, 7) == 0);
	CHECK(read_call(c, 100, 8) == 0); /* small: inline as ever */
	s = server_settled(c);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0);
	CHECK(s.replies == 1 && s.notifications == 1 && s.reclaimed == 0);
	CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	CHECK(st.rr_replies == 1 && st.rr_notifications == 1);
	rpcrdma_clnt_destroy(c);
	return 0;
}

/* Several async calls in flight, sizes 100 B .. 4 MiB. */
struct pending {
	struct rr_read_args a;
	struct rr_data d;
	atomic_int done;
	int status;
};

static void on_done(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct pending *p = arg;

	(void)c;
	(void)res;
	p->status = status;
	atomic_store(&p->done, 1);
}

static int mode_mixed(uint16_t port, bool v2, uint32_t credits)
{
	static const uint32_t sizes[] = {100, 900, 3000, 20000, 300000, 4u << 20, 1500, 64000};
	enum { N = 48, INFL = 8 };
	/* The server grants @credits; the client has slots to spare (with
	 * one slot a Version Two client cannot send its transport
	 * properties, docs/rpcrdma2-extensions.md §3). */
	struct rpcrdma_clnt *c = clnt_new(port, v2, 64, true);
	struct pending *p = calloc(N, sizeof(*p));
	struct rpcrdma_xprt_stats st;
	struct rr_stats s;
	uint32_t large = 0;

	if (!c || !p)
		return 1;
	for (int base = 0; base < N; base += INFL) {
		for (int i = base; i < base + INFL; i++) {
			uint32_t len = sizes[(uint32_t)i % 8u];

			p[i].a = (struct rr_read_args){len, (uint32_t)i * 31u + 5u, 0};
			p[i].d = (struct rr_data){malloc(len), 0, len};
			large += len > 1024;
			CHECK(rpcrdma_clnt_call_async(c, RR_READ, (xdrproc_t)xdr_rr_read_args,
						      &p[i].a, (xdrproc_t)xdr_rr_data, &p[i].d,
						      &unknown_reply, on_done, &p[i]) == 0);
		}
		for (int i = base; i < base + INFL; i++) {
			for (int k = 0; k < 6000 && !atomic_load(&p[i].done); k++)
				usleep(10000);
			CHECK(atomic_load(&p[i].done) && p[i].status == 0);
			if (p[i].status)
				fprintf(stderr, "call %d (%u bytes): %d\n", i, p[i].a.len,
					p[i].status);
			if (p[i].status == 0) {
				void *want = malloc(p[i].a.len);

				tl_fill(want, p[i].a.len, p[i].a.seed);
				CHECK(p[i].d.len == p[i].a.len);
				CHECK(tl_hash(p[i].d.val, p[i].d.len) == tl_hash(want, p[i].a.len));
				free(want);
			}
			free(p[i].d.val);
		}
	}
	s = server_settled(c);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0 && s.reclaimed == 0);
	CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	CHECK(st.credits == credits && st.max_outstanding <= credits);
	/* the replies beyond the inline threshold came by Read chunk (the
	 * Version Two threshold is 4096: fewer of them) */
	CHECK(st.rr_replies >= (v2 ? 4u * (N / 8u) : large) && st.rr_replies <= large);
	CHECK(s.replies == st.rr_replies && s.notifications == st.rr_replies);
	free(p);
	rpcrdma_clnt_destroy(c);
	return 0;
}

static int mode_abort(uint16_t port)
{
	struct rpcrdma_clnt *c = clnt_new(port, false, 4, true);
	struct rr_read_args a = {1u << 20, 3, 400};
	struct rr_data d = {malloc(1u << 20), 0, 1u << 20};
	struct rpcrdma_call_opts o = unknown_reply;
	struct rpcrdma_xprt_stats st;
	struct rr_stats s;

	if (!c)
		return 1;
	o.comp_mask |= RPCRDMA_CALL_OPT_TIMEOUT;
	o.timeout_ms = 100;
	CHECK(rpcrdma_clnt_call(c, RR_READ, (xdrproc_t)xdr_rr_read_args, &a, (xdrproc_t)xdr_rr_data,
				&d, &o) == -ETIMEDOUT);
	/* the reply arrives for a call nobody waits for, 400 ms after it
	 * (later under load): wait for our notification of it, 5 s at most,
	 * without a call (one now would wait for the credit that call holds,
	 * the only one granted before a first reply, and the connection would
	 * be made again without it) */
	for (int i = 0; i < 500; i++) {
		CHECK(rpcrdma_clnt_stats(c, &st) == 0);
		if (st.rr_notifications)
			break;
		usleep(10000);
	}
	s = server_settled(c);
	if (s.replies != 1 || s.notifications != 1 || s.exposed || s.reclaimed)
		fprintf(stderr, "server: %u replies exposed, %u notified, %u held, %u reclaimed\n",
			s.replies, s.notifications, s.exposed, s.reclaimed);
	CHECK(s.replies == 1 && s.notifications == 1 && s.exposed == 0 && s.reclaimed == 0);
	CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	CHECK(st.rr_replies == 0 && st.rr_notifications == 1);
	CHECK(read_call(c, 2u << 20, 4) == 0); /* the connection goes on */
	free(d.val);
	rpcrdma_clnt_destroy(c);
	return 0;
}

/* For the capture (rr_wire.sh): one reply by Read chunk, one inline. */
static int mode_wire(uint16_t port)
{
	struct rpcrdma_clnt *c = clnt_new(port, false, 8, true);
	struct rr_stats s;

	if (!c)
		return 1;
	CHECK(read_call(c, 100000, 21) == 0);
	CHECK(read_call(c, 100, 22) == 0);
	s = server_settled(c);
	CHECK(s.replies == 1 && s.notifications == 1 && s.exposed == 0);
	rpcrdma_clnt_destroy(c);
	return 0;
}

static int mode_off(uint16_t port)
{
	struct rpcrdma_clnt *c = clnt_new(port, false, 4, true);
	struct rpcrdma_xprt_stats st;

	if (!c)
		return 1;
	CHECK(read_call(c, 100000, 1) != 0); /* ERR_CHUNK, as without the option */
	CHECK(read_call(c, 100, 2) == 0);
	CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	CHECK(st.err_chunk_rx == 1 && st.rr_replies == 0 && st.rr_notifications == 0);
	rpcrdma_clnt_destroy(c);
	return 0;
}

/* ---- hostile requesters: the provider API, hand-made messages ---- */

struct raw {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *mr, *rmr;
	uint8_t rbuf[8][1024];
	uint8_t sbuf[256];
	uint8_t *pull; /* RDMA Read target */
	uint32_t xid;
	/* receives polled while waiting for another completion (rxe may
	 * complete a Send after the reply to it has arrived) */
	struct rpcrdma_wc held[8];
	uint32_t nheld;
};

#define RAW_PULL (1u << 20)

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int raw_open(struct raw *r, uint16_t port)
{
	struct rpcrdma_cq_attr ca = {.cqe = 64};
	struct rpcrdma_ep_attr ea = {0};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct rpcrdma_event ev;
	uint64_t end;

	r->pull = malloc(RAW_PULL);
	if (!r->pull || inet_pton(AF_INET, tl_addr(), &sin.sin_addr) != 1 ||
	    rpcrdma_dev_open(NULL, NULL, &r->dev) || rpcrdma_pd_alloc(r->dev, &r->pd) ||
	    rpcrdma_cq_create(r->dev, &ca, &r->cq) || rpcrdma_evch_create(r->dev, NULL, &r->ch) ||
	    rpcrdma_mr_reg(r->pd, r->rbuf, sizeof(r->rbuf) + sizeof(r->sbuf),
			   RPCRDMA_ACCESS_LOCAL_WRITE, &r->mr) ||
	    rpcrdma_mr_reg(r->pd, r->pull, RAW_PULL, RPCRDMA_ACCESS_LOCAL_WRITE, &r->rmr))
		return -1;
	ea.comp_mask = RPCRDMA_EP_ATTR_IRD_ORD;
	ea.ird = 0;
	ea.ord = 4; /* we RDMA Read the exposed replies */
	ea.send_cq = ea.recv_cq = r->cq;
	ea.evch = r->ch;
	if (rpcrdma_ep_create(r->pd, &ea, &r->ep))
		return -1;
	for (uint32_t i = 0; i < 8; i++) {
		struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)r->rbuf[i], 1024,
					 rpcrdma_mr_stag(r->mr)};

		if (rpcrdma_post_recv(r->ep, i, &sg, 1))
			return -1;
	}
	if (rpcrdma_connect(r->ep, (struct sockaddr *)&sin, sizeof(sin), NULL, 0))
		return -1;
	for (end = ms_now() + 10000; ms_now() < end;) {
		if (rpcrdma_evch_get(r->ch, &ev) == 0)
			return ev.type == RPCRDMA_EV_ESTABLISHED ? 0 : -1;
		rpcrdma_dev_progress(r->dev, 20);
	}
	return -1;
}

static void raw_close(struct raw *r)
{
	if (r->ep)
		rpcrdma_ep_destroy(r->ep);
	if (r->mr)
		rpcrdma_mr_dereg(r->mr);
	if (r->rmr)
		rpcrdma_mr_dereg(r->rmr);
	if (r->ch)
		rpcrdma_evch_destroy(r->ch);
	if (r->cq)
		rpcrdma_cq_destroy(r->cq);
	if (r->pd)
		rpcrdma_pd_free(r->pd);
	if (r->dev)
		rpcrdma_dev_close(r->dev);
	free(r->pull);
}

/* Wait for the completion of work request @wr_id: its status, or -1. */
static int raw_wait(struct raw *r, uint64_t wr_id, int ms)
{
	struct rpcrdma_wc wc;

	for (uint64_t end = ms_now() + (uint64_t)ms; ms_now() < end;) {
		if (rpcrdma_cq_poll(r->cq, &wc, 1) == 1) {
			if (wc.wr_id == wr_id && wc.opcode != RPCRDMA_WC_RECV)
				return (int)wc.status;
			if (wc.opcode == RPCRDMA_WC_RECV && r->nheld < 8)
				r->held[r->nheld++] = wc;
			continue;
		}
		rpcrdma_dev_progress(r->dev, 5);
	}
	return -1;
}

/* The next completion: a held receive first. */
static int raw_poll(struct raw *r, struct rpcrdma_wc *wc)
{
	if (r->nheld) {
		*wc = r->held[0];
		memmove(r->held, r->held + 1, --r->nheld * sizeof(r->held[0]));
		return 1;
	}
	return rpcrdma_cq_poll(r->cq, wc, 1);
}

/* Send @n words (host order), with Send With Invalidate of @inv when not
 * 0; the Send's completion status. */
static int raw_send(struct raw *r, const uint32_t *w, uint32_t n, uint32_t inv)
{
	struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)r->sbuf, 4 * n, rpcrdma_mr_stag(r->mr)};
	struct rpcrdma_send_wr wr = {.wr_id = 100,
				     .opcode = RPCRDMA_WR_SEND,
				     .sg = &sg,
				     .num_sge = 1,
				     .flags = RPCRDMA_SEND_SIGNALED};

	for (uint32_t i = 0; i < n; i++)
		put_be32(r->sbuf + 4 * i, w[i]);
	if (inv) {
		wr.flags |= RPCRDMA_SEND_INVALIDATE;
		wr.invalidate_stag = inv;
	}
	return rpcrdma_post_send(r->ep, &wr) ? -1 : raw_wait(r, 100, 5000);
}

/* One message: its words (host order) in @out, its word count or -1. */
static int raw_recv(struct raw *r, uint32_t *out, uint32_t max, int ms)
{
	struct rpcrdma_wc wc;

	for (uint64_t end = ms_now() + (uint64_t)ms; ms_now() < end;) {
		if (raw_poll(r, &wc) == 1) {
			if (wc.opcode != RPCRDMA_WC_RECV || wc.status != RPCRDMA_WC_SUCCESS)
				return -1;
			uint32_t n = wc.byte_len / 4;
			struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)r->rbuf[wc.wr_id], 1024,
						 rpcrdma_mr_stag(r->mr)};

			for (uint32_t i = 0; i < n && i < max; i++)
				out[i] = get_be32(r->rbuf[wc.wr_id] + 4 * i);
			rpcrdma_post_recv(r->ep, wc.wr_id, &sg, 1);
			return (int)n;
		}
		rpcrdma_dev_progress(r->dev, 5);
	}
	return -1;
}

/* A Version One call (RDMA_MSG, no chunks) of @proc with @nargs words. */
static int raw_call(struct raw *r, uint32_t proc, const uint32_t *args, uint32_t nargs)
{
	uint32_t w[32] = {++r->xid, 1,       8,       0,    0, 0, 0, r->xid, 0,
			  2,        RR_PROG, RR_VERS, proc, 0, 0, 0, 0};

	if (nargs)
		memcpy(w + 17, args, 4 * nargs);
	return raw_send(r, w, 17 + nargs, 0);
}

/* The exposed reply of a READ: its segment (handle, length, offset). */
struct rr_seg {
	uint32_t handle, length;
	uint64_t offset;
};

static int raw_read_call(struct raw *r, uint32_t len, uint32_t seed, struct rr_seg *sg)
{
	uint32_t a[3] = {len, seed, 0}, w[32];
	int n;

	if (raw_call(r, RR_READ, a, 3))
		return -1;
	n = raw_recv(r, w, 32, 5000);
	/* xid vers credit NOMSG | read list: 1 position handle length offset
	 * 0 | no Write list | no Reply chunk */
	if (n != 13 || w[0] != r->xid || w[3] != 1 || w[4] != 1 || w[5] != 0 || w[10] != 0 ||
	    w[11] != 0 || w[12] != 0)
		return -1;
	sg->handle = w[6];
	sg->length = w[7];
	sg->offset = (uint64_t)w[8] << 32 | w[9];
	return 0;
}

/* RDMA Read @len bytes of @sg into r->pull: the completion status. */
static int raw_pull(struct raw *r, const struct rr_seg *sg, uint32_t len)
{
	struct rpcrdma_sge l = {(uint64_t)(uintptr_t)r->pull, len, rpcrdma_mr_stag(r->rmr)};
	struct rpcrdma_send_wr wr = {.wr_id = 200,
				     .opcode = RPCRDMA_WR_RDMA_READ,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &l,
				     .num_sge = 1,
				     .remote_offset = sg->offset,
				     .remote_stag = sg->handle};

	return rpcrdma_post_send(r->ep, &wr) ? -1 : raw_wait(r, 200, 5000);
}

/* The pulled reply carries the READ's data (RPC reply header, length). */
static bool pulled_ok(const struct raw *r, uint32_t len, uint32_t seed)
{
	void *want = malloc(len);
	bool ok;

	tl_fill(want, len, seed);
	ok = tl_hash(r->pull + 28, len) == tl_hash(want, len);
	free(want);
	return ok;
}

static int raw_done(struct raw *r, uint32_t xid, uint32_t inv)
{
	uint32_t w[4] = {xid, 1, 8, 3}; /* RFC 5666 RDMA_DONE */

	return raw_send(r, w, 4, inv);
}

static struct rr_stats raw_stats(struct raw *r)
{
	struct rr_stats s = {~0u, ~0u, ~0u, ~0u, ~0u};
	uint32_t w[32];

	/* the reply: 7 header words, 6 of RPC reply, the 5 counters */
	if (raw_call(r, RR_STATS, NULL, 0) == 0 && raw_recv(r, w, 32, 5000) == 18 &&
	    w[0] == r->xid && w[3] == 0)
		s = (struct rr_stats){w[13], w[14], w[15], w[16], w[17]};
	return s;
}

/* A connection ended: the provider says so, or a Send fails. */
static bool raw_gone(struct raw *r)
{
	struct rpcrdma_event ev;

	for (uint64_t end = ms_now() + 5000; ms_now() < end;) {
		if (rpcrdma_evch_get(r->ch, &ev) == 0 &&
		    (ev.type == RPCRDMA_EV_DISCONNECTED || ev.type == RPCRDMA_EV_TERMINATE))
			return true;
		rpcrdma_dev_progress(r->dev, 5);
	}
	return false;
}

/* Notifications for an XID never sent, twice for one XID; a Read of more
 * than the chunk exposes. */
static int mode_hostile(uint16_t port)
{
	struct raw r = {0}, r2 = {0};
	struct rr_seg sg;
	struct rr_stats s;
	uint32_t x1;

	CHECK(raw_open(&r, port) == 0);
	CHECK(raw_read_call(&r, 100000, 9, &sg) == 0);
	x1 = r.xid;
	CHECK(sg.length > 100000 && sg.length < 100100);
	CHECK(raw_pull(&r, &sg, sg.length) == RPCRDMA_WC_SUCCESS && pulled_ok(&r, 100000, 9));
	CHECK(raw_done(&r, 0x7badbeefu, 0) == RPCRDMA_WC_SUCCESS); /* never sent */
	s = raw_stats(&r);
	CHECK(s.exposed == 1 && s.notifications == 0 && s.replies == 1);
	CHECK(raw_done(&r, x1, 0) == RPCRDMA_WC_SUCCESS);
	s = raw_stats(&r);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0 && s.notifications == 1);
	CHECK(raw_done(&r, x1, 0) == RPCRDMA_WC_SUCCESS); /* that one, again */
	s = raw_stats(&r);
	CHECK(s.exposed == 0 && s.notifications == 1); /* dropped, connection up */
	/* A Read beyond the chunk: the provider refuses it, the connection
	 * ends; the server frees what the connection exposed. */
	CHECK(raw_read_call(&r, 200000, 10, &sg) == 0);
	CHECK(raw_pull(&r, &sg, sg.length + 4096) != RPCRDMA_WC_SUCCESS);
	CHECK(raw_gone(&r));
	raw_close(&r);
	CHECK(raw_open(&r2, port) == 0);
	for (int i = 0; i < 200 && (s = raw_stats(&r2)).exposed; i++)
		usleep(10000);
	CHECK(s.exposed == 0 && s.replies == 2 && s.notifications == 1);
	raw_close(&r2);
	return 0;
}

/* A requester that never notifies: reclaimed on the timeout; a Read
 * afterwards ends the connection with a Terminate. */
static int mode_reclaim(uint16_t port)
{
	struct raw r = {0};
	struct rr_seg sg;
	struct rr_stats s;
	struct rpcrdma_event ev;
	bool term = false;

	CHECK(raw_open(&r, port) == 0);
	CHECK(raw_read_call(&r, 50000, 11, &sg) == 0);
	usleep(700000); /* the server's timeout is 300 ms */
	s = raw_stats(&r);
	CHECK(s.exposed == 0 && s.reclaimed == 1 && s.notifications == 0);
	CHECK(raw_pull(&r, &sg, sg.length) == RPCRDMA_WC_REM_ACCESS_ERR);
	for (uint64_t end = ms_now() + 5000; !term && ms_now() < end;) {
		if (rpcrdma_evch_get(r.ch, &ev) == 0 && ev.type == RPCRDMA_EV_TERMINATE)
			term = !ev.term_local;
		rpcrdma_dev_progress(r.dev, 5);
	}
	CHECK(term); /* the server's Terminate */
	raw_close(&r);
	return 0;
}

/* Send With Invalidate of an STag that is not the reply's: the
 * connection ends, the exposed memory is freed with it. */
static int mode_badinv(uint16_t port)
{
	struct raw r = {0}, r2 = {0};
	struct rr_seg sg;
	struct rr_stats s;

	CHECK(raw_open(&r, port) == 0);
	CHECK(raw_read_call(&r, 60000, 12, &sg) == 0);
	CHECK(raw_pull(&r, &sg, sg.length) == RPCRDMA_WC_SUCCESS && pulled_ok(&r, 60000, 12));
	(void)raw_done(&r, r.xid, sg.handle ^ 0x1u); /* another key */
	CHECK(raw_gone(&r));
	raw_close(&r);
	CHECK(raw_open(&r2, port) == 0);
	for (int i = 0; i < 200 && (s = raw_stats(&r2)).exposed; i++)
		usleep(10000);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0 && s.notifications == 0);
	raw_close(&r2);
	return 0;
}

/* Issue 32: a requester that reuses an XID while the reply to its first
 * use is still exposed. Two replies exposed under one XID; the
 * notification for the second, with Send With Invalidate of its STag,
 * releases that one and the connection serves on; a plain notification
 * then releases the first. */
static int mode_dupxid(uint16_t port)
{
	struct raw r = {0};
	struct rr_seg s1, s2;
	struct rr_stats s;
	uint32_t x;

	CHECK(raw_open(&r, port) == 0);
	CHECK(raw_read_call(&r, 60000, 15, &s1) == 0);
	x = r.xid;
	r.xid = x - 1; /* raw_call numbers the next call x again */
	CHECK(raw_read_call(&r, 80000, 16, &s2) == 0 && r.xid == x);
	CHECK(s1.handle != s2.handle);
	CHECK(raw_pull(&r, &s2, s2.length) == RPCRDMA_WC_SUCCESS && pulled_ok(&r, 80000, 16));
	CHECK(raw_done(&r, x, s2.handle) == RPCRDMA_WC_SUCCESS);
	s = raw_stats(&r); /* answered: the connection is up */
	CHECK(s.exposed == 1 && s.replies == 2 && s.notifications == 1);
	/* the first reply is still there, intact */
	CHECK(raw_pull(&r, &s1, s1.length) == RPCRDMA_WC_SUCCESS && pulled_ok(&r, 60000, 15));
	CHECK(raw_done(&r, x, 0) == RPCRDMA_WC_SUCCESS);
	s = raw_stats(&r);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0 && s.notifications == 2 && s.reclaimed == 0);
	raw_close(&r);
	return 0;
}

/* Whether the provider can scope a registration to one connection (the
 * server uses the same provider and device): 0, or 77 with the reason. */
static int scope_probe(struct raw *r, bool *softiwarp)
{
	struct rpcrdma_dev_caps caps;
	struct rpcrdma_mr *mr;
	int rc;

	CHECK(rpcrdma_dev_query(r->dev, &caps) == 0);
	*softiwarp = !strcmp(caps.provider, "softiwarp");
	if (rpcrdma_mr_reg(r->pd, r->sbuf, sizeof(r->sbuf), RPCRDMA_ACCESS_REMOTE_READ, &mr))
		return 1;
	rc = rpcrdma_mr_bind_ep(mr, r->ep);
	rpcrdma_mr_dereg(mr);
	if (rc == -EOPNOTSUPP) {
		printf("SKIP: the %s provider cannot scope a registration to a connection "
		       "(rpcrdma_mr_bind_ep: %s; verbs: no type-2 memory windows on this "
		       "device), so exposed replies are readable PD-wide there\n",
		       caps.provider, strerror(-rc));
		return 77;
	}
	CHECK(rc == 0);
	return 0;
}

/* Issue 16: an exposed reply is scoped to its connection. B reads A's
 * exposed reply (same server, same PD): refused, B ends (softiwarp: the
 * server's Terminate; verbs: a remote access error, then the connection
 * goes down); A pulls it intact and notifies; the server serves on,
 * nothing exposed. */
static int mode_scope(uint16_t port)
{
	struct raw a = {0}, b = {0}, c = {0};
	struct rpcrdma_event ev;
	struct rr_seg sg;
	struct rr_stats s;
	bool term = false, sw = true;
	int rc;

	CHECK(raw_open(&a, port) == 0);
	if ((rc = scope_probe(&a, &sw))) {
		raw_close(&a);
		return rc;
	}
	CHECK(raw_open(&b, port) == 0);
	CHECK(raw_read_call(&a, 150000, 13, &sg) == 0);
	/* B's own call first: B is a connection the server serves */
	s = raw_stats(&b);
	CHECK(s.exposed == 1 && s.replies == 1);
	CHECK(raw_pull(&b, &sg, sg.length) == RPCRDMA_WC_REM_ACCESS_ERR);
	for (uint64_t end = ms_now() + (sw ? 5000 : 1000); !term && ms_now() < end;) {
		if (rpcrdma_evch_get(b.ch, &ev) == 0)
			term = (ev.type == RPCRDMA_EV_TERMINATE && !ev.term_local) ||
			       (!sw && ev.type == RPCRDMA_EV_DISCONNECTED);
		rpcrdma_dev_progress(b.dev, 5);
	}
	/* verbs: the remote access error put B's QP in error, which rdma_cm
	 * reports only once a side disconnects: B carries nothing more */
	if (!term && !sw)
		term = raw_call(&b, RR_NULL, NULL, 0) != RPCRDMA_WC_SUCCESS;
	CHECK(term); /* the server's Terminate, on B (verbs: B is dead) */
	raw_close(&b);
	/* A's reply is still exposed to A, and only A's Reads get it */
	memset(a.pull, 0, RAW_PULL);
	CHECK(raw_pull(&a, &sg, sg.length) == RPCRDMA_WC_SUCCESS && pulled_ok(&a, 150000, 13));
	CHECK(raw_done(&a, a.xid, 0) == RPCRDMA_WC_SUCCESS);
	s = raw_stats(&a);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0 && s.replies == 1 && s.notifications == 1 &&
	      s.reclaimed == 0);
	raw_close(&a);
	/* the server goes on: a new connection gets and pulls a reply */
	CHECK(raw_open(&c, port) == 0);
	CHECK(raw_read_call(&c, 70000, 14, &sg) == 0);
	CHECK(raw_pull(&c, &sg, sg.length) == RPCRDMA_WC_SUCCESS && pulled_ok(&c, 70000, 14));
	CHECK(raw_done(&c, c.xid, 0) == RPCRDMA_WC_SUCCESS);
	s = raw_stats(&c);
	CHECK(s.exposed == 0 && s.exposed_bytes == 0 && s.replies == 2 && s.notifications == 2);
	raw_close(&c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *wp = getenv("RR_WIRE_PORT");
	const char *m = argc > 1 ? argv[1] : wp ? "wire" : "big";
	struct srv_cfg cfg = {true, false, 64, 0, 0};
	struct tl_child ch = {srv_start, NULL, &failures, &cfg};
	struct tl_server srv;
	bool v2 = strstr(m, "_v2") != NULL;
	uint32_t credits = strstr(m, "_1") && !strstr(m, "_64") ? 1 : 64;
	int rc;

	if (!strncmp(m, "mixed", 5))
		cfg.credits = credits;
	cfg.v2 = v2;
	cfg.rr = strcmp(m, "off") != 0;
	if (!strcmp(m, "reclaim"))
		cfg.timeout_ms = 300;
	if (!strcmp(m, "wire") && wp)
		cfg.port = (uint16_t)atoi(wp);
	if (tl_server_fork(&srv, &ch))
		return 1;
	if (!strcmp(m, "big"))
		rc = mode_big(srv.port);
	else if (!strncmp(m, "mixed", 5))
		rc = mode_mixed(srv.port, v2, credits);
	else if (!strcmp(m, "abort"))
		rc = mode_abort(srv.port);
	else if (!strcmp(m, "off"))
		rc = mode_off(srv.port);
	else if (!strcmp(m, "hostile"))
		rc = mode_hostile(srv.port);
	else if (!strcmp(m, "reclaim"))
		rc = mode_reclaim(srv.port);
	else if (!strcmp(m, "badinv"))
		rc = mode_badinv(srv.port);
	else if (!strcmp(m, "scope"))
		rc = mode_scope(srv.port);
	else if (!strcmp(m, "dupxid"))
		rc = mode_dupxid(srv.port);
	else if (!strcmp(m, "wire"))
		rc = mode_wire(srv.port);
	else
		rc = 2;
	CHECK(tl_server_stop(&srv, 10000) == 0);
	if (rc == 77 && !failures)
		return 77;
	if (rc || failures) {
		fprintf(stderr, "%s: %d failures\n", m, failures);
		return 1;
	}
	printf("%s: ok\n", m);
	return 0;
}
