/* SPDX-License-Identifier: MIT */
/*
 * Smoke test of the softiwarp provider (helper "siw"): two processes over
 * loopback. The server accepts a connection carrying private data and
 * answers with its own (which advertises a region's STag and Tagged
 * Offset); the client sends a message, RDMA-Writes 4 MiB + an unaligned
 * piece into the server's region and RDMA-Reads 3 MiB of a second server
 * region back. Every transfer is checked by checksums computed on both
 * sides over the bytes that crossed, and every completion's status, opcode
 * and length is asserted. Runs with MPA CRC on, with it off, and with the
 * server on a progress-thread device (sleeping on the CQ and event channel
 * fds instead of driving progress itself).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/provider.h"

#define CHECK_WITH_PID
#define CHECK_ON_FAIL return -1
#include "lib/check.h"

#define BIG     (4u << 20)
#define RD_LEN  (3u << 20)
#define MSG_SZ  256u
#define NRECV   8u
#define TIMEOUT 10000

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed | 1u;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct side {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *msg_mr;
	uint8_t *msg; /* NRECV receive slots + 1 send slot, MSG_SZ each */
	bool crc;
	bool thread; /* device with RPCRDMA_DEV_F_PROGRESS_THREAD */
};

/* Without a progress thread the waiting side drives progress itself; with
 * one it sleeps on the event channel / CQ file descriptors. */
static int wait_event(struct side *s, struct rpcrdma_event *ev)
{
	uint64_t end = now_ms() + TIMEOUT;

	while (now_ms() < end) {
		if (rpcrdma_evch_get(s->ch, ev) == 0)
			return 0;
		if (s->thread) {
			struct pollfd p = {.fd = rpcrdma_evch_fd(s->ch), .events = POLLIN};

			(void)poll(&p, 1, 50);
			continue;
		}
		int rc = rpcrdma_dev_progress(s->dev, 50);

		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	return -ETIMEDOUT;
}

static int wait_wc(struct side *s, struct rpcrdma_wc *wc)
{
	uint64_t end = now_ms() + TIMEOUT;

	while (now_ms() < end) {
		if (rpcrdma_cq_poll(s->cq, wc, 1) == 1)
			return 0;
		if (s->thread) {
			struct pollfd p = {.fd = rpcrdma_cq_fd(s->cq), .events = POLLIN};

			/* arm, then poll again to close the race (one-shot) */
			if (rpcrdma_cq_req_notify(s->cq, false))
				return -EIO;
			if (rpcrdma_cq_poll(s->cq, wc, 1) == 1)
				return 0;
			(void)poll(&p, 1, 50);
			(void)rpcrdma_cq_ack_notify(s->cq);
			continue;
		}
		int rc = rpcrdma_dev_progress(s->dev, 50);

		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	return -ETIMEDOUT;
}

static int side_open(struct side *s, bool crc, bool thread)
{
	struct rpcrdma_cq_attr ca = {.cqe = 256};
	struct rpcrdma_ep_attr ea = {0};
	struct rpcrdma_dev_attr da = {.comp_mask = RPCRDMA_DEV_ATTR_FLAGS,
				      .flags = thread ? RPCRDMA_DEV_F_PROGRESS_THREAD : 0};

	memset(s, 0, sizeof(*s));
	s->crc = crc;
	s->thread = thread;
	CHECK(rpcrdma_dev_open(NULL, &da, &s->dev) == 0);
	/* a progress-thread device refuses explicit progress */
	CHECK(!thread || rpcrdma_dev_progress(s->dev, 0) == -EINVAL);
	CHECK(strcmp(rpcrdma_dev_provider(s->dev), "softiwarp") == 0);
	CHECK(rpcrdma_pd_alloc(s->dev, &s->pd) == 0);
	CHECK(rpcrdma_cq_create(s->dev, &ca, &s->cq) == 0);
	CHECK(rpcrdma_evch_create(s->dev, NULL, &s->ch) == 0);
	s->msg = calloc(NRECV + 1, MSG_SZ);
	CHECK(s->msg);
	CHECK(rpcrdma_mr_reg(s->pd, s->msg, (NRECV + 1) * MSG_SZ, RPCRDMA_ACCESS_LOCAL_WRITE,
			     &s->msg_mr) == 0);
	ea.comp_mask = RPCRDMA_EP_ATTR_CRC;
	ea.mpa_crc = crc;
	ea.send_cq = s->cq;
	ea.recv_cq = s->cq;
	ea.evch = s->ch;
	CHECK(rpcrdma_ep_create(s->pd, &ea, &s->ep) == 0);
	for (uint32_t i = 0; i < NRECV; i++) {
		struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)(s->msg + i * MSG_SZ), MSG_SZ,
					  rpcrdma_mr_stag(s->msg_mr)};

		CHECK(rpcrdma_post_recv(s->ep, 100 + i, &sge, 1) == 0);
	}
	return 0;
}

static void side_close(struct side *s)
{
	if (s->ep)
		rpcrdma_ep_destroy(s->ep);
	if (s->msg_mr)
		rpcrdma_mr_dereg(s->msg_mr);
	if (s->ch)
		rpcrdma_evch_destroy(s->ch);
	if (s->cq)
		rpcrdma_cq_destroy(s->cq);
	if (s->pd)
		rpcrdma_pd_free(s->pd);
	if (s->dev)
		rpcrdma_dev_close(s->dev);
	free(s->msg);
}

/* Send @len bytes of @data from the send slot, signaled; wait for it. */
static int send_msg(struct side *s, const void *data, uint32_t len, uint64_t id)
{
	uint8_t *slot = s->msg + NRECV * MSG_SZ;
	struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)slot, len, rpcrdma_mr_stag(s->msg_mr)};
	struct rpcrdma_send_wr wr = {.wr_id = id,
				     .opcode = RPCRDMA_WR_SEND,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &sge,
				     .num_sge = 1};
	struct rpcrdma_wc wc;

	memcpy(slot, data, len);
	CHECK(rpcrdma_post_send(s->ep, &wr) == 0);
	CHECK(wait_wc(s, &wc) == 0);
	CHECK(wc.status == RPCRDMA_WC_SUCCESS && wc.opcode == RPCRDMA_WC_SEND && wc.wr_id == id);
	CHECK(wc.byte_len == len);
	return 0;
}

/* Wait for one incoming Send; copy it out and repost its buffer. */
static int recv_msg(struct side *s, void *out, uint32_t *len)
{
	struct rpcrdma_wc wc;

	CHECK(wait_wc(s, &wc) == 0);
	CHECK(wc.status == RPCRDMA_WC_SUCCESS && wc.opcode == RPCRDMA_WC_RECV);
	CHECK(wc.wr_id >= 100 && wc.wr_id < 100 + NRECV && wc.byte_len <= MSG_SZ);
	uint8_t *buf = s->msg + (wc.wr_id - 100) * MSG_SZ;

	memcpy(out, buf, wc.byte_len);
	*len = wc.byte_len;
	struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)buf, MSG_SZ, rpcrdma_mr_stag(s->msg_mr)};

	CHECK(rpcrdma_post_recv(s->ep, wc.wr_id, &sge, 1) == 0);
	return 0;
}

struct adv { /* what the server's accept private data advertises */
	uint32_t stag;
	uint64_t to;
	uint64_t len;
} __attribute__((packed));

static const char client_pd[] = "hello from the smoke client";

static int server(int port_fd, bool crc, bool thread)
{
	struct side s;
	struct rpcrdma_listener *l;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage ss;
	struct rpcrdma_event ev;
	struct rpcrdma_mr *wmr, *rmr;
	uint8_t *wbuf, *rbuf, m[MSG_SZ];
	uint32_t n;

	if (side_open(&s, crc, thread))
		return -1;
	CHECK(rpcrdma_listen(s.dev, s.ch, (struct sockaddr *)&sin, sizeof(sin), 8, NULL, &l) == 0);
	CHECK(rpcrdma_listener_addr(l, &ss) == 0);
	uint16_t port = ntohs(((struct sockaddr_in *)&ss)->sin_port);

	CHECK(write(port_fd, &port, sizeof(port)) == sizeof(port));
	wbuf = aligned_alloc(4096, BIG + 4096);
	rbuf = aligned_alloc(4096, RD_LEN);
	CHECK(wbuf && rbuf);
	memset(wbuf, 0, BIG + 4096);
	fill(rbuf, RD_LEN, 0xabcdef);
	CHECK(rpcrdma_mr_reg(s.pd, wbuf, BIG + 4096,
			     RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &wmr) == 0);
	CHECK(rpcrdma_mr_reg(s.pd, rbuf, RD_LEN, RPCRDMA_ACCESS_REMOTE_READ, &rmr) == 0);

	CHECK(wait_event(&s, &ev) == 0);
	CHECK(ev.type == RPCRDMA_EV_CONNECT_REQUEST);
	CHECK(ev.private_data_len == sizeof(client_pd));
	CHECK(memcmp(ev.private_data, client_pd, sizeof(client_pd)) == 0);
	CHECK(ev.mpa_rev == 2 && ev.crc == crc && ev.ird == 16 && ev.ord == 16);
	/* advertise the Write target region and the Read source region */
	struct adv ads[2] = {{rpcrdma_mr_stag(wmr), rpcrdma_mr_offset(wmr), BIG + 4096},
			     {rpcrdma_mr_stag(rmr), rpcrdma_mr_offset(rmr), RD_LEN}};

	CHECK(rpcrdma_accept(ev.req, s.ep, ads, sizeof(ads)) == 0);
	CHECK(wait_event(&s, &ev) == 0);
	CHECK(ev.type == RPCRDMA_EV_ESTABLISHED && ev.ep == s.ep);

	/* 1: a small Send */
	CHECK(recv_msg(&s, m, &n) == 0);
	CHECK(n == 64 && memcmp(m, "ping", 4) == 0);
	uint8_t expect[64];

	fill(expect, sizeof(expect), 64);
	memcpy(expect, "ping", 4);
	CHECK(memcmp(m, expect, 64) == 0);
	CHECK(send_msg(&s, "pong", 4, 1) == 0);

	/* 2: the client wrote [1 MiB + 8, 4 MiB) and (1 MiB + 5) bytes at the
	 * unaligned offset 3; its Send carries both checksums. */
	CHECK(recv_msg(&s, m, &n) == 0);
	CHECK(n == 1 + 2 * sizeof(uint64_t) && m[0] == 'W');
	uint64_t h1, h2;

	memcpy(&h1, m + 1, 8);
	memcpy(&h2, m + 9, 8);
	CHECK(fnv(wbuf + 3, (1u << 20) + 5) == h2);
	CHECK(fnv(wbuf + (1u << 20) + 8, BIG - (1u << 20) - 8) == h1);
	CHECK(wbuf[0] == 0 && wbuf[1] == 0 && wbuf[2] == 0); /* bytes before untouched */
	CHECK(send_msg(&s, "OK", 2, 2) == 0);

	/* 3: the client reads rbuf and reports its checksum */
	CHECK(recv_msg(&s, m, &n) == 0);
	CHECK(n == 1 + sizeof(uint64_t) && m[0] == 'R');
	memcpy(&h1, m + 1, 8);
	CHECK(h1 == fnv(rbuf, RD_LEN));

	struct rpcrdma_ep_stats st;

	CHECK(rpcrdma_ep_query_stats(s.ep, &st) == 0);
	CHECK(st.writes_in >= 2 && st.reads_in == 1 && st.crc_errors == 0);

	/* 4: the client disconnects */
	CHECK(wait_event(&s, &ev) == 0);
	CHECK(ev.type == RPCRDMA_EV_DISCONNECTED && ev.ep == s.ep);
	CHECK(rpcrdma_listener_destroy(l) == 0);
	CHECK(rpcrdma_mr_dereg(wmr) == 0);
	CHECK(rpcrdma_mr_dereg(rmr) == 0);
	free(wbuf);
	free(rbuf);
	/* the flushed receives */
	struct rpcrdma_wc wc;
	int flushed = 0;

	while (rpcrdma_cq_poll(s.cq, &wc, 1) == 1) {
		CHECK(wc.status == RPCRDMA_WC_WR_FLUSH_ERR && wc.opcode == RPCRDMA_WC_RECV);
		flushed++;
	}
	CHECK(flushed == (int)NRECV);
	side_close(&s);
	return 0;
}

static int client(uint16_t port, bool crc, bool thread)
{
	struct side s;
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct rpcrdma_event ev;
	struct adv ads[2];
	struct rpcrdma_mr *mr;
	uint8_t *buf, m[MSG_SZ];
	uint32_t n;
	struct rpcrdma_wc wc;

	if (side_open(&s, crc, thread))
		return -1;
	buf = aligned_alloc(4096, BIG + 4096);
	CHECK(buf);
	fill(buf, BIG + 4096, 0x5eed);
	CHECK(rpcrdma_mr_reg(s.pd, buf, BIG + 4096, RPCRDMA_ACCESS_LOCAL_WRITE, &mr) == 0);
	CHECK(rpcrdma_connect(s.ep, (struct sockaddr *)&sin, sizeof(sin), client_pd,
			      sizeof(client_pd)) == 0);
	CHECK(wait_event(&s, &ev) == 0);
	CHECK(ev.type == RPCRDMA_EV_ESTABLISHED && ev.ep == s.ep);
	CHECK(ev.private_data_len == sizeof(ads) && ev.crc == crc && ev.mpa_rev == 2);
	memcpy(ads, ev.private_data, sizeof(ads));

	struct rpcrdma_ep_conn_info ci;

	CHECK(rpcrdma_ep_query_conn(s.ep, &ci) == 0);
	CHECK(ci.crc == crc && ci.mpa_rev == 2 && ci.ord == 16);

	/* 1: 64-byte Send, answered */
	uint8_t ping[64];

	fill(ping, sizeof(ping), 64);
	memcpy(ping, "ping", 4);
	CHECK(send_msg(&s, ping, sizeof(ping), 1) == 0);
	CHECK(recv_msg(&s, m, &n) == 0);
	CHECK(n == 4 && memcmp(m, "pong", 4) == 0);

	/* 2: RDMA Writes (unsignaled), then a Send that must arrive after
	 * they are placed (RFC 5040 §5.5) */
	uint32_t off2 = (1u << 20) + 8;
	struct rpcrdma_sge sg1 = {(uint64_t)(uintptr_t)buf + off2, BIG - off2, rpcrdma_mr_stag(mr)};
	struct rpcrdma_send_wr w1 = {.wr_id = 10,
				     .opcode = RPCRDMA_WR_RDMA_WRITE,
				     .sg = &sg1,
				     .num_sge = 1,
				     .remote_stag = ads[0].stag,
				     .remote_offset = ads[0].to + off2};
	/* unaligned: 1 MiB + 5 bytes from source offset 1, to target offset 3,
	 * gathered from two SGEs */
	struct rpcrdma_sge sg2[2] = {
	    {(uint64_t)(uintptr_t)buf + 1, 1000, rpcrdma_mr_stag(mr)},
	    {(uint64_t)(uintptr_t)buf + 1001, (1u << 20) + 5 - 1000, rpcrdma_mr_stag(mr)}};
	struct rpcrdma_send_wr w2 = {.wr_id = 11,
				     .opcode = RPCRDMA_WR_RDMA_WRITE,
				     .sg = sg2,
				     .num_sge = 2,
				     .remote_stag = ads[0].stag,
				     .remote_offset = ads[0].to + 3};

	CHECK(rpcrdma_post_send(s.ep, &w1) == 0);
	CHECK(rpcrdma_post_send(s.ep, &w2) == 0);
	uint8_t wm[17];
	uint64_t h1 = fnv(buf + off2, BIG - off2), h2 = fnv(buf + 1, (1u << 20) + 5);

	wm[0] = 'W';
	memcpy(wm + 1, &h1, 8);
	memcpy(wm + 9, &h2, 8);
	CHECK(send_msg(&s, wm, sizeof(wm), 2) == 0);
	CHECK(recv_msg(&s, m, &n) == 0);
	CHECK(n == 2 && memcmp(m, "OK", 2) == 0);

	/* 3: RDMA Read of the server's second region into offset 7 */
	memset(buf, 0, BIG);
	struct rpcrdma_sge sg3 = {(uint64_t)(uintptr_t)buf + 7, RD_LEN, rpcrdma_mr_stag(mr)};
	struct rpcrdma_send_wr r = {.wr_id = 20,
				    .opcode = RPCRDMA_WR_RDMA_READ,
				    .flags = RPCRDMA_SEND_SIGNALED,
				    .sg = &sg3,
				    .num_sge = 1,
				    .remote_stag = ads[1].stag,
				    .remote_offset = ads[1].to};

	CHECK(rpcrdma_post_send(s.ep, &r) == 0);
	CHECK(wait_wc(&s, &wc) == 0);
	CHECK(wc.wr_id == 20 && wc.status == RPCRDMA_WC_SUCCESS &&
	      wc.opcode == RPCRDMA_WC_RDMA_READ && wc.byte_len == RD_LEN);
	uint8_t *expect = malloc(RD_LEN);

	CHECK(expect);
	fill(expect, RD_LEN, 0xabcdef);
	CHECK(memcmp(buf + 7, expect, RD_LEN) == 0);
	CHECK(buf[6] == 0 && buf[7 + RD_LEN] == 0);
	free(expect);
	uint8_t rm[9];

	rm[0] = 'R';
	h1 = fnv(buf + 7, RD_LEN);
	memcpy(rm + 1, &h1, 8);
	CHECK(send_msg(&s, rm, sizeof(rm), 3) == 0);

	/* 4: orderly disconnect, receives flushed */
	CHECK(rpcrdma_disconnect(s.ep) == 0);
	CHECK(wait_event(&s, &ev) == 0);
	CHECK(ev.type == RPCRDMA_EV_DISCONNECTED);
	int flushed = 0;

	while (rpcrdma_cq_poll(s.cq, &wc, 1) == 1) {
		CHECK(wc.status == RPCRDMA_WC_WR_FLUSH_ERR);
		flushed++;
	}
	CHECK(flushed == (int)NRECV);
	CHECK(rpcrdma_mr_dereg(mr) == 0);
	free(buf);
	side_close(&s);
	return 0;
}

static int run(bool crc, bool thread)
{
	int p[2], status = 0;
	pid_t pid;
	uint16_t port = 0;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[1]);
		alarm(60);
		if (read(p[0], &port, sizeof(port)) != sizeof(port))
			_exit(1);
		_exit(client(port, crc, false) == 0 && failures == 0 ? 0 : 1);
	}
	close(p[0]);
	alarm(60);
	int rc = server(p[1], crc, thread);

	close(p[1]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	if (rc || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "smoke (crc %s%s): server %d, client status 0x%x\n",
			crc ? "on" : "off", thread ? ", server thread" : "", rc, status);
		return -1;
	}
	printf("smoke (crc %s%s): ok\n", crc ? "on" : "off", thread ? ", server thread" : "");
	return 0;
}

int main(void)
{
	int rc = run(true, false);

	if (!rc)
		rc = run(false, false);
	if (!rc)
		rc = run(true, true);
	return rc || failures ? 1 : 0;
}
