// SPDX-License-Identifier: MIT
/*
 * Idle client connections cost no CPU (issue 20: one process holds
 * thousands of them). Each client has a background thread; an idle one
 * must sleep until work comes with a signal, not wake on a short timer:
 * at 50 ms, 1,000 idle clients kept 40% of a core busy and two processes
 * of 2,500 took a minute to connect. Here 40 clients make a call each and
 * rest: the threads of this process (the server is another process) may
 * switch context only a few times a client in 1.5 s. Then an asynchronous
 * call on every client (its completion is driven by the background thread)
 * must complete well within the idle timeout: the thread is woken by the
 * call, not by its timer.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xprt/xprt_test.h"

#define NCLIENTS 40

/* Context switches of every thread of this process so far. */
static unsigned long long ctx_switches(void)
{
	unsigned long long sum = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], line[128];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				sum += v;
		}
		fclose(f);
	}
	closedir(d);
	return sum;
}

static atomic_uint done_calls, bad_calls;

static void on_done(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	if (status)
		atomic_fetch_add(&bad_calls, 1);
	atomic_fetch_add(&done_calls, 1);
}

int main(void)
{
	struct rpcrdma_clnt *c[NCLIENTS] = {0};
	struct tl_server srv;
	unsigned long long s0, s1;
	uint64_t t0, took;
	int n = 0;

	signal(SIGPIPE, SIG_IGN);
	if (xt_server_start(&srv, NULL, NULL))
		return 1;
	for (; n < NCLIENTS; n++) {
		int rc =
		    rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, NULL, &c[n]);

		XT_CHECK(rc == 0);
		if (rc)
			break;
		XT_CHECK(rpcrdma_clnt_call(c[n], XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	}
	/* let set-up work settle, then count a quiet stretch */
	usleep(300000);
	s0 = ctx_switches();
	usleep(1500000);
	s1 = ctx_switches();
	printf("%d idle clients: %llu context switches in 1.5 s\n", n, s1 - s0);
	/* 50 ms wake-ups would be 30 per client; allow the odd 2 s safety
	 * wake-up and the main thread's own sleeps */
	XT_CHECK(s1 - s0 <= (unsigned long long)n * 2 + 10);

	t0 = tl_now_ms();
	for (int i = 0; i < n; i++)
		if (rpcrdma_clnt_call_async(c[i], XT_NULL, NULL, NULL, NULL, NULL, NULL, on_done,
					    NULL)) {
			atomic_fetch_add(&bad_calls, 1);
			atomic_fetch_add(&done_calls, 1);
		}
	while (atomic_load(&done_calls) < (unsigned)n && tl_now_ms() - t0 < 10000)
		usleep(1000);
	took = tl_now_ms() - t0;
	printf("%u asynchronous calls on idle clients done in %llu ms, %u failed\n",
	       atomic_load(&done_calls), (unsigned long long)took, atomic_load(&bad_calls));
	XT_CHECK(atomic_load(&done_calls) == (unsigned)n);
	XT_CHECK(atomic_load(&bad_calls) == 0);
	/* the idle timeout is 2 s: woken by a timer, these would take it */
	XT_CHECK(took < 1000);

	for (int i = 0; i < n; i++)
		rpcrdma_clnt_destroy(c[i]);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
