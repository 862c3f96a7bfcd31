// SPDX-License-Identifier: MIT
/*
 * The default listener is dual-stack: one server created with host NULL
 * answers a client over IPv6 (::1) and one over IPv4 (127.0.0.1) on the
 * same port, and reports each caller's address in its own family (the
 * IPv4 one as 127.0.0.1, not as the v4-mapped ::ffff:127.0.0.1 the socket
 * sees). A server bound to 127.0.0.1 only refuses ::1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rpcrdma.h"

#include "lib/check.h"

#define PROG 0x20049abdu

/* proc 1: the caller's address as text ("4 127.0.0.1", "6 ::1") */
static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	char host[INET6_ADDRSTRLEN] = "?", out[64], *p = out;

	(void)proc;
	(void)args;
	(void)ctx;
	if (rpcrdma_svc_req_caller(req, &ss, &len) == 0) {
		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
				  sizeof(host));
		else
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host,
				  sizeof(host));
	}
	snprintf(out, sizeof(out), "%c %s", ss.ss_family == AF_INET ? '4' : '6', host);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_wrapstring, &p);
}

static int caller_seen(const char *host, uint16_t port, char *out, size_t len)
{
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT,
				       .connect_timeout_ms = 5000};
	struct rpcrdma_clnt *c = NULL;
	char *res = NULL;
	int rc;

	rc = rpcrdma_clnt_create(host, port, PROG, 1, &co, &c);
	if (rc)
		return rc;
	rc = rpcrdma_clnt_call(c, 1, NULL, NULL, (xdrproc_t)xdr_wrapstring, &res, NULL);
	if (!rc)
		snprintf(out, len, "%s", res);
	xdr_free((xdrproc_t)xdr_wrapstring, (char *)&res);
	rpcrdma_clnt_destroy(c);
	return rc;
}

static int have_ipv6_loopback(void)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	ok = bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0;
	close(fd);
	return ok;
}

int main(void)
{
	struct rpcrdma_svc *s = NULL, *s4 = NULL;
	char seen[64];
	uint16_t port;
	int rc;

	if (!have_ipv6_loopback()) {
		printf("SKIP: no IPv6 loopback on this host\n");
		return 77;
	}
	CHECK(rpcrdma_svc_create_any(NULL, NULL, &s) == 0);
	if (!s)
		return 1;
	CHECK(rpcrdma_svc_register(s, PROG, 1, dispatch, NULL) == 0);
	CHECK(rpcrdma_svc_start(s) == 0);
	port = rpcrdma_svc_port(s);

	seen[0] = '\0';
	rc = caller_seen("::1", port, seen, sizeof(seen));
	printf("::1 port %u: %d, server saw '%s'\n", port, rc, seen);
	CHECK(rc == 0 && !strcmp(seen, "6 ::1"));
	seen[0] = '\0';
	rc = caller_seen("127.0.0.1", port, seen, sizeof(seen));
	printf("127.0.0.1 port %u: %d, server saw '%s'\n", port, rc, seen);
	CHECK(rc == 0 && !strcmp(seen, "4 127.0.0.1"));
	CHECK(rpcrdma_svc_stop(s, 1000) == 0);
	rpcrdma_svc_destroy(s);

	/* an IPv4 address still means IPv4 only */
	CHECK(rpcrdma_svc_create_any("127.0.0.1", NULL, &s4) == 0);
	if (s4) {
		CHECK(rpcrdma_svc_register(s4, PROG, 1, dispatch, NULL) == 0);
		CHECK(rpcrdma_svc_start(s4) == 0);
		port = rpcrdma_svc_port(s4);
		rc = caller_seen("::1", port, seen, sizeof(seen));
		printf("::1 to a 127.0.0.1 listener: %d (%s)\n", rc, rpcrdma_strerror(rc));
		CHECK(rc == -ECONNREFUSED);
		rc = caller_seen("127.0.0.1", port, seen, sizeof(seen));
		CHECK(rc == 0 && !strcmp(seen, "4 127.0.0.1"));
		rpcrdma_svc_destroy(s4);
	}

	if (failures) {
		fprintf(stderr, "test_dualstack: %d failures\n", failures);
		return 1;
	}
	printf("test_dualstack: ok\n");
	return 0;
}
