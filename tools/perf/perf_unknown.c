// SPDX-License-Identifier: MIT
/*
 * rpcrdma-perf --workload unknown: calls whose reply size the client does
 * not know in advance (issue 16's figure, docs/reliable-replies.md). Each
 * call asks for a reply payload drawn from a seeded, mostly small
 * distribution (perf_unknown_size) and is made in one of two modes on the
 * same connection, alternating in blocks:
 *   rr     RPCRDMA_CALL_OPT_UNKNOWN_REPLY: no Reply chunk; a reply too
 *          large for inline comes in a responder-provided Read chunk
 *          (reliable replies, both ends configured for them);
 *   chunk  always a Reply chunk of PERF_UNKNOWN_CHUNK (1 MiB), what a
 *          requester without reliable replies has to offer.
 * Both modes see the same sequence of sizes (call k of a mode has size k
 * of the sequence) and the same pattern offsets, so what differs is only
 * how the reply travels. Per mode: latency histogram and the bytes each
 * side registered (the reg_bytes counters of struct rpcrdma_xprt_stats,
 * the server's through PERF_INFO), taken around each block.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpcrdma.h>

#include "perf.h"
#include "perf_tool.h"

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser, as perf_pattern.c */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A uniform double in [0, 1) from 53 bits of @x. */
static double unit(uint64_t x)
{
	return (double)(x >> 11) * 0x1.0p-53;
}

/* Log-uniform in [lo, hi]: each power of two of the range equally likely. */
static uint32_t log_uniform(double u, uint32_t lo, uint32_t hi)
{
	double v = exp(log((double)lo) + u * (log((double)hi + 1.0) - log((double)lo)));

	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/*
 * The distribution: 90% of the calls log-uniform in [100 B, 4 KiB], 10%
 * log-uniform in (4 KiB, 1 MiB - 64 B]; mean about 20 KiB, median about
 * 900 B. A pure function of (seed, i): any run with the same seed asks
 * for the same sizes in the same order.
 */
uint32_t perf_unknown_size(uint64_t seed, uint64_t i)
{
	uint64_t a = mix(seed ^ mix(i)), b = mix(a);

	if (a % 10u)
		return log_uniform(unit(b), PERF_UNKNOWN_MIN, PERF_UNKNOWN_SMALL);
	return log_uniform(unit(b), PERF_UNKNOWN_SMALL + 1u, PERF_UNKNOWN_MAX);
}

enum { M_RR, M_CHUNK, M_N };

static const char *const mode_name[M_N] = {"rr-read-chunk", "reply-chunk-1MiB"};

struct mode {
	struct perf_hist *hist;
	uint64_t calls, bytes, k;            /* k: next index into the size sequence */
	uint64_t nlarge, ns_small, ns_large; /* calls above PERF_UNKNOWN_SMALL */
	uint64_t clnt_reg, svc_reg, clnt_pulled, svc_exposed, svc_reply_chunks;
	double seconds;
};

struct ctx {
	const struct perf_client_opts *o;
	struct rpcrdma_clnt *c;
	uint64_t sums[PERF_NOFF];
	char err[160];
};

static int info(struct ctx *x, perf_info *in)
{
	memset(in, 0, sizeof(*in));
	return rpcrdma_clnt_call(x->c, PERF_INFO, NULL, NULL, (xdrproc_t)xdr_perf_info, in, NULL);
}

/* One call of mode @m with size index @k: 0, or -errno with x->err set. */
static int one_call(struct ctx *x, int m, uint64_t k, uint64_t *ns, uint32_t *size)
{
	struct rpcrdma_call_opts co;
	perf_get_args a;
	perf_echo r;
	uint32_t off = (uint32_t)(k % PERF_NOFF);
	uint64_t t0;
	int rc;

	a.len = perf_unknown_size(x->o->seed, k);
	a.offset = (uint64_t)off * PERF_OFF_STEP;
	memset(&co, 0, sizeof(co));
	if (m == M_RR) {
		co.comp_mask = RPCRDMA_CALL_OPT_UNKNOWN_REPLY;
	} else {
		co.comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE;
		co.reply_size = PERF_UNKNOWN_CHUNK;
	}
	memset(&r, 0, sizeof(r));
	t0 = perf_now_ns();
	rc = rpcrdma_clnt_call(x->c, PERF_GET, (xdrproc_t)xdr_perf_get_args, &a,
			       (xdrproc_t)xdr_perf_echo, &r, &co);
	*ns = perf_now_ns() - t0;
	*size = a.len;
	if (rc) {
		snprintf(x->err, sizeof(x->err), "%s: GET of %u B: %s", mode_name[m], a.len,
			 rpcrdma_strerror(rc));
		return rc;
	}
	/* Every payload checked (outside the timed part): the bytes of the
	 * pattern at the call's offset, as the client derives them itself. */
	if (r.data.data_len != a.len || !r.data.data_val ||
	    perf_sum(r.data.data_val, a.len) != perf_sum(perf_pattern() + a.offset, a.len)) {
		snprintf(x->err, sizeof(x->err),
			 "%s: GET of %u B: the bytes differ from the pattern", mode_name[m], a.len);
		rc = -EIO;
	}
	xdr_free((xdrproc_t)xdr_perf_echo, (char *)&r);
	return rc;
}

/* A block of @n calls of mode @m; measured unless @warm. */
static int block(struct ctx *x, struct mode *md, int m, uint32_t n, bool warm)
{
	struct rpcrdma_xprt_stats s0, s1;
	perf_info i0, i1;
	uint64_t t0, k = warm ? (1ull << 40) + md->k : md->k;
	int rc;

	if ((rc = rpcrdma_clnt_stats(x->c, &s0)) || (rc = info(x, &i0))) {
		snprintf(x->err, sizeof(x->err), "counters: %s", rpcrdma_strerror(rc));
		return rc;
	}
	t0 = perf_now_ns();
	for (uint32_t j = 0; j < n; j++) {
		uint64_t ns;
		uint32_t size;

		rc = one_call(x, m, k + j, &ns, &size);
		if (rc)
			return rc;
		if (!warm) {
			perf_hist_add(md->hist, ns);
			md->calls++;
			md->bytes += size;
			if (size > PERF_UNKNOWN_SMALL) {
				md->nlarge++;
				md->ns_large += ns;
			} else {
				md->ns_small += ns;
			}
		}
	}
	if (warm)
		return 0;
	md->seconds += (double)(perf_now_ns() - t0) / 1e9;
	md->k += n;
	if ((rc = rpcrdma_clnt_stats(x->c, &s1)) || (rc = info(x, &i1))) {
		snprintf(x->err, sizeof(x->err), "counters: %s", rpcrdma_strerror(rc));
		return rc;
	}
	md->clnt_reg += s1.reg_bytes - s0.reg_bytes;
	md->clnt_pulled += s1.rr_replies - s0.rr_replies;
	md->svc_reg += i1.reg_bytes - i0.reg_bytes;
	md->svc_exposed += i1.rr_replies - i0.rr_replies;
	return 0;
}

/* After the last call the server may still be handling its pull
 * completion: wait (at most 2 s) until nothing is exposed. */
static uint64_t exposed_after(struct ctx *x)
{
	perf_info in;

	for (int i = 0; i < 200; i++) {
		if (info(x, &in))
			return UINT64_MAX;
		if (!in.rr_exposed_bytes)
			return 0;
		usleep(10000);
	}
	return in.rr_exposed_bytes;
}

static void row(const struct mode *md, int m)
{
	double n = md->calls ? (double)md->calls : 1.0;

	uint64_t nsmall = md->calls - md->nlarge;

	printf("%-17s %8llu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %12.0f %12.0f %8llu\n",
	       mode_name[m], (unsigned long long)md->calls,
	       md->hist->count ? (double)md->hist->sum_ns / (double)md->hist->count / 1e3 : 0.0,
	       perf_hist_quantile(md->hist, 0.50) / 1e3, perf_hist_quantile(md->hist, 0.99) / 1e3,
	       (double)md->hist->max_ns / 1e3,
	       nsmall ? (double)md->ns_small / (double)nsmall / 1e3 : 0.0,
	       md->nlarge ? (double)md->ns_large / (double)md->nlarge / 1e3 : 0.0,
	       (double)md->clnt_reg / n, (double)md->svc_reg / n,
	       (unsigned long long)(m == M_RR ? md->clnt_pulled : 0));
}

int perf_unknown_main(const struct perf_client_opts *o)
{
	struct ctx x = {.o = o};
	struct mode md[M_N];
	struct rpcrdma_xprt_stats st;
	perf_info in;
	uint64_t start, now, left_over;
	uint32_t n = o->block;
	int rc, pinned = -2, seen = -1;
	double mean[M_N];

	memset(md, 0, sizeof(md));
	for (int m = 0; m < M_N; m++) {
		md[m].hist = calloc(1, sizeof(*md[m].hist));
		if (!md[m].hist) {
			free(md[0].hist);
			return -ENOMEM;
		}
	}
	rc = perf_rdma_connect(o, 1, true, &x.c);
	if (rc) {
		fprintf(stderr, "rpcrdma-perf: connect: %s\n", rpcrdma_strerror(rc));
		goto out;
	}
	if (!info(&x, &in)) {
		pinned = in.cpu_pinned;
		seen = in.cpu_now;
	}
	/* warm-up: both modes, not measured (buffers grown, pages touched) */
	start = perf_now_ns();
	do {
		for (int m = 0; m < M_N && !rc; m++)
			rc = block(&x, &md[m], m, n, true);
	} while (!rc && perf_now_ns() - start < (uint64_t)(o->warmup * 1e9));
	/* measured: blocks of n calls, the modes alternating (which one
	 * goes first alternates too, so neither always follows the other),
	 * until both made --count calls or --duration passed */
	start = perf_now_ns();
	for (uint64_t b = 0; !rc; b++) {
		for (int j = 0; j < M_N && !rc; j++) {
			int m = (int)((b + (uint64_t)j) % M_N);

			rc = block(&x, &md[m], m, n, false);
		}
		now = perf_now_ns();
		if (o->count ? md[0].calls >= o->count : (double)(now - start) / 1e9 >= o->duration)
			break;
	}
	if (rc) {
		fprintf(stderr, "rpcrdma-perf: unknown: %s\n", x.err);
		goto out;
	}
	left_over = exposed_after(&x);
	if (rpcrdma_clnt_stats(x.c, &st))
		memset(&st, 0, sizeof(st));

	printf("workload unknown: reply payloads of %u..%u B, 90%% log-uniform in [%u, %u], 10%% "
	       "log-uniform above; seed %llu; mean %.0f B\n",
	       PERF_UNKNOWN_MIN, PERF_UNKNOWN_MAX, PERF_UNKNOWN_MIN, PERF_UNKNOWN_SMALL,
	       (unsigned long long)o->seed,
	       md[0].calls ? (double)md[0].bytes / (double)md[0].calls : 0.0);
	printf("RPC-over-RDMA Version %s, inline %u/%u B, 1 connection, 1 call in flight, modes "
	       "alternating in blocks of %u calls\n",
	       o->rdma_version == RPCRDMA_VERSION_1 ? "One" : "Two", st.inline_send, st.inline_recv,
	       n);
	printf("%-17s %8s %9s %9s %9s %9s %9s %9s %12s %12s %8s\n", "mode", "calls", "mean us",
	       "p50 us", "p99 us", "max us", "mean us", "mean us", "clnt reg B", "svc reg B",
	       "pulled");
	printf("%-17s %8s %9s %9s %9s %9s %9s %9s %12s %12s %8s\n", "", "(checked)", "", "", "", "",
	       "<=4KiB", ">4KiB", "per call", "per call", "replies");
	for (int m = 0; m < M_N; m++) {
		row(&md[m], m);
		mean[m] = md[m].hist->count
			      ? (double)md[m].hist->sum_ns / (double)md[m].hist->count / 1e3
			      : 0.0;
	}
	printf("ratio mean(%s)/mean(%s) = %.3f (goal <= 0.80: %s); server exposed bytes after "
	       "the run: %llu\n",
	       mode_name[M_RR], mode_name[M_CHUNK],
	       mean[M_CHUNK] > 0 ? mean[M_RR] / mean[M_CHUNK] : 0,
	       mean[M_CHUNK] > 0 && mean[M_RR] / mean[M_CHUNK] <= 0.80 ? "met" : "missed",
	       (unsigned long long)left_over);
	if (pinned >= 0 && o->cpu >= 0)
		printf("placement: server pinned to CPU %d, client pinned to CPU %d\n", pinned,
		       o->cpu);
	else
		printf("placement: server %s %d, client %s %d\n",
		       pinned >= 0 ? "pinned to CPU" : "on CPU", pinned >= 0 ? pinned : seen,
		       o->cpu >= 0 ? "pinned to CPU" : "on CPU",
		       o->cpu >= 0 ? o->cpu : sched_getcpu());
	/* A run whose rr mode never pulled a reply did not measure what it
	 * says: the server is not configured for reliable replies. */
	if (!md[M_RR].clnt_pulled) {
		fprintf(stderr,
			"rpcrdma-perf: unknown: no reply came by Read chunk (server without "
			"--reliable-reply?)\n");
		rc = -EPROTO;
	} else if (left_over) {
		fprintf(stderr, "rpcrdma-perf: unknown: the server still exposes %llu B\n",
			(unsigned long long)left_over);
		rc = -EIO;
	}
out:
	if (x.c)
		rpcrdma_clnt_destroy(x.c);
	for (int m = 0; m < M_N; m++)
		free(md[m].hist);
	return rc;
}
