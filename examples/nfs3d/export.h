/* SPDX-License-Identifier: MIT */
/*
 * The export of rpcrdma-nfs3d, apart from any protocol's XDR so that
 * another server of the same directory can share it: file handles and
 * their resolution to paths (fh.c), and acting with the caller's identity
 * (creds.c).
 */
#ifndef NFS3D_EXPORT_H
#define NFS3D_EXPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Bytes of the largest handle fh.c makes (RFC 1813's NFS3_FHSIZE). */
#define NFS3D_FHSIZE 64u

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
	uint8_t data[NFS3D_FHSIZE];
};
void nfs3d_fh_make(const struct stat *st, uint32_t gen, struct nfs3d_fh *fh);
/* lstat() of @abs through statx(), plus the object's generation in *@gen
 * (from its birth time where the file system records one, else 0): a
 * reused inode number then gives a different handle. 0 or -errno. */
int nfs3d_lstat(const char *abs, struct stat *st, uint32_t *gen);
/* The export-relative path ("" for the root) of the object @fh names into
 * @rel (PATH_MAX), verified by lstat into *@st: 0, or an nfsstat3 (STALE,
 * BADHANDLE: RFC 1813 §2.6). */
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

/* ---- creds.c ---- */

/* The caller of a request, from its credential. */
struct nfs3d_caller {
	bool sys; /* AUTH_SYS: the fields below are set */
	uint32_t uid, gid, ngids;
	uint32_t gids[16];
};

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

#endif
