// SPDX-License-Identifier: MIT
/*
 * usage: bulk_client HOST PORT [BYTES]
 * bulk.x's client over RPC-over-RDMA. Compare with bulk_client_tcp.c:
 * only the lines marked RDMA differ.
 */
#include <rpcrdma.h> /* RDMA */
#include <stdio.h>
#include <stdlib.h>

#include "bulk.h"
#include "bulk_check.h"

int main(int argc, char **argv)
{
	struct rpcrdma_clnt *rc; /* RDMA */
	CLIENT *cl;
	int err, bad;

	if (argc < 3) {
		fprintf(stderr, "usage: bulk_client HOST PORT [BYTES]\n");
		return 2;
	}
	/* RDMA: connect, then wrap the connection in a TI-RPC CLIENT */
	err = rpcrdma_clnt_create(argv[1], (uint16_t)atoi(argv[2]), BULK_PROG, BULK_V1, NULL, &rc);
	if (err) {
		fprintf(stderr, "bulk_client: %s: %s\n", argv[1], rpcrdma_strerror(err));
		return 1;
	}
	cl = rpcrdma_clnt_tirpc(rc);
	if (!cl)
		return 1;
	bad = bulk_check(cl, argc > 3 ? (uint32_t)atoi(argv[3]) : 512 * 1024);
	clnt_destroy(cl);
	rpcrdma_clnt_destroy(rc); /* RDMA */
	return bad;
}
