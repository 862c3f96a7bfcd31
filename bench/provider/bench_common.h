/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the provider benchmark's worker programs (rpcrdma softiwarp,
 * libfabric tcp, plain TCP): options, timing, statistics, CPU pinning, the
 * 64-byte control message both sides exchange, and the line protocol that
 * reports results to the driver (bench_driver.c).
 *
 * Worker line protocol on stdout (one line each, flushed):
 *   READY <port>            server is listening on 127.0.0.1:<port>
 *   INFO <key> <text>       free-form facts (e.g. what libfabric granted)
 *   RESULT <key> <number>   one measured figure
 * Errors go to stderr; a worker exits 0 only if every test it ran passed its
 * data check.
 */
#ifndef BENCH_PROVIDER_COMMON_H
#define BENCH_PROVIDER_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_MSG_SIZE 64u        /* the Send round trip payload (issue 3) */
#define BENCH_BW_SIZE  (1u << 20) /* one RDMA Write / Read / stream chunk */
#define BENCH_MAX_QD   64u        /* ops in flight; slots wrap past BENCH_SLOTS */
#define BENCH_NRECV    16u        /* receives kept posted on each side */

enum bench_role { BENCH_SERVER, BENCH_CLIENT };
enum bench_mode { BENCH_BLOCK, BENCH_POLL };

/* Which tests a client runs, as a bit set. */
#define BENCH_T_RTT   0x1u
#define BENCH_T_WRITE 0x2u
#define BENCH_T_READ  0x4u
#define BENCH_T_ALL   (BENCH_T_RTT | BENCH_T_WRITE | BENCH_T_READ)

struct bench_opts {
	enum bench_role role;
	enum bench_mode mode;
	const char *host;    /* always 127.0.0.1 by default: loopback only */
	unsigned port;       /* client: server port; server: 0 = ephemeral */
	int cpu;             /* -1: not pinned */
	int crc;             /* MPA CRC32c (softiwarp only) */
	unsigned tests;      /* BENCH_T_* */
	unsigned rtt_iters;  /* measured 64 B round trips */
	unsigned rtt_warmup; /* unmeasured round trips first */
	double bw_seconds;   /* per bandwidth test */
	unsigned qd;         /* RDMA ops in flight */
	unsigned timeout;    /* whole-process watchdog, seconds */
	int yield;           /* poll mode: sched_yield() after an empty poll */
	int progress_wait;   /* softiwarp block mode: wait inside rpcrdma_dev_progress */
};

/* Control messages: exactly BENCH_MSG_SIZE bytes, host byte order (both ends
 * are the same binary on the same machine). The client drives; the server
 * only answers. */
enum bench_op {
	BENCH_OP_PING = 1, /* answered by PONG with the same seq */
	BENCH_OP_PONG,
	BENCH_OP_MR,    /* server -> client: a = addr, b = key/stag, c = length */
	BENCH_OP_BEGIN, /* a = phase: server snapshots its counters */
	BENCH_OP_END,   /* a = phase: server reports its counters, answers ACK */
	BENCH_OP_FILL,  /* server fills its buffer with pattern seed a, answers ACK */
	BENCH_OP_HASH,  /* server answers ACK with a = hash of its buffer */
	BENCH_OP_ACK,
	BENCH_OP_QUIT, /* server answers ACK and exits */
};

struct bench_msg {
	uint32_t op;
	uint32_t seq;
	uint64_t a, b, c;
	uint8_t pad[BENCH_MSG_SIZE - 32];
};
_Static_assert(sizeof(struct bench_msg) == BENCH_MSG_SIZE, "control message size");

/* Each side registers BENCH_SLOTS slots of 1 MiB; operation i uses slot
 * i % BENCH_SLOTS on both ends, so up to BENCH_SLOTS transfers in flight
 * touch distinct memory. */
#define BENCH_SLOTS  16u
#define BENCH_REGION ((size_t)BENCH_SLOTS * BENCH_BW_SIZE)

/* Parses the common options; exits with a usage message on error. */
void bench_parse(struct bench_opts *o, int argc, char **argv, const char *prog);

/* Pins the calling process to cpu (no-op for -1); exits on failure. */
void bench_pin(int cpu);

/* SIGALRM after o->timeout seconds kills the worker: nothing hangs forever. */
void bench_watchdog(const struct bench_opts *o);

uint64_t bench_now_ns(void);

/* Deterministic fill and a fast 64-bit hash to check that bytes crossed. */
void bench_fill(void *buf, size_t len, uint64_t seed);
uint64_t bench_hash(const void *buf, size_t len);

/* Sorts the samples (ns) and reports p50/p99/mean in microseconds under
 * the given key prefix, e.g. "rtt" -> rtt_p50_us ... */
void bench_report_rtt(const char *prefix, uint64_t *ns, size_t n);
/* Reports bytes / seconds as GB/s (10^9 bytes per second). */
void bench_report_bw(const char *key, uint64_t bytes, uint64_t ns);

void bench_result(const char *key, double v);
void bench_info(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bench_ready(unsigned port);

/* Poll mode with --yield (both processes on one CPU): give the CPU to the
 * peer after finding nothing, else each round trip costs a time slice. */
void bench_idle(const struct bench_opts *o);

/* Prints "<prog>: <msg>" to stderr and exits 1. */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
