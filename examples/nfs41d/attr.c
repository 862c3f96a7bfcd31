/* SPDX-License-Identifier: MIT */
/*
 * fattr4 (RFC 8881 §3.3.9, §5): a bitmap of attribute numbers and their
 * values, XDR-encoded in number order into an opaque. Values are encoded
 * and decoded with libtirpc's XDR primitives and rpcgen's routines of
 * nfs41.x over a memory stream. The attributes are those the Linux client
 * asks for at mount time, in GETATTR and READDIR; owners are numeric ids
 * (the client's default for AUTH_SYS, no idmapping).
 */
#define _GNU_SOURCE
#include "nfs41d.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define ATTR_BUF 1024u /* the largest fattr4 value list encoded here */

static const uint8_t supported[] = {FATTR4_SUPPORTED_ATTRS,
				    FATTR4_TYPE,
				    FATTR4_FH_EXPIRE_TYPE,
				    FATTR4_CHANGE,
				    FATTR4_SIZE,
				    FATTR4_LINK_SUPPORT,
				    FATTR4_SYMLINK_SUPPORT,
				    FATTR4_NAMED_ATTR,
				    FATTR4_FSID,
				    FATTR4_UNIQUE_HANDLES,
				    FATTR4_LEASE_TIME,
				    FATTR4_RDATTR_ERROR,
				    FATTR4_ACLSUPPORT,
				    FATTR4_CANSETTIME,
				    FATTR4_CASE_INSENSITIVE,
				    FATTR4_CASE_PRESERVING,
				    FATTR4_CHOWN_RESTRICTED,
				    FATTR4_FILEHANDLE,
				    FATTR4_FILEID,
				    FATTR4_FILES_AVAIL,
				    FATTR4_FILES_FREE,
				    FATTR4_FILES_TOTAL,
				    FATTR4_HOMOGENEOUS,
				    FATTR4_MAXFILESIZE,
				    FATTR4_MAXLINK,
				    FATTR4_MAXNAME,
				    FATTR4_MAXREAD,
				    FATTR4_MAXWRITE,
				    FATTR4_MODE,
				    FATTR4_NO_TRUNC,
				    FATTR4_NUMLINKS,
				    FATTR4_OWNER,
				    FATTR4_OWNER_GROUP,
				    FATTR4_RAWDEV,
				    FATTR4_SPACE_AVAIL,
				    FATTR4_SPACE_FREE,
				    FATTR4_SPACE_TOTAL,
				    FATTR4_SPACE_USED,
				    FATTR4_TIME_ACCESS,
				    FATTR4_TIME_ACCESS_SET,
				    FATTR4_TIME_DELTA,
				    FATTR4_TIME_METADATA,
				    FATTR4_TIME_MODIFY,
				    FATTR4_TIME_MODIFY_SET,
				    FATTR4_MOUNTED_ON_FILEID,
				    FATTR4_SUPPATTR_EXCLCREAT};

/* the attributes SETATTR (and a creating OPEN or CREATE) may set */
static const uint8_t settable[] = {
    FATTR4_SIZE,           FATTR4_MODE, FATTR4_OWNER, FATTR4_OWNER_GROUP, FATTR4_TIME_ACCESS_SET,
    FATTR4_TIME_MODIFY_SET};

static void set_bit(uint32_t w[3], uint32_t n)
{
	w[n / 32] |= 1u << (n % 32);
}

static bool has_bit(const bitmap4 *b, uint32_t n)
{
	return n / 32 < b->bitmap4_len && (b->bitmap4_val[n / 32] & (1u << (n % 32)));
}

void n41_bitmap_out(struct n41_compound *c, const uint32_t set[3], bitmap4 *out)
{
	uint32_t n = set[2] ? 3 : set[1] ? 2 : 1;
	uint32_t *w = n41_alloc(c, 3 * sizeof(*w));
	out->bitmap4_len = w ? n : 0;
	out->bitmap4_val = w;
	if (w)
		memcpy(w, set, n * sizeof(*w));
}

static bool put_bitmap(XDR *x, const uint8_t *list, size_t n)
{
	uint32_t w[3] = {0, 0, 0};
	for (size_t i = 0; i < n; i++)
		set_bit(w, list[i]);
	bitmap4 b = {.bitmap4_len = w[2] ? 3 : 2, .bitmap4_val = w};
	return xdr_bitmap4(x, &b);
}

static bool put_time(XDR *x, const struct timespec *t)
{
	nfstime4 v = {.seconds = t->tv_sec, .nseconds = (u_int)t->tv_nsec};
	return xdr_nfstime4(x, &v);
}

static bool put_id(XDR *x, uint32_t id)
{
	char s[16];
	char *p = s;
	snprintf(s, sizeof(s), "%u", id);
	return xdr_string(x, &p, sizeof(s));
}

static nfs_ftype4 ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:
		return NF4DIR;
	case S_IFLNK:
		return NF4LNK;
	case S_IFBLK:
		return NF4BLK;
	case S_IFCHR:
		return NF4CHR;
	case S_IFSOCK:
		return NF4SOCK;
	case S_IFIFO:
		return NF4FIFO;
	default:
		return NF4REG;
	}
}

/* Encode attribute @n of @st: false when the buffer is full. */
static bool put_attr(XDR *x, uint32_t n, const struct stat *st, const struct nfs3d_fh *fh,
		     const struct statvfs *vfs)
{
	uint64_t u64;
	uint32_t u32;
	bool_t b;
	switch (n) {
	case FATTR4_SUPPORTED_ATTRS:
		return put_bitmap(x, supported, sizeof(supported));
	case FATTR4_SUPPATTR_EXCLCREAT:
		return put_bitmap(x, settable, sizeof(settable));
	case FATTR4_TYPE:
		u32 = ftype(st->st_mode);
		return xdr_u_int(x, &u32);
	case FATTR4_FH_EXPIRE_TYPE: /* FH4_PERSISTENT */
	case FATTR4_ACLSUPPORT:
		u32 = 0;
		return xdr_u_int(x, &u32);
	case FATTR4_CHANGE: /* §5.8.1.4: changes with every change of the object */
		u64 = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
		return xdr_uint64_t(x, &u64);
	case FATTR4_SIZE:
		u64 = (uint64_t)st->st_size;
		return xdr_uint64_t(x, &u64);
	case FATTR4_LINK_SUPPORT:
	case FATTR4_SYMLINK_SUPPORT:
	case FATTR4_UNIQUE_HANDLES:
	case FATTR4_CANSETTIME:
	case FATTR4_CASE_PRESERVING:
	case FATTR4_CHOWN_RESTRICTED:
	case FATTR4_HOMOGENEOUS:
	case FATTR4_NO_TRUNC:
		b = TRUE;
		return xdr_bool(x, &b);
	case FATTR4_NAMED_ATTR:
	case FATTR4_CASE_INSENSITIVE:
		b = FALSE;
		return xdr_bool(x, &b);
	case FATTR4_FSID: {
		fsid4 f = {.major = (uint64_t)nfs3d_exp.dev, .minor = 0};
		return xdr_fsid4(x, &f);
	}
	case FATTR4_LEASE_TIME:
		u32 = NFS41D_LEASE;
		return xdr_u_int(x, &u32);
	case FATTR4_RDATTR_ERROR:
		u32 = NFS4_OK;
		return xdr_u_int(x, &u32);
	case FATTR4_FILEHANDLE: {
		nfs_fh4 h = {.nfs_fh4_len = fh->len, .nfs_fh4_val = (char *)fh->data};
		return xdr_nfs_fh4(x, &h);
	}
	case FATTR4_FILEID:
	case FATTR4_MOUNTED_ON_FILEID:
		u64 = (uint64_t)st->st_ino;
		return xdr_uint64_t(x, &u64);
	case FATTR4_FILES_AVAIL:
		u64 = vfs->f_favail;
		return xdr_uint64_t(x, &u64);
	case FATTR4_FILES_FREE:
		u64 = vfs->f_ffree;
		return xdr_uint64_t(x, &u64);
	case FATTR4_FILES_TOTAL:
		u64 = vfs->f_files;
		return xdr_uint64_t(x, &u64);
	case FATTR4_MAXFILESIZE:
		u64 = (uint64_t)INT64_MAX;
		return xdr_uint64_t(x, &u64);
	case FATTR4_MAXLINK:
		u32 = 65000;
		return xdr_u_int(x, &u32);
	case FATTR4_MAXNAME:
		u32 = NFS41D_MAXNAME;
		return xdr_u_int(x, &u32);
	case FATTR4_MAXREAD:
	case FATTR4_MAXWRITE:
		u64 = NFS41D_MAXIO;
		return xdr_uint64_t(x, &u64);
	case FATTR4_MODE:
		u32 = st->st_mode & 07777;
		return xdr_u_int(x, &u32);
	case FATTR4_NUMLINKS:
		u32 = (uint32_t)st->st_nlink;
		return xdr_u_int(x, &u32);
	case FATTR4_OWNER:
		return put_id(x, st->st_uid);
	case FATTR4_OWNER_GROUP:
		return put_id(x, st->st_gid);
	case FATTR4_RAWDEV: {
		specdata4 d = {.specdata1 = major(st->st_rdev), .specdata2 = minor(st->st_rdev)};
		return xdr_specdata4(x, &d);
	}
	case FATTR4_SPACE_AVAIL:
		u64 = (uint64_t)vfs->f_bavail * vfs->f_frsize;
		return xdr_uint64_t(x, &u64);
	case FATTR4_SPACE_FREE:
		u64 = (uint64_t)vfs->f_bfree * vfs->f_frsize;
		return xdr_uint64_t(x, &u64);
	case FATTR4_SPACE_TOTAL:
		u64 = (uint64_t)vfs->f_blocks * vfs->f_frsize;
		return xdr_uint64_t(x, &u64);
	case FATTR4_SPACE_USED:
		u64 = (uint64_t)st->st_blocks * 512u;
		return xdr_uint64_t(x, &u64);
	case FATTR4_TIME_ACCESS:
		return put_time(x, &st->st_atim);
	case FATTR4_TIME_METADATA:
		return put_time(x, &st->st_ctim);
	case FATTR4_TIME_MODIFY:
		return put_time(x, &st->st_mtim);
	case FATTR4_TIME_DELTA: {
		struct timespec d = {0, 1};
		return put_time(x, &d);
	}
	default:
		return true; /* not reached: only supported ones are asked */
	}
}

static bool is_supported(uint32_t n)
{
	for (size_t i = 0; i < sizeof(supported); i++)
		if (supported[i] == n)
			return true;
	return false;
}

nfsstat4 n41_getattr(struct n41_compound *c, const bitmap4 *req, const struct stat *st,
		     const struct nfs3d_fh *fh, fattr4 *out)
{
	uint32_t got[3] = {0, 0, 0};
	struct statvfs vfs;
	XDR x;
	char *buf = n41_alloc(c, ATTR_BUF);
	if (!buf)
		return NFS4ERR_SERVERFAULT;
	memset(&vfs, 0, sizeof(vfs));
	/* file system figures only when asked */
	if (has_bit(req, FATTR4_FILES_AVAIL) || has_bit(req, FATTR4_FILES_FREE) ||
	    has_bit(req, FATTR4_FILES_TOTAL) || has_bit(req, FATTR4_SPACE_AVAIL) ||
	    has_bit(req, FATTR4_SPACE_FREE) || has_bit(req, FATTR4_SPACE_TOTAL))
		(void)statvfs(".", &vfs);
	xdrmem_create(&x, buf, ATTR_BUF, XDR_ENCODE);
	uint32_t words = req->bitmap4_len < 3 ? req->bitmap4_len : 3;
	for (uint32_t n = 0; n < words * 32; n++) {
		if (!has_bit(req, n) || !is_supported(n) || n == FATTR4_TIME_ACCESS_SET ||
		    n == FATTR4_TIME_MODIFY_SET)
			continue;
		if (!put_attr(&x, n, st, fh, &vfs)) {
			xdr_destroy(&x);
			return NFS4ERR_RESOURCE;
		}
		set_bit(got, n);
	}
	out->attr_vals.attrlist4_len = xdr_getpos(&x);
	out->attr_vals.attrlist4_val = buf;
	xdr_destroy(&x);
	n41_bitmap_out(c, got, &out->attrmask);
	return out->attrmask.bitmap4_val ? NFS4_OK : NFS4ERR_SERVERFAULT;
}

/* A numeric owner (or "nobody"); an "id@domain" of a number too. */
static bool parse_id(const char *s, uint32_t *id)
{
	char *end;
	if (strcmp(s, "nobody") == 0 || strncmp(s, "nobody@", 7) == 0) {
		*id = 65534;
		return true;
	}
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s || errno || v > UINT32_MAX || (*end && *end != '@'))
		return false;
	*id = (uint32_t)v;
	return true;
}

static nfsstat4 get_settime(XDR *x, uint32_t *how, struct timespec *t)
{
	settime4 v;
	memset(&v, 0, sizeof(v));
	if (!xdr_settime4(x, &v))
		return NFS4ERR_BADXDR;
	*how = v.set_it == SET_TO_CLIENT_TIME4 ? 2 : 1;
	if (v.set_it == SET_TO_CLIENT_TIME4) {
		if (v.settime4_u.time.nseconds >= 1000000000u)
			return NFS4ERR_INVAL;
		t->tv_sec = (time_t)v.settime4_u.time.seconds;
		t->tv_nsec = (long)v.settime4_u.time.nseconds;
	}
	return NFS4_OK;
}

nfsstat4 n41_sattr_decode(const fattr4 *in, struct n41_sattr *sa)
{
	XDR x;
	nfsstat4 st = NFS4_OK;
	char idbuf[NFS4_OPAQUE_LIMIT + 1], *idp;
	memset(sa, 0, sizeof(*sa));
	xdrmem_create(&x, in->attr_vals.attrlist4_val, in->attr_vals.attrlist4_len, XDR_DECODE);
	for (uint32_t n = 0; st == NFS4_OK && n < in->attrmask.bitmap4_len * 32; n++) {
		if (!has_bit(&in->attrmask, n))
			continue;
		switch (n) {
		case FATTR4_SIZE:
			sa->size = xdr_uint64_t(&x, &sa->size_v);
			st = sa->size ? NFS4_OK : NFS4ERR_BADXDR;
			break;
		case FATTR4_MODE:
			sa->mode = xdr_u_int(&x, &sa->mode_v);
			sa->mode_v &= 07777;
			st = sa->mode ? NFS4_OK : NFS4ERR_BADXDR;
			break;
		case FATTR4_OWNER:
		case FATTR4_OWNER_GROUP:
			idp = idbuf;
			if (!xdr_string(&x, &idp, NFS4_OPAQUE_LIMIT)) {
				st = NFS4ERR_BADXDR;
				break;
			}
			if (n == FATTR4_OWNER)
				sa->uid = parse_id(idbuf, &sa->uid_v);
			else
				sa->gid = parse_id(idbuf, &sa->gid_v);
			if (!(n == FATTR4_OWNER ? sa->uid : sa->gid))
				st = NFS4ERR_BADOWNER;
			break;
		case FATTR4_TIME_ACCESS_SET:
			st = get_settime(&x, &sa->atime, &sa->atime_v);
			break;
		case FATTR4_TIME_MODIFY_SET:
			st = get_settime(&x, &sa->mtime, &sa->mtime_v);
			break;
		default:
			/* §18.30.3: read-only ones are INVAL, the rest unknown */
			st = is_supported(n) ? NFS4ERR_INVAL : NFS4ERR_ATTRNOTSUPP;
			break;
		}
		if (st == NFS4_OK)
			set_bit(sa->set, n);
	}
	xdr_destroy(&x);
	return st;
}

int n41_sattr_apply(const char *rel, const struct n41_sattr *sa, bool with_mode)
{
	char abs[PATH_MAX];
	int rc = nfs3d_abs(rel, abs);
	if (rc)
		return rc;
	if ((sa->uid || sa->gid) &&
	    lchown(abs, sa->uid ? sa->uid_v : (uid_t)-1, sa->gid ? sa->gid_v : (gid_t)-1) != 0)
		return -errno;
	if (with_mode && sa->mode && chmod(abs, sa->mode_v) != 0)
		return -errno;
	if (sa->size && truncate(abs, (off_t)sa->size_v) != 0)
		return -errno;
	if (sa->atime || sa->mtime) {
		struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
		if (sa->atime)
			ts[0] = sa->atime == 2 ? sa->atime_v : (struct timespec){0, UTIME_NOW};
		if (sa->mtime)
			ts[1] = sa->mtime == 2 ? sa->mtime_v : (struct timespec){0, UTIME_NOW};
		if (utimensat(AT_FDCWD, abs, ts, AT_SYMLINK_NOFOLLOW) != 0)
			return -errno;
	}
	return 0;
}
