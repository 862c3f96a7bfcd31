/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 through our client API (include/rpcrdma/client.h), shared by the
 * interop tests that use it (test_interop_clnt, test_interop_disconnect).
 * Kept apart from nfs3_client.c, which the tests without the API link too.
 */
#ifndef RPCRDMA_TESTS_INTEROP_NFS3_CLNT_API_H
#define RPCRDMA_TESTS_INTEROP_NFS3_CLNT_API_H

#include "nfs3_client.h"
#include "rpcrdma/client.h"

/* READ3res with the data as a bulk item (RFC 8267 §4.2): the client API
 * places it through the call's Write chunk. */
struct iop_read_res {
	nfsstat3 status;
	post_op_attr attr;
	count3 count;
	bool_t eof;
	rpcrdma_bulk data;
};
bool_t xdr_iop_read_res(XDR *x, struct iop_read_res *r);

/* An nfs_fh3 naming @fh's bytes (no copy). */
nfs_fh3 iop_fh3(const struct iop_fh *fh);

/* LOOKUP @name in @dir: 0 with its handle in @out, or -1 after printing why
 * (transport error or nfsstat3) and counting a failure in iop_failures. */
int iop_clnt_lookup(struct rpcrdma_clnt *cl, const struct iop_fh *dir, const char *name,
		    struct iop_fh *out);

#endif
