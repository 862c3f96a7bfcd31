/* SPDX-License-Identifier: MIT */
/*
 * What the procedures put in their results (RFC 1813 §2.6): attributes
 * and handles from struct stat, in the types rpcgen made of xdr/nfs3.x;
 * the memory those results point into, released once the reply is sent;
 * errno -> nfsstat3.
 */
#include "nfs3d.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Per-request memory: blocks of at least MEM_BLOCK bytes, carved in order
 * and freed together. A READDIR reply's entries take one allocation per
 * block, not one per entry. */
#define MEM_BLOCK 16384u

struct nfs3d_mem {
	struct nfs3d_mem *next;
	size_t used, cap;
	alignas(max_align_t) unsigned char data[];
};

void *nfs3d_alloc(struct nfs3d_call *c, size_t n)
{
	struct nfs3d_mem *m = c->mem;
	size_t need = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
	if (need < n)
		goto fail;
	if (!m || m->cap - m->used < need) {
		size_t cap = need > MEM_BLOCK ? need : MEM_BLOCK;
		if (cap > SIZE_MAX - sizeof(*m))
			goto fail;
		m = malloc(sizeof(*m) + cap);
		if (!m)
			goto fail;
		m->used = 0;
		m->cap = cap;
		m->next = c->mem;
		c->mem = m;
	}
	void *p = m->data + m->used;
	m->used += need;
	return p;
fail:
	c->oom = true;
	return NULL;
}

void nfs3d_call_end(struct nfs3d_call *c)
{
	while (c->mem) {
		struct nfs3d_mem *next = c->mem->next;
		free(c->mem);
		c->mem = next;
	}
}

static ftype3 ftype_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return NF3REG;
	case S_IFDIR:
		return NF3DIR;
	case S_IFBLK:
		return NF3BLK;
	case S_IFCHR:
		return NF3CHR;
	case S_IFLNK:
		return NF3LNK;
	case S_IFSOCK:
		return NF3SOCK;
	default:
		return NF3FIFO;
	}
}

static nfstime3 time3(const struct timespec *t)
{
	return (nfstime3){.seconds = (uint32)t->tv_sec, .nseconds = (uint32)t->tv_nsec};
}

void nfs3d_fattr(const struct stat *st, fattr3 *f)
{
	f->type = ftype_of(st->st_mode);
	f->mode = (mode3)(st->st_mode & 07777);
	f->nlink = (uint32)st->st_nlink;
	f->uid = st->st_uid;
	f->gid = st->st_gid;
	f->size = (size3)st->st_size;
	f->used = (size3)st->st_blocks * 512u;
	f->rdev.specdata1 = major(st->st_rdev);
	f->rdev.specdata2 = minor(st->st_rdev);
	f->fsid = (uint64)st->st_dev;
	f->fileid = (fileid3)st->st_ino;
	f->atime = time3(&st->st_atim);
	f->mtime = time3(&st->st_mtim);
	f->ctime = time3(&st->st_ctim);
}

void nfs3d_post_attr(const struct stat *st, post_op_attr *p)
{
	p->attributes_follow = st != NULL;
	if (st)
		nfs3d_fattr(st, &p->post_op_attr_u.attributes);
}

void nfs3d_post_rel(const char *rel, post_op_attr *p)
{
	char abs[PATH_MAX];
	struct stat st;
	bool ok = rel && nfs3d_abs(rel, abs) == 0 && nfs3d_lstat(abs, &st, NULL) == 0;
	nfs3d_post_attr(ok ? &st : NULL, p);
}

void nfs3d_wcc(const struct stat *pre, const char *rel, wcc_data *w)
{
	w->before.attributes_follow = pre != NULL;
	if (pre) {
		wcc_attr *b = &w->before.pre_op_attr_u.attributes;
		b->size = (size3)pre->st_size;
		b->mtime = time3(&pre->st_mtim);
		b->ctime = time3(&pre->st_ctim);
	}
	nfs3d_post_rel(rel, &w->after);
}

/* @fh's bytes, copied into the request's memory, as an nfs_fh3 */
static void fh3_of(struct nfs3d_call *c, const struct nfs3d_fh *fh, nfs_fh3 *out)
{
	char *p = nfs3d_alloc(c, fh->len);
	out->data.data_val = p;
	out->data.data_len = p ? fh->len : 0;
	if (p)
		memcpy(p, fh->data, fh->len);
}

void nfs3d_fh3(struct nfs3d_call *c, const char *rel, const struct stat *st, nfs_fh3 *out)
{
	char abs[PATH_MAX];
	struct stat s;
	uint32_t gen = 0;
	struct nfs3d_fh fh;
	if (nfs3d_abs(rel, abs) != 0 || nfs3d_lstat(abs, &s, &gen) != 0)
		s = *st;
	nfs3d_fh_make(&s, gen, &fh);
	fh3_of(c, &fh, out);
}

void nfs3d_new_obj(struct nfs3d_call *c, const char *rel, post_op_fh3 *fh, post_op_attr *attr)
{
	char abs[PATH_MAX];
	struct stat st;
	uint32_t gen;
	struct nfs3d_fh h;
	if (nfs3d_abs(rel, abs) != 0 || nfs3d_lstat(abs, &st, &gen) != 0) {
		fh->handle_follows = FALSE;
		attr->attributes_follow = FALSE;
		return;
	}
	nfs3d_fh_note(rel, &st);
	nfs3d_fh_make(&st, gen, &h);
	fh->handle_follows = TRUE;
	fh3_of(c, &h, &fh->post_op_fh3_u.handle);
	nfs3d_post_attr(&st, attr);
}

int nfs3d_resolve(const nfs_fh3 *fh, char *rel, struct stat *st)
{
	return nfs3d_fh_resolve((const uint8_t *)fh->data.data_val, fh->data.data_len, rel, st);
}

nfsstat3 nfs3d_errno_to_stat(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return NFS3_OK;
	case EPERM:
		return NFS3ERR_PERM;
	case ENOENT:
		return NFS3ERR_NOENT;
	case ENXIO:
		return NFS3ERR_NXIO;
	case EACCES:
		return NFS3ERR_ACCES;
	case EEXIST:
		return NFS3ERR_EXIST;
	case EXDEV:
		return NFS3ERR_XDEV;
	case ENODEV:
		return NFS3ERR_NODEV;
	case ENOTDIR:
		return NFS3ERR_NOTDIR;
	case EISDIR:
		return NFS3ERR_ISDIR;
	case EINVAL:
		return NFS3ERR_INVAL;
	case EFBIG:
		return NFS3ERR_FBIG;
	case ENOSPC:
		return NFS3ERR_NOSPC;
	case EROFS:
		return NFS3ERR_ROFS;
	case EMLINK:
		return NFS3ERR_MLINK;
	case ENAMETOOLONG:
		return NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY:
		return NFS3ERR_NOTEMPTY;
	case EDQUOT:
		return NFS3ERR_DQUOT;
	case ESTALE:
		return NFS3ERR_STALE;
	case EOPNOTSUPP:
		return NFS3ERR_NOTSUPP;
	case ELOOP:
		return NFS3ERR_INVAL;
	default:
		return NFS3ERR_IO;
	}
}
