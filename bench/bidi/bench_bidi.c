// SPDX-License-Identifier: MIT
/*
 * bench_bidi: does forward traffic delay the reverse direction? (RFC 8167
 * §4.1: separate credits so head-of-line blocking in one direction does not
 * stall the other.) A server child and this client share one connection
 * over softiwarp on loopback. The server measures the round trip of
 * synchronous reverse NULL calls (server -> client -> server), first with
 * the connection idle, then while the client keeps its whole forward
 * window full of 512-byte echo calls. Prints both distributions and the
 * ratio of the p99s; the figure to reach is loaded p99 < 10 x idle p99.
 *
 * Usage: bench_bidi [-n reverse calls per phase] [-w forward window]
 *                   [-s forward payload bytes] [-t forward threads]
 *                   [-W server worker threads (default 2; 0: dispatch on
 *                    the progress thread)]
 *                   [-r rounds: idle/loaded pairs, median ratio (default 5)]
 *                   [-i: RPCRDMA_BC_OPT_INLINE on both sides: the client
 *                    dispatches reverse calls on the thread that receives
 *                    them, the server measures with a chain of async
 *                    calls completed on its progress thread]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma.h"
#include "rpcrdma/backchannel.h"

#define BB_PROG    0x20000b1eu
#define CB_PROG    0x40000b1eu
#define BB_ECHO    1u
#define BB_MEASURE 2u

struct lat {
	uint64_t p50, p90, p99, p999, max;
};

static bool_t xdr_lat(XDR *x, struct lat *l)
{
	return xdr_uint64_t(x, &l->p50) && xdr_uint64_t(x, &l->p90) && xdr_uint64_t(x, &l->p99) &&
	       xdr_uint64_t(x, &l->p999) && xdr_uint64_t(x, &l->max);
}

struct blob {
	char *val;
	u_int len;
};

static bool_t xdr_blob(XDR *x, struct blob *b)
{
	return xdr_bytes(x, &b->val, &b->len, ~0u);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- server ---- */

static int inline_mode; /* -i: RPCRDMA_BC_OPT_INLINE on both sides */

/* -i: a chain of asynchronous reverse NULL calls, each started by the
 * previous one's completion callback (on the server's progress thread). */
struct chain {
	struct rpcrdma_svc_client *cl;
	uint64_t *v, t0;
	uint32_t n, i, ok;
	bool done;
	pthread_mutex_t m;
	pthread_cond_t cv;
};

static void chain_cb(struct rpcrdma_svc_client *cl, int status, void *res, void *arg)
{
	struct chain *ch = arg;
	uint64_t t = now_ns();

	(void)res;
	if (!status)
		ch->v[ch->ok++] = t - ch->t0;
	if (++ch->i < ch->n) {
		ch->t0 = now_ns();
		if (!rpcrdma_svc_client_call_async(cl, CB_PROG, 1, 0, NULL, NULL, NULL, NULL, NULL,
						   chain_cb, ch))
			return;
	}
	pthread_mutex_lock(&ch->m);
	ch->done = true;
	pthread_cond_signal(&ch->cv);
	pthread_mutex_unlock(&ch->m);
}

static void measure(struct rpcrdma_svc_req *req, uint32_t n, struct lat *l)
{
	struct rpcrdma_svc_client *cl = rpcrdma_svc_req_client(req);
	uint64_t *v = calloc(n ? n : 1, sizeof(*v));
	uint32_t ok = 0;

	if (inline_mode && cl && n) {
		struct chain ch = {.cl = cl, .v = v, .n = n};

		pthread_mutex_init(&ch.m, NULL);
		pthread_cond_init(&ch.cv, NULL);
		ch.t0 = now_ns();
		if (rpcrdma_svc_client_call_async(cl, CB_PROG, 1, 0, NULL, NULL, NULL, NULL, NULL,
						  chain_cb, &ch))
			ch.done = true;
		pthread_mutex_lock(&ch.m);
		while (!ch.done)
			pthread_cond_wait(&ch.cv, &ch.m);
		pthread_mutex_unlock(&ch.m);
		ok = ch.ok;
		n = 0;
	}
	for (uint32_t i = 0; i < n && cl; i++) {
		uint64_t t0 = now_ns();

		if (rpcrdma_svc_client_call(cl, CB_PROG, 1, 0, NULL, NULL, NULL, NULL, NULL) == 0)
			v[ok++] = now_ns() - t0;
	}
	qsort(v, ok, sizeof(*v), cmp_u64);
	memset(l, 0, sizeof(*l));
	if (ok) {
		l->p50 = v[ok / 2];
		l->p90 = v[(uint64_t)ok * 90 / 100];
		l->p99 = v[(uint64_t)ok * 99 / 100];
		l->p999 = v[(uint64_t)ok * 999 / 1000];
		l->max = v[ok - 1];
	}
	free(v);
}

struct mjob {
	struct rpcrdma_svc_req *req;
	u_int n;
};

static void *measure_thread(void *arg)
{
	struct mjob *j = arg;
	struct lat l;

	measure(j->req, j->n, &l);
	rpcrdma_svc_reply(j->req, (xdrproc_t)xdr_lat, &l);
	free(j);
	return NULL;
}

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	if (proc == BB_ECHO) {
		struct blob b = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_blob, &b)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_blob, &b);
		rpcrdma_svc_freeargs(req, (xdrproc_t)xdr_blob, &b);
	} else if (proc == BB_MEASURE) {
		/* Measured on a thread of its own: dispatch runs on the
		 * server's progress thread (workers 0), which must stay free
		 * to receive the reverse replies. */
		struct mjob *j = calloc(1, sizeof(*j));
		pthread_t t;

		j->req = req;
		rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &j->n);
		if (pthread_create(&t, NULL, measure_thread, j)) {
			free(j);
			rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
			return;
		}
		pthread_detach(t);
	} else {
		rpcrdma_svc_reply(req, NULL, NULL);
	}
}

static uint32_t svc_workers = 2;

static int server(int portfd, int ctlfd)
{
	struct rpcrdma_svc_opts so = {.comp_mask =
					  RPCRDMA_SVC_OPT_MPA_CRC | RPCRDMA_SVC_OPT_WORKERS,
				      .mpa_crc = 0,
				      .workers = svc_workers};
	struct rpcrdma_bc_opts bo = {.comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_INLINE,
				     .credits = 2,
				     .inline_dispatch = inline_mode};
	struct rpcrdma_svc *svc;
	uint16_t port = 0;
	char c;
	int rc = rpcrdma_svc_create_any("127.0.0.1", &so, &svc);

	if (!rc)
		rc = rpcrdma_svc_register(svc, BB_PROG, 1, dispatch, NULL);
	if (!rc)
		rc = rpcrdma_svc_bc_init(svc, &bo, NULL, NULL);
	if (!rc)
		rc = rpcrdma_svc_start(svc);
	if (!rc)
		port = rpcrdma_svc_port(svc);
	if (write(portfd, &port, sizeof(port)) != sizeof(port) || rc)
		return 2;
	while (read(ctlfd, &c, 1) > 0)
		;
	rpcrdma_svc_destroy(svc);
	return 0;
}

/* ---- client ---- */

static void cb_null(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)proc;
	(void)args;
	(void)ctx;
	rpcrdma_bc_reply(req, NULL, NULL);
}

static struct rpcrdma_clnt *clnt;
static atomic_bool running;
static atomic_ulong fwd_done, fwd_err;
static uint32_t fsize = 512;

#define RING 4096
static struct blob results[RING];

static void fwd_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)arg;
	if (status)
		atomic_fetch_add(&fwd_err, 1);
	xdr_free((xdrproc_t)xdr_blob, res);
	atomic_fetch_add(&fwd_done, 1);
}

static void *saturate(void *arg)
{
	static char payload[65536];
	struct blob a = {payload, fsize};
	unsigned long i = (unsigned long)(uintptr_t)arg * (RING / 4);

	(void)arg;
	while (atomic_load(&running)) {
		struct blob *r = &results[i++ % RING];

		memset(r, 0, sizeof(*r));
		/* Waits for a free slot when the window is full: the window
		 * stays full. */
		if (rpcrdma_clnt_call_async(clnt, BB_ECHO, (xdrproc_t)xdr_blob, &a,
					    (xdrproc_t)xdr_blob, r, NULL, fwd_cb, NULL))
			atomic_fetch_add(&fwd_err, 1);
	}
	return NULL;
}

static int run_measure(uint32_t n, struct lat *l)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT, .timeout_ms = 120000};

	return rpcrdma_clnt_call(clnt, BB_MEASURE, (xdrproc_t)xdr_u_int, &n, (xdrproc_t)xdr_lat, l,
				 &o);
}

static void sort_d(double *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
			double t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
}

static void print_lat(const char *name, const struct lat *l)
{
	printf("%-34s p50 %7.1f  p90 %7.1f  p99 %7.1f  p99.9 %7.1f  max %8.1f us\n", name,
	       (double)l->p50 / 1e3, (double)l->p90 / 1e3, (double)l->p99 / 1e3,
	       (double)l->p999 / 1e3, (double)l->max / 1e3);
}

int main(int argc, char **argv)
{
	uint32_t n = 5000, window = 32, threads = 1, rounds = 5;
	double ratio[16], idle99[16], loaded99[16];
	struct rpcrdma_clnt_opts co = {
	    .comp_mask = RPCRDMA_CLNT_OPT_CREDITS | RPCRDMA_CLNT_OPT_MPA_CRC, .mpa_crc = 0};
	struct lat idle, loaded;
	int portp[2], ctlp[2], opt, rc, st;
	pthread_t th[8];
	uint16_t port = 0;
	uint64_t t0, t1, f0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:w:s:t:W:ir:")) != -1) {
		switch (opt) {
		case 'n':
			n = (uint32_t)atoi(optarg);
			break;
		case 'w':
			window = (uint32_t)atoi(optarg);
			break;
		case 's':
			fsize = (uint32_t)atoi(optarg);
			break;
		case 't':
			threads = (uint32_t)atoi(optarg);
			break;
		case 'W':
			svc_workers = (uint32_t)atoi(optarg);
			break;
		case 'i':
			inline_mode = 1;
			break;
		case 'r':
			rounds = (uint32_t)atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n calls] [-w window] [-s bytes] [-t threads] "
				"[-W server workers] [-i] [-r rounds]\n",
				argv[0]);
			return 2;
		}
	}
	if (!n || !window || window > 1024 || fsize > 65536 || !threads || threads > 8 || !rounds ||
	    rounds > 16)
		return 2;
	co.credits = window;
	if (pipe(portp) || pipe(ctlp))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(portp[0]);
		close(ctlp[1]);
		_exit(server(portp[1], ctlp[0]));
	}
	close(portp[1]);
	close(ctlp[0]);
	if (read(portp[0], &port, sizeof(port)) != sizeof(port) || !port) {
		fprintf(stderr, "server did not start\n");
		return 1;
	}
	struct rpcrdma_bc_opts cbo = {.comp_mask = RPCRDMA_BC_OPT_INLINE,
				      .inline_dispatch = inline_mode};

	rc = rpcrdma_clnt_create_bc("127.0.0.1", port, BB_PROG, 1, &co, &cbo, &clnt);
	if (!rc)
		rc = rpcrdma_clnt_bc_register(clnt, CB_PROG, 1, cb_null, NULL);
	if (!rc)
		rc = rpcrdma_clnt_bc_enable(clnt);
	if (rc) {
		fprintf(stderr, "client: %s\n", strerror(-rc));
		return 1;
	}
	printf("bench_bidi: softiwarp loopback, MPA CRC off; reverse NULL calls: %u per phase; "
	       "forward: %u thread(s), window %u, %u-byte echo; server workers %u; %s\n",
	       n, threads, window, fsize, svc_workers,
	       inline_mode ? "inline backchannel (-i: no thread handoff)"
			   : "backchannel threads (sync reverse calls)");
	/* warm-up */
	run_measure(n / 10 + 1, &idle); /* warm-up */
	for (uint32_t r = 0; r < rounds; r++) {
		rc = run_measure(n, &idle);
		if (rc) {
			fprintf(stderr, "idle measure: %s\n", rpcrdma_strerror(rc));
			return 1;
		}
		atomic_store(&running, true);
		for (uintptr_t i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, saturate, (void *)i);
		usleep(200000); /* the window is full */
		f0 = atomic_load(&fwd_done);
		t0 = now_ns();
		rc = run_measure(n, &loaded);
		t1 = now_ns();
		f0 = atomic_load(&fwd_done) - f0;
		atomic_store(&running, false);
		for (uint32_t i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		if (rc) {
			fprintf(stderr, "loaded measure: %s\n", rpcrdma_strerror(rc));
			return 1;
		}
		printf("round %u\n", r + 1);
		print_lat("  reverse NULL RTT, idle:", &idle);
		print_lat("  reverse NULL RTT, forward saturated:", &loaded);
		ratio[r] = (double)loaded.p99 / (double)(idle.p99 ? idle.p99 : 1);
		idle99[r] = (double)idle.p99;
		loaded99[r] = (double)loaded.p99;
		printf("  forward during the loaded phase: %.0f calls/s (%lu errors); p99 ratio "
		       "%.2f\n",
		       (double)f0 / ((double)(t1 - t0) / 1e9), (unsigned long)atomic_load(&fwd_err),
		       ratio[r]);
	}
	/* Verdict, conservatively: the median loaded p99 over rounds against
	 * the best idle p99 seen (idle tails here are mostly wake-ups and
	 * outside load, which would flatter a per-round ratio). The
	 * per-round median ratio is printed too. */
	sort_d(ratio, rounds);
	sort_d(idle99, rounds);
	sort_d(loaded99, rounds);
	printf("p99 ratio per round: median %.2f (min %.2f, max %.2f)\n", ratio[rounds / 2],
	       ratio[0], ratio[rounds - 1]);
	printf("median loaded p99 %.1f us / best idle p99 %.1f us = %.2f (target < 10: %s)\n",
	       loaded99[rounds / 2] / 1e3, idle99[0] / 1e3, loaded99[rounds / 2] / idle99[0],
	       loaded99[rounds / 2] < 10 * idle99[0] ? "met" : "NOT met");
	rpcrdma_clnt_destroy(clnt);
	close(ctlp[1]);
	waitpid(pid, &st, 0);
	return 0;
}
