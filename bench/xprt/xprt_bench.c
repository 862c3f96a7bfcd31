// SPDX-License-Identifier: MIT
/*
 * xprt_bench: the RPC-over-RDMA client and server hot paths, two processes
 * over loopback (softiwarp), through the public API only.
 *
 *   xprt_bench [-s CPU] [-c CPU] [-n CALLS] [-d DEPTH] [-t THREADS] [-b BYTES]
 *              [-m null|write|read] [-w WORKERS] [-C (MPA CRC on)]
 *
 * -d 1 -t 1: synchronous calls, per-call round trip (p50/p99) and rate;
 * -d N: N asynchronous calls kept in flight on one connection; -t N: N
 * threads making synchronous calls on one client. The server is a forked
 * child pinned to -s, the client to -c (-1: not pinned).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma.h"

#include "../bench_cpu.h"

#define PROG 0x20000777u

enum { P_NULL = 0, P_WRITE = 1, P_READ = 2 };

static uint8_t *sbuf;
static uint32_t sbytes;

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	if (proc == P_NULL) {
		rpcrdma_svc_reply(req, NULL, NULL);
	} else if (proc == P_WRITE) {
		rpcrdma_bulk b = {0};
		u_int n;

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_rpcrdma_bulk, &b)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		n = b.len;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &n);
	} else if (proc == P_READ) {
		rpcrdma_bulk b = {.base = sbuf, .len = sbytes};

		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
	} else {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

struct cfg {
	int scpu, ccpu, depth, threads, workers, crc, busy;
	long calls;
	uint32_t bytes;
	int mode;
	uint16_t port;
};

static struct cfg C = {.scpu = 0,
		       .ccpu = 1,
		       .depth = 1,
		       .threads = 1,
		       .workers = -1,
		       .calls = 100000,
		       .bytes = 1u << 20,
		       .mode = P_NULL};

static pid_t server(int *ctl_out)
{
	int portp[2], ctl[2];
	pid_t pid;

	if (pipe(portp) || pipe(ctl))
		exit(2);
	pid = fork();
	if (pid == 0) {
		struct rpcrdma_svc_opts o = {0};
		struct rpcrdma_svc *svc;
		uint16_t port = 0;
		char c;

		close(ctl[1]);
		(void)bench_pin_cpu(C.scpu); /* unpinned if it fails */
		sbytes = C.bytes;
		sbuf = malloc(sbytes);
		memset(sbuf, 0x5a, sbytes);
		o.comp_mask = RPCRDMA_SVC_OPT_MPA_CRC | RPCRDMA_SVC_OPT_MAX_CHUNK;
		o.mpa_crc = C.crc;
		if (C.busy) {
			o.comp_mask |= RPCRDMA_SVC_OPT_PROGRESS;
			o.progress = RPCRDMA_PROGRESS_BUSY_POLL;
		}
		o.max_chunk_bytes = 256u << 20;
		if (C.workers >= 0) {
			o.comp_mask |= RPCRDMA_SVC_OPT_WORKERS;
			o.workers = (uint32_t)C.workers;
		}
		if (rpcrdma_svc_create_any("127.0.0.1", &o, &svc) ||
		    rpcrdma_svc_register(svc, PROG, 1, dispatch, NULL) || rpcrdma_svc_start(svc))
			_exit(2);
		port = rpcrdma_svc_port(svc);
		if (write(portp[1], &port, sizeof(port)) != sizeof(port))
			_exit(3);
		while (read(ctl[0], &c, 1) > 0)
			;
		rpcrdma_svc_stop(svc, 1000);
		rpcrdma_svc_destroy(svc);
		_exit(0);
	}
	close(ctl[0]);
	if (read(portp[0], &C.port, sizeof(C.port)) != sizeof(C.port))
		exit(2);
	*ctl_out = ctl[1];
	return pid;
}

static uint8_t *cbuf;

static int one_call(struct rpcrdma_clnt *c)
{
	if (C.mode == P_NULL)
		return rpcrdma_clnt_call(c, P_NULL, NULL, NULL, NULL, NULL, NULL);
	if (C.mode == P_WRITE) {
		rpcrdma_bulk b = {.base = cbuf, .len = C.bytes};
		u_int n = 0;
		int rc = rpcrdma_clnt_call(c, P_WRITE, (xdrproc_t)xdr_rpcrdma_bulk, &b,
					   (xdrproc_t)xdr_u_int, &n, NULL);

		return rc ? rc : (n == C.bytes ? 0 : -EIO);
	}
	{
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RECV_BULK,
					      .nrecv_bulk = 1};
		rpcrdma_bulk b = {0};
		int rc;

		o.recv_bulk[0].base = cbuf;
		o.recv_bulk[0].len = C.bytes;
		rc = rpcrdma_clnt_call(c, P_READ, NULL, NULL, (xdrproc_t)xdr_rpcrdma_bulk, &b, &o);
		return rc ? rc : (b.len == C.bytes ? 0 : -EIO);
	}
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct thr {
	struct rpcrdma_clnt *c;
	long n;
	uint64_t *lat;
	int err;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	for (long i = 0; i < t->n; i++) {
		uint64_t t0 = monotonic_ns();
		int rc = one_call(t->c);

		if (t->lat)
			t->lat[i] = monotonic_ns() - t0;
		if (rc) {
			t->err = rc;
			break;
		}
	}
	return NULL;
}

static atomic_long a_left, a_done;
static atomic_int a_err;

static void acb(struct rpcrdma_clnt *c, int status, void *res, void *arg);

static void a_issue(struct rpcrdma_clnt *c)
{
	if (atomic_fetch_sub(&a_left, 1) <= 0)
		return;
	int rc = rpcrdma_clnt_call_async(c, P_NULL, NULL, NULL, NULL, NULL, NULL, acb, NULL);

	if (rc) {
		atomic_store(&a_err, rc);
		atomic_fetch_add(&a_done, 1);
	}
}

static void acb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)res;
	(void)arg;
	if (status)
		atomic_store(&a_err, status);
	atomic_fetch_add(&a_done, 1);
	a_issue(c);
}

int main(int argc, char **argv)
{
	struct rpcrdma_clnt_opts co = {0};
	struct rpcrdma_clnt *c;
	int opt, ctl, rc;
	pid_t spid;

	while ((opt = getopt(argc, argv, "s:c:n:d:t:b:m:w:CB")) != -1) {
		switch (opt) {
		case 's':
			C.scpu = atoi(optarg);
			break;
		case 'c':
			C.ccpu = atoi(optarg);
			break;
		case 'n':
			C.calls = atol(optarg);
			break;
		case 'd':
			C.depth = atoi(optarg);
			break;
		case 't':
			C.threads = atoi(optarg);
			break;
		case 'b':
			C.bytes = (uint32_t)atol(optarg);
			break;
		case 'w':
			C.workers = atoi(optarg);
			break;
		case 'C':
			C.crc = 1;
			break;
		case 'B':
			C.busy = 1;
			break;
		case 'm':
			C.mode = !strcmp(optarg, "write")  ? P_WRITE
				 : !strcmp(optarg, "read") ? P_READ
							   : P_NULL;
			break;
		default:
			return 2;
		}
	}
	spid = server(&ctl);
	(void)bench_pin_cpu(C.ccpu);
	cbuf = malloc(C.bytes);
	memset(cbuf, 0xa5, C.bytes);
	co.comp_mask = RPCRDMA_CLNT_OPT_MPA_CRC;
	co.mpa_crc = C.crc;
	if (C.busy) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_PROGRESS;
		co.progress = RPCRDMA_PROGRESS_BUSY_POLL;
	}
	rc = rpcrdma_clnt_create("127.0.0.1", C.port, PROG, 1, &co, &c);
	if (rc) {
		fprintf(stderr, "create: %d\n", rc);
		return 1;
	}
	/* warm-up */
	for (int i = 0; i < 1000 && !rc; i++)
		rc = one_call(c);
	if (rc) {
		fprintf(stderr, "warm-up call: %d %s\n", rc, rpcrdma_strerror(rc));
		return 1;
	}
	uint64_t t0 = monotonic_ns(), t1;
	long total = C.calls;

	if (C.depth > 1) {
		atomic_store(&a_left, C.calls);
		for (int i = 0; i < C.depth; i++)
			a_issue(c);
		while (atomic_load(&a_done) < C.calls)
			usleep(100);
		t1 = monotonic_ns();
		rc = atomic_load(&a_err);
		printf("mode=%d depth=%d calls=%ld %.0f calls/s err=%d\n", C.mode, C.depth, total,
		       (double)total * 1e9 / (double)(t1 - t0), rc);
	} else {
		struct thr th[64];
		pthread_t tid[64];
		long per = C.calls / C.threads;

		for (int i = 0; i < C.threads; i++) {
			th[i].c = c;
			th[i].n = per;
			th[i].err = 0;
			th[i].lat = calloc((size_t)per, sizeof(uint64_t));
			pthread_create(&tid[i], NULL, thr_main, &th[i]);
		}
		for (int i = 0; i < C.threads; i++)
			pthread_join(tid[i], NULL);
		t1 = monotonic_ns();
		total = per * C.threads;
		qsort(th[0].lat, (size_t)per, sizeof(uint64_t), cmp64);
		double secs = (double)(t1 - t0) / 1e9;

		printf("mode=%d threads=%d calls=%ld %.0f calls/s p50=%.2fus p99=%.2fus", C.mode,
		       C.threads, total, (double)total / secs, (double)th[0].lat[per / 2] / 1e3,
		       (double)th[0].lat[per * 99 / 100] / 1e3);
		if (C.mode != P_NULL)
			printf(" %.2f GB/s", (double)total * C.bytes / secs / 1e9);
		printf(" err=%d\n", th[0].err);
	}
	{
		struct rpcrdma_xprt_stats st;

		rpcrdma_clnt_stats(c, &st);
		printf("  credits %u max_outstanding %u stalls %llu\n", st.credits,
		       st.max_outstanding, (unsigned long long)st.credit_stalls);
	}
	rpcrdma_clnt_destroy(c);
	close(ctl);
	waitpid(spid, NULL, 0);
	return 0;
}
