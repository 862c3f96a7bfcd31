// SPDX-License-Identifier: MIT
/* A raw RPC-over-RDMA peer for the server's tests (raw_peer.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/be.h"
#include "xprt/raw_peer.h"

uint64_t raw_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int raw_open(struct raw *r, uint16_t port)
{
	struct rpcrdma_cq_attr ca = {.cqe = 64};
	struct rpcrdma_ep_attr ea = {0};
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct rpcrdma_event ev;
	uint64_t end;

	if (rpcrdma_dev_open(NULL, NULL, &r->dev) || rpcrdma_pd_alloc(r->dev, &r->pd) ||
	    rpcrdma_cq_create(r->dev, &ca, &r->cq) || rpcrdma_evch_create(r->dev, NULL, &r->ch) ||
	    rpcrdma_mr_reg(r->pd, &r->m, sizeof(r->m),
			   RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_READ, &r->mr))
		return -1;
	ea.send_cq = ea.recv_cq = r->cq;
	ea.evch = r->ch;
	ea.comp_mask = RPCRDMA_EP_ATTR_IRD_ORD;
	ea.ird = 4;
	if (rpcrdma_ep_create(r->pd, &ea, &r->ep))
		return -1;
	for (uint32_t i = 0; i < 8; i++) {
		struct rpcrdma_sge s = {(uint64_t)(uintptr_t)r->m.rbuf[i], 1024,
					rpcrdma_mr_stag(r->mr)};

		if (rpcrdma_post_recv(r->ep, i, &s, 1))
			return -1;
	}
	/* No private data: the server must assume 1024/1024 (RFC 8797 §4.1). */
	if (rpcrdma_connect(r->ep, (struct sockaddr *)&sin, sizeof(sin), NULL, 0))
		return -1;
	end = raw_ms_now() + 10000;
	while (raw_ms_now() < end) {
		if (rpcrdma_evch_get(r->ch, &ev) == 0)
			return ev.type == RPCRDMA_EV_ESTABLISHED ? 0 : -1;
		rpcrdma_dev_progress(r->dev, 20);
	}
	return -1;
}

void raw_close(struct raw *r)
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

int raw_send(struct raw *r, const uint32_t *words, size_t n)
{
	struct rpcrdma_sge s = {(uint64_t)(uintptr_t)r->m.sbuf, (uint32_t)(4 * n),
				rpcrdma_mr_stag(r->mr)};
	struct rpcrdma_send_wr wr = {.wr_id = 100,
				     .opcode = RPCRDMA_WR_SEND,
				     .sg = &s,
				     .num_sge = 1,
				     .flags = RPCRDMA_SEND_SIGNALED};
	struct rpcrdma_wc wc;
	uint64_t end = raw_ms_now() + 5000;

	if (n > sizeof(r->m.sbuf) / 4)
		return -1;
	for (size_t i = 0; i < n; i++)
		put_be32(r->m.sbuf + 4 * i, words[i]);
	if (rpcrdma_post_send(r->ep, &wr))
		return -1;
	while (raw_ms_now() < end) {
		if (rpcrdma_cq_poll(r->cq, &wc, 1) == 1) {
			if (wc.opcode == RPCRDMA_WC_SEND)
				return wc.status == RPCRDMA_WC_SUCCESS ? 0 : -1;
			return -1; /* a RECV first: not expected here */
		}
		rpcrdma_dev_progress(r->dev, 5);
	}
	return -1;
}

int raw_recv(struct raw *r, uint32_t *out, size_t max, int ms)
{
	struct rpcrdma_wc wc;
	uint64_t end = raw_ms_now() + (uint64_t)ms;

	while (raw_ms_now() < end) {
		if (rpcrdma_cq_poll(r->cq, &wc, 1) == 1) {
			if (wc.opcode != RPCRDMA_WC_RECV || wc.status != RPCRDMA_WC_SUCCESS)
				return -1;
			size_t n = wc.byte_len / 4;

			for (size_t i = 0; i < n && i < max; i++)
				out[i] = get_be32(r->m.rbuf[wc.wr_id] + 4 * i);
			struct rpcrdma_sge s = {(uint64_t)(uintptr_t)r->m.rbuf[wc.wr_id], 1024,
						rpcrdma_mr_stag(r->mr)};

			rpcrdma_post_recv(r->ep, wc.wr_id, &s, 1);
			return (int)n;
		}
		rpcrdma_dev_progress(r->dev, 5);
	}
	return -1;
}

int raw_send_recv(struct raw *r, const uint32_t *words, size_t n, uint32_t *out, size_t max)
{
	return raw_send(r, words, n) ? -1 : raw_recv(r, out, max, 3000);
}

int raw_exchange(uint16_t port, const uint32_t *words, size_t n, uint32_t *out, size_t max)
{
	struct raw *r = calloc(1, sizeof(*r));
	int k = -1;

	if (!r)
		return -1;
	if (raw_open(r, port) == 0)
		k = raw_send_recv(r, words, n, out, max);
	raw_close(r);
	free(r);
	return k;
}
