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

struct conn_wait {
	_Atomic uint32_t left;
	_Atomic uint32_t bad;
};

static void conn_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct conn_wait *w = arg;

	(void)c;
	(void)res;
	if (status)
		atomic_fetch_add(&w->bad, 1);
	atomic_fetch_sub(&w->left, 1);
}

int perf_connections_mode(const struct perf_client_opts *o, struct perf_conn_report *rep)
{
	uint32_t n = o->connections, size = o->nsizes ? o->sizes[0] : 1048576;
	struct rpcrdma_clnt **c = calloc(n, sizeof(struct rpcrdma_clnt *));
	perf_write_args *wa = calloc(n, sizeof(*wa));
	perf_write_res *wr = calloc(n, sizeof(*wr));
	perf_info info;
	struct conn_wait w = {0};
	int rc = 0;

	struct timespec t0, t1;

	memset(rep, 0, sizeof(*rep));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rep->connections = n;
	rep->size = o->workload == PERF_W_NULL ? 0 : size;
	if (!c || !wa || !wr) {
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

		atomic_store(&w.left, n);
		for (uint32_t i = 0; i < n; i++) {
			wa[i].offset = 0;
			wa[i].data.base = (void *)(uintptr_t)p;
			wa[i].data.len = size;
			if (rpcrdma_clnt_call_async(
				c[i], PERF_WRITE, (xdrproc_t)xdr_perf_write_args, &wa[i],
				(xdrproc_t)xdr_perf_write_res, &wr[i], NULL, conn_cb, &w)) {
				atomic_fetch_add(&w.bad, 1);
				atomic_fetch_sub(&w.left, 1);
			}
		}
		for (int i = 0; i < 60000 && atomic_load(&w.left); i++)
			usleep(1000);
		for (uint32_t i = 0; i < n; i++)
			if (wr[i].len != size || wr[i].sum != want)
				atomic_fetch_add(&w.bad, 1);
		if (atomic_load(&w.left) || atomic_load(&w.bad)) {
			fprintf(stderr, "rpcrdma-perf: %u of %u WRITEs failed or unchecked\n",
				atomic_load(&w.bad) + atomic_load(&w.left), n);
			rc = -EIO;
		}
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
	if (c && !atomic_load(&w.left))
		for (uint32_t i = 0; i < n; i++)
			if (c[i])
				rpcrdma_clnt_destroy(c[i]);
	free(c);
	free(wa);
	free(wr);
	return rc;
}
