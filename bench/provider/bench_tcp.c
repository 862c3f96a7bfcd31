/* SPDX-License-Identifier: MIT */
/*
 * Plain TCP socket baseline: 64-byte ping-pong over one connection and a
 * 1 MiB-chunk stream, on 127.0.0.1 with TCP_NODELAY. This is the physical
 * floor an iWARP-over-TCP provider is built on.
 *
 * Stream framing: each 1 MiB chunk is preceded by a 64-byte bench_msg
 * header (op BEGIN, a = length), sent with one writev; the stream ends with
 * an END header that the server answers with ACK (a = hash of the last
 * chunk it received, so the client knows the bytes crossed intact).
 */
#define _GNU_SOURCE
#include "bench_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static struct bench_opts opt;

/* Reads exactly len bytes; in poll mode spins on MSG_DONTWAIT instead of
 * sleeping in the kernel. Dies on EOF or error. */
static void read_full(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;
	int flags = opt.mode == BENCH_POLL ? MSG_DONTWAIT : MSG_WAITALL;

	while (len) {
		ssize_t n = recv(fd, p, len, flags);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n == 0) {
			bench_die("peer closed the connection");
		} else if (errno == EAGAIN) {
			bench_idle(&opt);
		} else if (errno != EINTR) {
			bench_die("recv: %s", strerror(errno));
		}
	}
}

static void write_iov(int fd, struct iovec *iov, int cnt)
{
	while (cnt) {
		ssize_t n = writev(fd, iov, cnt);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			bench_die("writev: %s", strerror(errno));
		}
		while (cnt && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
}

static void send_msg(int fd, const struct bench_msg *m)
{
	struct iovec iov = {(void *)m, sizeof(*m)};

	write_iov(fd, &iov, 1);
}

static void set_nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		bench_die("TCP_NODELAY: %s", strerror(errno));
}

static void addr_of(struct sockaddr_in *sa, unsigned port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, opt.host, &sa->sin_addr) != 1)
		bench_die("bad IPv4 address '%s'", opt.host);
}

/* Answers the client until QUIT. Out of line so callgrind can count it. */
__attribute__((noinline)) void bench_serve_loop(int fd, unsigned char *buf);
__attribute__((noinline)) void bench_serve_loop(int fd, unsigned char *buf)
{
	struct bench_msg m, r;
	uint64_t last_hash = 0;

	for (;;) {
		read_full(fd, &m, sizeof(m));
		memset(&r, 0, sizeof(r));
		r.seq = m.seq;
		switch (m.op) {
		case BENCH_OP_PING:
			r.op = BENCH_OP_PONG;
			send_msg(fd, &r);
			break;
		case BENCH_OP_BEGIN: /* one stream chunk follows */
			if (m.a > BENCH_BW_SIZE)
				bench_die("stream chunk of %llu bytes", (unsigned long long)m.a);
			read_full(fd, buf, (size_t)m.a);
			last_hash = bench_hash(buf, (size_t)m.a);
			break;
		case BENCH_OP_END:
			r.op = BENCH_OP_ACK;
			r.a = last_hash;
			send_msg(fd, &r);
			break;
		case BENCH_OP_QUIT:
			r.op = BENCH_OP_ACK;
			send_msg(fd, &r);
			return;
		default:
			bench_die("unexpected op %u", m.op);
		}
	}
}

static int run_server(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	unsigned char *buf = malloc(BENCH_BW_SIZE);
	int one = 1, lfd, fd;

	if (!buf)
		bench_die("out of memory");
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		bench_die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr_of(&sa, opt.port);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		bench_die("bind/listen: %s", strerror(errno));
	if (getsockname(lfd, (struct sockaddr *)&sa, &sl))
		bench_die("getsockname: %s", strerror(errno));
	bench_ready(ntohs(sa.sin_port));
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		bench_die("accept: %s", strerror(errno));
	close(lfd);
	set_nodelay(fd);

	bench_serve_loop(fd, buf);
	close(fd);
	free(buf);
	return 0;
}

/* Kept out of line so callgrind can count exactly this loop
 * (--toggle-collect=bench_rtt_loop). */
__attribute__((noinline)) void bench_rtt_loop(int fd, uint64_t *ns, unsigned n, unsigned seq0);
__attribute__((noinline)) void bench_rtt_loop(int fd, uint64_t *ns, unsigned n, unsigned seq0)
{
	struct bench_msg m = {.op = BENCH_OP_PING}, r;
	unsigned i;

	for (i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();

		m.seq = seq0 + i;
		send_msg(fd, &m);
		read_full(fd, &r, sizeof(r));
		if (r.op != BENCH_OP_PONG || r.seq != m.seq)
			bench_die("bad pong (op %u seq %u, want %u)", r.op, r.seq, m.seq);
		if (ns)
			ns[i] = bench_now_ns() - t0;
	}
}

static void client_rtt(int fd)
{
	uint64_t *ns = calloc(opt.rtt_iters, sizeof(*ns));

	if (!ns)
		bench_die("out of memory");
	bench_rtt_loop(fd, NULL, opt.rtt_warmup, 0);
	bench_rtt_loop(fd, ns, opt.rtt_iters, opt.rtt_warmup);
	bench_report_rtt("rtt", ns, opt.rtt_iters);
	free(ns);
}

static void client_stream(int fd)
{
	unsigned char *buf = malloc(BENCH_BW_SIZE);
	struct bench_msg h = {.op = BENCH_OP_BEGIN, .a = BENCH_BW_SIZE}, r;
	uint64_t t0, t1, deadline, bytes = 0;

	if (!buf)
		bench_die("out of memory");
	bench_fill(buf, BENCH_BW_SIZE, 42);
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)(opt.bw_seconds * 1e9);
	do {
		struct iovec iov[2] = {{&h, sizeof(h)}, {buf, BENCH_BW_SIZE}};

		write_iov(fd, iov, 2);
		bytes += BENCH_BW_SIZE;
	} while (bench_now_ns() < deadline);
	h.op = BENCH_OP_END;
	send_msg(fd, &h);
	read_full(fd, &r, sizeof(r));
	t1 = bench_now_ns();
	if (r.op != BENCH_OP_ACK || r.a != bench_hash(buf, BENCH_BW_SIZE))
		bench_die("stream data check failed");
	bench_report_bw("stream_gbs", bytes, t1 - t0);
	free(buf);
}

static int run_client(void)
{
	struct sockaddr_in sa;
	struct bench_msg q = {.op = BENCH_OP_QUIT}, r;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		bench_die("socket: %s", strerror(errno));
	addr_of(&sa, opt.port);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		bench_die("connect %s:%u: %s", opt.host, opt.port, strerror(errno));
	set_nodelay(fd);
	if (opt.tests & BENCH_T_RTT)
		client_rtt(fd);
	if (opt.tests & BENCH_T_WRITE)
		client_stream(fd);
	send_msg(fd, &q);
	read_full(fd, &r, sizeof(r));
	close(fd);
	return r.op == BENCH_OP_ACK ? 0 : 1;
}

int main(int argc, char **argv)
{
	bench_parse(&opt, argc, argv, "bench_tcp");
	bench_pin(opt.cpu);
	bench_watchdog(&opt);
	return opt.role == BENCH_SERVER ? run_server() : run_client();
}
