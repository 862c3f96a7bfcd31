/* SPDX-License-Identifier: MIT */
/*
 * Interop: NFSv3 metadata calls against the Linux kernel's nfsd over
 * RPC-over-RDMA (MPA CRC off, as the Linux client runs). The root handle
 * comes from MOUNT over TCP (libtirpc, rpcgen xdr/mount3.x); then, all inline
 * RDMA_MSG calls answered by plain Sends with credit grant 64:
 *   - FSINFO of the root: rtmax/wtmax > 0 (the READ/WRITE tests size their
 *     chunks by them);
 *   - GETATTR of the root: a directory;
 *   - LOOKUP interop, then hello.txt in it: a regular file of 14 bytes
 *     (guest/nfs-server.sh wrote "interop hello\n");
 *   - LOOKUP of a missing name: NFS3ERR_NOENT;
 *   - GETATTR of a handle with its last byte changed: NFS3ERR_STALE or
 *     NFS3ERR_BADHANDLE (an NFS error, not a transport error).
 */
#include <stdio.h>
#include <string.h>

#include "nfs3_client.h"

int main(void)
{
	struct iop_env env;
	struct iop_conn c;
	struct iop_fh root, dir, file, bad;
	FSINFO3resok fi;
	fattr3 a;
	int rc = iop_nfs3_setup(&env, &c, &root, false);

	if (rc != IOP_PASS) {
		iop_close(&c);
		return rc;
	}
	memset(&fi, 0, sizeof(fi));
	IOP_EXPECT(iop_nfs3_fsinfo(&c, &root, &fi) == NFS3_OK);
	printf("FSINFO: rtmax %u rtpref %u wtmax %u wtpref %u dtpref %u maxfilesize %llu\n",
	       fi.rtmax, fi.rtpref, fi.wtmax, fi.wtpref, fi.dtpref,
	       (unsigned long long)fi.maxfilesize);
	IOP_EXPECT(fi.rtmax > 0 && fi.wtmax > 0);

	memset(&a, 0, sizeof(a));
	IOP_EXPECT(iop_nfs3_getattr(&c, &root, &a) == NFS3_OK);
	printf("GETATTR /export: type %d mode %o fileid %llu\n", a.type, a.mode,
	       (unsigned long long)a.fileid);
	IOP_EXPECT(a.type == NF3DIR);

	memset(&a, 0, sizeof(a));
	IOP_EXPECT(iop_nfs3_lookup(&c, &root, "interop", &dir, &a) == NFS3_OK);
	IOP_EXPECT(a.type == NF3DIR);
	memset(&a, 0, sizeof(a));
	IOP_EXPECT(iop_nfs3_lookup(&c, &dir, "hello.txt", &file, &a) == NFS3_OK);
	printf("LOOKUP interop/hello.txt: type %d size %llu\n", a.type, (unsigned long long)a.size);
	IOP_EXPECT(a.type == NF3REG && a.size == 14);
	memset(&a, 0, sizeof(a));
	IOP_EXPECT(iop_nfs3_getattr(&c, &file, &a) == NFS3_OK);
	IOP_EXPECT(a.type == NF3REG && a.size == 14);

	rc = iop_nfs3_lookup(&c, &dir, "no-such-file", &bad, NULL);
	printf("LOOKUP interop/no-such-file: nfsstat3 %d\n", rc);
	IOP_EXPECT(rc == NFS3ERR_NOENT);

	bad = file;
	bad.data[bad.len - 1] ^= 0x5a;
	rc = iop_nfs3_getattr(&c, &bad, &a);
	printf("GETATTR of a damaged handle: nfsstat3 %d\n", rc);
	IOP_EXPECT(rc == NFS3ERR_STALE || rc == NFS3ERR_BADHANDLE);

	/* The connection still serves calls after the errors. */
	IOP_EXPECT(iop_nfs_null(&c, false) == 0);
	iop_close(&c);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
