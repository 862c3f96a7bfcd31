// SPDX-License-Identifier: MIT
/*
 * A client whose RDMA Reads go unanswered does not hold up the others
 * (issue 20, rogue client; pull.c). Two processes over loopback: a server
 * child (pull budget 8 MiB, pull_timeout_ms 1500) and, here, a good client
 * and a rogue one. The rogue's device takes RDMA Read Requests and never
 * answers them (RPCRDMA_SIW_FAULT=mute-reads:1), and it sends a flood of
 * WRITE calls whose data are Read chunks of 4 MiB, plus one of 12 MiB
 * (larger than the whole budget). Checked:
 *   - the good client's 256 KiB WRITEs (Read chunks too) keep completing
 *     with the right checksums while the rogue's pulls hang, none of them
 *     slower than 1 s (before: every one waited for the rogue's pulls, or
 *     forever without a timeout); their p99 with and without the rogue is
 *     printed
 *   - the rogue's connection is ended by the pull timeout (pull_timeouts
 *     >= 1), its calls fail (none succeeds: its Reads were never
 *     answered), the server's pull memory is back to 0 once it is gone
 *   - the server still serves a new client afterwards.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xprt/xprt_test.h"

#define GOOD_LEN  (256u << 10)
#define ROGUE_LEN (4u << 20)
#define ROGUE_BIG (12u << 20)
#define ROGUE_N   6
#define MAXLAT    4096

/* ---- server child: STATS proc 1 (void -> {pull_timeouts, pull_bytes,
 * connections}) ---- */

/* ---- clients ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Good WRITEs for @ms: their latencies (us) in @lat; returns how many,
 * failures counted. */
static int good_run(struct rpcrdma_clnt *c, uint8_t *buf, uint32_t ms, uint64_t *lat)
{
	uint64_t end = tl_now_us() + (uint64_t)ms * 1000u;
	int n = 0;

	while (tl_now_us() < end && n < MAXLAT) {
		struct xt_write_args a = {.seed = (uint32_t)n, .data = {buf, GOOD_LEN, 0}};
		struct xt_write_res r = {0};
		uint64_t t0 = tl_now_us();
		int rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
					   (xdrproc_t)xdr_xt_write_res, &r, NULL);

		lat[n++] = tl_now_us() - t0;
		XT_CHECK(rc == 0 && r.len == GOOD_LEN &&
			 r.hash == (xt_hash(buf, GOOD_LEN) ^ (uint64_t)(uint32_t)(n - 1)));
	}
	return n;
}

static uint64_t pct(uint64_t *lat, int n, int p)
{
	if (!n)
		return 0;
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	return lat[(size_t)((n - 1) * p / 100)];
}

static atomic_int rogue_done, rogue_ok;

static void rogue_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	if (status == 0)
		atomic_fetch_add(&rogue_ok, 1);
	atomic_fetch_add(&rogue_done, 1);
}

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_MAX_PULL |
						   RPCRDMA_SVC_OPT_PULL_TIMEOUT |
						   RPCRDMA_SVC_OPT_WORKERS,
				      .max_pull_bytes = 8u << 20,
				      .pull_timeout_ms = 1500,
				      .workers = 2};
	struct rpcrdma_clnt_opts ro = {.comp_mask =
					   RPCRDMA_CLNT_OPT_TIMEOUT | RPCRDMA_CLNT_OPT_RETRIES,
				       .timeout_ms = 4000,
				       .retries = 0};
	static uint64_t lat0[MAXLAT], lat1[MAXLAT];
	static struct xt_write_args ra[ROGUE_N + 1];
	static struct xt_write_res rr[ROGUE_N + 1];
	struct rpcrdma_clnt *good = NULL, *rogue = NULL, *late = NULL;
	struct tl_server srv;
	uint8_t *gbuf = malloc(GOOD_LEN), *rbuf = malloc(ROGUE_BIG);
	struct xt_srv_stats v = {0};
	uint64_t slow, p0, p1;
	int n0, n1, started = 0;

	signal(SIGPIPE, SIG_IGN);
	if (!gbuf || !rbuf || xt_server_start(&srv, &so, xt_stats_register))
		return 1;
	xt_fill(gbuf, GOOD_LEN, 5);
	xt_fill(rbuf, ROGUE_BIG, 6);
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, NULL, &good) ==
		 0);
	if (!good)
		goto out;
	n0 = good_run(good, gbuf, 500, lat0);
	p0 = pct(lat0, n0, 99);

	setenv("RPCRDMA_SIW_FAULT", "mute-reads:1", 1);
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, &ro, &rogue) ==
		 0);
	unsetenv("RPCRDMA_SIW_FAULT");
	if (!rogue)
		goto out;
	/* the big one first: the call over the budget, then the flood */
	for (int i = 0; i <= ROGUE_N; i++) {
		ra[i].seed = 1000u + (uint32_t)i;
		ra[i].data.base = rbuf;
		ra[i].data.len = i == 0 ? ROGUE_BIG : ROGUE_LEN;
		if (rpcrdma_clnt_call_async(rogue, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &ra[i],
					    (xdrproc_t)xdr_xt_write_res, &rr[i], NULL, rogue_cb,
					    NULL) == 0)
			started++;
	}
	XT_CHECK(started == ROGUE_N + 1);
	usleep(100000); /* the rogue's calls reach the server, its pulls hang */
	n1 = good_run(good, gbuf, 1000, lat1);
	slow = n1 ? lat1[0] : 0;
	for (int i = 0; i < n1; i++)
		slow = lat1[i] > slow ? lat1[i] : slow;
	p1 = pct(lat1, n1, 99);
	printf("good client: %d WRITEs of %u KiB alone, p99 %llu us; %d while the rogue's Reads "
	       "hang, p99 %llu us (x%.2f), slowest %llu us\n",
	       n0, GOOD_LEN >> 10, (unsigned long long)p0, n1, (unsigned long long)p1,
	       p0 ? (double)p1 / (double)p0 : 0.0, (unsigned long long)slow);
	XT_CHECK(n1 > 0 && slow < 1000000u);

	/* the pull timeout ends the rogue's connection; its calls fail */
	for (int i = 0; i < 1000 && atomic_load(&rogue_done) < started; i++)
		usleep(10000);
	XT_CHECK(atomic_load(&rogue_done) == started && atomic_load(&rogue_ok) == 0);
	rpcrdma_clnt_destroy(rogue);
	rogue = NULL;
	XT_CHECK(xt_server_stats(srv.port, &v) == 0);
	printf("server: pull_timeouts %llu, pull bytes held %llu\n",
	       (unsigned long long)v.pull_timeouts, (unsigned long long)v.pull_bytes);
	XT_CHECK(v.pull_timeouts >= 1);
	/* held only by the stats call itself (none) once the rogue is gone */
	for (int i = 0; i < 200 && v.pull_bytes != 0; i++) {
		usleep(10000);
		XT_CHECK(xt_server_stats(srv.port, &v) == 0);
	}
	XT_CHECK(v.pull_bytes == 0);

	/* still serving: a new client's WRITE */
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, NULL, &late) ==
		 0);
	if (late)
		XT_CHECK(good_run(late, gbuf, 100, lat0) > 0);
out:
	if (late)
		rpcrdma_clnt_destroy(late);
	if (rogue)
		rpcrdma_clnt_destroy(rogue);
	if (good)
		rpcrdma_clnt_destroy(good);
	free(gbuf);
	free(rbuf);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
