/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma-nfs3d: an NFSv3 (RFC 1813) server over RPC-over-RDMA built on the
 * public server API (rpcrdma/server.h), with MOUNT v3 over TCP through
 * libtirpc. Shared declarations of its files:
 *   fh.c        file handles and the handle -> path resolution
 *   enc.c       reply encoding (a growable XDR buffer), errno -> nfsstat3
 *   args.c      argument decoding (xdrproc_t over the call's stream)
 *   proc_file.c procedures on one object (GETATTR ... COMMIT, FS*)
 *   proc_dir.c  procedures on directory entries (CREATE ... READDIRPLUS)
 *   mount.c     MOUNT v3 over TCP (rpcgen mount3.x + libtirpc)
 *   creds.c     acting with the caller's identity (root_squash)
 *   main.c      options, startup, signals
 */
#ifndef NFS3D_H
#define NFS3D_H

#include <rpcrdma.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#define NFS3_PROGRAM 100003u
#define NFS3_VERSION 3u
#define NFS3_FHSIZE  64u
#define NFS3_MAXNAME 255u
/* Largest READ / WRITE we offer (FSINFO rtmax / wtmax): the Linux client's
 * RPC-over-RDMA maximum payload. */
#define NFS3D_MAXIO (1u << 20)

/* nfsstat3 (RFC 1813 §2.6) */
enum {
	NFS3_OK = 0,
	NFS3ERR_PERM = 1,
	NFS3ERR_NOENT = 2,
	NFS3ERR_IO = 5,
	NFS3ERR_NXIO = 6,
	NFS3ERR_ACCES = 13,
	NFS3ERR_EXIST = 17,
	NFS3ERR_XDEV = 18,
	NFS3ERR_NODEV = 19,
	NFS3ERR_NOTDIR = 20,
	NFS3ERR_ISDIR = 21,
	NFS3ERR_INVAL = 22,
	NFS3ERR_FBIG = 27,
	NFS3ERR_NOSPC = 28,
	NFS3ERR_ROFS = 30,
	NFS3ERR_MLINK = 31,
	NFS3ERR_NAMETOOLONG = 63,
	NFS3ERR_NOTEMPTY = 66,
	NFS3ERR_DQUOT = 69,
	NFS3ERR_STALE = 70,
	NFS3ERR_BADHANDLE = 10001,
	NFS3ERR_NOT_SYNC = 10002,
	NFS3ERR_BAD_COOKIE = 10003,
	NFS3ERR_NOTSUPP = 10004,
	NFS3ERR_TOOSMALL = 10005,
	NFS3ERR_SERVERFAULT = 10006,
	NFS3ERR_BADTYPE = 10007,
};

/* The one export, fixed at startup. */
struct nfs3d_export {
	char root[PATH_MAX]; /* absolute, resolved */
	dev_t dev;           /* handles name objects of this file system only */
	ino_t root_ino;
	uint8_t write_verf[8]; /* changes every server start (COMMIT, RFC 1813 §3.3.21) */
};
extern struct nfs3d_export nfs3d_exp;

/* ---- fh.c ---- */

/* A file handle: magic, generation, device and inode number of the object.
 * Derived from the object's identity alone, so it stays valid across server
 * restarts and renames (nothing but a cache is kept in memory). */
struct nfs3d_fh {
	uint8_t len;
	uint8_t data[NFS3_FHSIZE];
};
void nfs3d_fh_make(const struct stat *st, uint32_t gen, struct nfs3d_fh *fh);
/* lstat() of @abs through statx(), plus the object's generation in *@gen
 * (from its birth time where the file system records one, else 0): a
 * reused inode number then gives a different handle. 0 or -errno. */
int nfs3d_lstat(const char *abs, struct stat *st, uint32_t *gen);
/* The export-relative path ("" for the root) of the object @fh names into
 * @rel (PATH_MAX), verified by lstat into *@st: 0, or an nfsstat3 (STALE,
 * BADHANDLE). */
int nfs3d_fh_resolve(const uint8_t *fh, uint32_t len, char *rel, struct stat *st);
/* Record that @rel names the object (@st): later resolutions try it first. */
void nfs3d_fh_note(const char *rel, const struct stat *st);
/* Forget the name @rel (after REMOVE/RMDIR/RENAME). */
void nfs3d_fh_forget(const char *rel);
/* @abs (PATH_MAX) = the path of @rel from the server's working directory,
 * which is the export root (main.c chdir()s there: a caller then needs no
 * search permission on the root's ancestors); -ENAMETOOLONG. */
int nfs3d_abs(const char *rel, char *abs);
/* @out = @dir + "/" + @name (or @name when @dir is ""): -ENAMETOOLONG. */
int nfs3d_join(const char *dir, const char *name, char *out);
void nfs3d_fh_init(void);

/* ---- enc.c ---- */

/* A reply body encoded by hand (big-endian XDR words) into a growable
 * buffer; the reply's xdrproc_t copies it, then adds the READ data as a
 * DDP-eligible item (RFC 8267 §4). */
struct nfs3d_enc {
	uint8_t *buf;
	uint32_t len, cap;
	bool oom;
};
void nfs3d_enc_init(struct nfs3d_enc *e);
void nfs3d_enc_free(struct nfs3d_enc *e);
void nfs3d_put32(struct nfs3d_enc *e, uint32_t v);
void nfs3d_put64(struct nfs3d_enc *e, uint64_t v);
void nfs3d_put_opaque(struct nfs3d_enc *e, const void *p, uint32_t len); /* opaque<> */
void nfs3d_put_fixed(struct nfs3d_enc *e, const void *p, uint32_t len);  /* opaque[n] */
void nfs3d_put_fattr(struct nfs3d_enc *e, const struct stat *st);
void nfs3d_put_post_attr(struct nfs3d_enc *e, const struct stat *st); /* NULL: none */
/* pre_op_attr (RFC 1813 §2.6 wcc_attr) */
void nfs3d_put_pre_attr(struct nfs3d_enc *e, const struct stat *st);
/* wcc_data of directory @rel: pre from @pre (may be NULL), post by lstat. */
void nfs3d_put_wcc(struct nfs3d_enc *e, const struct stat *pre, const char *rel);
/* post_op_attr by lstat of @rel (none if it fails). */
void nfs3d_put_post_rel(struct nfs3d_enc *e, const char *rel);
/* post_op_fh3 + post_op_attr of @rel (CREATE, MKDIR, SYMLINK). */
void nfs3d_put_new_obj(struct nfs3d_enc *e, const char *rel);
void nfs3d_put_fh(struct nfs3d_enc *e, const char *rel, const struct stat *st);
uint32_t nfs3d_errno_to_stat(int err);
/* A failed result of procedure @proc: @status and empty attributes. */
void nfs3d_put_fail(struct nfs3d_enc *e, uint32_t proc, uint32_t status);

/* The result handed to rpcrdma_svc_reply(). */
struct nfs3d_res {
	struct nfs3d_enc enc;
	bool has_bulk;
	rpcrdma_bulk bulk; /* READ data (after enc, RFC 1813 READ3resok.data) */
};
bool_t nfs3d_xdr_res(XDR *xdrs, struct nfs3d_res *r);

/* ---- args.c ---- */

struct nfs3d_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode, uid, gid;
	uint64_t size;
	uint32_t set_atime, set_mtime; /* time_how: 0 don't, 1 server, 2 client */
	struct timespec atime, mtime;
};

struct nfs3d_diropargs {
	uint8_t fh[NFS3_FHSIZE];
	uint32_t fhlen;
	char name[NFS3_MAXNAME + 1];
};

/* The arguments of every procedure, decoded after @proc. */
struct nfs3d_args {
	uint32_t proc;
	uint8_t fh[NFS3_FHSIZE];
	uint32_t fhlen;
	struct nfs3d_diropargs where, to; /* LOOKUP, CREATE..., RENAME from/to, LINK to */
	struct nfs3d_sattr sattr;
	bool guard;
	uint32_t guard_sec, guard_nsec;
	uint64_t offset, cookie;
	uint32_t count, maxcount, stable, how, access;
	uint8_t verf[8];
	uint32_t ftype, major, minor; /* MKNOD: ftype3 and specdata3 */
	char path[PATH_MAX];          /* SYMLINK target */
	rpcrdma_bulk data;            /* WRITE data (pulled Read chunk, or inline) */
};
bool_t nfs3d_xdr_args(XDR *xdrs, struct nfs3d_args *a);

/* ---- proc_file.c / proc_dir.c ---- */

struct nfs3d_caller {
	bool sys; /* AUTH_SYS: the fields below are set */
	uint32_t uid, gid, ngids;
	uint32_t gids[16];
};

/* ---- creds.c ---- */

/* Once at startup: identities are switched only when the server runs as
 * root; @root_squash maps uid/gid 0 to nobody. */
void nfs3d_creds_init(bool root_squash);
/* The identity @c acts with: AUTH_NONE -> nobody, root squashed. */
void nfs3d_creds_map(struct nfs3d_caller *c);
/* Act as @c (mapped) on this thread until nfs3d_creds_leave(). */
void nfs3d_creds_enter(const struct nfs3d_caller *c);
void nfs3d_creds_leave(void);
/* Act as the server (root) for a moment: handle resolution, and the owner
 * override of READ, WRITE and COMMIT. Returns what resume() takes. */
uint32_t nfs3d_creds_suspend(void);
void nfs3d_creds_resume(uint32_t prev);
/* The caller this thread acts for owns @st (the owner may read and write
 * its own file whatever the mode, as with a Linux export). */
bool nfs3d_creds_owns(const struct stat *st);

/* Run procedure a->proc; fills r. Returns false for an unknown procedure. */
bool nfs3d_proc_file(const struct nfs3d_args *a, const struct nfs3d_caller *c, struct nfs3d_res *r);
bool nfs3d_proc_dir(const struct nfs3d_args *a, const struct nfs3d_caller *c, struct nfs3d_res *r);
/* READDIR and READDIRPLUS (readdir.c) */
bool nfs3d_readdir(const struct nfs3d_args *a, struct nfs3d_enc *e);
/* Apply @sa to @abs (SETATTR, and CREATE/MKDIR attributes): 0 or -errno. */
int nfs3d_apply_sattr(const char *abs, const struct nfs3d_sattr *sa);

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
