// SPDX-License-Identifier: MIT
/*
 * rpcrdma-perf client --connections N: opens N RPC-over-RDMA connections
 * (one NULL on each), then one WRITE on every connection at once, and
 * reports the server's memory with 1 and N connections, idle and active,
 * and the time to connect them all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma.h>

#include "perf.h"
#include "perf_tool.h"

static uint64_t self_rss_kb(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			v = strtoull(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The one WRITE of each connection. A started call's callback runs
 * exactly once, so each call has one outcome in @st and is counted once:
 * not started or failed (a status), answered (then checked), or still
 * unanswered at the deadline (CONN_PENDING). Counting a failed call
 * again because its zeroed result also failed the data check once
 * printed more failures than calls. */
#define CONN_PENDING 1 /* no status is positive */

struct conn_writes;

struct conn_call {
	struct conn_writes *w;
	_Atomic int st;
	perf_write_args wa;
	perf_write_res wr;
};

/* On the heap: calls still unanswered at the deadline may complete after
 * perf_connections_mode() has returned, so it is then left allocated. */
struct conn_writes {
	_Atomic uint32_t left;
	struct conn_call call[];
};

static void conn_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct conn_call *k = arg;
	struct conn_writes *w = k->w;

	(void)c;
	(void)res;
	/* release: whoever sees st also sees the decoded result */
	atomic_store_explicit(&k->st, status, memory_order_release);
	atomic_fetch_sub(&w->left, 1);
}

/* Connections listed by number when their WRITE failed: enough to see a
 * pattern without thousands of lines. */
#define CONN_LIST_MAX 10u

/* Check each connection's WRITE once; print the failed ones and the
 * counts by cause. The number failed, never more than @n. */
static uint32_t conn_writes_check(struct conn_writes *w, uint32_t n, uint32_t size, uint64_t want)
{
	uint32_t err = 0, wrong = 0, lost = 0, failed;

	for (uint32_t i = 0; i < n; i++) {
		struct conn_call *k = &w->call[i];
		int st = atomic_load_explicit(&k->st, memory_order_acquire);
		const char *why;

		if (st == CONN_PENDING) {
			lost++;
			why = "no reply";
		} else if (st) {
			err++;
			why = rpcrdma_strerror(st);
		} else if (k->wr.len != size || k->wr.sum != want) {
			wrong++;
			why = "the server's length or checksum of the data differs";
		} else {
			continue;
		}
		if (err + wrong + lost <= CONN_LIST_MAX)
			fprintf(stderr, "rpcrdma-perf: WRITE on connection %u failed: %s\n", i + 1,
				why);
	}
	failed = err + wrong + lost;
	if (failed > CONN_LIST_MAX)
		fprintf(stderr, "rpcrdma-perf: (%u more failed WRITEs not listed)\n",
			failed - CONN_LIST_MAX);
	if (failed)
		fprintf(stderr,
			"rpcrdma-perf: %u of %u WRITEs failed: %u with an error, %u with wrong "
			"data, %u unanswered after 60 s\n",
			failed, n, err, wrong, lost);
	return failed;
}

int perf_connections_mode(const struct perf_client_opts *o, struct perf_conn_report *rep)
{
	uint32_t n = o->connections, size = o->nsizes ? o->sizes[0] : 1048576;
	struct rpcrdma_clnt **c = calloc(n, sizeof(struct rpcrdma_clnt *));
	struct conn_writes *w = calloc(1, sizeof(*w) + (size_t)n * sizeof(w->call[0]));
	perf_info info;
	int rc = 0;

	struct timespec t0, t1;

	memset(rep, 0, sizeof(*rep));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rep->connections = n;
	rep->size = o->workload == PERF_W_NULL ? 0 : size;
	if (!c || !w) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n && !rc; i++) {
		rc = perf_rdma_connect(o, 1, false, &c[i]);
		if (rc) {
			fprintf(stderr, "rpcrdma-perf: connection %u of %u: %s\n", i + 1, n,
				rpcrdma_strerror(rc));
			break;
		}
		if (i == 0) {
			memset(&info, 0, sizeof(info));
			rc = rpcrdma_clnt_call(c[0], PERF_INFO, NULL, NULL,
					       (xdrproc_t)xdr_perf_info, &info, NULL);
			rep->rss_kb_1 = info.rss_kb;
			rep->credits = info.credits;
		}
	}
	/* every connection makes one call: idle but used */
	for (uint32_t i = 0; i < n && !rc; i++) {
		rc = rpcrdma_clnt_call(c[i], PERF_NULL, NULL, NULL, NULL, NULL, NULL);
		if (rc)
			fprintf(stderr, "rpcrdma-perf: NULL on connection %u: %s\n", i + 1,
				rpcrdma_strerror(rc));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rep->connect_us = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000u +
			  (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000);
	if (!rc) {
		memset(&info, 0, sizeof(info));
		rc = rpcrdma_clnt_call(c[0], PERF_INFO, NULL, NULL, (xdrproc_t)xdr_perf_info, &info,
				       NULL);
		rep->rss_kb_n = info.rss_kb;
		rep->server_conns_seen = info.connections;
	}
	/* then one WRITE of @size on every connection at once: n x size in
	 * flight, to see whether server memory follows payload sizes */
	if (!rc && rep->size) {
		const uint8_t *p = perf_pattern();
		uint64_t want = perf_sum(p, size);

		atomic_store(&w->left, n);
		for (uint32_t i = 0; i < n; i++) {
			struct conn_call *k = &w->call[i];
			int e;

			k->w = w;
			atomic_store(&k->st, CONN_PENDING);
			k->wa.offset = 0;
			k->wa.data.base = (void *)(uintptr_t)p;
			k->wa.data.len = size;
			e = rpcrdma_clnt_call_async(
			    c[i], PERF_WRITE, (xdrproc_t)xdr_perf_write_args, &k->wa,
			    (xdrproc_t)xdr_perf_write_res, &k->wr, NULL, conn_cb, k);
			if (e) {
				/* the callback never runs */
				atomic_store(&k->st, e);
				atomic_fetch_sub(&w->left, 1);
			}
		}
		for (int i = 0; i < 60000 && atomic_load(&w->left); i++)
			usleep(1000);
		if (conn_writes_check(w, n, size, want))
			rc = -EIO;
		memset(&info, 0, sizeof(info));
		if (rpcrdma_clnt_call(c[0], PERF_INFO, NULL, NULL, (xdrproc_t)xdr_perf_info, &info,
				      NULL) == 0) {
			rep->rss_kb_n_active = info.rss_kb;
			rep->hwm_kb = info.hwm_kb;
		}
	}
	rep->client_rss_kb = self_rss_kb();
	if (!rc && o->hold_s) {
		/* others measure the server meanwhile (scripts/robustness.sh) */
		printf("holding %u connections for %u s\n", n, o->hold_s);
		fflush(stdout);
		sleep(o->hold_s);
	}
out:
	/* a client with a call outstanding cannot be destroyed, and that
	 * call's callback still writes into w: both stay (the process ends) */
	if (w && atomic_load(&w->left))
		return rc;
	if (c)
		for (uint32_t i = 0; i < n; i++)
			if (c[i])
				rpcrdma_clnt_destroy(c[i]);
	free(c);
	free(w);
	return rc;
}
