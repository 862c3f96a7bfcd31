/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 procedures on directory entries (RFC 1813 §3.3): LOOKUP, CREATE,
 * MKDIR, SYMLINK, MKNOD (FIFOs, sockets, and device nodes for a caller
 * allowed to make them), REMOVE, RMDIR, RENAME, LINK, READDIR,
 * READDIRPLUS. They run as the caller (creds.c), so new objects belong to
 * the caller's uid and gid and the kernel enforces permissions. Directory
 * cookies are the file system's own d_off positions (seekdir), valid
 * across server restarts; the cookie verifier is always zero.
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The directory an entry argument names: its path in @rel, attributes in
 * *@st; 0 or an nfsstat3. */
static int dir_of(const struct nfs3d_diropargs *d, char *rel, struct stat *st)
{
	int s = nfs3d_fh_resolve(d->fh, d->fhlen, rel, st);
	if (s == 0 && !S_ISDIR(st->st_mode))
		s = NFS3ERR_NOTDIR;
	return s;
}

/* @rel/@name into @out (export-relative) and @abs; "." and ".." and names
 * with a slash are refused (no entry of that name can be made or removed). */
static int entry_path(const char *rel, const char *name, char *out, char *abs)
{
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return NFS3ERR_INVAL;
	if (nfs3d_join(rel, name, out) != 0 || nfs3d_abs(out, abs) != 0)
		return NFS3ERR_NAMETOOLONG;
	return 0;
}

static void do_lookup(const struct nfs3d_args *a, struct nfs3d_enc *e)
{
	char drel[PATH_MAX], rel[PATH_MAX], abs[PATH_MAX];
	struct stat dst, st;
	int s = dir_of(&a->where, drel, &dst);
	const char *name = a->where.name;
	if (s == 0 && !strcmp(name, ".")) {
		snprintf(rel, sizeof(rel), "%s", drel);
	} else if (s == 0 && !strcmp(name, "..")) {
		/* the parent, never above the export's root */
		snprintf(rel, sizeof(rel), "%s", drel);
		char *slash = strrchr(rel, '/');
		if (slash)
			*slash = '\0';
		else
			rel[0] = '\0';
	} else if (s == 0) {
		s = entry_path(drel, name, rel, abs);
	}
	if (s == 0 && nfs3d_abs(rel, abs) == 0 && nfs3d_lstat(abs, &st, NULL) != 0)
		s = (int)nfs3d_errno_to_stat(errno);
	nfs3d_put32(e, (uint32_t)s);
	if (s != 0) {
		nfs3d_put_post_attr(e, s == NFS3ERR_NOENT ? &dst : NULL);
		return;
	}
	nfs3d_fh_note(rel, &st);
	nfs3d_put_fh(e, rel, &st);
	nfs3d_put_post_attr(e, &st);
	nfs3d_put_post_attr(e, &dst);
}

/* MKNOD (RFC 1813 §3.3.11): ftype3 -> the S_IF* bits of mknod(); 0 for the
 * types MKNOD does not make (NFS3ERR_BADTYPE). */
static mode_t mknod_type(uint32_t ftype)
{
	switch (ftype) {
	case 3:
		return S_IFBLK;
	case 4:
		return S_IFCHR;
	case 6:
		return S_IFSOCK;
	case 7:
		return S_IFIFO;
	default:
		return 0;
	}
}

/* CREATE (createhow3 UNCHECKED, GUARDED, EXCLUSIVE), MKDIR, SYMLINK, MKNOD;
 * the caller's identity is in effect, so the new object is the caller's. */
static int make_obj(const struct nfs3d_args *a, const char *abs)
{
	struct nfs3d_sattr sa = a->sattr;
	mode_t mode = sa.set_mode ? (mode_t)(sa.mode & 07777) : 0644;
	if (a->proc == 11) {
		mode_t type = mknod_type(a->ftype);
		dev_t dev = S_ISBLK(type) || S_ISCHR(type) ? makedev(a->major, a->minor) : 0;
		if (mknod(abs, type | mode, dev) != 0)
			return -errno;
	} else if (a->proc == 9) {
		if (mkdir(abs, sa.set_mode ? mode : 0755) != 0)
			return -errno;
	} else if (a->proc == 10) {
		if (symlink(a->path, abs) != 0)
			return -errno;
		sa.set_mode = false;
	} else if (a->how == 2) {
		/* EXCLUSIVE (RFC 1813 §3.3.8): the verifier is kept in the
		 * times until the client's SETATTR; a retransmission finds it */
		struct timespec ts[2] = {{0, 0}, {0, 0}};
		uint32_t v0, v1;
		memcpy(&v0, a->verf, 4);
		memcpy(&v1, a->verf + 4, 4);
		ts[0].tv_sec = v0 & 0x7fffffff;
		ts[1].tv_sec = v1 & 0x7fffffff;
		int fd = open(abs, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0) {
			struct stat st;
			if (errno == EEXIST && lstat(abs, &st) == 0 &&
			    st.st_atim.tv_sec == ts[0].tv_sec && st.st_mtim.tv_sec == ts[1].tv_sec)
				return 0;
			return -errno;
		}
		int rc = futimens(fd, ts) != 0 ? -errno : 0;
		close(fd);
		return rc;
	} else {
		/* UNCHECKED of an existing file keeps its owner */
		int fd = open(abs, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
		if (fd < 0 && errno == EEXIST && a->how == 0) {
			fd = open(abs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0)
				return -errno;
			close(fd);
			return nfs3d_apply_sattr(abs, &sa);
		}
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return nfs3d_apply_sattr(abs, &sa);
}

static void do_create(const struct nfs3d_args *a, struct nfs3d_enc *e)
{
	char drel[PATH_MAX], rel[PATH_MAX], abs[PATH_MAX];
	struct stat dst;
	int s = dir_of(&a->where, drel, &dst);
	if (s == 0)
		s = entry_path(drel, a->where.name, rel, abs);
	if (s == 0 && a->proc == 11 && !mknod_type(a->ftype))
		s = NFS3ERR_BADTYPE;
	if (s == 0)
		s = (int)nfs3d_errno_to_stat(make_obj(a, abs));
	nfs3d_put32(e, (uint32_t)s);
	if (s == 0)
		nfs3d_put_new_obj(e, rel);
	nfs3d_put_wcc(e, s == NFS3ERR_STALE || s == NFS3ERR_BADHANDLE ? NULL : &dst,
		      s == NFS3ERR_STALE || s == NFS3ERR_BADHANDLE ? NULL : drel);
}

static void do_remove(const struct nfs3d_args *a, struct nfs3d_enc *e)
{
	char drel[PATH_MAX], rel[PATH_MAX], abs[PATH_MAX];
	struct stat dst;
	int s = dir_of(&a->where, drel, &dst);
	if (s == 0)
		s = entry_path(drel, a->where.name, rel, abs);
	if (s == 0 && (a->proc == 13 ? rmdir(abs) : unlink(abs)) != 0)
		s = (int)nfs3d_errno_to_stat(errno);
	if (s == 0)
		nfs3d_fh_forget(rel);
	nfs3d_put32(e, (uint32_t)s);
	bool have = s != NFS3ERR_STALE && s != NFS3ERR_BADHANDLE && s != NFS3ERR_NOTDIR;
	nfs3d_put_wcc(e, have ? &dst : NULL, have ? drel : NULL);
}

/* RENAME (from: where, to: to) and LINK (file: fh, to: to). */
static void do_rename_link(const struct nfs3d_args *a, struct nfs3d_enc *e)
{
	char frel[PATH_MAX], fdir[PATH_MAX], fabs[PATH_MAX];
	char tdir[PATH_MAX], trel[PATH_MAX], tabs[PATH_MAX];
	struct stat fst, tst, obj;
	int s = 0, sf = 0;
	if (a->proc == 14) {
		sf = dir_of(&a->where, fdir, &fst);
		if (sf == 0)
			sf = entry_path(fdir, a->where.name, frel, fabs);
	} else {
		sf = nfs3d_fh_resolve(a->fh, a->fhlen, frel, &fst);
		if (sf == 0 && nfs3d_abs(frel, fabs) != 0)
			sf = NFS3ERR_NAMETOOLONG;
		if (sf == 0 && S_ISDIR(fst.st_mode))
			sf = NFS3ERR_ISDIR;
	}
	int st_ = dir_of(&a->to, tdir, &tst);
	s = sf ? sf : st_;
	if (s == 0)
		s = entry_path(tdir, a->to.name, trel, tabs);
	if (s == 0 && (a->proc == 14 ? rename(fabs, tabs) : link(fabs, tabs)) != 0)
		s = (int)nfs3d_errno_to_stat(errno);
	if (s == 0 && lstat(tabs, &obj) == 0) {
		if (a->proc == 14)
			nfs3d_fh_forget(frel);
		nfs3d_fh_note(trel, &obj);
	}
	nfs3d_put32(e, (uint32_t)s);
	if (a->proc == 14) {
		bool fh_ok = sf == 0 || sf == NFS3ERR_INVAL || sf == NFS3ERR_NAMETOOLONG;
		nfs3d_put_wcc(e, fh_ok ? &fst : NULL, fh_ok ? fdir : NULL);
	} else {
		nfs3d_put_post_rel(e, sf == 0 ? frel : NULL);
	}
	nfs3d_put_wcc(e, st_ == 0 ? &tst : NULL, st_ == 0 ? tdir : NULL);
}

bool nfs3d_proc_dir(const struct nfs3d_args *a, const struct nfs3d_caller *c, struct nfs3d_res *r)
{
	(void)c; /* the caller's identity is already in effect (creds.c) */
	switch (a->proc) {
	case 3:
		do_lookup(a, &r->enc);
		return true;
	case 8:
	case 9:
	case 10:
	case 11:
		do_create(a, &r->enc);
		return true;
	case 12:
	case 13:
		do_remove(a, &r->enc);
		return true;
	case 14:
	case 15:
		do_rename_link(a, &r->enc);
		return true;
	case 16:
	case 17:
		return nfs3d_readdir(a, &r->enc);
	default:
		return false;
	}
}
