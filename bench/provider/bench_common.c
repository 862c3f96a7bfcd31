/* SPDX-License-Identifier: MIT */
/* Options, timing, statistics and reporting shared by the benchmark workers. */
#define _GNU_SOURCE
#include "bench_common.h"

#include "../bench_cpu.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *bench_prog = "bench";

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", bench_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: %s --server|--client [options]\n"
	    "  --host A          peer / listen address (default 127.0.0.1)\n"
	    "  --port N          server port (client: required; server: 0 = any)\n"
	    "  --mode block|poll completion waiting: fd-driven or busy polling\n"
	    "  --crc 0|1         MPA CRC32c (softiwarp only)\n"
	    "  --cpu N           pin this process to CPU N (-1: no pinning)\n"
	    "  --tests LIST      rtt,write,read (client)\n"
	    "  --rtt-iters N     measured 64 B round trips (default 20000)\n"
	    "  --rtt-warmup N    unmeasured round trips first (default 1000)\n"
	    "  --seconds S       seconds per bandwidth test (default 1.5)\n"
	    "  --qd N            operations in flight (default 16)\n"
	    "  --timeout S       kill this process after S seconds (default 60)\n"
	    "  --yield           poll mode: sched_yield() when a poll finds nothing\n"
	    "  --progress-wait   block mode: the provider's own wait (rpcrdma_dev_progress(dev,\n"
	    "                    1000) / fi_cq_sread()) instead of poll() on its fd\n",
	    bench_prog);
	exit(2);
}

static unsigned parse_uint(const char *s, unsigned max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || v > max)
		bench_die("bad number '%s' (max %u)", s, max);
	return (unsigned)v;
}

static unsigned parse_tests(const char *s)
{
	unsigned t = 0;
	char buf[64], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		bench_die("bad --tests '%s'", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "rtt"))
			t |= BENCH_T_RTT;
		else if (!strcmp(tok, "write") || !strcmp(tok, "stream"))
			t |= BENCH_T_WRITE;
		else if (!strcmp(tok, "read"))
			t |= BENCH_T_READ;
		else
			bench_die("unknown test '%s'", tok);
	}
	return t;
}

void bench_parse(struct bench_opts *o, int argc, char **argv, const char *prog)
{
	static const struct option lo[] = {
	    {"server", no_argument, NULL, 'S'},
	    {"client", no_argument, NULL, 'C'},
	    {"host", required_argument, NULL, 'h'},
	    {"port", required_argument, NULL, 'p'},
	    {"mode", required_argument, NULL, 'm'},
	    {"crc", required_argument, NULL, 'c'},
	    {"cpu", required_argument, NULL, 'u'},
	    {"tests", required_argument, NULL, 't'},
	    {"rtt-iters", required_argument, NULL, 'n'},
	    {"rtt-warmup", required_argument, NULL, 'w'},
	    {"seconds", required_argument, NULL, 's'},
	    {"qd", required_argument, NULL, 'q'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"yield", no_argument, NULL, 'y'},
	    {"progress-wait", no_argument, NULL, 'W'},
	    {NULL, 0, NULL, 0},
	};
	int c, role = -1;

	bench_prog = prog;
	*o = (struct bench_opts){
	    .mode = BENCH_BLOCK,
	    .host = "127.0.0.1",
	    .cpu = -1,
	    .crc = 0,
	    .tests = BENCH_T_ALL,
	    .rtt_iters = 20000,
	    .rtt_warmup = 1000,
	    .bw_seconds = 1.5,
	    .qd = 16,
	    .timeout = 60,
	};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'S':
			role = BENCH_SERVER;
			break;
		case 'C':
			role = BENCH_CLIENT;
			break;
		case 'h':
			o->host = optarg;
			break;
		case 'p':
			o->port = parse_uint(optarg, 65535);
			break;
		case 'm':
			if (!strcmp(optarg, "block"))
				o->mode = BENCH_BLOCK;
			else if (!strcmp(optarg, "poll"))
				o->mode = BENCH_POLL;
			else
				usage();
			break;
		case 'c':
			o->crc = (int)parse_uint(optarg, 1);
			break;
		case 'u':
			o->cpu = strcmp(optarg, "-1") ? (int)parse_uint(optarg, 4095) : -1;
			break;
		case 't':
			o->tests = parse_tests(optarg);
			break;
		case 'n':
			o->rtt_iters = parse_uint(optarg, 100000000);
			break;
		case 'w':
			o->rtt_warmup = parse_uint(optarg, 100000000);
			break;
		case 's':
			o->bw_seconds = strtod(optarg, NULL);
			if (!(o->bw_seconds > 0 && o->bw_seconds < 600))
				bench_die("bad --seconds '%s'", optarg);
			break;
		case 'q':
			o->qd = parse_uint(optarg, BENCH_MAX_QD);
			if (!o->qd)
				bench_die("--qd must be at least 1");
			break;
		case 'T':
			o->timeout = parse_uint(optarg, 86400);
			break;
		case 'y':
			o->yield = 1;
			break;
		case 'W':
			o->progress_wait = 1;
			break;
		default:
			usage();
		}
	}
	if (role < 0 || optind != argc)
		usage();
	o->role = (enum bench_role)role;
	/* Errors name the side: "bench_siw client: ..." */
	{
		static char name[64];

		snprintf(name, sizeof(name), "%s %s", prog,
			 role == BENCH_SERVER ? "server" : "client");
		bench_prog = name;
	}
	if (o->role == BENCH_CLIENT && !o->port)
		bench_die("--client needs --port");
	if (!o->rtt_iters)
		o->rtt_iters = 1;
}

void bench_pin(int cpu)
{
	int rc = bench_pin_cpu(cpu);

	if (rc != 0)
		bench_die("cannot pin to CPU %d: %s", cpu, strerror(-rc));
}

void bench_watchdog(const struct bench_opts *o)
{
	/* Default SIGALRM action terminates the process; the driver sees a
	 * signal exit and reports which worker timed out. */
	signal(SIGALRM, SIG_DFL);
	alarm(o->timeout);
}

void bench_idle(const struct bench_opts *o)
{
	if (o->mode == BENCH_POLL && o->yield)
		sched_yield();
}

uint64_t bench_now_ns(void)
{
	return monotonic_ns();
}

/* splitmix64: a cheap, well-mixed sequence so a misplaced or stale 1 MiB
 * slot cannot hash equal by accident. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15u;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

void bench_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = mix64(seed + i);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (unsigned char)mix64(seed + i);
}

uint64_t bench_hash(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0x6a09e667f3bcc909u;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		h = (h ^ v) * 0x100000001b3u + (h >> 29);
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return mix64(h ^ len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void bench_report_rtt(const char *prefix, uint64_t *ns, size_t n)
{
	char key[96];
	double sum = 0;
	size_t i, i50, i99;

	if (!n)
		return;
	qsort(ns, n, sizeof(*ns), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)ns[i];
	i50 = (n - 1) * 50 / 100;
	i99 = (n - 1) * 99 / 100;
	snprintf(key, sizeof(key), "%s_p50_us", prefix);
	bench_result(key, (double)ns[i50] / 1e3);
	snprintf(key, sizeof(key), "%s_p99_us", prefix);
	bench_result(key, (double)ns[i99] / 1e3);
	snprintf(key, sizeof(key), "%s_mean_us", prefix);
	bench_result(key, sum / (double)n / 1e3);
	snprintf(key, sizeof(key), "%s_iters", prefix);
	bench_result(key, (double)n);
}

void bench_report_bw(const char *key, uint64_t bytes, uint64_t ns)
{
	char k[96];

	bench_result(key, ns ? (double)bytes / (double)ns : 0.0);
	snprintf(k, sizeof(k), "%s_bytes", key);
	bench_result(k, (double)bytes);
}

void bench_result(const char *key, double v)
{
	printf("RESULT %s %.10g\n", key, v);
	fflush(stdout);
}

void bench_info(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("INFO %s ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void bench_ready(unsigned port)
{
	printf("READY %u\n", port);
	fflush(stdout);
}
