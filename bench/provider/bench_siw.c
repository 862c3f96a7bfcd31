/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma's softiwarp provider through the public provider interface
 * (include/rpcrdma/provider.h) only: 64-byte Send ping-pong, 1 MiB RDMA
 * Write and RDMA Read with several in flight, MPA CRC32c off or on.
 *
 * Modes (no progress thread in either):
 *   block: poll() on rpcrdma_dev_fd(), then rpcrdma_dev_progress(dev, 0),
 *          then rpcrdma_cq_poll() - the fd-driven single-threaded pattern
 *          the header documents (with --progress-wait:
 *          rpcrdma_dev_progress(dev, 1000) waits on that fd itself);
 *   poll:  rpcrdma_dev_progress(dev, 0) + rpcrdma_cq_poll() in a spin.
 *
 * Heap allocations are counted (bench_alloc.c) across each steady-state
 * loop on both sides and reported per operation.
 */
#define _GNU_SOURCE
#include "bench_alloc.h"
#include "bench_common.h"
#include "bench_rdma.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpcrdma/provider.h"

#define NTX       16u
#define CQ_DEPTH  256u
#define EV_WAIT_S 20 /* seconds to wait for a connection event */

/* wr_id spaces: kind in the top byte, slot/index below. */
#define WR_RX  (1ull << 56)
#define WR_TX  (2ull << 56)
#define WR_RMA (3ull << 56)

static struct bench_opts opt;

static struct {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *evch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_listener *lis;
	int dev_fd;

	struct bench_msg *msgs; /* BENCH_NRECV receive slots then NTX send slots */
	struct rpcrdma_mr *msg_mr;
	unsigned char *region;
	struct rpcrdma_mr *reg_mr;

	unsigned char tx_busy[NTX];
	unsigned tx_next;
	unsigned rxq[BENCH_NRECV], rxq_head, rxq_len;
	uint64_t rma_done;

	uint64_t raddr;
	uint32_t rstag;
	int flushed; /* a WR_FLUSH_ERR was seen: the connection is gone */
} S;

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_ < 0)                                                                       \
			bench_die("%s: %s (%d)", #call, strerror(-rc_), rc_);                      \
	} while (0)

static const char *wc_status_name(enum rpcrdma_wc_status s)
{
	static const char *const n[] = {
	    "SUCCESS",        "LOC_LEN_ERR",     "LOC_PROT_ERR", "LOC_QP_OP_ERR", "WR_FLUSH_ERR",
	    "REM_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_OP_ERR",   "TRANSPORT_ERR", "GENERAL_ERR",
	};

	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static const char *wc_opcode_name(enum rpcrdma_wc_opcode o)
{
	static const char *const n[] = {"SEND", "RDMA_WRITE", "RDMA_READ", "RECV"};

	return (unsigned)o < sizeof(n) / sizeof(n[0]) ? n[o] : "?";
}

/* Waits for device work (blocking mode) and drives progress once. */
static void drive(void)
{
	int rc;

	if (opt.mode == BENCH_BLOCK && opt.progress_wait) {
		/* The provider's own wait: one epoll_wait instead of our
		 * poll() followed by its non-blocking epoll_wait. */
		rc = rpcrdma_dev_progress(S.dev, 1000);
		if (rc < 0 && rc != -EINTR)
			bench_die("rpcrdma_dev_progress: %s", strerror(-rc));
		return;
	}
	if (opt.mode == BENCH_BLOCK) {
		struct pollfd p = {.fd = S.dev_fd, .events = POLLIN};

		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			bench_die("poll: %s", strerror(errno));
	}
	rc = rpcrdma_dev_progress(S.dev, 0);
	if (rc < 0 && rc != -EINTR)
		bench_die("rpcrdma_dev_progress: %s", strerror(-rc));
	if (rc == 0)
		bench_idle(&opt);
}

static void post_recv(unsigned i)
{
	struct rpcrdma_sge sg = {
	    .addr = (uint64_t)(uintptr_t)&S.msgs[i],
	    .length = sizeof(struct bench_msg),
	    .lkey = rpcrdma_mr_stag(S.msg_mr),
	};

	CHECK(rpcrdma_post_recv(S.ep, WR_RX | i, &sg, 1));
}

/* Before dying of a failed completion: print the connection events that
 * say why (Terminate layer/type/code, disconnect status) and the
 * endpoint's counters, so a provider failure can be reported precisely. */
static void explain(void)
{
	struct rpcrdma_ep_stats st = {0};
	struct rpcrdma_event ev;

	rpcrdma_dev_progress(S.dev, 0);
	while (rpcrdma_evch_get(S.evch, &ev) == 0)
		fprintf(stderr,
			"bench_siw %s: event %d status %d (%s) term %s layer %u type %u code %u\n",
			opt.role == BENCH_SERVER ? "server" : "client", ev.type, ev.status,
			strerror(-ev.status), ev.term_local ? "sent" : "received", ev.term_layer,
			ev.term_etype, ev.term_code);
	if (!rpcrdma_ep_query_stats(S.ep, &st))
		fprintf(stderr,
			"bench_siw %s: stats tx %llu B / %llu FPDUs, rx %llu B / %llu FPDUs, "
			"sends %llu recvs %llu writes out/in %llu/%llu reads out/in %llu/%llu, "
			"crc errors %llu, terminates tx/rx %llu/%llu, send EAGAIN %llu\n",
			opt.role == BENCH_SERVER ? "server" : "client",
			(unsigned long long)st.tx_bytes, (unsigned long long)st.tx_fpdus,
			(unsigned long long)st.rx_bytes, (unsigned long long)st.rx_fpdus,
			(unsigned long long)st.sends, (unsigned long long)st.recvs,
			(unsigned long long)st.writes_out, (unsigned long long)st.writes_in,
			(unsigned long long)st.reads_out, (unsigned long long)st.reads_in,
			(unsigned long long)st.crc_errors, (unsigned long long)st.terminates_tx,
			(unsigned long long)st.terminates_rx, (unsigned long long)st.send_eagain);
}

/* Reaps what the CQ holds after one drive(); dies on any error status. */
static int progress(void)
{
	struct rpcrdma_wc wc[16];
	int n, i;

	for (;;) {
		/* Flushes complete everything once the peer has gone; that is
		 * fatal only if we are still waiting for something. */
		if (S.flushed) {
			explain();
			bench_die("connection closed (receives flushed) while waiting");
		}
		n = rpcrdma_cq_poll(S.cq, wc, 16);
		if (n < 0)
			bench_die("rpcrdma_cq_poll: %s", strerror(-n));
		if (n > 0)
			break;
		drive();
	}
	for (i = 0; i < n; i++) {
		uint64_t kind = wc[i].wr_id & (0xffull << 56), idx = wc[i].wr_id & ~(0xffull << 56);

		if (wc[i].status == RPCRDMA_WC_WR_FLUSH_ERR) {
			S.flushed = 1;
			continue;
		}
		if (wc[i].status != RPCRDMA_WC_SUCCESS) {
			explain();
			bench_die("completion error %s (%s, vendor_err 0x%x)",
				  wc_status_name(wc[i].status), wc_opcode_name(wc[i].opcode),
				  wc[i].vendor_err);
		}
		if (kind == WR_RX) {
			if (idx >= BENCH_NRECV || wc[i].byte_len != sizeof(struct bench_msg))
				bench_die("bad receive completion (slot %llu, %u bytes)",
					  (unsigned long long)idx, wc[i].byte_len);
			S.rxq[(S.rxq_head + S.rxq_len++) % BENCH_NRECV] = (unsigned)idx;
		} else if (kind == WR_TX && idx < NTX) {
			S.tx_busy[idx] = 0;
		} else if (kind == WR_RMA) {
			S.rma_done++;
		} else {
			bench_die("completion with unknown wr_id 0x%llx",
				  (unsigned long long)wc[i].wr_id);
		}
	}
	return n;
}

static void send_msg(const struct bench_msg *m)
{
	unsigned i = S.tx_next;
	struct rpcrdma_sge sg;
	struct rpcrdma_send_wr wr = {
	    .opcode = RPCRDMA_WR_SEND, .flags = RPCRDMA_SEND_SIGNALED, .sg = &sg, .num_sge = 1};

	while (S.tx_busy[i])
		progress();
	S.tx_next = (i + 1) % NTX;
	S.tx_busy[i] = 1;
	S.msgs[BENCH_NRECV + i] = *m;
	sg = (struct rpcrdma_sge){
	    .addr = (uint64_t)(uintptr_t)&S.msgs[BENCH_NRECV + i],
	    .length = sizeof(*m),
	    .lkey = rpcrdma_mr_stag(S.msg_mr),
	};
	wr.wr_id = WR_TX | i;
	CHECK(rpcrdma_post_send(S.ep, &wr));
}

static struct bench_msg recv_msg(void)
{
	struct bench_msg m;
	unsigned i;

	while (!S.rxq_len)
		progress();
	i = S.rxq[S.rxq_head];
	S.rxq_head = (S.rxq_head + 1) % BENCH_NRECV;
	S.rxq_len--;
	m = S.msgs[i];
	post_recv(i);
	return m;
}

static void wait_event(enum rpcrdma_event_type want, struct rpcrdma_event *ev)
{
	uint64_t deadline = bench_now_ns() + (uint64_t)EV_WAIT_S * 1000000000u;
	int rc;

	for (;;) {
		rc = rpcrdma_evch_get(S.evch, ev);
		if (rc == 0)
			break;
		if (rc != -EAGAIN)
			bench_die("rpcrdma_evch_get: %s", strerror(-rc));
		if (bench_now_ns() > deadline)
			bench_die("timed out waiting for connection event %d", want);
		rc = rpcrdma_dev_progress(S.dev, 100);
		if (rc < 0 && rc != -EINTR)
			bench_die("rpcrdma_dev_progress: %s", strerror(-rc));
	}
	if (ev->type != want)
		bench_die("connection event %d (status %s), wanted %d", ev->type,
			  strerror(-ev->status), want);
}

static void open_dev(void)
{
	struct rpcrdma_cq_attr ca = {.cqe = CQ_DEPTH};

	CHECK(rpcrdma_dev_open("softiwarp", NULL, &S.dev));
	S.dev_fd = rpcrdma_dev_fd(S.dev);
	if (S.dev_fd < 0)
		bench_die("rpcrdma_dev_fd: %s", strerror(-S.dev_fd));
	CHECK(rpcrdma_pd_alloc(S.dev, &S.pd));
	CHECK(rpcrdma_cq_create(S.dev, &ca, &S.cq));
	CHECK(rpcrdma_evch_create(S.dev, NULL, &S.evch));
}

/* Endpoint, memory and posted receives, before connect/accept. */
static void setup_ep(void)
{
	struct rpcrdma_ep_attr ea = {
	    .comp_mask = RPCRDMA_EP_ATTR_CAPS | RPCRDMA_EP_ATTR_CRC,
	    .send_cq = S.cq,
	    .recv_cq = S.cq,
	    .evch = S.evch,
	    .max_send_wr = 64,
	    .max_recv_wr = 64,
	    .max_send_sge = 1,
	    .max_recv_sge = 1,
	    .mpa_crc = opt.crc != 0,
	};
	size_t msz = (BENCH_NRECV + NTX) * sizeof(struct bench_msg);
	unsigned i;

	CHECK(rpcrdma_ep_create(S.pd, &ea, &S.ep));
	S.msgs = aligned_alloc(4096, 4096);
	S.region = aligned_alloc(4096, BENCH_REGION);
	if (!S.msgs || !S.region || msz > 4096)
		bench_die("out of memory");
	memset(S.msgs, 0, msz);
	memset(S.region, 0, BENCH_REGION);
	CHECK(rpcrdma_mr_reg(S.pd, S.msgs, msz, RPCRDMA_ACCESS_LOCAL_WRITE, &S.msg_mr));
	CHECK(rpcrdma_mr_reg(S.pd, S.region, BENCH_REGION,
			     RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE |
				 RPCRDMA_ACCESS_REMOTE_READ,
			     &S.reg_mr));
	for (i = 0; i < BENCH_NRECV; i++)
		post_recv(i);
}

static void report_conn(void)
{
	struct rpcrdma_ep_conn_info ci = {0};

	CHECK(rpcrdma_ep_query_conn(S.ep, &ci));
	bench_info("siw_conn", "mpa_rev=%u crc=%d ird=%u ord=%u max_ulpdu=%u", ci.mpa_rev, ci.crc,
		   ci.ird, ci.ord, ci.max_ulpdu);
	if (ci.crc != (opt.crc != 0))
		bench_die("MPA CRC negotiated %s, asked for %s", ci.crc ? "on" : "off",
			  opt.crc ? "on" : "off");
	bench_result("crc", ci.crc);
}

static void progress_one(void)
{
	(void)progress();
}

/* Until the last Send posted has completed. */
static void drain_sends(void)
{
	while (S.tx_busy[(S.tx_next + NTX - 1) % NTX])
		progress();
}

static void post_rma(int write, uint64_t i);

static const struct bench_rdma *transport(void)
{
	static struct bench_rdma b;

	b = (struct bench_rdma){
	    .opt = &opt,
	    .region = S.region,
	    .rma_done = &S.rma_done,
	    .progress = progress_one,
	    .send_msg = send_msg,
	    .recv_msg = recv_msg,
	    .post_rma = post_rma,
	    .drain_sends = drain_sends,
	    .alloc_count = bench_alloc_count,
	};
	return &b;
}

static int run_server(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
	struct sockaddr_storage ss;
	struct rpcrdma_event ev;

	if (inet_pton(AF_INET, opt.host, &sa.sin_addr) != 1)
		bench_die("bad IPv4 address '%s'", opt.host);
	open_dev();
	CHECK(rpcrdma_listen(S.dev, S.evch, (struct sockaddr *)&sa, sizeof(sa), 1, NULL, &S.lis));
	CHECK(rpcrdma_listener_addr(S.lis, &ss));
	bench_ready(ntohs(((struct sockaddr_in *)&ss)->sin_port));
	wait_event(RPCRDMA_EV_CONNECT_REQUEST, &ev);
	setup_ep();
	CHECK(rpcrdma_accept(ev.req, S.ep, NULL, 0));
	wait_event(RPCRDMA_EV_ESTABLISHED, &ev);
	report_conn();
	{
		struct bench_msg m = {.op = BENCH_OP_MR, .c = BENCH_REGION};

		m.a = rpcrdma_mr_offset(S.reg_mr);
		m.b = rpcrdma_mr_stag(S.reg_mr);
		send_msg(&m);
	}
	bench_rdma_serve(transport());
	return 0;
}

static void post_rma(int write, uint64_t i)
{
	unsigned slot = (unsigned)(i % BENCH_SLOTS);
	struct rpcrdma_sge sg = {
	    .addr = (uint64_t)(uintptr_t)(S.region + (size_t)slot * BENCH_BW_SIZE),
	    .length = BENCH_BW_SIZE,
	    .lkey = rpcrdma_mr_stag(S.reg_mr),
	};
	struct rpcrdma_send_wr wr = {
	    .wr_id = WR_RMA | i,
	    .opcode = write ? RPCRDMA_WR_RDMA_WRITE : RPCRDMA_WR_RDMA_READ,
	    .flags = RPCRDMA_SEND_SIGNALED,
	    .sg = &sg,
	    .num_sge = 1,
	    .remote_offset = S.raddr + (uint64_t)slot * BENCH_BW_SIZE,
	    .remote_stag = S.rstag,
	};
	int rc;

	while ((rc = rpcrdma_post_send(S.ep, &wr)) == -ENOMEM)
		progress();
	if (rc)
		bench_die("post RDMA %s: %s", write ? "Write" : "Read", strerror(-rc));
}

static int run_client(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
	struct rpcrdma_event ev;
	struct bench_msg m;

	if (inet_pton(AF_INET, opt.host, &sa.sin_addr) != 1)
		bench_die("bad IPv4 address '%s'", opt.host);
	open_dev();
	setup_ep();
	CHECK(rpcrdma_connect(S.ep, (struct sockaddr *)&sa, sizeof(sa), NULL, 0));
	wait_event(RPCRDMA_EV_ESTABLISHED, &ev);
	report_conn();
	m = recv_msg();
	if (m.op != BENCH_OP_MR)
		bench_die("expected the server's MR, got op %u", m.op);
	S.raddr = m.a;
	S.rstag = (uint32_t)m.b;

	bench_rdma_client(transport());
	return 0;
}

/* Orderly teardown, children before parents; errors here are reported but
 * do not change the verdict. */
static void teardown(void)
{
	if (S.ep) {
		rpcrdma_disconnect(S.ep);
		rpcrdma_ep_destroy(S.ep);
	}
	if (S.lis)
		rpcrdma_listener_destroy(S.lis);
	if (S.msg_mr)
		rpcrdma_mr_dereg(S.msg_mr);
	if (S.reg_mr)
		rpcrdma_mr_dereg(S.reg_mr);
	if (S.evch)
		rpcrdma_evch_destroy(S.evch);
	if (S.cq)
		rpcrdma_cq_destroy(S.cq);
	if (S.pd)
		rpcrdma_pd_free(S.pd);
	if (S.dev) {
		int rc = rpcrdma_dev_close(S.dev);

		if (rc)
			fprintf(stderr, "bench_siw: rpcrdma_dev_close: %s\n", strerror(-rc));
	}
	free(S.msgs);
	free(S.region);
}

int main(int argc, char **argv)
{
	int rc;

	bench_parse(&opt, argc, argv, "bench_siw");
	bench_pin(opt.cpu);
	bench_watchdog(&opt);
	rc = opt.role == BENCH_SERVER ? run_server() : run_client();
	teardown();
	return rc;
}
