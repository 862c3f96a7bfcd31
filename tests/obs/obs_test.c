// SPDX-License-Identifier: MIT
/* Shared pieces of the observability tests (obs_test.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "obs/obs_test.h"

int obs_failures;

int obs_xdr_opaque(void *xdrs, struct obs_opaque *o)
{
	return xdr_bytes((XDR *)xdrs, &o->val, &o->len, 1u << 20);
}

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct obs_opaque o = {0};

	(void)args;
	(void)ctx;
	if (proc == 0) {
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	}
	if (proc == OBS_SLOW) {
		u_int ms = 0;

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &ms) || ms > 2000) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		usleep(ms * 1000u);
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	}
	if (proc == OBS_READ) {
		u_int len = 0;
		rpcrdma_bulk b = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &len) || len > (1u << 20)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		b.base = malloc(len ? len : 1);
		b.len = len;
		if (b.base)
			memset(b.base, 0x5a, len);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
		free(b.base);
		return;
	}
	if (proc != OBS_ECHO) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_svc_getargs(req, (xdrproc_t)obs_xdr_opaque, &o)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	rpcrdma_svc_reply(req, (xdrproc_t)obs_xdr_opaque, &o);
	xdr_free((xdrproc_t)obs_xdr_opaque, (char *)&o);
}

int obs_server(const struct rpcrdma_svc_opts *opts, struct rpcrdma_svc **out)
{
	struct rpcrdma_svc *s;
	int rc = rpcrdma_svc_create_any("127.0.0.1", opts, &s);

	if (rc)
		return rc;
	rc = rpcrdma_svc_register(s, OBS_PROG, OBS_VERS, dispatch, NULL);
	if (!rc)
		rc = rpcrdma_svc_start(s);
	if (rc) {
		rpcrdma_svc_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int obs_raw_connect(struct obs_raw *r, uint16_t port)
{
	struct rpcrdma_cq_attr ca = {.cqe = 16};
	struct rpcrdma_ep_attr ea = {0};
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct rpcrdma_sge s;
	struct rpcrdma_event ev;
	uint64_t end = ms_now() + 5000;

	if (rpcrdma_dev_open(NULL, NULL, &r->dev) || rpcrdma_pd_alloc(r->dev, &r->pd) ||
	    rpcrdma_cq_create(r->dev, &ca, &r->cq) || rpcrdma_evch_create(r->dev, NULL, &r->ch) ||
	    rpcrdma_mr_reg(r->pd, r->buf, sizeof(r->buf), RPCRDMA_ACCESS_LOCAL_WRITE, &r->mr))
		return -1;
	ea.send_cq = ea.recv_cq = r->cq;
	ea.evch = r->ch;
	if (rpcrdma_ep_create(r->pd, &ea, &r->ep))
		return -1;
	s = (struct rpcrdma_sge){(uint64_t)(uintptr_t)r->buf[0], 1024, rpcrdma_mr_stag(r->mr)};
	if (rpcrdma_post_recv(r->ep, 0, &s, 1) ||
	    rpcrdma_connect(r->ep, (struct sockaddr *)&sin, sizeof(sin), NULL, 0))
		return -1;
	while (ms_now() < end) {
		if (rpcrdma_evch_get(r->ch, &ev) == 0)
			return ev.type == RPCRDMA_EV_ESTABLISHED ? 0 : -1;
		rpcrdma_dev_progress(r->dev, 20);
	}
	return -1;
}

void obs_raw_close(struct obs_raw *r)
{
	if (r->ep)
		rpcrdma_ep_destroy(r->ep);
	if (r->mr)
		rpcrdma_mr_dereg(r->mr);
	if (r->ch)
		rpcrdma_evch_destroy(r->ch);
	if (r->cq)
		rpcrdma_cq_destroy(r->cq);
	if (r->pd)
		rpcrdma_pd_free(r->pd);
	if (r->dev)
		rpcrdma_dev_close(r->dev);
}

/* Send @n words, then wait for the answer (the Send's completion and the
 * Receive's, in any order). */
int obs_raw_send_recv(struct obs_raw *r, const uint32_t *words, size_t n, uint32_t *ans, size_t max)
{
	struct rpcrdma_sge s = {(uint64_t)(uintptr_t)r->buf[1], (uint32_t)(4 * n),
				rpcrdma_mr_stag(r->mr)};
	struct rpcrdma_send_wr wr = {
	    .wr_id = 1, .opcode = RPCRDMA_WR_SEND, .sg = &s, .num_sge = 1, .flags = 0};
	struct rpcrdma_wc wc;
	uint64_t end = ms_now() + 3000;

	for (size_t i = 0; i < n; i++) {
		uint32_t v = htonl(words[i]);

		memcpy(r->buf[1] + 4 * i, &v, 4);
	}
	if (rpcrdma_post_send(r->ep, &wr))
		return -1;
	while (ms_now() < end) {
		if (rpcrdma_cq_poll(r->cq, &wc, 1) == 1) {
			if (wc.opcode != RPCRDMA_WC_RECV || wc.status != RPCRDMA_WC_SUCCESS)
				return -1;
			size_t k = wc.byte_len / 4;

			for (size_t i = 0; i < k && i < max; i++) {
				uint32_t v;

				memcpy(&v, r->buf[0] + 4 * i, 4);
				ans[i] = ntohl(v);
			}
			return (int)k;
		}
		rpcrdma_dev_progress(r->dev, 5);
	}
	return -1;
}

int obs_raw_exchange(uint16_t port, const uint32_t *words, size_t n, uint32_t *ans, size_t max)
{
	struct obs_raw r;
	int k = -1;

	memset(&r, 0, sizeof(r));
	if (obs_raw_connect(&r, port) == 0)
		k = obs_raw_send_recv(&r, words, n, ans, max);
	obs_raw_close(&r);
	return k;
}
