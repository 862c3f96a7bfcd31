/* SPDX-License-Identifier: MIT */
/*
 * opaque_auth (RFC 5531 §8.2) and the AUTH_SYS parameters (RFC 5531 §10.2,
 * Appendix A). The header structs keep the auth body as raw bytes, so a
 * credential of any flavor survives decode/encode unchanged; AUTH_SYS is
 * parsed out of (and built into) that body on request. The client's
 * credential (rpcrdma_rpc_encode_cred_verf) is encoded here once and
 * copied into every call header after the procedure number.
 */
#include "rpcrdma/rpc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int rpcrdma_rpc_authsys_default(struct rpcrdma_rpc_authsys *s)
{
	gid_t g[RPCRDMA_RPC_AUTHSYS_MAX_GIDS];
	gid_t *all = NULL;
	int n;

	if (!s)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->stamp = (uint32_t)time(NULL);
	s->uid = (uint32_t)geteuid();
	s->gid = (uint32_t)getegid();
	if (gethostname(s->machinename, sizeof(s->machinename)) != 0)
		s->machinename[0] = '\0';
	s->machinename[RPCRDMA_RPC_MACHINENAME_MAX] = '\0';
	/* libtirpc keeps the first 16 groups of a longer list (Appendix A:
	 * gids<16>); getgroups() with a short array fails instead, so ask
	 * for the count first. */
	n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	if (n > (int)RPCRDMA_RPC_AUTHSYS_MAX_GIDS) {
		all = calloc((size_t)n, sizeof(*all));
		if (!all)
			return -ENOMEM;
		n = getgroups(n, all);
		if (n >= 0)
			memcpy(g, all, sizeof(g));
		free(all);
		if (n > (int)RPCRDMA_RPC_AUTHSYS_MAX_GIDS)
			n = (int)RPCRDMA_RPC_AUTHSYS_MAX_GIDS;
	} else {
		n = getgroups(n, g);
	}
	if (n < 0)
		return -errno;
	s->ngids = (uint32_t)n;
	for (int i = 0; i < n; i++)
		s->gids[i] = (uint32_t)g[i];
	return 0;
}

int rpcrdma_rpc_encode_cred_verf(void *buf, size_t cap, uint32_t flavor,
				 const struct rpcrdma_rpc_authsys *sys, uint32_t *len)
{
	struct rpcrdma_rpc_auth a;
	struct rpcrdma_rpc_authsys s;
	struct rpcrdma_xdr x;
	int rc = 0;

	if (!buf || !len)
		return -EINVAL;
	if (flavor == RPCRDMA_RPC_AUTH_NONE) {
		rpcrdma_rpc_auth_none(&a);
	} else if (flavor == RPCRDMA_RPC_AUTH_SYS) {
		if (!sys) {
			rc = rpcrdma_rpc_authsys_default(&s);
		} else {
			rc = authsys_check(sys);
			if (rc == 0) {
				s = *sys;
				if (s.stamp == 0)
					s.stamp = (uint32_t)time(NULL);
				if (s.machinename[0] == '\0' &&
				    gethostname(s.machinename, sizeof(s.machinename)) != 0)
					s.machinename[0] = '\0';
				s.machinename[RPCRDMA_RPC_MACHINENAME_MAX] = '\0';
			}
		}
		if (rc == 0)
			rc = rpcrdma_rpc_auth_sys(&a, &s);
	} else {
		rc = -EINVAL;
	}
	if (rc)
		return rc;
	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	rc = rpcrdma_rpc_encode_auth(&x, &a);
	if (rc == 0) {
		rpcrdma_rpc_auth_none(&a);
		rc = rpcrdma_rpc_encode_auth(&x, &a);
	}
	if (rc)
		return rc == -E2BIG ? rc : -EMSGSIZE;
	*len = (uint32_t)rpcrdma_xdr_getpos(&x);
	return 0;
}

int rpcrdma_rpc_check_cred_verf(const void *buf, size_t len)
{
	uint8_t copy[RPCRDMA_RPC_CRED_VERF_MAX];
	struct rpcrdma_rpc_auth a;
	struct rpcrdma_xdr x;

	if (!buf || len > sizeof(copy) || len % RPCRDMA_XDR_UNIT)
		return -EINVAL;
	/* The cursor takes a mutable buffer: decode a copy. */
	memcpy(copy, buf, len);
	rpcrdma_xdr_init(&x, copy, len, RPCRDMA_XDR_DECODE);
	/* credential, then verifier, then nothing */
	for (int i = 0; i < 2; i++)
		if (rpcrdma_rpc_decode_auth(&x, &a))
			return -EINVAL;
	return rpcrdma_xdr_remaining(&x) == 0 ? 0 : -EINVAL;
}

int rpcrdma_rpc_oversize_auth(const struct rpcrdma_xdr *x, struct rpcrdma_rpc_reply *r)
{
	struct rpcrdma_xdr c;
	uint32_t w[6], flavor, len;

	if (!x || !r)
		return 0;
	c = *x; /* a copy: only positions move, the bytes are not touched */
	/* xid, msg_type, rpcvers, prog, vers, proc (RFC 5531 §9) */
	for (unsigned int i = 0; i < 6; i++)
		if (rpcrdma_xdr_get_u32(&c, &w[i]))
			return 0;
	if (w[1] != RPCRDMA_RPC_CALL || w[2] != RPCRDMA_RPC_VERS)
		return 0;
	if (rpcrdma_xdr_get_u32(&c, &flavor) || rpcrdma_xdr_get_u32(&c, &len))
		return 0;
	if (len > RPCRDMA_RPC_AUTH_BODY_MAX) {
		rpcrdma_rpc_reply_auth_error(r, w[0], RPCRDMA_RPC_AUTH_BADCRED);
		return 1;
	}
	if (rpcrdma_xdr_remaining(&c) < RPCRDMA_XDR_ROUNDUP(len) ||
	    rpcrdma_xdr_setpos(&c, rpcrdma_xdr_getpos(&c) + RPCRDMA_XDR_ROUNDUP(len)))
		return 0;
	if (rpcrdma_xdr_get_u32(&c, &flavor) || rpcrdma_xdr_get_u32(&c, &len))
		return 0;
	if (len > RPCRDMA_RPC_AUTH_BODY_MAX) {
		rpcrdma_rpc_reply_auth_error(r, w[0], RPCRDMA_RPC_AUTH_BADVERF);
		return 1;
	}
	return 0;
}
