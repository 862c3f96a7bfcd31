// SPDX-License-Identifier: MIT
/*
 * usage: bulk_server [PORT]
 * bulk.x's server over RPC-over-RDMA (port 0 or none: one the kernel
 * picks, printed as "ready PORT"); stops on SIGINT/SIGTERM. Compare with
 * bulk_server_tcp.c: only the lines marked RDMA differ.
 */
#include <rpcrdma.h> /* RDMA */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "bulk.h"

void bulk_prog_1(struct svc_req *rqstp, SVCXPRT *transp); /* rpcgen -m */

int main(int argc, char **argv)
{
	unsigned port = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	struct rpcrdma_svc *svc; /* RDMA */
	sigset_t ss;
	int sig, err;

	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	/* RDMA: listen, register the rpcgen dispatcher, start the threads */
	err = port ? rpcrdma_svc_create(NULL, (uint16_t)port, NULL, &svc)
		   : rpcrdma_svc_create_any(NULL, NULL, &svc);
	if (!err)
		err = rpcrdma_svc_register_tirpc(svc, BULK_PROG, BULK_V1, bulk_prog_1);
	if (!err)
		err = rpcrdma_svc_start(svc);
	if (err) {
		fprintf(stderr, "bulk_server: %s\n", rpcrdma_strerror(err));
		return 1;
	}
	printf("ready %u\n", rpcrdma_svc_port(svc));
	fflush(stdout);
	sigwait(&ss, &sig);
	rpcrdma_svc_destroy(svc); /* RDMA */
	return 0;
}
