// SPDX-License-Identifier: MIT
/*
 * A shared receive queue (rpcrdma_srq_create), softiwarp provider, one
 * device over loopback: two connections A1-B1 and A2-B2, both B endpoints
 * created with the same SRQ holding three receives (wr_id 10, 11, 12):
 *   - an endpoint with an SRQ refuses receives of its own (-EINVAL); the
 *     SRQ refuses a fourth receive (-ENOMEM), a resize below what is
 *     posted (-EBUSY) and being destroyed while endpoints use it (-EBUSY);
 *   - a Send on A1 then one on A2 consume the SRQ's receives, the one
 *     posted last first (12, then 11), each completion naming its own
 *     endpoint, with the bytes that crossed (checksums);
 *   - a third Send (on A1) takes the last receive (10); a fourth (on A2)
 *     finds the queue empty: B2's connection ends with the RFC 5041 §7
 *     "no buffer" Terminate, B1's stays up and a receive posted to the
 *     SRQ afterwards serves A1's next Send;
 *   - after the endpoints are gone the SRQ is destroyed (0), its unused
 *     receive dropped without a completion.
 * Exit 0 pass, 1 fail.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpcrdma/provider.h"

#include "lib/check.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #c);    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define NB 16

static struct rpcrdma_dev *dev;
static struct rpcrdma_pd *pd;
static struct rpcrdma_cq *cqa, *cqb;
static struct rpcrdma_evch *evch;
static struct rpcrdma_srq *srq;
static struct rpcrdma_ep *a[2], *b[2];
static struct rpcrdma_mr *mra, *mrb;
static uint8_t bufa[4][512], bufb[NB][512];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static struct rpcrdma_ep *new_ep(struct rpcrdma_cq *cq, bool shared)
{
	struct rpcrdma_ep_attr ea = {0};
	struct rpcrdma_ep *ep;

	ea.send_cq = cq;
	ea.recv_cq = cq;
	ea.evch = evch;
	if (shared) {
		ea.comp_mask = RPCRDMA_EP_ATTR_SRQ;
		ea.srq = srq;
	}
	REQUIRE(rpcrdma_ep_create(pd, &ea, &ep) == 0);
	return ep;
}

static int srq_post(uint64_t wr_id)
{
	struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufb[wr_id % NB], 512, rpcrdma_mr_stag(mrb)};

	return rpcrdma_post_srq_recv(srq, wr_id, &sg, 1);
}

static void setup(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_storage la;
	struct rpcrdma_listener *l;
	struct rpcrdma_cq_attr ca = {.cqe = 64};
	struct rpcrdma_srq_attr sa = {.max_wr = 3, .max_sge = 1};
	struct rpcrdma_event ev;
	int up = 0, nb = 0;
	uint64_t end;

	REQUIRE(rpcrdma_dev_open("softiwarp", NULL, &dev) == 0);
	REQUIRE(rpcrdma_pd_alloc(dev, &pd) == 0);
	REQUIRE(rpcrdma_cq_create(dev, &ca, &cqa) == 0);
	REQUIRE(rpcrdma_cq_create(dev, &ca, &cqb) == 0);
	REQUIRE(rpcrdma_evch_create(dev, NULL, &evch) == 0);
	REQUIRE(rpcrdma_srq_create(pd, &sa, &srq) == 0);
	REQUIRE(rpcrdma_mr_reg(pd, bufa, sizeof(bufa), RPCRDMA_ACCESS_LOCAL_WRITE, &mra) == 0);
	REQUIRE(rpcrdma_mr_reg(pd, bufb, sizeof(bufb), RPCRDMA_ACCESS_LOCAL_WRITE, &mrb) == 0);
	for (uint64_t i = 10; i < 13; i++)
		CHECK(srq_post(i) == 0);
	CHECK(srq_post(13) == -ENOMEM);
	CHECK(rpcrdma_srq_resize(srq, 2) == -EBUSY);
	CHECK(rpcrdma_srq_resize(srq, 3) == 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQUIRE(rpcrdma_listen(dev, evch, (struct sockaddr *)&sin, sizeof(sin), 4, NULL, &l) == 0);
	REQUIRE(rpcrdma_listener_addr(l, &la) == 0);
	for (int i = 0; i < 2; i++) {
		a[i] = new_ep(cqa, false);
		REQUIRE(rpcrdma_connect(a[i], (struct sockaddr *)&la, sizeof(struct sockaddr_in),
					NULL, 0) == 0);
		end = now_ms() + 5000;
		/* one connection at a time: b[i] is A(i)'s peer */
		while (up < 2 * (i + 1) && now_ms() < end) {
			(void)rpcrdma_dev_progress(dev, 10);
			while (rpcrdma_evch_get(evch, &ev) == 0) {
				if (ev.type == RPCRDMA_EV_CONNECT_REQUEST) {
					struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufb[0], 16,
								 rpcrdma_mr_stag(mrb)};

					b[nb] = new_ep(cqb, true);
					CHECK(rpcrdma_post_recv(b[nb], 1, &sg, 1) == -EINVAL);
					REQUIRE(rpcrdma_accept(ev.req, b[nb], NULL, 0) == 0);
					nb++;
				} else if (ev.type == RPCRDMA_EV_ESTABLISHED) {
					up++;
				} else {
					fprintf(stderr, "unexpected event %d (status %d)\n",
						(int)ev.type, ev.status);
					exit(1);
				}
			}
		}
		REQUIRE(up == 2 * (i + 1));
	}
	REQUIRE(rpcrdma_listener_destroy(l) == 0);
	CHECK(rpcrdma_srq_destroy(srq) == -EBUSY);
}

static bool wait_wc(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		if (rpcrdma_cq_poll(cq, wc, 1) == 1)
			return true;
		(void)rpcrdma_dev_progress(dev, 5);
	}
	return false;
}

/* A Send of @len pattern bytes from A(@i); returns their checksum. */
static uint64_t send_from(int i, uint32_t len, uint8_t seed)
{
	struct rpcrdma_sge ss = {(uint64_t)(uintptr_t)bufa[i], len, rpcrdma_mr_stag(mra)};
	struct rpcrdma_send_wr snd = {
	    .wr_id = 100u + seed, .opcode = RPCRDMA_WR_SEND, .sg = &ss, .num_sge = 1};

	for (uint32_t k = 0; k < len; k++)
		bufa[i][k] = (uint8_t)(seed * 31u + k * 7u);
	CHECK(rpcrdma_post_send(a[i], &snd) == 0);
	return hash(bufa[i], len);
}

/* The Send from A(@i) lands in SRQ receive @wr_id on B(@i). */
static void expect_recv(int i, uint64_t wr_id, uint32_t len, uint64_t h)
{
	struct rpcrdma_wc wc;
	bool got = wait_wc(cqb, &wc, 3000);

	CHECK(got && wc.status == RPCRDMA_WC_SUCCESS && wc.opcode == RPCRDMA_WC_RECV);
	if (!got)
		return;
	CHECK(wc.wr_id == wr_id);
	CHECK(wc.ep == b[i]);
	CHECK(wc.byte_len == len);
	CHECK(hash(bufb[wc.wr_id % NB], len) == h);
}

int main(void)
{
	struct rpcrdma_ep_stats st;
	struct rpcrdma_event ev;
	struct rpcrdma_wc wc;
	bool term = false, down = false;
	uint64_t h, end;

	setup();
	h = send_from(0, 300, 1);
	expect_recv(0, 12, 300, h);
	h = send_from(1, 200, 2);
	expect_recv(1, 11, 200, h);
	h = send_from(0, 64, 3);
	expect_recv(0, 10, 64, h);
	/* the queue is empty: A2's Send has no receive at B2 */
	(void)send_from(1, 50, 4);
	end = now_ms() + 3000;
	while (!(term && down) && now_ms() < end) {
		(void)rpcrdma_dev_progress(dev, 5);
		while (rpcrdma_evch_get(evch, &ev) == 0) {
			if (ev.ep == b[1] && ev.type == RPCRDMA_EV_TERMINATE && ev.term_local)
				term = true; /* DDP untagged, "no buffer" (RFC 5041 §7) */
			if (ev.ep == b[1] && ev.type == RPCRDMA_EV_DISCONNECTED)
				down = true;
			CHECK(ev.ep != b[0] && ev.ep != a[0]);
		}
	}
	CHECK(term && down);
	CHECK(rpcrdma_ep_query_stats(b[1], &st) == 0 && st.terminates_tx == 1);
	CHECK(!wait_wc(cqb, &wc, 50)); /* nothing was taken for the refused Send */
	/* B1 goes on with a receive posted afterwards */
	CHECK(srq_post(5) == 0);
	h = send_from(0, 480, 5);
	expect_recv(0, 5, 480, h);
	CHECK(rpcrdma_ep_query_stats(b[0], &st) == 0 && st.terminates_tx == 0 && st.recvs == 3);
	CHECK(srq_post(6) == 0); /* left posted: dropped by the destroy */
	for (int i = 0; i < 2; i++) {
		rpcrdma_ep_destroy(a[i]);
		rpcrdma_ep_destroy(b[i]);
	}
	while (rpcrdma_cq_poll(cqb, &wc, 1) == 1)
		CHECK(wc.wr_id != 6); /* the SRQ's receive is not the endpoints' */
	CHECK(rpcrdma_srq_destroy(srq) == 0);
	rpcrdma_mr_dereg(mra);
	rpcrdma_mr_dereg(mrb);
	rpcrdma_cq_destroy(cqa);
	rpcrdma_cq_destroy(cqb);
	rpcrdma_evch_destroy(evch);
	rpcrdma_pd_free(pd);
	rpcrdma_dev_close(dev);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
