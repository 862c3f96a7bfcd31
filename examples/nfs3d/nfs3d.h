/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma-nfs3d: an NFSv3 (RFC 1813) server over RPC-over-RDMA built on the
 * public server API (rpcrdma/server.h), with MOUNT v3 over TCP through
 * libtirpc. The types, procedure numbers and XDR routines of both
 * protocols are rpcgen's, from xdr/nfs3.x and xdr/mount3.x. Shared
 * declarations of its files:
 *   export.h    the export, handles (fh.c) and identities (creds.c)
 *   attr.c      results' attributes and handles from struct stat; the
 *               per-request memory results point into; errno -> nfsstat3
 *   proc_file.c procedures on one object (GETATTR ... COMMIT, FS*)
 *   proc_dir.c  procedures on directory entries (LOOKUP ... LINK)
 *   readdir.c   READDIR, READDIRPLUS
 *   mount.c     MOUNT v3 over TCP (libtirpc)
 *   main.c      options, startup, the dispatch table
 *   procs.h     the list of procedures every table is built from (also
 *               the fuzz target's), the argument and result unions
 *   daemon.h    the startup shared with rpcrdma-nfs41d: common options,
 *               the export, signals, the loop, the counters file
 */
#ifndef NFS3D_H
#define NFS3D_H

#include <rpcrdma.h>

#include "export.h"
#include "nfs3.h"  /* rpcgen, xdr/nfs3.x */
#include "procs.h" /* the procedures, their argument and result unions */

/* Largest READ / WRITE we offer (FSINFO rtmax / wtmax): the Linux client's
 * RPC-over-RDMA maximum payload. */
#define NFS3D_MAXIO (1u << 20)

/* One request being served. What its result points at (handles, names,
 * directory entries, READ's data) is allocated from @mem and released
 * after the reply is sent (nfs3d_call_end). */
struct nfs3d_mem;
struct nfs3d_call {
	uint32_t proc;
	struct nfs3d_caller who; /* mapped (creds.c) and in effect */
	struct nfs3d_mem *mem;
	bool oom; /* an allocation failed: the answer is SYSTEM_ERR */
};

/* ---- attr.c ---- */

/* @n bytes that live until nfs3d_call_end(); NULL (and c->oom) if none. */
void *nfs3d_alloc(struct nfs3d_call *c, size_t n);
void nfs3d_call_end(struct nfs3d_call *c);

nfsstat3 nfs3d_errno_to_stat(int err);
void nfs3d_fattr(const struct stat *st, fattr3 *f);
/* post_op_attr of @st (NULL: none) */
void nfs3d_post_attr(const struct stat *st, post_op_attr *p);
/* post_op_attr by lstat of @rel (none if it fails or @rel is NULL). */
void nfs3d_post_rel(const char *rel, post_op_attr *p);
/* wcc_data of @rel: before from @pre (may be NULL), after by lstat. */
void nfs3d_wcc(const struct stat *pre, const char *rel, wcc_data *w);
/* The handle of @rel (@st if it no longer lstats) in @out. */
void nfs3d_fh3(struct nfs3d_call *c, const char *rel, const struct stat *st, nfs_fh3 *out);
/* post_op_fh3 + post_op_attr of a new object @rel (CREATE, MKDIR,
 * SYMLINK, MKNOD), noted in the handle cache. */
void nfs3d_new_obj(struct nfs3d_call *c, const char *rel, post_op_fh3 *fh, post_op_attr *attr);
/* nfs3d_fh_resolve() of an nfs_fh3 */
int nfs3d_resolve(const nfs_fh3 *fh, char *rel, struct stat *st);

/* ---- proc_file.c, proc_dir.c, readdir.c ---- */

/* Each fills @r from @a, acting as c->who; @r starts zeroed (a failed
 * result's attributes are then "none" unless the procedure sets them). */
typedef void nfs3d_proc_fn(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c);
nfs3d_proc_fn nfs3d_getattr, nfs3d_setattr, nfs3d_access, nfs3d_readlink, nfs3d_read, nfs3d_write,
    nfs3d_commit, nfs3d_fsstat, nfs3d_fsinfo, nfs3d_pathconf;
nfs3d_proc_fn nfs3d_lookup, nfs3d_create, nfs3d_mkdir, nfs3d_symlink, nfs3d_mknod, nfs3d_remove,
    nfs3d_rmdir, nfs3d_rename, nfs3d_link;
nfs3d_proc_fn nfs3d_readdir, nfs3d_readdirplus;
/* Apply @sa to @abs (SETATTR, and the attributes of new objects): 0 or
 * -errno. */
int nfs3d_apply_sattr(const char *abs, const sattr3 *sa);

/* ---- mount.c ---- */

/* Serve MOUNT v3 over TCP on @bind:@port (0: any port): returns the
 * listening port in *@port_out, or -errno. Requests are handled by
 * nfs3d_mount_poll(). With @reg, MOUNT v3 is registered with the local
 * rpcbind (netid tcp, replacing an older entry; -ECONNREFUSED when no
 * rpcbind answers) until nfs3d_mount_stop(). */
int nfs3d_mount_start(const char *bind, uint16_t port, bool reg, uint16_t *port_out);
/* Unregister what nfs3d_mount_start() registered (idempotent). */
void nfs3d_mount_stop(void);
/* Handle MOUNT requests for up to @timeout_ms. */
void nfs3d_mount_poll(int timeout_ms);
/* The export's path as given on the command line, also accepted by MNT. */
void nfs3d_mount_set_alias(const char *path);

#endif
