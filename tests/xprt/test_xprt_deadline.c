// SPDX-License-Identifier: MIT
/*
 * Every call ends by its deadline, whatever the peer does (RFC 8166 §3.3.1:
 * a credit comes back only with a reply, so a requester must be able to
 * give up on one; §3.3.2: after a lost connection the requester connects
 * again). A client (2 slots, 20 reconnect attempts, 600 ms call timeout)
 * against a misbehaving responder (fake_peer.c) on one port, path by path:
 *   unmatched   the peer answers every call with an rdma_xid that matches
 *               no call (the calls time out, their slots stay taken)
 *   refused     nothing listens on the port any more
 *   mute MPA    a plain TCP listener accepts and never answers the MPA
 *               request
 *   vanish      the peer closes the connection and its listener mid-call
 *   some        the peer answers every other call (sync and async calls)
 *   zero        the peer grants zero credits in every reply
 * Each call returns within its timeout + 400 ms, and after each path a new
 * healthy peer on the same port answers the next call. Each path runs
 * with a fresh client; ctest runs one per test (test_xprt_deadline_<path>),
 * no argument runs them all.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xprt/fake_peer.h"
#include "xprt/xprt_test.h"

#define TMO_MS   600u
#define SLACK_MS 400u

/* One call (result arg + 1 from a healthy peer); its wall time bounded. */
static int bounded_call(struct rpcrdma_clnt *c, const char *path, u_int arg)
{
	u_int res = 0;
	uint64_t t0 = tl_now_ms();
	int rc =
	    rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &arg, (xdrproc_t)xdr_u_int, &res, NULL);
	uint64_t ms = tl_now_ms() - t0;

	XT_CHECK(ms <= TMO_MS + SLACK_MS);
	if (ms > TMO_MS + SLACK_MS)
		fprintf(stderr,
			"%s: a call took %llu ms, past its %u ms timeout (rc %d: %s); RFC 8166 "
			"§3.3.1 / §3.3.2: a requester gives up on a reply or a connection\n",
			path, (unsigned long long)ms, TMO_MS, rc, rpcrdma_strerror(rc));
	if (rc == 0)
		XT_CHECK(res == arg + 1);
	return rc;
}

/* The peer is healthy again: a new one on the same port answers. */
static void healthy_again(struct rpcrdma_clnt *c, struct fake_peer *p, uint16_t port,
			  const char *path)
{
	int rc;

	XT_CHECK(fp_start(p, port, FP_OK) == 0);
	rc = bounded_call(c, path, 7);
	/* the first call may still meet the old connection's end */
	if (rc)
		rc = bounded_call(c, path, 7);
	XT_CHECK(rc == 0);
	if (rc)
		fprintf(stderr,
			"%s: the client is not usable again with a healthy peer (%s); RFC 8166 "
			"§3.3.2: it connects again\n",
			path, rpcrdma_strerror(rc));
	XT_CHECK(bounded_call(c, path, 8) == 0);
}

struct acall {
	u_int arg, res;
	_Atomic int status;
	_Atomic uint64_t at;
};

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct acall *a = arg;

	(void)c;
	(void)res;
	atomic_store(&a->status, status);
	atomic_store(&a->at, tl_now_ms());
}

/* @n asynchronous calls at once: each completes (or, waiting for a free
 * slot, fails to start) within its bound, counted from its own start. */
static void async_bounded(struct rpcrdma_clnt *c, const char *path, uint32_t n, bool all_ok)
{
	struct acall a[8];
	uint64_t t0[8];

	for (uint32_t i = 0; i < n; i++) {
		int rc;

		a[i].arg = 50 + i;
		a[i].res = 0;
		atomic_store(&a[i].at, 0);
		atomic_store(&a[i].status, 1);
		t0[i] = tl_now_ms();
		rc = rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &a[i].arg,
					     (xdrproc_t)xdr_u_int, &a[i].res, NULL, cb, &a[i]);
		if (rc) {
			/* no slot came free before its deadline */
			XT_CHECK(rc == -ETIMEDOUT && !all_ok);
			atomic_store(&a[i].status, rc);
			atomic_store(&a[i].at, tl_now_ms());
		}
	}
	for (int k = 0; k < 500; k++) {
		uint32_t done = 0;

		for (uint32_t i = 0; i < n; i++)
			done += atomic_load(&a[i].at) != 0;
		if (done == n)
			break;
		usleep(10000);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t at = atomic_load(&a[i].at);
		bool in_time = at != 0 && at - t0[i] <= TMO_MS + SLACK_MS;

		XT_CHECK(in_time);
		if (!in_time)
			fprintf(stderr, "%s: async call %u ended after %lld ms (status %d)\n", path,
				i, at ? (long long)(at - t0[i]) : -1ll, atomic_load(&a[i].status));
		if (all_ok)
			XT_CHECK(atomic_load(&a[i].status) == 0 && a[i].res == a[i].arg + 1);
	}
}

static void path_unmatched(struct rpcrdma_clnt *c, struct fake_peer *p)
{
	atomic_store(&p->mode, FP_UNMATCHED);
	for (u_int i = 0; i < 4; i++)
		XT_CHECK(bounded_call(c, "unmatched", 10 + i) == -ETIMEDOUT);
}

static void path_refused(struct rpcrdma_clnt *c, struct fake_peer *p)
{
	fp_stop(p);
	for (u_int i = 0; i < 3; i++)
		XT_CHECK(bounded_call(c, "refused", 20 + i) != 0);
}

static void path_mute_mpa(struct rpcrdma_clnt *c, struct fake_peer *p)
{
	struct tcp_mute mute;
	uint16_t port = p->port;

	fp_stop(p);
	XT_CHECK(tcp_mute_start(&mute, port) == 0);
	for (u_int i = 0; i < 3; i++)
		XT_CHECK(bounded_call(c, "mute_mpa", 30 + i) != 0);
	XT_CHECK(atomic_load(&mute.accepted) >= 1);
	tcp_mute_stop(&mute);
}

static void path_vanish(struct rpcrdma_clnt *c, struct fake_peer *p)
{
	atomic_store(&p->mode, FP_VANISH);
	XT_CHECK(bounded_call(c, "vanish", 40) != 0);
	XT_CHECK(atomic_load(&p->gone));
	XT_CHECK(bounded_call(c, "vanish", 41) != 0);
}

static void path_some(struct rpcrdma_clnt *c, struct fake_peer *p)
{
	atomic_store(&p->mode, FP_SOME);
	for (u_int i = 0; i < 6; i++)
		(void)bounded_call(c, "some", 60 + i);
	async_bounded(c, "some", 6, false);
}

/* RFC 8166 §3.3.1: a grant of zero is read as one. */
static void path_zero(struct rpcrdma_clnt *c, struct fake_peer *p)
{
	atomic_store(&p->credit, 0);
	for (u_int i = 0; i < 4; i++)
		XT_CHECK(bounded_call(c, "zero", 70 + i) == 0);
	async_bounded(c, "zero", 6, true);
}

static const struct {
	const char *name;
	void (*run)(struct rpcrdma_clnt *c, struct fake_peer *p);
} paths[] = {
    {"unmatched", path_unmatched}, {"refused", path_refused}, {"mute_mpa", path_mute_mpa},
    {"vanish", path_vanish},       {"some", path_some},       {"zero", path_zero},
};

/* A fresh client against a healthy peer, the path, then a new healthy
 * peer on the same port. */
static void run_path(unsigned k)
{
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_CREDITS |
						    RPCRDMA_CLNT_OPT_TIMEOUT |
						    RPCRDMA_CLNT_OPT_RETRIES,
				       .credits = 2,
				       .timeout_ms = TMO_MS,
				       .retries = 20};
	struct fake_peer p;
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_xprt_stats st;
	uint16_t port;

	if (fp_start(&p, 0, FP_OK)) {
		xt_failures++;
		return;
	}
	port = p.port;
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", port, XTEST_PROG, XTEST_VERS, &co, &c) == 0);
	if (!c) {
		fp_stop(&p);
		return;
	}
	XT_CHECK(bounded_call(c, paths[k].name, 1) == 0);
	paths[k].run(c, &p);
	fp_stop(&p);
	healthy_again(c, &p, port, paths[k].name);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	printf("%s: calls %llu replies %llu timeouts %llu reconnects %llu timeout resets %llu "
	       "unmatched %llu\n",
	       paths[k].name, (unsigned long long)st.calls, (unsigned long long)st.replies,
	       (unsigned long long)st.timeouts, (unsigned long long)st.reconnects,
	       (unsigned long long)st.timeout_resets, (unsigned long long)st.unmatched_replies);
	rpcrdma_clnt_destroy(c);
	fp_stop(&p);
}

/* No argument: every path; else the paths named. */
int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	for (unsigned k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		bool want = argc < 2;

		for (int i = 1; i < argc; i++)
			want |= strcmp(argv[i], paths[k].name) == 0;
		if (want)
			run_path(k);
	}
	return xt_result();
}
