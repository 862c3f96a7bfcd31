// SPDX-License-Identifier: MIT
/*
 * A Read Request toward a peer that advertised IRD 0 (RFC 6581 §9: the
 * effective ORD is min(our ORD, the peer's IRD) = 0), softiwarp provider,
 * two endpoints of one device over loopback (A connects with IRD 4 / ORD 4,
 * B accepts with IRD 0 / ORD 4, as Linux svcrdma answers a client):
 *   - rpcrdma_ep_query_conn() on A reports ORD 0;
 *   - a Read that A posts can never be issued: it completes with
 *     RPCRDMA_WC_LOC_QP_OP_ERR (within 2 s) instead of holding A's send
 *     queue forever; nothing reaches B (no Terminate, no Read served);
 *   - a Send posted after it completes SUCCESS and B receives its bytes,
 *     and the connection stays up (a second Read fails the same way, a
 *     second Send arrives too).
 * Exit 0 pass, 1 fail.
 */
#include <arpa/inet.h>
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

static struct rpcrdma_dev *dev;
static struct rpcrdma_pd *pd;
static struct rpcrdma_cq *cqa, *cqb;
static struct rpcrdma_evch *evch;
static struct rpcrdma_ep *epa, *epb;
static struct rpcrdma_mr *mra, *mrb;
static uint8_t bufa[4][256], bufb[4][256];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct rpcrdma_ep *new_ep(struct rpcrdma_cq *cq, uint32_t ird, uint32_t ord)
{
	struct rpcrdma_ep_attr ea = {0};
	struct rpcrdma_ep *ep;

	ea.comp_mask = RPCRDMA_EP_ATTR_IRD_ORD;
	ea.send_cq = cq;
	ea.recv_cq = cq;
	ea.evch = evch;
	ea.ird = ird;
	ea.ord = ord;
	REQUIRE(rpcrdma_ep_create(pd, &ea, &ep) == 0);
	return ep;
}

static void setup(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_storage la;
	struct rpcrdma_listener *l;
	struct rpcrdma_cq_attr ca = {.cqe = 64};
	struct rpcrdma_event ev;
	int up = 0;
	uint64_t end;

	REQUIRE(rpcrdma_dev_open("softiwarp", NULL, &dev) == 0);
	REQUIRE(rpcrdma_pd_alloc(dev, &pd) == 0);
	REQUIRE(rpcrdma_cq_create(dev, &ca, &cqa) == 0);
	REQUIRE(rpcrdma_cq_create(dev, &ca, &cqb) == 0);
	REQUIRE(rpcrdma_evch_create(dev, NULL, &evch) == 0);
	REQUIRE(rpcrdma_mr_reg(pd, bufa, sizeof(bufa), RPCRDMA_ACCESS_LOCAL_WRITE, &mra) == 0);
	REQUIRE(rpcrdma_mr_reg(pd, bufb, sizeof(bufb),
			       RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_READ, &mrb) == 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQUIRE(rpcrdma_listen(dev, evch, (struct sockaddr *)&sin, sizeof(sin), 4, NULL, &l) == 0);
	REQUIRE(rpcrdma_listener_addr(l, &la) == 0);
	epa = new_ep(cqa, 4, 4);
	REQUIRE(rpcrdma_connect(epa, (struct sockaddr *)&la, sizeof(struct sockaddr_in), NULL, 0) ==
		0);
	end = now_ms() + 5000;
	while (up < 2 && now_ms() < end) {
		(void)rpcrdma_dev_progress(dev, 10);
		while (rpcrdma_evch_get(evch, &ev) == 0) {
			if (ev.type == RPCRDMA_EV_CONNECT_REQUEST) {
				epb = new_ep(cqb, 0, 4);
				for (uint32_t i = 0; i < 2; i++) {
					struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufb[i], 256,
								 rpcrdma_mr_stag(mrb)};

					REQUIRE(rpcrdma_post_recv(epb, i, &sg, 1) == 0);
				}
				REQUIRE(rpcrdma_accept(ev.req, epb, NULL, 0) == 0);
			} else if (ev.type == RPCRDMA_EV_ESTABLISHED) {
				up++;
			} else {
				fprintf(stderr, "unexpected event %d (status %d)\n", (int)ev.type,
					ev.status);
				exit(1);
			}
		}
	}
	REQUIRE(up == 2);
	REQUIRE(rpcrdma_listener_destroy(l) == 0);
}

/* Wait up to @ms for one completion on @cq. */
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

static void read_then_send(uint32_t round)
{
	struct rpcrdma_sge rs = {(uint64_t)(uintptr_t)bufa[0], 64, rpcrdma_mr_stag(mra)};
	struct rpcrdma_send_wr rd = {.wr_id = 10 + round,
				     .opcode = RPCRDMA_WR_RDMA_READ,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &rs,
				     .num_sge = 1,
				     .remote_offset = (uint64_t)(uintptr_t)bufb[3],
				     .remote_stag = rpcrdma_mr_stag(mrb)};
	struct rpcrdma_sge ss = {(uint64_t)(uintptr_t)bufa[1], 100, rpcrdma_mr_stag(mra)};
	struct rpcrdma_send_wr snd = {.wr_id = 20 + round,
				      .opcode = RPCRDMA_WR_SEND,
				      .flags = RPCRDMA_SEND_SIGNALED,
				      .sg = &ss,
				      .num_sge = 1};
	struct rpcrdma_wc wc;
	bool got;

	memset(bufa[1], 0x5a + (int)round, 100);
	CHECK(rpcrdma_post_send(epa, &rd) == 0);
	CHECK(rpcrdma_post_send(epa, &snd) == 0);
	got = wait_wc(cqa, &wc, 2000);
	if (!got)
		fprintf(stderr, "RFC 6581 §9: a Read toward IRD 0 never completed (round %u)\n",
			round);
	CHECK(got && wc.wr_id == 10 + round && wc.status == RPCRDMA_WC_LOC_QP_OP_ERR);
	got = wait_wc(cqa, &wc, 2000);
	CHECK(got && wc.wr_id == 20 + round && wc.status == RPCRDMA_WC_SUCCESS);
	got = wait_wc(cqb, &wc, 2000);
	CHECK(got && wc.opcode == RPCRDMA_WC_RECV && wc.status == RPCRDMA_WC_SUCCESS &&
	      wc.byte_len == 100);
	if (got)
		CHECK(bufb[wc.wr_id][0] == 0x5a + round && bufb[wc.wr_id][99] == 0x5a + round);
}

int main(void)
{
	struct rpcrdma_ep_conn_info ci;
	struct rpcrdma_ep_stats st;
	struct rpcrdma_event ev;

	setup();
	CHECK(rpcrdma_ep_query_conn(epa, &ci) == 0 && ci.ord == 0);
	read_then_send(0);
	read_then_send(1);
	CHECK(rpcrdma_ep_query_stats(epb, &st) == 0 && st.reads_in == 0 && st.terminates_rx == 0);
	CHECK(rpcrdma_ep_query_stats(epa, &st) == 0 && st.reads_out == 0 && st.terminates_tx == 0);
	CHECK(rpcrdma_evch_get(evch, &ev) != 0); /* still connected: no event */
	rpcrdma_ep_destroy(epa);
	rpcrdma_ep_destroy(epb);
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
