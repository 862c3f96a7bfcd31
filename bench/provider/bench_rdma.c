/* SPDX-License-Identifier: MIT */
/*
 * Shared client/server logic of the RDMA workers (see bench_rdma.h). The
 * round-trip and server loops keep their names, out of line: the driver
 * counts instructions with callgrind --toggle-collect=bench_rtt_loop in the
 * client and bench_serve_loop in the server (bench_driver.c).
 */
#define _GNU_SOURCE
#include "bench_rdma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Phase numbers in BEGIN/END; the server names its allocation counts so. */
static const char *const phase_name[] = {"rtt", "write", "read"};

/* Answers the client until QUIT. Out of line so callgrind can count it. */
__attribute__((noinline)) void bench_serve_loop(const struct bench_rdma *b);
__attribute__((noinline)) void bench_serve_loop(const struct bench_rdma *b)
{
	uint64_t a0 = 0, ops0 = 0, ops = 0;

	for (;;) {
		struct bench_msg m = b->recv_msg(), r = {.op = BENCH_OP_ACK};
		char key[64];

		r.seq = m.seq;
		switch (m.op) {
		case BENCH_OP_PING:
			r.op = BENCH_OP_PONG;
			ops++;
			break;
		case BENCH_OP_BEGIN:
			if (b->alloc_count)
				a0 = b->alloc_count();
			ops0 = ops;
			break;
		case BENCH_OP_END:
			/* Server-side allocations during the phase, per round
			 * trip answered (rtt) or in total (write/read, where
			 * the client reports the per-operation figure). */
			if (b->alloc_count && m.a < 3) {
				uint64_t d = b->alloc_count() - a0;

				snprintf(key, sizeof(key), "server_allocs_%s", phase_name[m.a]);
				bench_result(key, (double)d);
				if (m.a == 0 && ops > ops0) {
					snprintf(key, sizeof(key), "server_allocs_per_op_rtt");
					bench_result(key, (double)d / (double)(ops - ops0));
				}
			}
			break;
		case BENCH_OP_FILL:
			bench_fill(b->region, BENCH_REGION, m.a);
			break;
		case BENCH_OP_HASH:
			r.a = bench_hash(b->region, m.a <= BENCH_REGION ? (size_t)m.a : 0);
			break;
		case BENCH_OP_QUIT:
			b->send_msg(&r);
			b->drain_sends();
			return;
		default:
			bench_die("unexpected op %u", m.op);
		}
		b->send_msg(&r);
	}
}

void bench_rdma_serve(const struct bench_rdma *b)
{
	bench_serve_loop(b);
}

static struct bench_msg rpc(const struct bench_rdma *b, uint32_t op, uint64_t a)
{
	struct bench_msg m = {.op = op, .a = a}, r;

	b->send_msg(&m);
	r = b->recv_msg();
	if (r.op != BENCH_OP_ACK)
		bench_die("expected ACK for op %u, got op %u", op, r.op);
	return r;
}

__attribute__((noinline)) void bench_rtt_loop(const struct bench_rdma *b, uint64_t *ns, unsigned n,
					      unsigned seq0);
__attribute__((noinline)) void bench_rtt_loop(const struct bench_rdma *b, uint64_t *ns, unsigned n,
					      unsigned seq0)
{
	struct bench_msg m = {.op = BENCH_OP_PING}, r;
	unsigned i;

	for (i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();

		m.seq = seq0 + i;
		b->send_msg(&m);
		r = b->recv_msg();
		if (r.op != BENCH_OP_PONG || r.seq != m.seq)
			bench_die("bad pong (op %u seq %u, want %u)", r.op, r.seq, m.seq);
		if (ns)
			ns[i] = bench_now_ns() - t0;
	}
}

static uint64_t allocs(const struct bench_rdma *b)
{
	return b->alloc_count ? b->alloc_count() : 0;
}

static void client_rtt(const struct bench_rdma *b)
{
	const struct bench_opts *o = b->opt;
	uint64_t *ns = calloc(o->rtt_iters, sizeof(*ns)), a0, a1;

	if (!ns)
		bench_die("out of memory");
	bench_rtt_loop(b, NULL, o->rtt_warmup, 0);
	rpc(b, BENCH_OP_BEGIN, 0);
	a0 = allocs(b);
	bench_rtt_loop(b, ns, o->rtt_iters, o->rtt_warmup);
	a1 = allocs(b);
	rpc(b, BENCH_OP_END, 0);
	bench_report_rtt("rtt", ns, o->rtt_iters);
	if (b->alloc_count)
		bench_result("allocs_per_op_rtt", (double)(a1 - a0) / (double)o->rtt_iters);
	free(ns);
}

/* One bandwidth phase: opt->qd operations in flight for opt->bw_seconds,
 * then both sides hash the slots that were transferred. The source side
 * holds a known pattern, the sink starts zeroed. */
static void client_bw(const struct bench_rdma *b, int write, unsigned phase)
{
	const struct bench_opts *o = b->opt;
	const char *name = phase_name[phase];
	uint64_t seed = write ? 7 : 11, posted = 0, t0, t1, deadline, check, a0, a1;
	char key[48];

	if (write)
		bench_fill(b->region, BENCH_REGION, seed);
	else
		rpc(b, BENCH_OP_FILL, seed);
	if (!write)
		memset(b->region, 0, BENCH_REGION);
	rpc(b, BENCH_OP_BEGIN, phase);
	a0 = allocs(b);
	uint64_t done0 = *b->rma_done;
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)(o->bw_seconds * 1e9);
	while (posted < o->qd)
		b->post_rma(write, posted++);
	while (*b->rma_done - done0 < posted) {
		b->progress();
		while (posted - (*b->rma_done - done0) < o->qd && bench_now_ns() < deadline)
			b->post_rma(write, posted++);
	}
	t1 = bench_now_ns();
	a1 = allocs(b);
	rpc(b, BENCH_OP_END, phase);
	check = (posted < BENCH_SLOTS ? posted : BENCH_SLOTS) * BENCH_BW_SIZE;
	if (rpc(b, BENCH_OP_HASH, check).a != bench_hash(b->region, (size_t)check))
		bench_die("RDMA %s data check failed", name);
	snprintf(key, sizeof(key), "%s_gbs", name);
	bench_report_bw(key, posted * BENCH_BW_SIZE, t1 - t0);
	if (b->alloc_count) {
		snprintf(key, sizeof(key), "allocs_per_op_%s", name);
		bench_result(key, (double)(a1 - a0) / (double)posted);
	}
}

void bench_rdma_client(const struct bench_rdma *b)
{
	if (b->opt->tests & BENCH_T_RTT)
		client_rtt(b);
	if (b->opt->tests & BENCH_T_WRITE)
		client_bw(b, 1, 1);
	if (b->opt->tests & BENCH_T_READ)
		client_bw(b, 0, 2);
	rpc(b, BENCH_OP_QUIT, 0);
}
