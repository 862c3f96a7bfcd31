/* SPDX-License-Identifier: MIT */
/*
 * The client and server logic the two RDMA workers share (bench_siw.c over
 * rpcrdma's provider interface, bench_fabric.c over libfabric): the 64-byte
 * ping-pong, the 1 MiB RDMA Write / Read bandwidth loop with its data
 * check, and the server's answers. Each worker supplies its transport as
 * callbacks and keeps its own state; this file never sees which API runs
 * underneath.
 */
#ifndef BENCH_PROVIDER_RDMA_H
#define BENCH_PROVIDER_RDMA_H

#include <stdint.h>

#include "bench_common.h"

struct bench_rdma {
	const struct bench_opts *opt;
	/* BENCH_REGION bytes registered for local and remote access; slot
	 * i % BENCH_SLOTS is operation i's 1 MiB on both sides */
	unsigned char *region;
	/* RDMA Write / Read completions so far, counted by progress() */
	const uint64_t *rma_done;
	/* Reaps at least one completion (waiting as opt->mode says); dies on
	 * a failed one. */
	void (*progress)(void);
	void (*send_msg)(const struct bench_msg *m);
	/* The next received control message (its receive is reposted). */
	struct bench_msg (*recv_msg)(void);
	/* Posts operation i: 1 MiB RDMA Write (write != 0) or Read between
	 * local slot i % BENCH_SLOTS and the server's same slot, signaled;
	 * waits for room itself. */
	void (*post_rma)(int write, uint64_t i);
	/* Server, after its last answer: until that Send has completed. */
	void (*drain_sends)(void);
	/* Heap allocations made so far, or NULL when not counted: then no
	 * allocs_* / server_allocs_* results are reported. */
	uint64_t (*alloc_count)(void);
};

/* Server: answers the client's control messages until QUIT. */
void bench_rdma_serve(const struct bench_rdma *b);
/* Client: runs the tests in opt->tests (RESULT lines), then QUIT. */
void bench_rdma_client(const struct bench_rdma *b);

#endif
