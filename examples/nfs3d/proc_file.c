/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 procedures on one object (RFC 1813 §3.3): GETATTR, SETATTR,
 * ACCESS, READLINK, READ, WRITE, COMMIT, FSSTAT, FSINFO, PATHCONF. Each
 * resolves its handle to a path (fh.c), acts with ordinary system calls
 * under the caller's identity (creds.c) and encodes its result (enc.c).
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

enum { STABLE_UNSTABLE = 0, STABLE_DATA_SYNC = 1, STABLE_FILE_SYNC = 2 };

int nfs3d_apply_sattr(const char *abs, const struct nfs3d_sattr *sa)
{
	struct stat st;
	if (lstat(abs, &st) != 0)
		return -errno;
	if ((sa->set_uid || sa->set_gid) &&
	    lchown(abs, sa->set_uid ? sa->uid : (uid_t)-1, sa->set_gid ? sa->gid : (gid_t)-1) != 0)
		return -errno;
	/* chmod follows symlinks and Linux has no lchmod: not on symlinks */
	if (sa->set_mode && !S_ISLNK(st.st_mode) && chmod(abs, sa->mode & 07777) != 0)
		return -errno;
	if (sa->set_size) {
		if (!S_ISREG(st.st_mode))
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		if (truncate(abs, (off_t)sa->size) != 0)
			return -errno;
	}
	if (sa->set_atime || sa->set_mtime) {
		struct timespec ts[2];
		const uint32_t how[2] = {sa->set_atime, sa->set_mtime};
		const struct timespec *t[2] = {&sa->atime, &sa->mtime};
		for (int i = 0; i < 2; i++) {
			if (how[i] == 0)
				ts[i].tv_nsec = UTIME_OMIT;
			else if (how[i] == 1)
				ts[i].tv_nsec = UTIME_NOW;
			else
				ts[i] = *t[i];
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
	enum { A_READ = 1, A_LOOKUP = 2, A_MODIFY = 4, A_EXTEND = 8, A_DELETE = 16, A_EXEC = 32 };
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
		r |= A_READ;
	if (bits & 2)
		r |= A_MODIFY | A_EXTEND | A_DELETE;
	if (bits & 1)
		r |= dir ? A_LOOKUP : A_EXEC;
	return r & want;
}

static void do_setattr(const struct nfs3d_args *a, const char *rel, const struct stat *st,
		       struct nfs3d_enc *e)
{
	char abs[PATH_MAX];
	int rc = nfs3d_abs(rel, abs);
	/* RFC 1813 §3.3.2: the guard compares the object's ctime */
	if (rc == 0 && a->guard &&
	    ((uint32_t)st->st_ctim.tv_sec != a->guard_sec ||
	     (uint32_t)st->st_ctim.tv_nsec != a->guard_nsec)) {
		nfs3d_put32(e, NFS3ERR_NOT_SYNC);
		nfs3d_put_wcc(e, st, rel);
		return;
	}
	if (rc == 0)
		rc = nfs3d_apply_sattr(abs, &a->sattr);
	nfs3d_put32(e, nfs3d_errno_to_stat(rc));
	nfs3d_put_wcc(e, st, rel);
}

static void do_readlink(const char *rel, const struct stat *st, struct nfs3d_enc *e)
{
	char abs[PATH_MAX], target[PATH_MAX];
	ssize_t n = -1;
	if (!S_ISLNK(st->st_mode)) {
		nfs3d_put32(e, NFS3ERR_INVAL);
		nfs3d_put_post_attr(e, st);
		return;
	}
	if (nfs3d_abs(rel, abs) == 0)
		n = readlink(abs, target, sizeof(target));
	if (n < 0) {
		nfs3d_put32(e, nfs3d_errno_to_stat(errno));
		nfs3d_put_post_attr(e, st);
		return;
	}
	nfs3d_put32(e, NFS3_OK);
	nfs3d_put_post_attr(e, st);
	nfs3d_put_opaque(e, target, (uint32_t)n);
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

/* READ (RFC 1813 §3.3.6): the data is the result's bulk item, placed by
 * RDMA Write into the client's Write chunk when it offered one. */
static void do_read(const struct nfs3d_args *a, const char *rel, const struct stat *st,
		    struct nfs3d_res *r)
{
	struct nfs3d_enc *e = &r->enc;
	uint32_t count = a->count < NFS3D_MAXIO ? a->count : NFS3D_MAXIO;
	int fd = S_ISDIR(st->st_mode) ? -EISDIR : open_rel(rel, O_RDONLY, st);
	uint8_t *buf = fd >= 0 ? malloc(count ? count : 1) : NULL;
	size_t got = 0;
	int rc = fd < 0 ? fd : buf ? 0 : -ENOMEM;
	while (rc == 0 && got < count) {
		ssize_t n = pread(fd, buf + got, count - got, (off_t)(a->offset + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	struct stat now;
	if (fd >= 0 && fstat(fd, &now) == 0)
		st = &now;
	if (fd >= 0)
		close(fd);
	nfs3d_put32(e, nfs3d_errno_to_stat(rc));
	nfs3d_put_post_attr(e, st);
	if (rc != 0) {
		free(buf);
		return;
	}
	nfs3d_put32(e, (uint32_t)got);
	nfs3d_put32(e, a->offset + got >= (uint64_t)st->st_size ? 1 : 0);
	r->has_bulk = true;
	r->bulk.base = buf;
	r->bulk.len = (uint32_t)got;
}

static void do_write(const struct nfs3d_args *a, const char *rel, const struct stat *st,
		     struct nfs3d_enc *e)
{
	uint32_t count = a->count < a->data.len ? a->count : a->data.len;
	int fd = S_ISDIR(st->st_mode) ? -EISDIR : open_rel(rel, O_WRONLY, st);
	const uint8_t *p = a->data.base;
	size_t put = 0;
	int rc = fd < 0 ? fd : 0;
	while (rc == 0 && put < count) {
		ssize_t n = pwrite(fd, p + put, count - put, (off_t)(a->offset + put));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		put += (size_t)n;
	}
	uint32_t committed = a->stable;
	if (rc == 0 && a->stable == STABLE_DATA_SYNC && fdatasync(fd) != 0)
		rc = -errno;
	if (rc == 0 && a->stable > STABLE_DATA_SYNC && fsync(fd) != 0)
		rc = -errno;
	if (committed > STABLE_FILE_SYNC)
		committed = STABLE_FILE_SYNC;
	if (fd >= 0)
		close(fd);
	nfs3d_put32(e, nfs3d_errno_to_stat(rc));
	nfs3d_put_wcc(e, st, rel);
	if (rc != 0)
		return;
	nfs3d_put32(e, (uint32_t)put);
	nfs3d_put32(e, committed);
	nfs3d_put_fixed(e, nfs3d_exp.write_verf, 8);
}

static void do_commit(const char *rel, const struct stat *st, struct nfs3d_enc *e)
{
	int fd = S_ISREG(st->st_mode) ? open_rel(rel, O_RDONLY, st) : -EINVAL;
	int rc = fd < 0 ? fd : 0;
	if (fd >= 0 && fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	nfs3d_put32(e, nfs3d_errno_to_stat(rc));
	nfs3d_put_wcc(e, st, rel);
	if (rc == 0)
		nfs3d_put_fixed(e, nfs3d_exp.write_verf, 8);
}

static void do_fs(uint32_t proc, const struct stat *st, struct nfs3d_enc *e)
{
	struct statvfs vfs;
	if (proc == 18 && statvfs(".", &vfs) != 0) { /* the export root: the working directory */
		nfs3d_put32(e, nfs3d_errno_to_stat(errno));
		nfs3d_put_post_attr(e, st);
		return;
	}
	nfs3d_put32(e, NFS3_OK);
	nfs3d_put_post_attr(e, st);
	if (proc == 18) { /* FSSTAT */
		nfs3d_put64(e, (uint64_t)vfs.f_blocks * vfs.f_frsize);
		nfs3d_put64(e, (uint64_t)vfs.f_bfree * vfs.f_frsize);
		nfs3d_put64(e, (uint64_t)vfs.f_bavail * vfs.f_frsize);
		nfs3d_put64(e, vfs.f_files);
		nfs3d_put64(e, vfs.f_ffree);
		nfs3d_put64(e, vfs.f_favail);
		nfs3d_put32(e, 0);           /* invarsec */
	} else if (proc == 19) {             /* FSINFO */
		nfs3d_put32(e, NFS3D_MAXIO); /* rtmax, rtpref, rtmult */
		nfs3d_put32(e, NFS3D_MAXIO);
		nfs3d_put32(e, 4096);
		nfs3d_put32(e, NFS3D_MAXIO); /* wtmax, wtpref, wtmult */
		nfs3d_put32(e, NFS3D_MAXIO);
		nfs3d_put32(e, 4096);
		nfs3d_put32(e, 65536);               /* dtpref */
		nfs3d_put64(e, (uint64_t)INT64_MAX); /* maxfilesize */
		nfs3d_put32(e, 0);                   /* time_delta: 1 ns */
		nfs3d_put32(e, 1);
		/* FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME */
		nfs3d_put32(e, 0x1 | 0x2 | 0x8 | 0x10);
	} else {                              /* PATHCONF */
		nfs3d_put32(e, 65000);        /* linkmax */
		nfs3d_put32(e, NFS3_MAXNAME); /* name_max */
		nfs3d_put32(e, 1);            /* no_trunc */
		nfs3d_put32(e, 1);            /* chown_restricted */
		nfs3d_put32(e, 0);            /* case_insensitive */
		nfs3d_put32(e, 1);            /* case_preserving */
	}
}

bool nfs3d_proc_file(const struct nfs3d_args *a, const struct nfs3d_caller *c, struct nfs3d_res *r)
{
	struct nfs3d_enc *e = &r->enc;
	char rel[PATH_MAX];
	struct stat st;
	switch (a->proc) {
	case 1:
	case 2:
	case 4:
	case 5:
	case 6:
	case 7:
	case 18:
	case 19:
	case 20:
	case 21:
		break;
	default:
		return false;
	}
	int s = nfs3d_fh_resolve(a->fh, a->fhlen, rel, &st);
	if (s != 0) {
		nfs3d_put_fail(e, a->proc, (uint32_t)s);
		return true;
	}
	switch (a->proc) {
	case 1: /* GETATTR */
		nfs3d_put32(e, NFS3_OK);
		nfs3d_put_fattr(e, &st);
		break;
	case 2:
		do_setattr(a, rel, &st, e);
		break;
	case 4: /* ACCESS */
		nfs3d_put32(e, NFS3_OK);
		nfs3d_put_post_attr(e, &st);
		nfs3d_put32(e, access_bits(&st, c, a->access));
		break;
	case 5:
		do_readlink(rel, &st, e);
		break;
	case 6:
		do_read(a, rel, &st, r);
		break;
	case 7:
		do_write(a, rel, &st, e);
		break;
	case 21:
		do_commit(rel, &st, e);
		break;
	default:
		do_fs(a->proc, &st, e);
		break;
	}
	return true;
}
