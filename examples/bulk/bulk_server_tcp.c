// SPDX-License-Identifier: MIT
/*
 * usage: bulk_server_tcp [PORT]
 * bulk.x's server over TCP with libtirpc alone (svc_run): the twin of
 * bulk_server.c. Not registered with rpcbind, as the RDMA one is not.
 */
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bulk.h"

void bulk_prog_1(struct svc_req *rqstp, SVCXPRT *transp); /* rpcgen -m */

int main(int argc, char **argv)
{
	unsigned port = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
	SVCXPRT *xprt;

	/* TCP: a listening socket, a transport on it, the dispatcher */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 64) < 0) {
		perror("bulk_server_tcp");
		return 1;
	}
	xprt = svctcp_create(fd, 0, 0);
	if (!xprt || !svc_register(xprt, BULK_PROG, BULK_V1, bulk_prog_1, 0)) {
		fprintf(stderr, "bulk_server_tcp: cannot serve\n");
		return 1;
	}
	printf("ready %u\n", xprt->xp_port);
	fflush(stdout);
	svc_run(); /* until killed */
	return 1;
}
