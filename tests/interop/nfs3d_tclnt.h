/* SPDX-License-Identifier: MIT */
/*
 * Our own client of a started rpcrdma-nfs3d on loopback, through libtirpc
 * and rpcgen's routines (the programs that drive the server without a
 * guest: test_nfs3d_local, nfs3d_wire_traffic): its ready line, MOUNT v3
 * over TCP, NFS v3 over RPC-over-RDMA.
 */
#ifndef RPCRDMA_TESTS_INTEROP_NFS3D_TCLNT_H
#define RPCRDMA_TESTS_INTEROP_NFS3D_TCLNT_H

#include <rpc/rpc.h>
#include <stdint.h>
#include <stdio.h>

#include "rpcrdma/client.h"

/* The ports of rpcrdma-nfs3d's first line, "ready nfs=P mount=M", read
 * from its standard output @fd (closed here): 0, or -1 when the line does
 * not come (the server did not start). */
int nfs3d_ready(int fd, uint16_t *nfs_port, uint16_t *mount_port);

/* MNT "/" at the MOUNT v3 server on 127.0.0.1:@port (TCP): the root
 * handle's bytes into @fh (NFS3_FHSIZE of room), its length into *@len.
 * 0, or -1 when the call fails, is refused or the handle does not fit. */
int nfs3d_mnt(uint16_t port, char *fh, u_int *len);

/* A libtirpc CLIENT of NFS v3 at 127.0.0.1:@port over RPC-over-RDMA (10 s
 * timeout), the connection under it in *@cl: clnt_destroy() the CLIENT,
 * then rpcrdma_clnt_destroy(*@cl). NULL on failure (*@cl set if made). */
CLIENT *nfs3d_connect(uint16_t port, struct rpcrdma_clnt **cl);

/* clnt_call() of @proc with a 10 s timeout: 0, or -1 with the RPC error
 * on @log. The caller frees @res with xdr_free(@xres). */
int nfs3d_call(CLIENT *nfs, rpcproc_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
	       FILE *log);

#endif
