/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 procedures on one object (RFC 1813 §3.3): GETATTR, SETATTR,
 * ACCESS, READLINK, READ, WRITE, COMMIT, FSSTAT, FSINFO, PATHCONF. Each
 * resolves its handle to a path (fh.c), acts with ordinary system calls
 * under the caller's identity (creds.c) and fills its result (attr.c),
 * which main.c encodes with rpcgen's routine.
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

int nfs3d_apply_sattr(const char *abs, const sattr3 *sa)
{
	struct stat st;
	bool set_uid = sa->uid.set_it, set_gid = sa->gid.set_it;
	if (lstat(abs, &st) != 0)
		return -errno;
	if ((set_uid || set_gid) && lchown(abs, set_uid ? sa->uid.set_uid3_u.uid : (uid_t)-1,
					   set_gid ? sa->gid.set_gid3_u.gid : (gid_t)-1) != 0)
		return -errno;
	/* chmod follows symlinks and Linux has no lchmod: not on symlinks */
	if (sa->mode.set_it && !S_ISLNK(st.st_mode) &&
	    chmod(abs, sa->mode.set_mode3_u.mode & 07777) != 0)
		return -errno;
	if (sa->size.set_it) {
		if (!S_ISREG(st.st_mode))
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		if (truncate(abs, (off_t)sa->size.set_size3_u.size) != 0)
			return -errno;
	}
	if (sa->atime.set_it != DONT_CHANGE || sa->mtime.set_it != DONT_CHANGE) {
		struct timespec ts[2];
		const time_how how[2] = {sa->atime.set_it, sa->mtime.set_it};
		const nfstime3 *t[2] = {&sa->atime.set_atime_u.atime, &sa->mtime.set_mtime_u.mtime};
		for (int i = 0; i < 2; i++) {
			if (how[i] == DONT_CHANGE) {
				ts[i].tv_nsec = UTIME_OMIT;
			} else if (how[i] == SET_TO_SERVER_TIME) {
				ts[i].tv_nsec = UTIME_NOW;
			} else {
				ts[i].tv_sec = t[i]->seconds;
				ts[i].tv_nsec = t[i]->nseconds;
			}
		}
		if (utimensat(AT_FDCWD, abs, ts, AT_SYMLINK_NOFOLLOW) != 0)
			return -errno;
	}
	return 0;
}

/* ACCESS (RFC 1813 §3.3.4) from the mode bits and the caller's identity
 * after root squashing (root: everything but EXECUTE of a file no one may
 * execute). READ and WRITE also let the owner through (open_rel). */
static uint32_t access_bits(const struct stat *st, const struct nfs3d_caller *c, uint32_t want)
{
	bool dir = S_ISDIR(st->st_mode);
	unsigned bits;
	if (c->sys && c->uid == 0) {
		bits = 7;
		if (!dir && !(st->st_mode & 0111))
			bits = 6;
	} else {
		bool group = c->sys && c->gid == st->st_gid;
		for (uint32_t i = 0; c->sys && i < c->ngids; i++)
			group = group || c->gids[i] == st->st_gid;
		if (c->sys && c->uid == st->st_uid)
			bits = (st->st_mode >> 6) & 7;
		else if (group)
			bits = (st->st_mode >> 3) & 7;
		else
			bits = st->st_mode & 7;
	}
	uint32_t r = 0;
	if (bits & 4)
		r |= ACCESS3_READ;
	if (bits & 2)
		r |= ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE;
	if (bits & 1)
		r |= dir ? ACCESS3_LOOKUP : ACCESS3_EXECUTE;
	return r & want;
}

/* Open @rel (attributes @st) as the caller. A file the caller owns opens
 * as the server when its mode alone refuses: a Linux export's owner
 * override, for data the client already decided the owner may move (a
 * file created read-only and then written, say). */
static int open_rel(const char *rel, int flags, const struct stat *st)
{
	char abs[PATH_MAX];
	if (nfs3d_abs(rel, abs) != 0)
		return -ENAMETOOLONG;
	int fd = open(abs, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && nfs3d_creds_owns(st)) {
		uint32_t prev = nfs3d_creds_suspend();
		fd = open(abs, flags | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		nfs3d_creds_resume(prev);
		errno = err;
	}
	return fd < 0 ? -errno : fd;
}

/* Whether @fh names an object (@rel, @st); its nfsstat3 in *@status. */
static bool resolved(const nfs_fh3 *fh, char *rel, struct stat *st, nfsstat3 *status)
{
	*status = (nfsstat3)nfs3d_resolve(fh, rel, st);
	return *status == NFS3_OK;
}

void nfs3d_getattr(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX];
	struct stat st;
	(void)c;
	if (resolved(&a->getattr.object, rel, &st, &r->getattr.status))
		nfs3d_fattr(&st, &r->getattr.GETATTR3res_u.resok.obj_attributes);
}

void nfs3d_setattr(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	const SETATTR3args *sa = &a->setattr;
	char rel[PATH_MAX], abs[PATH_MAX];
	struct stat st;
	(void)c;
	if (!resolved(&sa->object, rel, &st, &r->setattr.status))
		return;
	int rc = nfs3d_abs(rel, abs);
	/* RFC 1813 §3.3.2: the guard compares the object's ctime */
	const nfstime3 *g = &sa->guard.sattrguard3_u.obj_ctime;
	if (rc == 0 && sa->guard.check &&
	    ((uint32)st.st_ctim.tv_sec != g->seconds || (uint32)st.st_ctim.tv_nsec != g->nseconds))
		r->setattr.status = NFS3ERR_NOT_SYNC;
	else
		r->setattr.status =
		    nfs3d_errno_to_stat(rc == 0 ? nfs3d_apply_sattr(abs, &sa->new_attributes) : rc);
	nfs3d_wcc(&st, rel,
		  r->setattr.status == NFS3_OK ? &r->setattr.SETATTR3res_u.resok.obj_wcc
					       : &r->setattr.SETATTR3res_u.resfail.obj_wcc);
}

void nfs3d_access(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX];
	struct stat st;
	if (!resolved(&a->access.object, rel, &st, &r->access.status))
		return;
	ACCESS3resok *ok = &r->access.ACCESS3res_u.resok;
	nfs3d_post_attr(&st, &ok->obj_attributes);
	ok->access = access_bits(&st, &c->who, a->access.access);
}

void nfs3d_readlink(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX], abs[PATH_MAX];
	struct stat st;
	if (!resolved(&a->readlink.symlink, rel, &st, &r->readlink.status))
		return;
	char *target = NULL;
	ssize_t n = -1;
	if (!S_ISLNK(st.st_mode)) {
		r->readlink.status = NFS3ERR_INVAL;
	} else if ((target = nfs3d_alloc(c, NFS3_MAXPATHLEN + 1)) == NULL) {
		return; /* c->oom */
	} else {
		n = nfs3d_abs(rel, abs) == 0 ? readlink(abs, target, NFS3_MAXPATHLEN + 1) : -1;
		if (n < 0 || n > NFS3_MAXPATHLEN)
			r->readlink.status =
			    n < 0 ? nfs3d_errno_to_stat(errno) : NFS3ERR_NAMETOOLONG;
	}
	if (r->readlink.status != NFS3_OK) {
		nfs3d_post_attr(&st, &r->readlink.READLINK3res_u.resfail.symlink_attributes);
		return;
	}
	READLINK3resok *ok = &r->readlink.READLINK3res_u.resok;
	nfs3d_post_attr(&st, &ok->symlink_attributes);
	target[n] = '\0';
	ok->data = target;
}

/* READ (RFC 1813 §3.3.6): the data is the result's bulk item, placed by
 * RDMA Write into the client's Write chunk when it offered one. */
void nfs3d_read(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	const READ3args *ra = &a->read;
	char rel[PATH_MAX];
	struct stat st, now;
	if (!resolved(&ra->file, rel, &st, &r->read.status))
		return;
	uint32_t count = ra->count < NFS3D_MAXIO ? ra->count : NFS3D_MAXIO;
	int fd = S_ISDIR(st.st_mode) ? -EISDIR : open_rel(rel, O_RDONLY, &st);
	uint8_t *buf = fd >= 0 ? nfs3d_alloc(c, count ? count : 1) : NULL;
	size_t got = 0;
	int rc = fd < 0 ? fd : buf ? 0 : -ENOMEM;
	while (rc == 0 && got < count) {
		ssize_t n = pread(fd, buf + got, count - got, (off_t)(ra->offset + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	const struct stat *attr = &st;
	if (fd >= 0 && fstat(fd, &now) == 0)
		attr = &now;
	if (fd >= 0)
		close(fd);
	r->read.status = nfs3d_errno_to_stat(rc);
	if (rc != 0) {
		nfs3d_post_attr(attr, &r->read.READ3res_u.resfail.file_attributes);
		return;
	}
	READ3resok *ok = &r->read.READ3res_u.resok;
	nfs3d_post_attr(attr, &ok->file_attributes);
	ok->count = (count3)got;
	ok->eof = ra->offset + got >= (uint64_t)attr->st_size;
	ok->data.base = buf;
	ok->data.len = (uint32_t)got;
}

void nfs3d_write(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	const WRITE3args *wa = &a->write;
	char rel[PATH_MAX];
	struct stat st;
	(void)c;
	if (!resolved(&wa->file, rel, &st, &r->write.status))
		return;
	uint32_t count = wa->count < wa->data.len ? wa->count : wa->data.len;
	int fd = S_ISDIR(st.st_mode) ? -EISDIR : open_rel(rel, O_WRONLY, &st);
	const uint8_t *p = wa->data.base;
	size_t put = 0;
	int rc = fd < 0 ? fd : 0;
	while (rc == 0 && put < count) {
		ssize_t n = pwrite(fd, p + put, count - put, (off_t)(wa->offset + put));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		put += (size_t)n;
	}
	stable_how committed = wa->stable;
	if (rc == 0 && wa->stable == DATA_SYNC && fdatasync(fd) != 0)
		rc = -errno;
	if (rc == 0 && (uint32_t)wa->stable > DATA_SYNC && fsync(fd) != 0)
		rc = -errno;
	if ((uint32_t)committed > FILE_SYNC)
		committed = FILE_SYNC;
	if (fd >= 0)
		close(fd);
	r->write.status = nfs3d_errno_to_stat(rc);
	if (rc != 0) {
		nfs3d_wcc(&st, rel, &r->write.WRITE3res_u.resfail.file_wcc);
		return;
	}
	WRITE3resok *ok = &r->write.WRITE3res_u.resok;
	nfs3d_wcc(&st, rel, &ok->file_wcc);
	ok->count = (count3)put;
	ok->committed = committed;
	memcpy(ok->verf, nfs3d_exp.write_verf, NFS3_WRITEVERFSIZE);
}

void nfs3d_commit(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX];
	struct stat st;
	(void)c;
	if (!resolved(&a->commit.file, rel, &st, &r->commit.status))
		return;
	int fd = S_ISREG(st.st_mode) ? open_rel(rel, O_RDONLY, &st) : -EINVAL;
	int rc = fd < 0 ? fd : 0;
	if (fd >= 0 && fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	r->commit.status = nfs3d_errno_to_stat(rc);
	if (rc != 0) {
		nfs3d_wcc(&st, rel, &r->commit.COMMIT3res_u.resfail.file_wcc);
		return;
	}
	COMMIT3resok *ok = &r->commit.COMMIT3res_u.resok;
	nfs3d_wcc(&st, rel, &ok->file_wcc);
	memcpy(ok->verf, nfs3d_exp.write_verf, NFS3_WRITEVERFSIZE);
}

void nfs3d_fsstat(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX];
	struct stat st;
	struct statvfs vfs;
	(void)c;
	if (!resolved(&a->fsstat.fsroot, rel, &st, &r->fsstat.status))
		return;
	if (statvfs(".", &vfs) != 0) { /* the export root: the working directory */
		r->fsstat.status = nfs3d_errno_to_stat(errno);
		nfs3d_post_attr(&st, &r->fsstat.FSSTAT3res_u.resfail.obj_attributes);
		return;
	}
	FSSTAT3resok *ok = &r->fsstat.FSSTAT3res_u.resok;
	nfs3d_post_attr(&st, &ok->obj_attributes);
	ok->tbytes = (size3)vfs.f_blocks * vfs.f_frsize;
	ok->fbytes = (size3)vfs.f_bfree * vfs.f_frsize;
	ok->abytes = (size3)vfs.f_bavail * vfs.f_frsize;
	ok->tfiles = vfs.f_files;
	ok->ffiles = vfs.f_ffree;
	ok->afiles = vfs.f_favail;
	ok->invarsec = 0;
}

void nfs3d_fsinfo(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX];
	struct stat st;
	(void)c;
	if (!resolved(&a->fsinfo.fsroot, rel, &st, &r->fsinfo.status))
		return;
	FSINFO3resok *ok = &r->fsinfo.FSINFO3res_u.resok;
	nfs3d_post_attr(&st, &ok->obj_attributes);
	ok->rtmax = ok->rtpref = NFS3D_MAXIO;
	ok->rtmult = 4096;
	ok->wtmax = ok->wtpref = NFS3D_MAXIO;
	ok->wtmult = 4096;
	ok->dtpref = 65536;
	ok->maxfilesize = (size3)INT64_MAX;
	ok->time_delta = (nfstime3){.seconds = 0, .nseconds = 1};
	ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
}

void nfs3d_pathconf(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char rel[PATH_MAX];
	struct stat st;
	(void)c;
	if (!resolved(&a->pathconf.object, rel, &st, &r->pathconf.status))
		return;
	PATHCONF3resok *ok = &r->pathconf.PATHCONF3res_u.resok;
	nfs3d_post_attr(&st, &ok->obj_attributes);
	ok->linkmax = 65000;
	ok->name_max = NFS3_MAXNAMLEN;
	ok->no_trunc = TRUE;
	ok->chown_restricted = TRUE;
	ok->case_insensitive = FALSE;
	ok->case_preserving = TRUE;
}
