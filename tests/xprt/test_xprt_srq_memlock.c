// SPDX-License-Identifier: MIT
/*
 * The shared receive pool on a device that pins registrations (issue 38,
 * the verbs guest's siw steps): the soft-iWARP provider with
 * RPCRDMA_SIW_FAULT=pin:0 charges every registration to RLIMIT_MEMLOCK as
 * Linux siw does (the pages it spans, per process, root too) and reports
 * RPCRDMA_DEV_CAP_PINS_MEMORY. Under the usual 8 MiB limit, a server with
 * the default options (64 credits: queue depth 1,024, 1,024 connections,
 * 4 KiB receives) once made its pool exactly 8 MiB, page-aligned: it was
 * registered, and every connection's send pool was then refused (-ENOMEM,
 * the client saw ECONNREFUSED). Here four clients connect, each makes a
 * NULL call and a 64 KiB WRITE by Read chunk (the server registers its
 * staging buffer too), checked by the server's hash.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "xprt/xprt_test.h"

#define NCLNT    4
#define MEMLOCK  (8u << 20)
#define WRITE_SZ (64u << 10)

int main(void)
{
	struct rlimit rl;
	struct tl_server srv;
	struct rpcrdma_clnt *c[NCLNT] = {0};
	uint8_t *buf = malloc(WRITE_SZ);
	int rc;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < MEMLOCK)) {
		printf("SKIP: RLIMIT_MEMLOCK's hard limit is under 8 MiB: the test sets 8 MiB\n");
		free(buf);
		return 77;
	}
	rl.rlim_cur = MEMLOCK;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setenv("RPCRDMA_SIW_FAULT", "pin:0", 1) || !buf) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	xt_fill(buf, WRITE_SZ, 5);
	rc = xt_server_start(&srv, NULL, NULL);
	if (rc) {
		fprintf(stderr, "server start: %d\n", rc);
		return 1;
	}
	for (int i = 0; i < NCLNT; i++) {
		struct xt_write_args a = {.seed = (uint32_t)i, .data = {buf, WRITE_SZ, 0}};
		struct xt_write_res res = {0};

		rc = rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, NULL, &c[i]);
		if (rc) {
			fprintf(stderr, "client %d: clnt_create: %s\n", i, strerror(-rc));
			XT_CHECK(rc == 0);
			break;
		}
		XT_CHECK(rpcrdma_clnt_call(c[i], XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
		XT_CHECK(rpcrdma_clnt_call(c[i], XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
					   (xdrproc_t)xdr_xt_write_res, &res, NULL) == 0);
		XT_CHECK(res.len == WRITE_SZ && res.hash == (xt_hash(buf, WRITE_SZ) ^ (uint32_t)i));
	}
	for (int i = 0; i < NCLNT; i++)
		if (c[i])
			rpcrdma_clnt_destroy(c[i]);
	XT_CHECK(xt_server_stop(&srv) == 0);
	free(buf);
	return xt_result();
}
