// SPDX-License-Identifier: MIT
/*
 * RPC-level seeded fault campaign (issue 20): `test_rpc_fault_campaign N
 * FIRST` makes N runs, seeds FIRST..FIRST+N-1. Each run is a real server
 * process (xprt_test.c, forked; duplicate request cache on; a backchannel
 * in half the runs, the shared receive queue in the others) and a client
 * in this process, one of them with one fault picked by the seed
 * (RPCRDMA_SIW_FAULT=seed:S:SPAN, siw_fault.h: a cut, a corrupted byte, a
 * delay, a dropped FPDU, a cut at a work request, a refused registration;
 * odd seeds on the server's device, even seeds on the client's). The run
 * makes a mix of calls over every chunk kind:
 *   inline       a counting procedure (non-idempotent), twice
 *   Read chunk   WRITE of 64 KiB (bulk argument by RDMA Read)
 *   Write chunk  READ of 64 KiB (bulk result by RDMA Write)
 *   Long Call + Reply chunk   ECHO of 8 KiB both ways
 *   backchannel  (RFC 8167; runs with one) a forward call whose server
 *                makes a reverse ECHO call on the same connection, of 200 bytes (Short)
 *                and of 6 KiB (reverse Long Call + Reply chunk), and
 *                answers the forward call with the reverse call's outcome
 * and asserts: every call completes once with the right bytes, or fails
 * with one of the transport's clear errors (client.h); a reverse call's
 * bytes come back intact or it fails with a clear error; the counting
 * procedure never ran twice for one XID (the server counts by XID); the
 * run ends within its bound; then a second, clean client is served
 * (NULL, WRITE, the counters) and the server exits without a failure.
 * Prints the totals of call outcomes (reverse calls among them).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/backchannel.h"
#include "softiwarp/siw_fault.h"
#include "xprt/xprt_test.h"

#define CAMP_PROG 0x2000009cu
#define SPAN      150000u /* bytes: faults land anywhere in a run's streams */
#define WLEN      (64u << 10)
#define ELEN      8192u
#define CALL_MS   700u
#define RUN_MS    20000u
#define NXID      256
#define CB_PROG   0x2000009du /* the client's callback program */
#define REV_MS    400u        /* a reverse call's timeout (within CALL_MS) */
#define REV_BAD   1           /* reverse ECHO came back with other bytes */

/* ---- server child: CAMP proc 1 (u_int v -> v + 1, counted by XID),
 * proc 2 (void -> most runs of one XID) ---- */

static uint32_t xids[NXID], xruns[NXID];
static int nxids;
static pthread_mutex_t xlock = PTHREAD_MUTEX_INITIALIZER;

static u_int count_xid(uint32_t xid)
{
	u_int n = 0;

	pthread_mutex_lock(&xlock);
	for (int i = 0; i < nxids; i++)
		if (xids[i] == xid)
			n = ++xruns[i];
	if (!n && nxids < NXID) {
		xids[nxids] = xid;
		xruns[nxids++] = n = 1;
	}
	pthread_mutex_unlock(&xlock);
	return n;
}

/* proc 3 ({len, seed} -> int): a reverse ECHO of len bytes filled from
 * seed, answered (later, from the reverse call's completion) with 0, the
 * reverse call's error, or REV_BAD. */
struct rev_call {
	struct rpcrdma_svc_req *req;
	struct xt_opaque a, r;
	struct rpcrdma_call_opts o;
};

static void rev_done(struct rpcrdma_svc_client *cl, int status, void *res, void *arg)
{
	struct rev_call *rc = arg;
	int v = status;

	(void)cl;
	(void)res;
	if (!status &&
	    (rc->r.len != rc->a.len || !rc->r.val || memcmp(rc->r.val, rc->a.val, rc->a.len)))
		v = REV_BAD;
	rpcrdma_svc_reply(rc->req, (xdrproc_t)xdr_int, &v);
	xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&rc->r);
	free(rc->a.val);
	free(rc);
}

static void rev_start(struct rpcrdma_svc_req *req)
{
	struct xt_read_args a = {0};
	struct rev_call *rc;
	int v;

	if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_xt_read_args, &a) || a.len > 65536 ||
	    !(rc = calloc(1, sizeof(*rc)))) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	rc->req = req;
	rc->a.len = a.len;
	rc->a.val = malloc(a.len + 1);
	if (rc->a.val)
		xt_fill(rc->a.val, a.len, a.seed);
	rc->o.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT | RPCRDMA_CALL_OPT_REPLY_SIZE;
	rc->o.timeout_ms = REV_MS;
	rc->o.reply_size = a.len + 64; /* a Reply chunk when it is Long */
	v = rc->a.val ? rpcrdma_svc_client_call_async(rpcrdma_svc_req_client(req), CB_PROG, 1,
						      XT_ECHO, (xdrproc_t)xdr_xt_opaque, &rc->a,
						      (xdrproc_t)xdr_xt_opaque, &rc->r, &rc->o,
						      rev_done, rc)
		      : -ENOMEM;
	if (v) { /* not started: no completion will come */
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_int, &v);
		free(rc->a.val);
		free(rc);
	}
}

static void camp(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	u_int v = 0;

	(void)args;
	(void)ctx;
	if (proc == 3) {
		rev_start(req);
		return;
	}
	if (proc == 1 && !rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &v)) {
		(void)count_xid(rpcrdma_svc_req_xid(req));
		v++;
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
		return;
	}
	if (proc == 2) {
		pthread_mutex_lock(&xlock);
		for (int i = 0; i < nxids; i++)
			if (xruns[i] > v)
				v = xruns[i];
		pthread_mutex_unlock(&xlock);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
		return;
	}
	rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
}

/* Half the runs (seeds 0, 1 mod 4) give the server a backchannel; the
 * others leave it without one, so that it takes its receives from the
 * shared receive queue (RPCRDMA_SVC_OPT_SRQ, on by default; a server with
 * a backchannel keeps a pool per connection). Set before the fork. */
static bool camp_bc;

static void extra(struct rpcrdma_svc *svc)
{
	if (rpcrdma_svc_register(svc, CAMP_PROG, 1, camp, NULL) ||
	    (camp_bc && rpcrdma_svc_bc_init(svc, NULL, NULL, NULL)))
		xt_failures++;
}

/* ---- client ---- */

/* The errors a call may end with under a fault (client.h). */
static bool clear_error(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -EREMOTEIO || rc == -EIO ||
	       rc == -EBADMSG || rc == -EPROTO || rc == -ENOMEM;
}

static uint8_t wbuf[WLEN], rbuf[WLEN], rexp[WLEN], ebuf[ELEN];
static unsigned long n_ok, n_err, n_bad, n_gap, n_rev_ok[2], n_rev_err;
/* The run's fault is a dropped FPDU: a dropped tagged FPDU (part of an
 * RDMA Write or Read Response) is the one loss iWARP cannot see (RFC
 * 5041 has no sequence numbers for tagged messages; test_siw_fault notes
 * the same), so data placed by chunk may then be wrong with no error. */
static bool run_drops;

/* One call's outcome: ok, a clear error, or wrong. @chunk: its data
 * moved by RDMA Write or Read. */
static void outcome(uint32_t seed, const char *what, int rc, bool data_ok, bool chunk)
{
	if (rc == 0 && data_ok) {
		n_ok++;
	} else if (rc != 0 && clear_error(rc)) {
		n_err++;
	} else if (rc == 0 && chunk && run_drops) {
		n_gap++;
		printf("seed %u: %s: wrong data after a dropped FPDU (not detectable by iWARP)\n",
		       seed, what);
	} else {
		n_bad++;
		xt_failures++;
		fprintf(stderr, "seed %u: %s: rc %d (%s)%s\n", seed, what, rc, rpcrdma_strerror(rc),
			rc == 0 ? ", wrong data" : "");
	}
}

/* The client's callback program: ECHO returns its argument. */
static void cb_echo(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct xt_opaque a = {0};

	(void)args;
	(void)ctx;
	if (proc != XT_ECHO) {
		rpcrdma_bc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_bc_getargs(req, (xdrproc_t)xdr_xt_opaque, &a)) {
		rpcrdma_bc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	rpcrdma_bc_reply(req, (xdrproc_t)xdr_xt_opaque, &a);
	xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&a);
}

/* Reverse ECHO calls of a Short and of a Long size through proc 3. */
static void reverse(struct rpcrdma_clnt *camp_c, uint32_t seed)
{
	static const u_int lens[] = {200, 6144};

	for (unsigned i = 0; i < 2; i++) {
		struct xt_read_args a = {lens[i], seed * 2 + i};
		int st = -EINVAL;
		int rc = rpcrdma_clnt_call(camp_c, 3, (xdrproc_t)xdr_xt_read_args, &a,
					   (xdrproc_t)xdr_int, &st, NULL);

		outcome(seed, i ? "reverse Long Call" : "reverse Short call", rc,
			st == 0 || (st < 0 && (clear_error(st) || st == -ENOPROTOOPT)), i == 1);
		if (!rc && st == 0)
			n_rev_ok[i]++;
		else if (!rc && st < 0) {
			n_rev_err++;
			if (getenv("CAMP_DEBUG"))
				printf("seed %u: reverse %u: %d\n", seed, lens[i], st);
		}
	}
}

static void mix(struct rpcrdma_clnt *c, struct rpcrdma_clnt *camp_c, uint32_t seed)
{
	struct rpcrdma_call_opts o = {0};
	u_int v, r;
	int rc;

	for (int i = 0; i < 2; i++) {
		v = seed + (u_int)i;
		r = 0;
		rc = rpcrdma_clnt_call(camp_c, 1, (xdrproc_t)xdr_u_int, &v, (xdrproc_t)xdr_u_int,
				       &r, NULL);
		outcome(seed, "inline", rc, r == v + 1, false);
	}
	{
		struct xt_write_args a = {.seed = seed, .data = {wbuf, WLEN, 0}};
		struct xt_write_res res = {0};

		rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				       (xdrproc_t)xdr_xt_write_res, &res, NULL);
		outcome(seed, "Read chunk", rc,
			res.len == WLEN && res.hash == (xt_hash(wbuf, WLEN) ^ seed), true);
	}
	{
		struct xt_read_args a = {WLEN, seed};
		rpcrdma_bulk b = {0};

		memset(rbuf, 0, WLEN);
		xt_fill(rexp, WLEN, seed);
		o.comp_mask = RPCRDMA_CALL_OPT_RECV_BULK;
		o.nrecv_bulk = 1;
		o.recv_bulk[0].base = rbuf;
		o.recv_bulk[0].len = WLEN;
		rc = rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &a,
				       (xdrproc_t)xdr_rpcrdma_bulk, &b, &o);
		outcome(seed, "Write chunk", rc, b.len == WLEN && memcmp(rbuf, rexp, WLEN) == 0,
			true);
	}
	{
		struct xt_opaque a = {(char *)ebuf, ELEN}, out = {0};

		xt_fill(ebuf, ELEN, seed ^ 0x77);
		o.comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE;
		o.reply_size = ELEN + 64;
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				       (xdrproc_t)xdr_xt_opaque, &out, &o);
		outcome(seed, "Long Call + Reply chunk", rc,
			out.len == ELEN && out.val && memcmp(out.val, ebuf, ELEN) == 0, true);
		xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&out);
	}
	if (camp_bc)
		reverse(camp_c, seed);
	v = seed;
	r = 0;
	rc = rpcrdma_clnt_call(camp_c, 1, (xdrproc_t)xdr_u_int, &v, (xdrproc_t)xdr_u_int, &r, NULL);
	outcome(seed, "inline", rc, r == v + 1, false);
}

/* The server still serves a clean client: NULL, WRITE, and no XID ran
 * twice. */
static void after(struct tl_server *srv, uint32_t seed)
{
	struct rpcrdma_clnt *c = NULL, *k = NULL;
	struct xt_write_args a = {.seed = 1, .data = {wbuf, WLEN, 0}};
	struct xt_write_res res = {0};
	u_int most = 0;

	/* A fault the mix did not reach may still fire once, on this
	 * client's accept (a refused registration): one more try each. */
	for (int i = 0; i < 2 && !c; i++)
		if (rpcrdma_clnt_create("127.0.0.1", srv->port, XTEST_PROG, XTEST_VERS, NULL, &c))
			c = NULL;
	for (int i = 0; i < 2 && !k; i++)
		if (rpcrdma_clnt_create("127.0.0.1", srv->port, CAMP_PROG, 1, NULL, &k))
			k = NULL;
	if (!c || !k) {
		fprintf(stderr, "seed %u: the server does not take a clean client\n", seed);
		xt_failures++;
	} else {
		int rc = -1;

		XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
		/* ... or on its first WRITE (the server's registration of the
		 * buffer it pulls into): that one fails clearly, once. */
		for (int i = 0; i < 2 && rc; i++) {
			rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
					       (xdrproc_t)xdr_xt_write_res, &res, NULL);
			if (rc && getenv("CAMP_DEBUG"))
				printf("seed %u: a clean client's WRITE: %d\n", seed, rc);
			if (rc && !clear_error(rc))
				break;
		}
		if (rc || res.hash != (xt_hash(wbuf, WLEN) ^ 1)) {
			fprintf(stderr, "seed %u: a clean client's WRITE: rc %d (%s)\n", seed, rc,
				rpcrdma_strerror(rc));
			xt_failures++;
		}
		XT_CHECK(rpcrdma_clnt_call(k, 2, NULL, NULL, (xdrproc_t)xdr_u_int, &most, NULL) ==
			 0);
		if (most > 1) {
			fprintf(stderr, "seed %u: a call ran %u times for one XID\n", seed, most);
			xt_failures++;
		}
	}
	rpcrdma_clnt_destroy(c);
	rpcrdma_clnt_destroy(k);
}

static void run(uint32_t seed)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_DRC, .drc = 1};
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT |
						    RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT |
						    RPCRDMA_CLNT_OPT_RETRIES,
				       .timeout_ms = CALL_MS,
				       .connect_timeout_ms = CALL_MS,
				       .retries = 3};
	struct rpcrdma_clnt *c = NULL, *k = NULL;
	bool on_server = seed & 1;
	struct tl_server srv;
	char f[64];
	uint64_t t0 = tl_now_ms();
	int before = xt_failures;

	struct siw_fault_cfg fc;

	camp_bc = !((seed >> 1) & 1);
	snprintf(f, sizeof(f), "seed:%u:%u", seed, SPAN);
	run_drops = siw_fault_parse(f, &fc) && fc.kind == SIW_FAULT_DROP;
	xt_failures = 0; /* the server child counts its own from 0 */
	if (on_server)
		setenv("RPCRDMA_SIW_FAULT", f, 1);
	if (xt_server_start(&srv, &so, extra)) {
		unsetenv("RPCRDMA_SIW_FAULT");
		fprintf(stderr, "seed %u: server did not start\n", seed);
		xt_failures = before + 1;
		return;
	}
	if (!on_server)
		setenv("RPCRDMA_SIW_FAULT", f, 1);
	else
		unsetenv("RPCRDMA_SIW_FAULT");
	/* Both clients share the fault's device only by name: each opens its
	 * own, so the fault may fire on either. */
	if (rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, &co, &c) ||
	    (camp_bc ? rpcrdma_clnt_create_bc("127.0.0.1", srv.port, CAMP_PROG, 1, &co, NULL, &k) ||
			   rpcrdma_clnt_bc_register(k, CB_PROG, 1, cb_echo, NULL) ||
			   rpcrdma_clnt_bc_enable(k)
		     : rpcrdma_clnt_create("127.0.0.1", srv.port, CAMP_PROG, 1, &co, &k))) {
		/* A fault in connection setup may refuse the first connect
		 * (create does not retry): a clear error, counted. */
		n_err++;
	} else {
		mix(c, k, seed);
	}
	unsetenv("RPCRDMA_SIW_FAULT");
	rpcrdma_clnt_destroy(c);
	rpcrdma_clnt_destroy(k);
	after(&srv, seed);
	if (xt_server_stop(&srv) != 0) {
		fprintf(stderr, "seed %u: the server child failed\n", seed);
		xt_failures++;
	}
	if (tl_now_ms() - t0 > RUN_MS) {
		fprintf(stderr, "seed %u: the run took %llu ms\n", seed,
			(unsigned long long)(tl_now_ms() - t0));
		xt_failures++;
	}
	if (xt_failures)
		fprintf(stderr, "seed %u failed (RPCRDMA_SIW_FAULT=%s on the %s)\n", seed, f,
			on_server ? "server" : "client");
	xt_failures += before;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 50;
	uint32_t first = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 1;
	uint64_t t0 = tl_now_ms();

	signal(SIGPIPE, SIG_IGN);
	xt_fill(wbuf, WLEN, 3);
	for (uint32_t s = first; s < first + n; s++) {
		alarm(RUN_MS / 1000 * 3); /* a hung run kills the test */
		run(s);
	}
	alarm(0);
	printf("%u runs in %llu ms: %lu calls ok, %lu failed clearly, %lu wrong, %lu wrong "
	       "after a dropped FPDU; reverse calls: %lu + %lu (Short + Long) ok, %lu failed "
	       "clearly\n",
	       n, (unsigned long long)(tl_now_ms() - t0), n_ok, n_err, n_bad, n_gap, n_rev_ok[0],
	       n_rev_ok[1], n_rev_err);
	/* Most faults leave most calls whole: a kind of call that never
	 * succeeds in ten runs is broken, not unlucky. */
	if (n >= 10 && (!n_rev_ok[0] || !n_rev_ok[1] || n_ok < n)) {
		fprintf(stderr, "a kind of call never succeeded\n");
		xt_failures++;
	}
	return xt_result();
}
