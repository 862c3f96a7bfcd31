/* SPDX-License-Identifier: MIT */
/*
 * The procedures of NFS_V3 that take arguments (RFC 1813 §3.3), one list
 * for every table built from it: rpcrdma-nfs3d's argument and result
 * unions and its dispatch table (main.c), and the argument decoders the
 * fuzz target fuzz/fuzz_nfs3_args.c runs. Types and routines are
 * rpcgen's, from xdr/nfs3.x.
 *
 * NFS3D_PROCS(P) expands P(number, NAME, name) once per procedure:
 * NAME##3args / NAME##3res are its rpcgen types, name its member of the
 * unions (and nfs3d_##name the function that serves it).
 */
#ifndef NFS3D_PROCS_H
#define NFS3D_PROCS_H

#include "nfs3.h" /* rpcgen, xdr/nfs3.x */

#define NFS3D_PROCS(P)                                                                             \
	P(NFSPROC3_GETATTR, GETATTR, getattr)                                                      \
	P(NFSPROC3_SETATTR, SETATTR, setattr)                                                      \
	P(NFSPROC3_LOOKUP, LOOKUP, lookup)                                                         \
	P(NFSPROC3_ACCESS, ACCESS, access)                                                         \
	P(NFSPROC3_READLINK, READLINK, readlink)                                                   \
	P(NFSPROC3_READ, READ, read)                                                               \
	P(NFSPROC3_WRITE, WRITE, write)                                                            \
	P(NFSPROC3_CREATE, CREATE, create)                                                         \
	P(NFSPROC3_MKDIR, MKDIR, mkdir)                                                            \
	P(NFSPROC3_SYMLINK, SYMLINK, symlink)                                                      \
	P(NFSPROC3_MKNOD, MKNOD, mknod)                                                            \
	P(NFSPROC3_REMOVE, REMOVE, remove)                                                         \
	P(NFSPROC3_RMDIR, RMDIR, rmdir)                                                            \
	P(NFSPROC3_RENAME, RENAME, rename)                                                         \
	P(NFSPROC3_LINK, LINK, link)                                                               \
	P(NFSPROC3_READDIR, READDIR, readdir)                                                      \
	P(NFSPROC3_READDIRPLUS, READDIRPLUS, readdirplus)                                          \
	P(NFSPROC3_FSSTAT, FSSTAT, fsstat)                                                         \
	P(NFSPROC3_FSINFO, FSINFO, fsinfo)                                                         \
	P(NFSPROC3_PATHCONF, PATHCONF, pathconf)                                                   \
	P(NFSPROC3_COMMIT, COMMIT, commit)

/* One past the highest procedure number (COMMIT, 21). */
#define NFS3D_NPROCS (NFSPROC3_COMMIT + 1)

#define NFS3D_ARGS_MEMBER(num, NAME, name) NAME##3args name;
#define NFS3D_RES_MEMBER(num, NAME, name)  NAME##3res name;

/* The arguments and the result of any procedure. */
union nfs3d_args {
	NFS3D_PROCS(NFS3D_ARGS_MEMBER)
};

union nfs3d_res {
	NFS3D_PROCS(NFS3D_RES_MEMBER)
};

#undef NFS3D_ARGS_MEMBER
#undef NFS3D_RES_MEMBER

#endif
