// SPDX-License-Identifier: MIT
/* Our own client of a started rpcrdma-nfs3d (nfs3d_tclnt.h). */
#define _GNU_SOURCE
#include "nfs3d_tclnt.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "mount3.h" /* rpcgen, xdr/mount3.x */
#include "nfs3.h"   /* rpcgen, xdr/nfs3.x */

int nfs3d_ready(int fd, uint16_t *nfs_port, uint16_t *mount_port)
{
	FILE *f = fdopen(fd, "r");
	char line[128] = "";
	unsigned np = 0, mp = 0;
	if (!f) {
		close(fd);
		return -1;
	}
	bool ok = fgets(line, sizeof(line), f) &&
		  sscanf(line, "ready nfs=%u mount=%u", &np, &mp) == 2 && np <= 65535 &&
		  mp <= 65535;
	fclose(f);
	if (!ok)
		return -1;
	*nfs_port = (uint16_t)np;
	*mount_port = (uint16_t)mp;
	return 0;
}

int nfs3d_mnt(uint16_t port, char *fh, u_int *len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int sock = RPC_ANYSOCK;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	CLIENT *m = clnttcp_create(&sa, MOUNT_PROGRAM, MOUNT_V3, &sock, 0, 0);
	if (!m)
		return -1;
	char path[] = "/";
	dirpath arg = path;
	mountres3 r;
	memset(&r, 0, sizeof(r));
	struct timeval tv = {10, 0};
	enum clnt_stat cs = clnt_call(m, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, (char *)&arg,
				      (xdrproc_t)xdr_mountres3, (char *)&r, tv);
	clnt_destroy(m);
	const fhandle3 *h = &r.mountres3_u.mountinfo.fhandle;
	int rc =
	    cs == RPC_SUCCESS && r.fhs_status == MNT3_OK && h->fhandle3_len <= NFS3_FHSIZE ? 0 : -1;
	if (rc == 0) {
		memcpy(fh, h->fhandle3_val, h->fhandle3_len);
		*len = h->fhandle3_len;
	}
	xdr_free((xdrproc_t)xdr_mountres3, (char *)&r);
	return rc;
}

CLIENT *nfs3d_connect(uint16_t port, struct rpcrdma_clnt **cl)
{
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT, .timeout_ms = 10000};
	*cl = NULL;
	if (rpcrdma_clnt_create("127.0.0.1", port, NFS_PROGRAM, NFS_V3, &o, cl) != 0)
		return NULL;
	return rpcrdma_clnt_tirpc(*cl);
}

int nfs3d_call(CLIENT *nfs, rpcproc_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
	       FILE *log)
{
	struct timeval tv = {10, 0};
	enum clnt_stat cs = clnt_call(nfs, proc, xargs, args, xres, res, tv);
	if (cs != RPC_SUCCESS) {
		fprintf(log, "call %u: %s\n", (unsigned)proc, clnt_sperrno(cs));
		return -1;
	}
	return 0;
}
