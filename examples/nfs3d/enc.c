/* SPDX-License-Identifier: MIT */
/*
 * Reply encoding: results are written as XDR words (RFC 4506) into a
 * growable buffer, then handed to rpcrdma_svc_reply() through one xdrproc_t
 * (nfs3d_xdr_res) that copies them and adds READ's data as a bulk item, so
 * the library moves it by the client's Write chunk (RFC 8267 §4) and sends
 * a reply that outgrows the inline threshold (READDIR, READDIRPLUS,
 * READLINK) through the client's Reply chunk.
 */
#include "nfs3d.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

void nfs3d_enc_init(struct nfs3d_enc *e)
{
	memset(e, 0, sizeof(*e));
}

void nfs3d_enc_free(struct nfs3d_enc *e)
{
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static uint8_t *room(struct nfs3d_enc *e, uint32_t n)
{
	if (e->oom)
		return NULL;
	if (e->len + n > e->cap) {
		uint32_t cap = e->cap ? e->cap : 512;
		while (cap < e->len + n)
			cap *= 2;
		uint8_t *b = realloc(e->buf, cap);
		if (!b) {
			e->oom = true;
			return NULL;
		}
		e->buf = b;
		e->cap = cap;
	}
	uint8_t *p = e->buf + e->len;
	e->len += n;
	return p;
}

void nfs3d_put32(struct nfs3d_enc *e, uint32_t v)
{
	uint8_t *p = room(e, 4);
	if (!p)
		return;
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void nfs3d_put64(struct nfs3d_enc *e, uint64_t v)
{
	nfs3d_put32(e, (uint32_t)(v >> 32));
	nfs3d_put32(e, (uint32_t)v);
}

void nfs3d_put_fixed(struct nfs3d_enc *e, const void *p, uint32_t len)
{
	uint32_t pad = (4u - (len & 3u)) & 3u;
	uint8_t *d = room(e, len + pad);
	if (!d)
		return;
	memcpy(d, p, len);
	memset(d + len, 0, pad);
}

void nfs3d_put_opaque(struct nfs3d_enc *e, const void *p, uint32_t len)
{
	nfs3d_put32(e, len);
	nfs3d_put_fixed(e, p, len);
}

static uint32_t ftype3(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return 1;
	case S_IFDIR:
		return 2;
	case S_IFBLK:
		return 3;
	case S_IFCHR:
		return 4;
	case S_IFLNK:
		return 5;
	case S_IFSOCK:
		return 6;
	default:
		return 7; /* NF3FIFO */
	}
}

/* fattr3 (RFC 1813 §2.6) */
void nfs3d_put_fattr(struct nfs3d_enc *e, const struct stat *st)
{
	nfs3d_put32(e, ftype3(st->st_mode));
	nfs3d_put32(e, (uint32_t)(st->st_mode & 07777));
	nfs3d_put32(e, (uint32_t)st->st_nlink);
	nfs3d_put32(e, st->st_uid);
	nfs3d_put32(e, st->st_gid);
	nfs3d_put64(e, (uint64_t)st->st_size);
	nfs3d_put64(e, (uint64_t)st->st_blocks * 512u);
	nfs3d_put32(e, major(st->st_rdev));
	nfs3d_put32(e, minor(st->st_rdev));
	nfs3d_put64(e, (uint64_t)st->st_dev); /* fsid */
	nfs3d_put64(e, (uint64_t)st->st_ino); /* fileid */
	nfs3d_put32(e, (uint32_t)st->st_atim.tv_sec);
	nfs3d_put32(e, (uint32_t)st->st_atim.tv_nsec);
	nfs3d_put32(e, (uint32_t)st->st_mtim.tv_sec);
	nfs3d_put32(e, (uint32_t)st->st_mtim.tv_nsec);
	nfs3d_put32(e, (uint32_t)st->st_ctim.tv_sec);
	nfs3d_put32(e, (uint32_t)st->st_ctim.tv_nsec);
}

void nfs3d_put_post_attr(struct nfs3d_enc *e, const struct stat *st)
{
	nfs3d_put32(e, st ? 1 : 0);
	if (st)
		nfs3d_put_fattr(e, st);
}

void nfs3d_put_pre_attr(struct nfs3d_enc *e, const struct stat *st)
{
	nfs3d_put32(e, st ? 1 : 0);
	if (!st)
		return;
	nfs3d_put64(e, (uint64_t)st->st_size);
	nfs3d_put32(e, (uint32_t)st->st_mtim.tv_sec);
	nfs3d_put32(e, (uint32_t)st->st_mtim.tv_nsec);
	nfs3d_put32(e, (uint32_t)st->st_ctim.tv_sec);
	nfs3d_put32(e, (uint32_t)st->st_ctim.tv_nsec);
}

void nfs3d_put_post_rel(struct nfs3d_enc *e, const char *rel)
{
	char abs[PATH_MAX];
	struct stat st;
	bool ok = rel && nfs3d_abs(rel, abs) == 0 && nfs3d_lstat(abs, &st, NULL) == 0;
	nfs3d_put_post_attr(e, ok ? &st : NULL);
}

void nfs3d_put_wcc(struct nfs3d_enc *e, const struct stat *pre, const char *rel)
{
	nfs3d_put_pre_attr(e, pre);
	nfs3d_put_post_rel(e, rel);
}

void nfs3d_put_fh(struct nfs3d_enc *e, const char *rel, const struct stat *st)
{
	char abs[PATH_MAX];
	struct stat s;
	uint32_t gen = 0;
	struct nfs3d_fh fh;
	if (nfs3d_abs(rel, abs) != 0 || nfs3d_lstat(abs, &s, &gen) != 0)
		s = *st;
	nfs3d_fh_make(&s, gen, &fh);
	nfs3d_put_opaque(e, fh.data, fh.len);
}

void nfs3d_put_new_obj(struct nfs3d_enc *e, const char *rel)
{
	char abs[PATH_MAX];
	struct stat st;
	uint32_t gen;
	struct nfs3d_fh fh;
	if (nfs3d_abs(rel, abs) != 0 || nfs3d_lstat(abs, &st, &gen) != 0) {
		nfs3d_put32(e, 0); /* post_op_fh3: none */
		nfs3d_put32(e, 0); /* post_op_attr: none */
		return;
	}
	nfs3d_fh_note(rel, &st);
	nfs3d_fh_make(&st, gen, &fh);
	nfs3d_put32(e, 1);
	nfs3d_put_opaque(e, fh.data, fh.len);
	nfs3d_put_post_attr(e, &st);
}

uint32_t nfs3d_errno_to_stat(int err)
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

bool_t nfs3d_xdr_res(XDR *xdrs, struct nfs3d_res *r)
{
	if (xdrs->x_op != XDR_ENCODE)
		return TRUE;
	if (r->enc.len && !xdr_opaque(xdrs, (char *)r->enc.buf, r->enc.len))
		return FALSE;
	return r->has_bulk ? xdr_rpcrdma_bulk(xdrs, &r->bulk) : TRUE;
}

/* Words of empty attributes after the status of a failed result, by
 * procedure (RFC 1813 §3.3: post_op_attr = 1 word, wcc_data = 2). */
static const uint8_t fail_words[22] = {0, 0, 2, 1, 1, 1, 1, 2, 2, 2, 2,
				       2, 2, 2, 4, 3, 1, 1, 1, 1, 1, 2};

void nfs3d_put_fail(struct nfs3d_enc *e, uint32_t proc, uint32_t status)
{
	nfs3d_put32(e, status);
	for (unsigned i = 0; proc < 22 && i < fail_words[proc]; i++)
		nfs3d_put32(e, 0);
}
