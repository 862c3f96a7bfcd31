// SPDX-License-Identifier: MIT
/*
 * RPCRDMA_SEND_DEFER and rpcrdma_ep_flush() (include/rpcrdma/provider.h) on
 * the softiwarp provider, two endpoints of one device over loopback:
 *   - Sends posted with DEFER are held: nothing reaches TCP (the endpoint's
 *     tx counters stay put) and nothing completes until the doorbell;
 *   - rpcrdma_ep_flush() hands all of them to TCP at once;
 *   - a post without DEFER takes the held ones along, in posting order;
 *   - rpcrdma_dev_progress() pushes held work before it waits;
 *   - the peer receives every message, in order, byte for byte;
 *   - rpcrdma_post_send_recv() posts its receives before its Send (the peer's
 *     answers land in them, in order), stops at a bad receive without
 *     sending, and posts receives alone when given no Send.
 * Exit 0 pass, 1 fail.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/check.h"
#include "rpcrdma/provider.h"

#define NMSG   16
#define MSGLEN 200

/* Each macro evaluates @cond exactly once (it may post or connect). */
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!check_msg_(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__))                 \
			exit(1);                                                                   \
	} while (0)

static struct rpcrdma_dev *dev;
static struct rpcrdma_pd *pd;
static struct rpcrdma_cq *cqa, *cqb;
static struct rpcrdma_evch *evch;
static struct rpcrdma_ep *epa, *epb;
static struct rpcrdma_mr *mra, *mrb;
static uint8_t bufa[NMSG][MSGLEN], bufb[NMSG][MSGLEN];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct rpcrdma_ep_stats stats(struct rpcrdma_ep *ep)
{
	struct rpcrdma_ep_stats st;

	REQUIRE(rpcrdma_ep_query_stats(ep, &st) == 0, "query stats");
	return st;
}

static struct rpcrdma_ep *new_ep(struct rpcrdma_cq *cq)
{
	struct rpcrdma_ep_attr ea = {0};
	struct rpcrdma_ep *ep;

	ea.comp_mask = RPCRDMA_EP_ATTR_CAPS | RPCRDMA_EP_ATTR_CRC;
	ea.send_cq = cq;
	ea.recv_cq = cq;
	ea.evch = evch;
	ea.max_send_wr = 64;
	ea.max_recv_wr = 64;
	ea.max_send_sge = 1;
	ea.max_recv_sge = 1;
	ea.mpa_crc = false;
	REQUIRE(rpcrdma_ep_create(pd, &ea, &ep) == 0, "ep_create");
	return ep;
}

/* Both ends up: connect A to a listener, accept into B. */
static void setup(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_storage la;
	struct rpcrdma_listener *l;
	struct rpcrdma_cq_attr ca = {.cqe = 256};
	struct rpcrdma_event ev;
	int up = 0;
	uint64_t end;

	REQUIRE(rpcrdma_dev_open("softiwarp", NULL, &dev) == 0, "dev_open");
	REQUIRE(rpcrdma_pd_alloc(dev, &pd) == 0, "pd_alloc");
	REQUIRE(rpcrdma_cq_create(dev, &ca, &cqa) == 0, "cq a");
	REQUIRE(rpcrdma_cq_create(dev, &ca, &cqb) == 0, "cq b");
	REQUIRE(rpcrdma_evch_create(dev, NULL, &evch) == 0, "evch");
	REQUIRE(rpcrdma_mr_reg(pd, bufa, sizeof(bufa), RPCRDMA_ACCESS_LOCAL_WRITE, &mra) == 0,
		"mr a");
	REQUIRE(rpcrdma_mr_reg(pd, bufb, sizeof(bufb), RPCRDMA_ACCESS_LOCAL_WRITE, &mrb) == 0,
		"mr b");
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQUIRE(rpcrdma_listen(dev, evch, (struct sockaddr *)&sin, sizeof(sin), 4, NULL, &l) == 0,
		"listen");
	REQUIRE(rpcrdma_listener_addr(l, &la) == 0, "listener addr");
	epa = new_ep(cqa);
	REQUIRE(rpcrdma_connect(epa, (struct sockaddr *)&la, sizeof(struct sockaddr_in), NULL, 0) ==
		    0,
		"connect");
	end = now_ms() + 5000;
	while (up < 2 && now_ms() < end) {
		(void)rpcrdma_dev_progress(dev, 10);
		while (rpcrdma_evch_get(evch, &ev) == 0) {
			if (ev.type == RPCRDMA_EV_CONNECT_REQUEST) {
				epb = new_ep(cqb);
				for (uint32_t i = 0; i < NMSG; i++) {
					struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufb[i],
								 MSGLEN, rpcrdma_mr_stag(mrb)};

					REQUIRE(rpcrdma_post_recv(epb, i, &sg, 1) == 0,
						"post_recv");
				}
				REQUIRE(rpcrdma_accept(ev.req, epb, NULL, 0) == 0, "accept");
			} else if (ev.type == RPCRDMA_EV_ESTABLISHED) {
				up++;
			} else {
				REQUIRE(0, "unexpected event %d (status %d)", (int)ev.type,
					ev.status);
			}
		}
	}
	REQUIRE(up == 2, "both ends established within 5 s (%d)", up);
	REQUIRE(rpcrdma_listener_destroy(l) == 0, "listener destroy");
}

/* Post message @i from A (the pattern names the message). */
static void post(uint32_t i, uint32_t flags)
{
	struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufa[i], MSGLEN, rpcrdma_mr_stag(mra)};
	struct rpcrdma_send_wr wr = {
	    .wr_id = i,
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = RPCRDMA_SEND_SIGNALED | flags,
	    .sg = &sg,
	    .num_sge = 1,
	};

	for (uint32_t k = 0; k < MSGLEN; k++)
		bufa[i][k] = (uint8_t)(i * 31u + k * 7u + 1u);
	REQUIRE(rpcrdma_post_send(epa, &wr) == 0, "post_send %u", i);
}

/* Drive the device until B has received messages first..last in order and
 * A's Sends completed; check every byte. */
static void expect_received(uint32_t first, uint32_t last)
{
	uint32_t next_rx = first, next_tx = first;
	uint64_t end = now_ms() + 5000;
	struct rpcrdma_wc wc[16];

	while ((next_rx <= last || next_tx <= last) && now_ms() < end) {
		int n;

		(void)rpcrdma_dev_progress(dev, 1);
		n = rpcrdma_cq_poll(cqb, wc, 16);
		for (int i = 0; i < n; i++) {
			CHECK_MSG(wc[i].status == RPCRDMA_WC_SUCCESS &&
				      wc[i].opcode == RPCRDMA_WC_RECV,
				  "recv status %d opcode %d", (int)wc[i].status, (int)wc[i].opcode);
			CHECK_MSG(wc[i].wr_id == next_rx, "receive %u completed as #%u (order)",
				  (unsigned)wc[i].wr_id, next_rx);
			CHECK_MSG(wc[i].byte_len == MSGLEN, "length %u", wc[i].byte_len);
			CHECK_MSG(memcmp(bufb[wc[i].wr_id], bufa[wc[i].wr_id], MSGLEN) == 0,
				  "payload of message %u differs", (unsigned)wc[i].wr_id);
			next_rx++;
		}
		n = rpcrdma_cq_poll(cqa, wc, 16);
		for (int i = 0; i < n; i++) {
			CHECK_MSG(wc[i].status == RPCRDMA_WC_SUCCESS &&
				      wc[i].opcode == RPCRDMA_WC_SEND,
				  "send status %d", (int)wc[i].status);
			CHECK_MSG(wc[i].wr_id == next_tx, "send %u completed as #%u (order)",
				  (unsigned)wc[i].wr_id, next_tx);
			next_tx++;
		}
	}
	REQUIRE(next_rx == last + 1 && next_tx == last + 1,
		"messages %u..%u: received up to %u, sends completed up to %u", first, last,
		next_rx, next_tx);
	/* the receive buffers are used once each: re-post the ones we used */
	for (uint32_t i = first; i <= last; i++) {
		struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufb[i], MSGLEN,
					 rpcrdma_mr_stag(mrb)};

		REQUIRE(rpcrdma_post_recv(epb, i, &sg, 1) == 0, "re-post recv");
	}
}

/* Send message @i from B to A (B's buffer @i, a pattern of its own). */
static void post_b(uint32_t i)
{
	struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufb[i], MSGLEN, rpcrdma_mr_stag(mrb)};
	struct rpcrdma_send_wr wr = {
	    .wr_id = 100 + i,
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = RPCRDMA_SEND_SIGNALED,
	    .sg = &sg,
	    .num_sge = 1,
	};

	for (uint32_t k = 0; k < MSGLEN; k++)
		bufb[i][k] = (uint8_t)(i * 13u + k * 5u + 3u);
	REQUIRE(rpcrdma_post_send(epb, &wr) == 0, "post_send from B %u", i);
}

/* rpcrdma_post_send_recv(): A posts receives for A's buffers 12..13 together
 * with message 11 to B; B answers twice into them. */
static void send_recv(void)
{
	struct rpcrdma_sge rs[3] = {
	    {(uint64_t)(uintptr_t)bufa[12], MSGLEN, rpcrdma_mr_stag(mra)},
	    {(uint64_t)(uintptr_t)bufa[13], MSGLEN, rpcrdma_mr_stag(mra)},
	    {(uint64_t)(uintptr_t)bufa[14], MSGLEN, rpcrdma_mr_stag(mra)},
	};
	struct rpcrdma_recv_wr rw[2] = {{12, &rs[0], 1}, {13, &rs[1], 1}};
	struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufa[11], MSGLEN, rpcrdma_mr_stag(mra)};
	struct rpcrdma_send_wr wr = {.wr_id = 11,
				     .opcode = RPCRDMA_WR_SEND,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &sg,
				     .num_sge = 1};
	struct rpcrdma_ep_stats s0, s1;
	struct rpcrdma_wc wc[8];
	uint32_t next_rx = 12, sends_b = 0;
	unsigned int np = 99;
	uint64_t end;

	for (uint32_t k = 0; k < MSGLEN; k++)
		bufa[11][k] = (uint8_t)(11u * 31u + k * 7u + 1u);
	CHECK_MSG(rpcrdma_post_send_recv(epa, &wr, rw, 2, &np) == 0 && np == 2,
		  "send with 2 receives: %u posted", np);
	expect_received(11, 11);
	post_b(12);
	post_b(13);
	end = now_ms() + 5000;
	while ((next_rx < 14 || sends_b < 2) && now_ms() < end) {
		int n;

		(void)rpcrdma_dev_progress(dev, 1);
		n = rpcrdma_cq_poll(cqa, wc, 8);
		for (int i = 0; i < n; i++) {
			CHECK_MSG(wc[i].status == RPCRDMA_WC_SUCCESS &&
				      wc[i].opcode == RPCRDMA_WC_RECV,
				  "A: status %d opcode %d", (int)wc[i].status, (int)wc[i].opcode);
			CHECK_MSG(wc[i].wr_id == next_rx, "A: receive %u completed as #%u (order)",
				  (unsigned)wc[i].wr_id, next_rx);
			CHECK_MSG(wc[i].byte_len == MSGLEN &&
				      memcmp(bufa[next_rx], bufb[next_rx], MSGLEN) == 0,
				  "A: message %u arrived wrong (%u bytes)", next_rx,
				  wc[i].byte_len);
			next_rx++;
		}
		n = rpcrdma_cq_poll(cqb, wc, 8);
		for (int i = 0; i < n; i++) {
			CHECK_MSG(wc[i].status == RPCRDMA_WC_SUCCESS &&
				      wc[i].opcode == RPCRDMA_WC_SEND,
				  "B: send status %d", (int)wc[i].status);
			sends_b++;
		}
	}
	REQUIRE(next_rx == 14 && sends_b == 2, "B's answers: %u received by A, %u sent",
		next_rx - 12, sends_b);

	/* a bad receive (2 SGEs, max_recv_sge 1) stops the post: the one
	 * before it is posted, the Send is not */
	{
		struct rpcrdma_recv_wr bad[2] = {{14, &rs[2], 1}, {15, rs, 2}};

		s0 = stats(epa);
		np = 99;
		CHECK_MSG(rpcrdma_post_send_recv(epa, &wr, bad, 2, &np) == -EINVAL && np == 1,
			  "bad second receive: %u posted", np);
		s1 = stats(epa);
		CHECK_MSG(s1.tx_fpdus == s0.tx_fpdus, "the Send left after a bad receive");
		CHECK_MSG(rpcrdma_cq_poll(cqa, wc, 8) == 0, "a completion after the refused post");
	}
	/* receives alone (no Send): the receive of 14 above, then 15 */
	{
		struct rpcrdma_sge s15 = {(uint64_t)(uintptr_t)bufa[15], MSGLEN,
					  rpcrdma_mr_stag(mra)};
		struct rpcrdma_recv_wr r15 = {15, &s15, 1};

		np = 99;
		CHECK_MSG(rpcrdma_post_send_recv(epa, NULL, &r15, 1, &np) == 0 && np == 1,
			  "receives only: %u posted", np);
		CHECK_MSG(rpcrdma_post_send_recv(NULL, NULL, &r15, 1, &np) == -EINVAL && np == 0,
			  "NULL endpoint accepted");
		post_b(14);
		post_b(15);
		next_rx = 14;
		sends_b = 0;
		end = now_ms() + 5000;
		while ((next_rx < 16 || sends_b < 2) && now_ms() < end) {
			int n;

			(void)rpcrdma_dev_progress(dev, 1);
			n = rpcrdma_cq_poll(cqa, wc, 8);
			for (int i = 0; i < n; i++) {
				CHECK_MSG(wc[i].status == RPCRDMA_WC_SUCCESS &&
					      wc[i].wr_id == next_rx &&
					      memcmp(bufa[next_rx], bufb[next_rx], MSGLEN) == 0,
					  "A: receive %u: status %d wr_id %u", next_rx,
					  (int)wc[i].status, (unsigned)wc[i].wr_id);
				next_rx++;
			}
			sends_b += (uint32_t)rpcrdma_cq_poll(cqb, wc, 8);
		}
		REQUIRE(next_rx == 16 && sends_b == 2,
			"answers into receives posted alone: %u received, %u sent", next_rx - 14,
			sends_b);
	}
}

int main(void)
{
	struct rpcrdma_ep_stats s0, s1;
	struct rpcrdma_wc wc[4];

	setup();

	/* 1. held: five DEFER Sends leave no byte and no completion */
	s0 = stats(epa);
	for (uint32_t i = 0; i < 5; i++)
		post(i, RPCRDMA_SEND_DEFER);
	s1 = stats(epa);
	CHECK_MSG(s1.tx_bytes == s0.tx_bytes && s1.tx_fpdus == s0.tx_fpdus,
		  "DEFER Sends went to TCP before the doorbell (%llu bytes, %llu FPDUs)",
		  (unsigned long long)(s1.tx_bytes - s0.tx_bytes),
		  (unsigned long long)(s1.tx_fpdus - s0.tx_fpdus));
	CHECK_MSG(rpcrdma_cq_poll(cqa, wc, 4) == 0, "a held Send completed");

	/* 2. the doorbell: all five handed to TCP by the flush itself */
	CHECK_MSG(rpcrdma_ep_flush(epa) == 0, "flush");
	s1 = stats(epa);
	CHECK_MSG(s1.tx_fpdus - s0.tx_fpdus == 5 && s1.sends - s0.sends == 5,
		  "flush sent %llu FPDUs / %llu Sends, expected 5",
		  (unsigned long long)(s1.tx_fpdus - s0.tx_fpdus),
		  (unsigned long long)(s1.sends - s0.sends));
	CHECK_MSG(rpcrdma_ep_flush(epa) == 0, "flush with nothing held");
	expect_received(0, 4);

	/* 3. a plain post takes the held ones along, in posting order */
	s0 = stats(epa);
	for (uint32_t i = 5; i < 8; i++)
		post(i, RPCRDMA_SEND_DEFER);
	post(8, 0);
	s1 = stats(epa);
	CHECK_MSG(s1.tx_fpdus - s0.tx_fpdus == 4, "plain post after 3 held: %llu FPDUs sent, not 4",
		  (unsigned long long)(s1.tx_fpdus - s0.tx_fpdus));
	expect_received(5, 8);

	/* 4. progress pushes held work before it would wait */
	s0 = stats(epa);
	post(9, RPCRDMA_SEND_DEFER);
	post(10, RPCRDMA_SEND_DEFER);
	(void)rpcrdma_dev_progress(dev, 0);
	s1 = stats(epa);
	CHECK_MSG(s1.tx_fpdus - s0.tx_fpdus == 2, "progress pushed %llu held Sends, not 2",
		  (unsigned long long)(s1.tx_fpdus - s0.tx_fpdus));
	expect_received(9, 10);

	/* 5. an unknown flag is still refused */
	{
		struct rpcrdma_sge sg = {(uint64_t)(uintptr_t)bufa[0], 8, rpcrdma_mr_stag(mra)};
		struct rpcrdma_send_wr wr = {
		    .opcode = RPCRDMA_WR_SEND, .flags = 1u << 20, .sg = &sg, .num_sge = 1};

		CHECK_MSG(rpcrdma_post_send(epa, &wr) == -EINVAL, "unknown send flag accepted");
	}

	/* 6. receives and a Send in one post */
	send_recv();

	rpcrdma_ep_destroy(epa);
	rpcrdma_ep_destroy(epb);
	rpcrdma_mr_dereg(mra);
	rpcrdma_mr_dereg(mrb);
	rpcrdma_evch_destroy(evch);
	rpcrdma_cq_destroy(cqa);
	rpcrdma_cq_destroy(cqb);
	rpcrdma_pd_free(pd);
	CHECK_MSG(rpcrdma_dev_close(dev) == 0, "dev_close (everything released)");
	printf("test_xprt_defer: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
