/* SPDX-License-Identifier: MIT */
/*
 * opaque_auth (RFC 5531 §8.2) and the AUTH_SYS parameters (RFC 5531 §10.2,
 * Appendix A). The header structs keep the auth body as raw bytes, so a
 * credential of any flavor survives decode/encode unchanged; AUTH_SYS is
 * parsed out of (and built into) that body on request.
 */
#include "rpcrdma/rpc.h"

#include <errno.h>
#include <string.h>

#include "xdr/xdr_internal.h"

int rpcrdma_rpc_encode_auth(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_auth *a)
{
	if (!a)
		return -EINVAL;
	if (a->len > RPCRDMA_RPC_AUTH_BODY_MAX)
		return -E2BIG;
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_put_u32(x, a->flavor);
	if (rc == 0)
		rc = rpcrdma_xdr_put_opaque(x, a->body, a->len, RPCRDMA_RPC_AUTH_BODY_MAX);
	if (rc)
		xdri_restore(x, m);
	return rc;
}

int rpcrdma_rpc_decode_auth(struct rpcrdma_xdr *x, struct rpcrdma_rpc_auth *a)
{
	if (!a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_get_u32(x, &a->flavor);
	if (rc == 0)
		rc = rpcrdma_xdr_get_opaque(x, a->body, RPCRDMA_RPC_AUTH_BODY_MAX, &a->len);
	if (rc)
		xdri_restore(x, m);
	return rc;
}

static int authsys_check(const struct rpcrdma_rpc_authsys *s)
{
	if (!s)
		return -EINVAL;
	if (s->ngids > RPCRDMA_RPC_AUTHSYS_MAX_GIDS)
		return -E2BIG;
	if (strnlen(s->machinename, sizeof(s->machinename)) > RPCRDMA_RPC_MACHINENAME_MAX)
		return -E2BIG; /* not NUL-terminated inside the array */
	return 0;
}

int rpcrdma_rpc_encode_authsys(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_authsys *s)
{
	int rc = authsys_check(s);
	if (rc)
		return rc;
	struct xdri_mark m = xdri_mark(x);
	rc = rpcrdma_xdr_put_u32(x, s->stamp);
	if (rc == 0)
		rc = rpcrdma_xdr_put_string(x, s->machinename, RPCRDMA_RPC_MACHINENAME_MAX);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, s->uid);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, s->gid);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, s->ngids);
	for (uint32_t i = 0; rc == 0 && i < s->ngids; i++)
		rc = rpcrdma_xdr_put_u32(x, s->gids[i]);
	if (rc)
		xdri_restore(x, m);
	return rc;
}

int rpcrdma_rpc_decode_authsys(struct rpcrdma_xdr *x, struct rpcrdma_rpc_authsys *s)
{
	if (!s)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_get_u32(x, &s->stamp);
	if (rc == 0)
		rc = rpcrdma_xdr_get_string(x, s->machinename, sizeof(s->machinename));
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &s->uid);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &s->gid);
	/* Appendix A: gids<16>; count checked against the limit and against
	 * the bytes left before any gid is read. */
	if (rc == 0)
		rc = rpcrdma_xdr_get_count(x, RPCRDMA_RPC_AUTHSYS_MAX_GIDS, RPCRDMA_XDR_UNIT,
					   &s->ngids);
	for (uint32_t i = 0; rc == 0 && i < s->ngids; i++)
		rc = rpcrdma_xdr_get_u32(x, &s->gids[i]);
	if (rc)
		xdri_restore(x, m);
	return rc;
}

void rpcrdma_rpc_auth_none(struct rpcrdma_rpc_auth *a)
{
	memset(a, 0, sizeof(*a));
	a->flavor = RPCRDMA_RPC_AUTH_NONE;
}

int rpcrdma_rpc_auth_sys(struct rpcrdma_rpc_auth *a, const struct rpcrdma_rpc_authsys *s)
{
	struct rpcrdma_xdr x;

	if (!a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	/* The largest AUTH_SYS body (4 + 4+256 + 4 + 4 + 4+64 = 340) fits in
	 * the 400-byte opaque_auth body, so only a broken @s can fail. */
	rpcrdma_xdr_init(&x, a->body, sizeof(a->body), RPCRDMA_XDR_ENCODE);
	int rc = rpcrdma_rpc_encode_authsys(&x, s);
	if (rc)
		return rc;
	a->flavor = RPCRDMA_RPC_AUTH_SYS;
	a->len = (uint32_t)rpcrdma_xdr_getpos(&x);
	return 0;
}

int rpcrdma_rpc_auth_get_sys(const struct rpcrdma_rpc_auth *a, struct rpcrdma_rpc_authsys *s)
{
	struct rpcrdma_xdr x;
	uint8_t body[RPCRDMA_RPC_AUTH_BODY_MAX];

	if (!a || !s || a->flavor != RPCRDMA_RPC_AUTH_SYS || a->len > sizeof(a->body))
		return -EINVAL;
	/* The cursor takes a mutable buffer; decode from a copy rather than
	 * cast away the const of the caller's credential. */
	memcpy(body, a->body, a->len);
	rpcrdma_xdr_init(&x, body, a->len, RPCRDMA_XDR_DECODE);
	int rc = rpcrdma_rpc_decode_authsys(&x, s);
	if (rc)
		return rc;
	/* A body longer than its parameters is a malformed credential. */
	if (rpcrdma_xdr_remaining(&x) != 0)
		return -EINVAL;
	return 0;
}
