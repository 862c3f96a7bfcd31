// SPDX-License-Identifier: MIT
/*
 * usage: bulk_client_tcp HOST PORT [BYTES]
 * bulk.x's client over TCP with libtirpc alone: the twin of
 * bulk_client.c.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#include "bulk.h"
#include "bulk_check.h"

int main(int argc, char **argv)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int sock = RPC_ANYSOCK;
	CLIENT *cl;
	int bad;

	if (argc < 3) {
		fprintf(stderr, "usage: bulk_client_tcp HOST PORT [BYTES]\n");
		return 2;
	}
	/* TCP: an explicit port, as the RDMA client has (no rpcbind) */
	if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "bulk_client_tcp: %s: not an IPv4 address\n", argv[1]);
		return 1;
	}
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	cl = clnttcp_create(&sin, BULK_PROG, BULK_V1, &sock, 0, 0);
	if (!cl) {
		clnt_pcreateerror(argv[1]);
		return 1;
	}
	bad = bulk_check(cl, argc > 3 ? (uint32_t)atoi(argv[3]) : 512 * 1024);
	clnt_destroy(cl);
	return bad;
}
