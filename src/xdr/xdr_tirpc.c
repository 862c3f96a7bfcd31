/* SPDX-License-Identifier: MIT */
/*
 * A libtirpc XDR stream over an rpcrdma cursor (see include/rpcrdma/tirpc.h).
 * The ops table is libtirpc 1.3.3's struct xdr_ops (rpc/xdr.h): getlong,
 * putlong, getbytes, putbytes, getpostn, setpostn, inline, destroy, control.
 * x_private holds the cursor.
 */
#include "rpcrdma/tirpc.h"

#include <limits.h>
#include <string.h>

#include "xdr/xdr_internal.h"

static struct rpcrdma_xdr *cur(XDR *xdrs)
{
	return xdrs->x_private;
}

static bool_t tx_getlong(XDR *xdrs, long *lp)
{
	uint32_t v;
	if (xdri_get_u32_inline(cur(xdrs), &v) != 0)
		return FALSE;
	*lp = (long)(int32_t)v;
	return TRUE;
}

static bool_t tx_putlong(XDR *xdrs, const long *lp)
{
	return xdri_put_u32_inline(cur(xdrs), (uint32_t)*lp) == 0;
}

/* Raw bytes: xdr_opaque() adds the padding itself with a second call. */
static bool_t tx_getbytes(XDR *xdrs, char *addr, u_int len)
{
	if (len == 0)
		return TRUE;
	return rpcrdma_xdri_get_slow(cur(xdrs), addr, len) == 0;
}

static bool_t tx_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	if (len == 0)
		return TRUE;
	return rpcrdma_xdri_put_slow(cur(xdrs), addr, len) == 0;
}

static u_int tx_getpostn(XDR *xdrs)
{
	size_t pos = rpcrdma_xdr_getpos(cur(xdrs));
	return pos > UINT_MAX ? (u_int)-1 : (u_int)pos;
}

static bool_t tx_setpostn(XDR *xdrs, u_int pos)
{
	return rpcrdma_xdr_setpos(cur(xdrs), pos) == 0;
}

static int32_t *tx_inline(XDR *xdrs, u_int len)
{
	struct rpcrdma_xdr *x = cur(xdrs);

	if (len == 0 || len > rpcrdma_xdr_remaining(x))
		return NULL;
	rpcrdma_xdri_normalize(x);
	const struct iovec *v = &x->iov[x->idx];
	if (v->iov_len - x->off < len)
		return NULL;
	uint8_t *p = (uint8_t *)v->iov_base + x->off;
	/* rpcgen's IXDR_* macros store through int32_t *. */
	if ((uintptr_t)p % _Alignof(int32_t))
		return NULL;
	x->off += len;
	x->pos += len;
	return (int32_t *)(void *)p;
}

static void tx_destroy(XDR *xdrs)
{
	(void)xdrs; /* the cursor belongs to the caller */
}

static bool_t tx_control(XDR *xdrs, int request, void *info)
{
	(void)xdrs;
	(void)request;
	(void)info;
	return FALSE;
}

static const struct xdr_ops tirpc_cursor_ops = {
    .x_getlong = tx_getlong,
    .x_putlong = tx_putlong,
    .x_getbytes = tx_getbytes,
    .x_putbytes = tx_putbytes,
    .x_getpostn = tx_getpostn,
    .x_setpostn = tx_setpostn,
    .x_inline = tx_inline,
    .x_destroy = tx_destroy,
    .x_control = tx_control,
};

void rpcrdma_tirpc_xdr_create(XDR *xdrs, struct rpcrdma_xdr *x)
{
	memset(xdrs, 0, sizeof(*xdrs));
	xdrs->x_op = x->op == RPCRDMA_XDR_ENCODE ? XDR_ENCODE : XDR_DECODE;
	xdrs->x_ops = &tirpc_cursor_ops;
	xdrs->x_private = x;
}

struct rpcrdma_xdr *rpcrdma_tirpc_xdr_cursor(XDR *xdrs)
{
	if (!xdrs || xdrs->x_ops != &tirpc_cursor_ops)
		return NULL;
	return xdrs->x_private;
}
