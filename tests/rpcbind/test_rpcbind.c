// SPDX-License-Identifier: MIT
/*
 * rpcbind registration and lookup (RFC 8166 §9) against Debian's real
 * rpcbind (rpcbind_run.sh makes sure one runs): a dual-stack server with
 * RPCRDMA_SVC_OPT_RPCBIND registers both versions of its program under
 * "rdma" (0.0.0.0.p1.p2) and "rdma6" (::.p1.p2), as `rpcinfo` lists them;
 * rpcrdma_rpcb_getport() finds the port over IPv4 and IPv6, and
 * rpcrdma_clnt_create_rpcb() connects through it and makes a call; an
 * unregistered version is -ENXIO; after rpcrdma_svc_stop() rpcinfo lists
 * none of it and the lookup is -ENXIO.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpcrdma.h"

#include "lib/check.h"

#define PROG 0x20049abcu /* 537172668 */

/* proc 1: the argument + the version */
static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	uint32_t v = 0;

	(void)args;
	(void)ctx;
	if (proc != 1) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &v)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	v += rpcrdma_svc_req_vers(req);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
}

/* How many lines of `rpcinfo` (rpcbind's DUMP) show PROG version @vers
 * under @netid at @uaddr; every PROG line when @netid is NULL. */
static int rpcinfo_count(uint32_t vers, const char *netid, const char *uaddr)
{
	char line[512], n[64], a[128];
	unsigned long p, v;
	int count = 0;
	FILE *f = popen("rpcinfo 2>&1", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lu %lu %63s %127s", &p, &v, n, a) != 4 || p != PROG)
			continue;
		if (!netid || (v == vers && !strcmp(n, netid) && !strcmp(a, uaddr)))
			count++;
	}
	return pclose(f) == 0 ? count : -1;
}

static void call_through_rpcbind(const char *host, uint32_t vers, uint16_t port)
{
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT,
				       .connect_timeout_ms = 5000};
	struct rpcrdma_clnt *c = NULL;
	uint16_t got = 0;
	uint32_t arg = 41, res = 0;
	int rc;

	rc = rpcrdma_rpcb_getport(host, PROG, vers, 0, &got);
	if (rc || got != port) {
		fprintf(stderr, "FAIL: getport %s v%u: %d port %u, want 0 port %u\n", host, vers,
			rc, got, port);
		failures++;
	}
	rc = rpcrdma_clnt_create_rpcb(host, PROG, vers, &co, &c);
	if (rc) {
		fprintf(stderr, "FAIL: clnt_create_rpcb %s v%u: %s\n", host, vers,
			rpcrdma_strerror(rc));
		failures++;
		return;
	}
	rc = rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &arg, (xdrproc_t)xdr_u_int, &res, NULL);
	CHECK(rc == 0);
	CHECK(res == 41 + vers);
	printf("%s: program %u version %u found on port %u, call answered %u\n", host, PROG, vers,
	       port, res);
	rpcrdma_clnt_destroy(c);
}

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_RPCBIND, .rpcbind = 1};
	struct rpcrdma_svc *s = NULL;
	char u4[64], u6[64];
	uint16_t port, got;
	int rc, v6;

	rc = rpcrdma_svc_create_any(NULL, &so, &s);
	if (rc) {
		fprintf(stderr, "FAIL: svc_create_any: %d\n", rc);
		return 1;
	}
	CHECK(rpcrdma_svc_register(s, PROG, 1, dispatch, NULL) == 0);
	CHECK(rpcrdma_svc_register(s, PROG, 2, dispatch, NULL) == 0);
	rc = rpcrdma_svc_start(s);
	if (rc) {
		fprintf(stderr, "FAIL: svc_start (registers with rpcbind): %d\n", rc);
		rpcrdma_svc_destroy(s);
		return 1;
	}
	port = rpcrdma_svc_port(s);
	snprintf(u4, sizeof(u4), "0.0.0.0.%u.%u", port >> 8, port & 0xff);
	snprintf(u6, sizeof(u6), "::.%u.%u", port >> 8, port & 0xff);
	if (system("rpcinfo | grep -E 'netid|rdma'"))
		fprintf(stderr, "rpcinfo lists no rdma entry\n");
	for (uint32_t v = 1; v <= 2; v++) {
		CHECK(rpcinfo_count(v, "rdma", u4) == 1);
		CHECK(rpcinfo_count(v, "rdma6", u6) == 1);
	}
	CHECK(rpcinfo_count(0, NULL, NULL) == 4);

	call_through_rpcbind("127.0.0.1", 1, port);
	call_through_rpcbind("127.0.0.1", 2, port);
	/* rpcbind listens on ::1 too unless the host has no IPv6 */
	v6 = rpcrdma_rpcb_getport("::1", PROG, 1, 0, &got);
	if (v6 == -ENOENT || v6 == -EAFNOSUPPORT || v6 == -ECONNREFUSED)
		printf("no IPv6 loopback rpcbind (%d): rdma6 lookup not tried\n", v6);
	else
		call_through_rpcbind("::1", 2, port);
	CHECK(rpcrdma_rpcb_getport("127.0.0.1", PROG, 9, 0, &got) == -ENXIO);

	/* stop: gone from rpcbind */
	CHECK(rpcrdma_svc_stop(s, 1000) == 0);
	CHECK(rpcinfo_count(0, NULL, NULL) == 0);
	CHECK(rpcrdma_rpcb_getport("127.0.0.1", PROG, 1, 0, &got) == -ENXIO);
	rpcrdma_svc_destroy(s);

	if (failures) {
		fprintf(stderr, "test_rpcbind: %d failures\n", failures);
		return 1;
	}
	printf("test_rpcbind: ok\n");
	return 0;
}
