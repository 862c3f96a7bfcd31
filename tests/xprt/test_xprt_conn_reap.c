// SPDX-License-Identifier: MIT
/*
 * A server limited to one connection (RPCRDMA_SVC_OPT_MAX_CONNS = 1) serves
 * one client after another: each client makes calls and goes away, and the
 * next one is accepted once the server has reaped the dead connection. The
 * server signals only some of its reply Sends; a connection is reaped only
 * when every send buffer is back, which for the unsignaled Sends still
 * unaccounted for takes the flush completion of the marker the server posts
 * when the connection goes down. If that failed, the dead connection would
 * hold the only slot for ever and the next client would be refused.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xprt/xprt_test.h"

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_MAX_CONNS, .max_conns = 1};
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_RETRIES |
						    RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT,
				       .retries = 0,
				       .connect_timeout_ms = 1000};
	struct tl_server srv;
	/* 4, 3, 2, 1 and 6 calls: every count of unsignaled Sends left
	 * behind (0..3 with one Send in 4 signaled; the first call of a
	 * connection is the 1st of its 4) */
	static const int ncalls[] = {4, 3, 2, 1, 6};

	signal(SIGPIPE, SIG_IGN);
	if (xt_server_start(&srv, &so, NULL))
		return 1;
	for (unsigned k = 0; k < sizeof(ncalls) / sizeof(ncalls[0]); k++) {
		struct rpcrdma_clnt *c = NULL;
		uint64_t t0 = tl_now_ms();
		int rc;

		/* the previous connection is reaped by the server's
		 * periodic pass (every 5 ms) once all its buffers are
		 * back: retry the connection until then (20 s at most) */
		do {
			rc = rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &co,
						 &c);
			if (rc)
				usleep(100000);
		} while (rc && tl_now_ms() - t0 < 20000);
		XT_CHECK(rc == 0);
		if (rc) {
			fprintf(stderr, "client %u: not accepted within 20 s: %s\n", k,
				strerror(-rc));
			break;
		}
		printf("client %u accepted after %llu ms\n", k,
		       (unsigned long long)(tl_now_ms() - t0));
		for (int i = 0; i < ncalls[k]; i++)
			XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
		rpcrdma_clnt_destroy(c);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
