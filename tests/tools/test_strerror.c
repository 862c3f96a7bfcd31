// SPDX-License-Identifier: MIT
/*
 * rpcrdma_strerror() names every error code the API returns (issue 19):
 * none falls back to a bare "error", the call outcomes keep their
 * protocol names, and a connect to a TCP peer that is not an RPC-over-RDMA
 * server fails with the code that says what the peer is: an HTTP server
 * (-RPCRDMA_EPEER_HTTP), an ONC RPC server over TCP (-RPCRDMA_EPEER_ONCRPC),
 * anything else (-EPROTO, "MPA handshake failed").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpcrdma.h>

#include "lib/check.h"

static bool has(int status, const char *text)
{
	const char *s = rpcrdma_strerror(status);

	if (strstr(s, text))
		return true;
	printf("strerror(%d) = \"%s\", want \"%s\" in it\n", status, s, text);
	return false;
}

/* A one-connection TCP server that answers whatever arrives with @answer. */
struct peer {
	int lfd;
	uint16_t port;
	const void *answer;
	size_t len;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	char buf[512];
	int fd = accept(p->lfd, NULL, NULL);

	if (fd >= 0) {
		(void)recv(fd, buf, sizeof(buf), 0);
		(void)send(fd, p->answer, p->len, MSG_NOSIGNAL);
		close(fd);
	}
	return NULL;
}

/* rpcrdma_clnt_create() against a peer answering @answer. */
static int connect_to(const void *answer, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT |
						   RPCRDMA_CLNT_OPT_RETRIES,
				      .connect_timeout_ms = 5000};
	struct peer p = {.answer = answer, .len = len};
	struct rpcrdma_clnt *c = NULL;
	pthread_t th;
	int rc;

	p.lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (p.lfd < 0 || bind(p.lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(p.lfd, 1) ||
	    getsockname(p.lfd, (struct sockaddr *)&sa, &sl))
		return -errno;
	p.port = ntohs(sa.sin_port);
	pthread_create(&th, NULL, peer_main, &p);
	rc = rpcrdma_clnt_create("127.0.0.1", p.port, 100003, 3, &o, &c);
	if (rc == 0)
		rpcrdma_clnt_destroy(c);
	pthread_join(th, NULL);
	close(p.lfd);
	return rc;
}

int main(void)
{
	/* every code a public function returns has its own text */
	static const int codes[] = {ETIMEDOUT,
				    ECONNRESET,
				    ENOTCONN,
				    ECANCELED,
				    EPROTONOSUPPORT,
				    EREMOTEIO,
				    EPFNOSUPPORT,
				    EPROTOTYPE,
				    EOPNOTSUPP,
				    EINVAL,
				    EIO,
				    EPROTO,
				    EACCES,
				    EBADMSG,
				    EMSGSIZE,
				    ENOMEM,
				    ENOENT,
				    ECONNREFUSED,
				    ECONNABORTED,
				    EHOSTUNREACH,
				    ENETUNREACH,
				    EADDRINUSE,
				    EADDRNOTAVAIL,
				    EAFNOSUPPORT,
				    EISCONN,
				    EPIPE,
				    ENODEV,
				    ENOPROTOOPT,
				    EEXIST,
				    EBUSY,
				    EAGAIN,
				    EINTR,
				    ENOSPC,
				    ENOBUFS,
				    E2BIG,
				    EOVERFLOW,
				    EMFILE,
				    EPERM,
				    RPCRDMA_EPEER_HTTP,
				    RPCRDMA_EPEER_ONCRPC};
	static const uint8_t http[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
	/* record mark (last fragment, 24 bytes), xid, REPLY, MSG_DENIED,
	 * RPC_MISMATCH 2..2 (RFC 5531 §9, §11) */
	static const uint8_t rpc[] = {0x80, 0, 0, 24, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1, 0, 0, 0,
				      1,    0, 0, 0,  0,    0,    0,    0,    0, 0, 2, 0, 0, 0, 2};
	static const uint8_t ssh[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";
	int rc;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = rpcrdma_strerror(-codes[i]);

		CHECK(s && *s && strcmp(s, "error") != 0 && strcmp(s, "unknown error") != 0);
		for (size_t j = 0; j < i; j++)
			CHECK(codes[i] == codes[j] || strcmp(s, rpcrdma_strerror(-codes[j])) != 0);
	}
	CHECK(strcmp(rpcrdma_strerror(0), "success") == 0);
	CHECK(strcmp(rpcrdma_strerror(-EREMOTEIO), "RDMA_ERROR ERR_CHUNK") == 0);
	CHECK(strcmp(rpcrdma_strerror(-EPFNOSUPPORT), "PROG_UNAVAIL") == 0);
	CHECK(has(-EPROTO, "peer is not an RPC-over-RDMA server (MPA handshake failed)"));
	CHECK(has(-EPROTO, "RPC_MISMATCH"));
	CHECK(has(-RPCRDMA_EPEER_HTTP, "peer is an HTTP server"));
	CHECK(has(-RPCRDMA_EPEER_ONCRPC, "peer is an ONC RPC server over TCP"));
	CHECK(has(-ENOENT, "unknown host") && has(-ENOENT, "unknown RDMA provider name"));
	CHECK(has(-ECONNREFUSED, "connection refused"));
	CHECK(has(-EADDRINUSE, "address already in use"));
	CHECK(has(-EHOSTUNREACH, "no route to host"));
	CHECK(has(-ENOTUNIQ, "not unique")); /* anything else: the system's words */
	CHECK(strcmp(rpcrdma_strerror(-100000), "unknown error") == 0);
	CHECK(strcmp(rpcrdma_strerror(5), "unknown error") == 0);

	/* what a connect finds at the other end */
	rc = connect_to(http, sizeof(http) - 1);
	printf("HTTP peer: %d (%s)\n", rc, rpcrdma_strerror(rc));
	CHECK(rc == -RPCRDMA_EPEER_HTTP);
	rc = connect_to(rpc, sizeof(rpc));
	printf("ONC RPC peer: %d (%s)\n", rc, rpcrdma_strerror(rc));
	CHECK(rc == -RPCRDMA_EPEER_ONCRPC);
	rc = connect_to(ssh, sizeof(ssh) - 1);
	printf("SSH peer: %d (%s)\n", rc, rpcrdma_strerror(rc));
	CHECK(rc == -EPROTO);
	/* a peer that closes after fewer bytes than an MPA header */
	rc = connect_to("HTTP/1.0 400\r\n", 14);
	printf("short HTTP answer: %d (%s)\n", rc, rpcrdma_strerror(rc));
	CHECK(rc == -RPCRDMA_EPEER_HTTP);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
