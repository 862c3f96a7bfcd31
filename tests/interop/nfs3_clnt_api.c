/* SPDX-License-Identifier: MIT */
/* NFSv3 through our client API: see nfs3_clnt_api.h. */
#include "nfs3_clnt_api.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

nfs_fh3 iop_fh3(const struct iop_fh *fh)
{
	nfs_fh3 f;

	f.data.data_len = fh->len;
	f.data.data_val = (char *)(uintptr_t)fh->data;
	return f;
}

int iop_clnt_lookup(struct rpcrdma_clnt *cl, const struct iop_fh *dir, const char *name,
		    struct iop_fh *out)
{
	LOOKUP3args a = {.what = {.dir = iop_fh3(dir), .name = (char *)(uintptr_t)name}};
	LOOKUP3res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = rpcrdma_clnt_call(cl, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a,
			       (xdrproc_t)xdr_LOOKUP3res, &r, NULL);
	if (rc) {
		printf("LOOKUP %s: %d (%s)\n", name, rc, rpcrdma_strerror(rc));
		iop_failures++;
		return -1;
	}
	if (r.status == NFS3_OK && r.LOOKUP3res_u.resok.object.data.data_len <= NFS3_FHSIZE) {
		out->len = r.LOOKUP3res_u.resok.object.data.data_len;
		memcpy(out->data, r.LOOKUP3res_u.resok.object.data.data_val, out->len);
	} else {
		printf("LOOKUP %s: nfsstat3 %d\n", name, r.status);
		iop_failures++;
		rc = -1;
	}
	xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
	return rc;
}
