/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 arguments (RFC 1813 §3.3) decoded with libtirpc's XDR primitives
 * over the call's stream (rpcrdma_svc_getargs). WRITE's data is the one
 * DDP-eligible argument (RFC 8267 §4): decoded as a bulk item it points at
 * the Read chunk data the server already pulled, or at the inline bytes.
 * Names and paths land in fixed buffers (no allocation to free).
 */
#include "nfs3d.h"

#include <string.h>

static bool_t xfh(XDR *x, uint8_t *fh, uint32_t *len)
{
	char *p = (char *)fh;
	u_int n = 0;
	if (!xdr_bytes(x, &p, &n, NFS3_FHSIZE))
		return FALSE;
	*len = n;
	return TRUE;
}

static bool_t xname(XDR *x, char *buf, u_int max)
{
	char *p = buf;
	return xdr_string(x, &p, max);
}

static bool_t xdirop(XDR *x, struct nfs3d_diropargs *d)
{
	return xfh(x, d->fh, &d->fhlen) && xname(x, d->name, NFS3_MAXNAME);
}

static bool_t xtime(XDR *x, struct timespec *t)
{
	u_int s, ns;
	if (!xdr_u_int(x, &s) || !xdr_u_int(x, &ns))
		return FALSE;
	t->tv_sec = s;
	t->tv_nsec = ns;
	return TRUE;
}

static bool_t xset32(XDR *x, bool *set, uint32_t *v)
{
	bool_t b;
	if (!xdr_bool(x, &b))
		return FALSE;
	*set = b;
	return !b || xdr_u_int(x, v);
}

static bool_t xsettime(XDR *x, uint32_t *how, struct timespec *t)
{
	if (!xdr_u_int(x, how) || *how > 2)
		return FALSE;
	return *how != 2 || xtime(x, t);
}

/* sattr3 (RFC 1813 §2.6) */
static bool_t xsattr(XDR *x, struct nfs3d_sattr *s)
{
	bool_t b;
	if (!xset32(x, &s->set_mode, &s->mode) || !xset32(x, &s->set_uid, &s->uid) ||
	    !xset32(x, &s->set_gid, &s->gid) || !xdr_bool(x, &b))
		return FALSE;
	s->set_size = b;
	if (b && !xdr_uint64_t(x, &s->size))
		return FALSE;
	return xsettime(x, &s->set_atime, &s->atime) && xsettime(x, &s->set_mtime, &s->mtime);
}

static bool_t xverf(XDR *x, uint8_t *v)
{
	return xdr_opaque(x, (char *)v, 8);
}

static bool_t xdr_more(XDR *x, struct nfs3d_args *a)
{
	bool_t b;
	switch (a->proc) {
	case 8: /* CREATE: createhow3 */
		if (!xdirop(x, &a->where) || !xdr_u_int(x, &a->how) || a->how > 2)
			return FALSE;
		return a->how == 2 ? xverf(x, a->verf) : xsattr(x, &a->sattr);
	case 9: /* MKDIR */
		return xdirop(x, &a->where) && xsattr(x, &a->sattr);
	case 10: { /* SYMLINK */
		char *p = a->path;
		return xdirop(x, &a->where) && xsattr(x, &a->sattr) &&
		       xdr_string(x, &p, PATH_MAX - 1);
	}
	case 11: /* MKNOD: mknoddata3 */
		if (!xdirop(x, &a->where) || !xdr_u_int(x, &a->ftype))
			return FALSE;
		if (a->ftype == 3 || a->ftype == 4) /* NF3BLK, NF3CHR: devicedata3 */
			return xsattr(x, &a->sattr) && xdr_u_int(x, &a->major) &&
			       xdr_u_int(x, &a->minor);
		if (a->ftype == 6 || a->ftype == 7) /* NF3SOCK, NF3FIFO */
			return xsattr(x, &a->sattr);
		return TRUE; /* other types carry nothing: NFS3ERR_BADTYPE */
	case 3:              /* LOOKUP */
	case 12:             /* REMOVE */
	case 13:             /* RMDIR */
		return xdirop(x, &a->where);
	case 14: /* RENAME */
		return xdirop(x, &a->where) && xdirop(x, &a->to);
	case 15: /* LINK */
		return xfh(x, a->fh, &a->fhlen) && xdirop(x, &a->to);
	case 2: /* SETATTR: sattr3 + sattrguard3 */
		if (!xfh(x, a->fh, &a->fhlen) || !xsattr(x, &a->sattr) || !xdr_bool(x, &b))
			return FALSE;
		a->guard = b;
		return !b || (xdr_u_int(x, &a->guard_sec) && xdr_u_int(x, &a->guard_nsec));
	default:
		return FALSE;
	}
}

bool_t nfs3d_xdr_args(XDR *x, struct nfs3d_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	switch (a->proc) {
	case 0:
		return TRUE;
	case 1:  /* GETATTR */
	case 5:  /* READLINK */
	case 18: /* FSSTAT */
	case 19: /* FSINFO */
	case 20: /* PATHCONF */
		return xfh(x, a->fh, &a->fhlen);
	case 4: /* ACCESS */
		return xfh(x, a->fh, &a->fhlen) && xdr_u_int(x, &a->access);
	case 6:  /* READ */
	case 21: /* COMMIT */
		return xfh(x, a->fh, &a->fhlen) && xdr_uint64_t(x, &a->offset) &&
		       xdr_u_int(x, &a->count);
	case 7: /* WRITE */
		return xfh(x, a->fh, &a->fhlen) && xdr_uint64_t(x, &a->offset) &&
		       xdr_u_int(x, &a->count) && xdr_u_int(x, &a->stable) &&
		       xdr_rpcrdma_bulk(x, &a->data);
	case 16: /* READDIR */
		return xfh(x, a->fh, &a->fhlen) && xdr_uint64_t(x, &a->cookie) &&
		       xverf(x, a->verf) && xdr_u_int(x, &a->count);
	case 17: /* READDIRPLUS: dircount in count */
		return xfh(x, a->fh, &a->fhlen) && xdr_uint64_t(x, &a->cookie) &&
		       xverf(x, a->verf) && xdr_u_int(x, &a->count) && xdr_u_int(x, &a->maxcount);
	default:
		return xdr_more(x, a);
	}
}
