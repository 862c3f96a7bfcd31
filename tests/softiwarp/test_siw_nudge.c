/* SPDX-License-Identifier: MIT */
/*
 * The first-frame nudge between two provider processes (src/softiwarp/cm.c:
 * the active side sends a zero-length RDMA Write when nothing arrived for
 * 20 ms after its first frame, and again with the delay doubled while
 * nothing arrives, at most 6 in all; Linux 6.1 siw can leave that frame
 * unread otherwise). The child connects and sends one 64-byte Send right
 * after ESTABLISHED; the parent (passive) receives it and stays silent for
 * 250 ms before it answers with a Send.
 *
 * Asserts, per connection:
 *  - round 0 (default period): by the time the answer arrived the child
 *    sent its Send and at least one nudge (about three in 250 ms: 20, 60,
 *    140 ms; the exact schedule is test_siw_rawpeer's "nudge" case), at
 *    most 6, and the parent received the Send and at least one nudge
 *    (the nudges placed nothing, raised no completion, no event, no
 *    Terminate on either side); the Send's and the answer's bytes
 *    checksummed across;
 *  - round 1 (RPCRDMA_SIW_NUDGE_MS=0 in the child): one FPDU each way, no
 *    nudge.
 * Then an orderly disconnect seen on both sides.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_ROUND, MSG_DONE };

#define MSG_LEN   64u
#define SILENT_MS 250

static uint64_t verified;

static uint8_t buf[2][4096];
static struct rpcrdma_mr *mr;

static int post_recv(struct siwt_node *n, void *arg)
{
	(void)arg;
	return siwt_post_recv1(n, 1, buf[1], MSG_LEN, rpcrdma_mr_stag(mr));
}

/* FPDU counts within [min, max] each way */
static void check_stats(struct siwt_node *n, const char *who, uint64_t tx_min, uint64_t tx_max,
			uint64_t rx_min, uint64_t rx_max)
{
	struct rpcrdma_ep_stats st;

	if (rpcrdma_ep_query_stats(n->ep, &st)) {
		SIWT_CHECK(0, "%s: query_stats failed", who);
		return;
	}
	printf("%s: tx %llu FPDUs, rx %llu FPDUs\n", who, (unsigned long long)st.tx_fpdus,
	       (unsigned long long)st.rx_fpdus);
	SIWT_CHECK(st.tx_fpdus >= tx_min && st.tx_fpdus <= tx_max,
		   "%s: tx %llu FPDUs, want %llu..%llu", who, (unsigned long long)st.tx_fpdus,
		   (unsigned long long)tx_min, (unsigned long long)tx_max);
	SIWT_CHECK(st.rx_fpdus >= rx_min && st.rx_fpdus <= rx_max,
		   "%s: rx %llu FPDUs, want %llu..%llu", who, (unsigned long long)st.rx_fpdus,
		   (unsigned long long)rx_min, (unsigned long long)rx_max);
	SIWT_EQ(st.terminates_tx, 0);
	SIWT_EQ(st.terminates_rx, 0);
	SIWT_EQ(st.crc_errors, 0);
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_wc wc;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	uint16_t port = (uint16_t)m.a;
	if (rpcrdma_mr_reg(n.pd, buf, sizeof(buf), RPCRDMA_ACCESS_LOCAL_WRITE, &mr))
		return -1;
	for (unsigned round = 0; round < 2 && !siwt_failures; round++) {
		if (round == 1) {
			setenv("RPCRDMA_SIW_NUDGE_MS", "0", 1);
			siwt_node_reread_env(&n);
		}
		siwt_ep_attr(&n, &a);
		if (siwt_connect(&n, &a, post_recv, NULL, port, NULL, 0, &est))
			return -1;
		unsetenv("RPCRDMA_SIW_NUDGE_MS");
		struct rpcrdma_sge sg = {(uintptr_t)buf[0], MSG_LEN, rpcrdma_mr_stag(mr)};
		siwt_fill(buf[0], MSG_LEN, 0x6e00 + round);
		siwt_post(&n, 1, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0);
		siwt_expect_wc(&n, false, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL);
		if (siwt_expect_wc(&n, true, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) == 0) {
			uint8_t want[MSG_LEN];

			siwt_fill(want, MSG_LEN, 0x6f00 + round);
			SIWT_EQ(wc.byte_len, MSG_LEN);
			SIWT_CHECK(siwt_hash(buf[1], MSG_LEN) == siwt_hash(want, MSG_LEN),
				   "answer bytes differ");
			verified += MSG_LEN;
		}
		if (round)
			check_stats(&n, "child, nudge off", 1, 1, 1, 1);
		else
			check_stats(&n, "child", 2, 1 + 6, 1, 1);
		SIWT_CHECK(n.ev_n == 0, "child: event %s", siwt_event_str(n.ev[0].type));
		siwt_send4(ctl, MSG_ROUND, round, 0, 0);
		if (siwt_expect_pumped(&n, ctl, MSG_DONE, &m) == 0) {
			rpcrdma_disconnect(n.ep);
			siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
		}
		rpcrdma_ep_destroy(n.ep);
		n.ep = NULL;
		siwt_forget(&n);
	}
	rpcrdma_mr_dereg(mr);
	siwt_node_close(&n);
	return siwt_failures ? -1 : 0;
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct rpcrdma_wc wc;
	struct siwt_msg m;
	int ctl;

	memset(&n, 0, sizeof(n));
	alarm(60);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 50);
	if (pid < 0)
		return 1;
	if (siwt_node_open(&n) || siwt_listen(&n) ||
	    rpcrdma_mr_reg(n.pd, buf, sizeof(buf), RPCRDMA_ACCESS_LOCAL_WRITE, &mr))
		goto out;
	siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
	for (unsigned round = 0; round < 2 && !siwt_failures; round++) {
		siwt_ep_attr(&n, &a);
		if (siwt_accept(&n, &a, post_recv, NULL, NULL, 0, &req, &est))
			break;
		if (siwt_expect_wc(&n, true, 1, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) == 0) {
			uint8_t want[MSG_LEN];

			siwt_fill(want, MSG_LEN, 0x6e00 + round);
			SIWT_EQ(wc.byte_len, MSG_LEN);
			SIWT_CHECK(siwt_hash(buf[1], MSG_LEN) == siwt_hash(want, MSG_LEN),
				   "Send bytes differ");
			verified += MSG_LEN;
		}
		/* silent: the child's nudge (round 0) arrives meanwhile */
		siwt_pump_for(&n, SILENT_MS);
		if (round)
			check_stats(&n, "parent, nudge off", 0, 0, 1, 1);
		else
			check_stats(&n, "parent", 0, 0, 2, 1 + 6);
		SIWT_CHECK(n.ev_n == 0, "parent: event %s", siwt_event_str(n.ev[0].type));
		SIWT_CHECK(n.rwc_n == 0, "parent: a completion for the nudge");
		struct rpcrdma_sge sg = {(uintptr_t)buf[0], MSG_LEN, rpcrdma_mr_stag(mr)};
		siwt_fill(buf[0], MSG_LEN, 0x6f00 + round);
		siwt_post(&n, 2, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0);
		siwt_expect_wc(&n, false, 2, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_SEND, NULL);
		if (siwt_expect_pumped(&n, ctl, MSG_ROUND, &m))
			break;
		siwt_send4(ctl, MSG_DONE, 0, 0, 0);
		siwt_expect_event(&n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
		rpcrdma_ep_destroy(n.ep);
		n.ep = NULL;
		siwt_forget(&n); /* keeps a next CONNECT_REQUEST */
	}
out:
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	if (mr)
		rpcrdma_mr_dereg(mr);
	siwt_node_close(&n);
	close(ctl);
	return siwt_finish("test_siw_nudge", verified, t0);
}
