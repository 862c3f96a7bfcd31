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

/* An nfs_fh3 naming @fh's bytes (no copy). */
nfs_fh3 iop_fh3(const struct iop_fh *fh);

/* LOOKUP @name in @dir: 0 with its handle in @out, or -1 after printing why
 * (transport error or nfsstat3) and counting a failure in iop_failures. */
int iop_clnt_lookup(struct rpcrdma_clnt *cl, const struct iop_fh *dir, const char *name,
		    struct iop_fh *out);

#endif
