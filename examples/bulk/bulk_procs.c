// SPDX-License-Identifier: MIT
/*
 * The server procedures, written as for any rpcgen program: the same
 * file serves over RPC-over-RDMA (bulk_server.c) and over TCP
 * (bulk_server_tcp.c).
 */
#include <stdlib.h>

#include "bulk.h"
#include "bulk_data.h"

u_quad_t *put_1_svc(rpcrdma_bulk *data, struct svc_req *rq)
{
	static u_quad_t h;

	(void)rq;
	/* over RDMA, data->base points at the bytes the server pulled from
	 * the client's Read chunk */
	h = bulk_hash(data->base, data->len);
	return &h;
}

rpcrdma_bulk *get_1_svc(get_args *a, struct svc_req *rq)
{
	static rpcrdma_bulk r;

	(void)rq;
	/* bulk_prog_1_freeresult() frees the previous result */
	r.base = malloc(a->len ? a->len : 1);
	r.len = r.base ? a->len : 0;
	r.flags = 0;
	if (r.base)
		bulk_fill(r.base, r.len, a->seed);
	return &r;
}

int bulk_prog_1_freeresult(SVCXPRT *xprt, xdrproc_t xres, caddr_t res)
{
	(void)xprt;
	xdr_free(xres, res);
	return 1;
}
