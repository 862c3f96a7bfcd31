// SPDX-License-Identifier: MIT
/*
 * bench_tcp_rtt: the raw loopback TCP round trip of a 64-byte message
 * (issue 38), the floor that bench/rpc's NULL p50 is compared with. A child
 * process (the echo side, pinned to --server-cpu) sends back every 64
 * bytes it receives; the parent (pinned to --client-cpu) sends 64 bytes and
 * waits for them, --count times after a warm-up, and prints the p50 and
 * p99 of the round trips. Both ends use TCP_NODELAY. Two ways to wait:
 *
 *   block  a blocking read() (the thread sleeps in the kernel until the
 *          bytes come: a wake-up per message, as a sleeping RPC does)
 *   spin   recv(MSG_DONTWAIT) in a loop (never sleeps, as a busy-polling
 *          RPC transport does)
 *
 * Both ends wait the same way. Output: one line per mode,
 *   tcp_rtt MODE p50_us X p99_us Y count N
 *
 *   bench_tcp_rtt [--mode block|spin|both] [--count N] [--warmup N]
 *                 [--server-cpu N] [--client-cpu N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_cpu.h"

#define MSG 64

/* Exactly MSG bytes into @buf; false at end of stream or on error. */
static bool get(int fd, char *buf, bool spin)
{
	size_t have = 0;

	while (have < MSG) {
		ssize_t r = recv(fd, buf + have, MSG - have, spin ? MSG_DONTWAIT : 0);

		if (r > 0) {
			have += (size_t)r;
		} else if (r == 0) {
			return false;
		} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			return false;
		}
	}
	return true;
}

static bool put(int fd, const char *buf)
{
	size_t done = 0;

	while (done < MSG) {
		ssize_t w = send(fd, buf + done, MSG - done, MSG_NOSIGNAL);

		if (w < 0 && errno != EINTR && errno != EAGAIN)
			return false;
		if (w > 0)
			done += (size_t)w;
	}
	return true;
}

static void nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One mode: listen, fork the echo side, ping-pong, report. 0 on success. */
static int run(bool spin, long count, long warmup, int scpu, int ccpu)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), fd, st;
	char buf[MSG];
	uint64_t *rtt;
	pid_t pid;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("listen");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		int c;

		if (bench_pin_cpu(scpu) != 0)
			perror("sched_setaffinity");
		c = accept(ls, NULL, NULL);
		if (c < 0)
			_exit(1);
		nodelay(c);
		while (get(c, buf, spin))
			if (!put(c, buf))
				_exit(1);
		_exit(0);
	}
	close(ls);
	if (bench_pin_cpu(ccpu) != 0)
		perror("sched_setaffinity");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	nodelay(fd);
	rtt = calloc((size_t)count, sizeof(*rtt));
	if (!rtt)
		return 1;
	memset(buf, 0x5a, sizeof(buf));
	for (long i = -warmup; i < count; i++) {
		uint64_t t0 = monotonic_ns();

		if (!put(fd, buf) || !get(fd, buf, spin)) {
			fprintf(stderr, "bench_tcp_rtt: the echo side went away\n");
			free(rtt);
			close(fd);
			waitpid(pid, NULL, 0);
			return 1;
		}
		if (i >= 0)
			rtt[i] = monotonic_ns() - t0;
	}
	close(fd);
	waitpid(pid, &st, 0);
	qsort(rtt, (size_t)count, sizeof(*rtt), cmp_u64);
	printf("tcp_rtt %s p50_us %.2f p99_us %.2f count %ld\n", spin ? "spin" : "block",
	       (double)rtt[count / 2] / 1e3, (double)rtt[count * 99 / 100] / 1e3, count);
	fflush(stdout);
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"mode", required_argument, NULL, 'm'},
					   {"count", required_argument, NULL, 'n'},
					   {"warmup", required_argument, NULL, 'w'},
					   {"server-cpu", required_argument, NULL, 's'},
					   {"client-cpu", required_argument, NULL, 'c'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *mode = "both";
	long count = 20000, warmup = 2000;
	int scpu = -1, ccpu = -1, o, rc = 0;

	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'm':
			mode = optarg;
			break;
		case 'n':
			count = strtol(optarg, NULL, 0);
			break;
		case 'w':
			warmup = strtol(optarg, NULL, 0);
			break;
		case 's':
			scpu = atoi(optarg);
			break;
		case 'c':
			ccpu = atoi(optarg);
			break;
		default:
			fprintf(o == 'h' ? stdout : stderr,
				"usage: bench_tcp_rtt [--mode block|spin|both] [--count N] "
				"[--warmup N] [--server-cpu N] [--client-cpu N]\n");
			return o == 'h' ? 0 : 2;
		}
	}
	if (count < 1 || warmup < 0 ||
	    (strcmp(mode, "block") && strcmp(mode, "spin") && strcmp(mode, "both"))) {
		fprintf(stderr, "bench_tcp_rtt: bad --mode or --count\n");
		return 2;
	}
	if (strcmp(mode, "spin"))
		rc |= run(false, count, warmup, scpu, ccpu);
	if (strcmp(mode, "block"))
		rc |= run(true, count, warmup, scpu, ccpu);
	return rc;
}
