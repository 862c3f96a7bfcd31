/* SPDX-License-Identifier: MIT */
/*
 * ONC RPC v2 call and reply headers (RFC 5531 §9) and the server-side
 * admission check. Layout:
 *
 *   rpc_msg   = xid, msg_type, body
 *   call_body = rpcvers, prog, vers, proc, cred, verf
 *   reply     = reply_stat, then
 *     MSG_ACCEPTED: verf, accept_stat [, low, high if PROG_MISMATCH]
 *     MSG_DENIED:   reject_stat, then low, high (RPC_MISMATCH)
 *                                   or auth_stat (AUTH_ERROR)
 *
 * Every discriminant is checked against its enum: RFC 4506 §4.3 makes any
 * other value an error, and a union with no default arm (rejected_reply)
 * has no encoding for it.
 */
#include "rpcrdma/rpc.h"

#include <errno.h>
#include <string.h>

#include "xdr/xdr_internal.h"

static bool accept_stat_ok(uint32_t s)
{
	return s <= RPCRDMA_RPC_SYSTEM_ERR;
}

static bool reject_stat_ok(uint32_t s)
{
	return s <= RPCRDMA_RPC_AUTH_ERROR;
}

static bool auth_stat_ok(uint32_t s)
{
	return s <= RPCRDMA_RPC_RPCSEC_GSS_CTXPROBLEM;
}

int rpcrdma_rpc_encode_call(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_call *c)
{
	if (!c)
		return -EINVAL;
	if (c->cred.len > RPCRDMA_RPC_AUTH_BODY_MAX || c->verf.len > RPCRDMA_RPC_AUTH_BODY_MAX)
		return -E2BIG;
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_put_u32(x, c->xid);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, RPCRDMA_RPC_CALL);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, c->rpcvers);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, c->prog);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, c->vers);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, c->proc);
	if (rc == 0)
		rc = rpcrdma_rpc_encode_auth(x, &c->cred);
	if (rc == 0)
		rc = rpcrdma_rpc_encode_auth(x, &c->verf);
	if (rc)
		xdri_restore(x, m);
	return rc;
}

int rpcrdma_rpc_decode_call(struct rpcrdma_xdr *x, struct rpcrdma_rpc_call *c)
{
	uint32_t type;

	if (!c)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_get_u32(x, &c->xid);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &type);
	if (rc == 0 && type != RPCRDMA_RPC_CALL)
		rc = -EINVAL;
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &c->rpcvers);
	/* RFC 5531 §9: the rest of call_body is defined for rpcvers 2 only;
	 * stop here so the server can still answer RPC_MISMATCH. */
	if (rc == 0 && c->rpcvers != RPCRDMA_RPC_VERS)
		return 0;
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &c->prog);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &c->vers);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &c->proc);
	if (rc == 0)
		rc = rpcrdma_rpc_decode_auth(x, &c->cred);
	if (rc == 0)
		rc = rpcrdma_rpc_decode_auth(x, &c->verf);
	if (rc)
		xdri_restore(x, m);
	return rc;
}

int rpcrdma_rpc_encode_reply(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_reply *r)
{
	if (!r)
		return -EINVAL;
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_put_u32(x, r->xid);
	if (rc == 0)
		rc = rpcrdma_xdr_put_u32(x, RPCRDMA_RPC_REPLY);
	if (rc)
		goto out;
	switch (r->reply_stat) {
	case RPCRDMA_RPC_MSG_ACCEPTED:
		if (!accept_stat_ok(r->accept_stat)) {
			rc = -EINVAL;
			break;
		}
		rc = rpcrdma_xdr_put_u32(x, r->reply_stat);
		if (rc == 0)
			rc = rpcrdma_rpc_encode_auth(x, &r->verf);
		if (rc == 0)
			rc = rpcrdma_xdr_put_u32(x, r->accept_stat);
		if (rc == 0 && r->accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
			rc = rpcrdma_xdr_put_u32(x, r->mismatch_low);
			if (rc == 0)
				rc = rpcrdma_xdr_put_u32(x, r->mismatch_high);
		}
		break;
	case RPCRDMA_RPC_MSG_DENIED:
		if (!reject_stat_ok(r->reject_stat) ||
		    (r->reject_stat == RPCRDMA_RPC_AUTH_ERROR && !auth_stat_ok(r->auth_stat))) {
			rc = -EINVAL;
			break;
		}
		rc = rpcrdma_xdr_put_u32(x, r->reply_stat);
		if (rc == 0)
			rc = rpcrdma_xdr_put_u32(x, r->reject_stat);
		if (rc)
			break;
		if (r->reject_stat == RPCRDMA_RPC_RPC_MISMATCH) {
			rc = rpcrdma_xdr_put_u32(x, r->mismatch_low);
			if (rc == 0)
				rc = rpcrdma_xdr_put_u32(x, r->mismatch_high);
		} else {
			rc = rpcrdma_xdr_put_u32(x, r->auth_stat);
		}
		break;
	default:
		rc = -EINVAL;
		break;
	}
out:
	if (rc)
		xdri_restore(x, m);
	return rc;
}

static int decode_accepted(struct rpcrdma_xdr *x, struct rpcrdma_rpc_reply *r)
{
	int rc = rpcrdma_rpc_decode_auth(x, &r->verf);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &r->accept_stat);
	if (rc)
		return rc;
	if (!accept_stat_ok(r->accept_stat))
		return -EINVAL;
	if (r->accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
		rc = rpcrdma_xdr_get_u32(x, &r->mismatch_low);
		if (rc == 0)
			rc = rpcrdma_xdr_get_u32(x, &r->mismatch_high);
	}
	return rc;
}

static int decode_denied(struct rpcrdma_xdr *x, struct rpcrdma_rpc_reply *r)
{
	int rc = rpcrdma_xdr_get_u32(x, &r->reject_stat);
	if (rc)
		return rc;
	switch (r->reject_stat) {
	case RPCRDMA_RPC_RPC_MISMATCH:
		rc = rpcrdma_xdr_get_u32(x, &r->mismatch_low);
		if (rc == 0)
			rc = rpcrdma_xdr_get_u32(x, &r->mismatch_high);
		return rc;
	case RPCRDMA_RPC_AUTH_ERROR:
		rc = rpcrdma_xdr_get_u32(x, &r->auth_stat);
		if (rc == 0 && !auth_stat_ok(r->auth_stat))
			rc = -EINVAL;
		return rc;
	default:
		return -EINVAL;
	}
}

int rpcrdma_rpc_decode_reply(struct rpcrdma_xdr *x, struct rpcrdma_rpc_reply *r)
{
	uint32_t type;

	if (!r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	struct xdri_mark m = xdri_mark(x);
	int rc = rpcrdma_xdr_get_u32(x, &r->xid);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &type);
	if (rc == 0 && type != RPCRDMA_RPC_REPLY)
		rc = -EINVAL;
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(x, &r->reply_stat);
	if (rc == 0) {
		if (r->reply_stat == RPCRDMA_RPC_MSG_ACCEPTED)
			rc = decode_accepted(x, r);
		else if (r->reply_stat == RPCRDMA_RPC_MSG_DENIED)
			rc = decode_denied(x, r);
		else
			rc = -EINVAL;
	}
	if (rc)
		xdri_restore(x, m);
	return rc;
}

int rpcrdma_rpc_peek(const struct rpcrdma_xdr *x, uint32_t *xid, uint32_t *msg_type)
{
	struct rpcrdma_xdr c = *x;
	uint32_t id, type;

	int rc = rpcrdma_xdr_get_u32(&c, &id);
	if (rc == 0)
		rc = rpcrdma_xdr_get_u32(&c, &type);
	if (rc)
		return rc;
	if (type != RPCRDMA_RPC_CALL && type != RPCRDMA_RPC_REPLY)
		return -EINVAL;
	if (xid)
		*xid = id;
	if (msg_type)
		*msg_type = type;
	return 0;
}

static void reply_init(struct rpcrdma_rpc_reply *r, uint32_t xid, uint32_t stat)
{
	memset(r, 0, sizeof(*r));
	r->xid = xid;
	r->reply_stat = stat;
	r->verf.flavor = RPCRDMA_RPC_AUTH_NONE;
}

void rpcrdma_rpc_reply_accepted(struct rpcrdma_rpc_reply *r, uint32_t xid, uint32_t accept_stat)
{
	reply_init(r, xid, RPCRDMA_RPC_MSG_ACCEPTED);
	r->accept_stat = accept_stat;
}

void rpcrdma_rpc_reply_prog_mismatch(struct rpcrdma_rpc_reply *r, uint32_t xid, uint32_t low,
				     uint32_t high)
{
	reply_init(r, xid, RPCRDMA_RPC_MSG_ACCEPTED);
	r->accept_stat = RPCRDMA_RPC_PROG_MISMATCH;
	r->mismatch_low = low;
	r->mismatch_high = high;
}

void rpcrdma_rpc_reply_rpc_mismatch(struct rpcrdma_rpc_reply *r, uint32_t xid, uint32_t low,
				    uint32_t high)
{
	reply_init(r, xid, RPCRDMA_RPC_MSG_DENIED);
	r->reject_stat = RPCRDMA_RPC_RPC_MISMATCH;
	r->mismatch_low = low;
	r->mismatch_high = high;
}

void rpcrdma_rpc_reply_auth_error(struct rpcrdma_rpc_reply *r, uint32_t xid, uint32_t auth_stat)
{
	reply_init(r, xid, RPCRDMA_RPC_MSG_DENIED);
	r->reject_stat = RPCRDMA_RPC_AUTH_ERROR;
	r->auth_stat = auth_stat;
}

static int deny(struct rpcrdma_rpc_reply *r, const struct rpcrdma_rpc_call *c, uint32_t auth_stat)
{
	rpcrdma_rpc_reply_auth_error(r, c->xid, auth_stat);
	return 1;
}

static bool verf_is_empty_none(const struct rpcrdma_rpc_auth *v)
{
	return v->flavor == RPCRDMA_RPC_AUTH_NONE && v->len == 0;
}

int rpcrdma_rpc_check_call(const struct rpcrdma_rpc_call *c, uint32_t flavors,
			   struct rpcrdma_rpc_reply *r)
{
	if (!c || !r)
		return -EINVAL;
	/* RFC 5531 §9: rpcvers must be 2; the reply names the range we do. */
	if (c->rpcvers != RPCRDMA_RPC_VERS) {
		rpcrdma_rpc_reply_rpc_mismatch(r, c->xid, RPCRDMA_RPC_VERS, RPCRDMA_RPC_VERS);
		return 1;
	}
	uint32_t f = c->cred.flavor;
	if (f >= 32 || !(flavors & RPCRDMA_RPC_FLAVOR_BIT(f)))
		return deny(r, c, RPCRDMA_RPC_AUTH_BADCRED);
	switch (f) {
	case RPCRDMA_RPC_AUTH_NONE:
		/* RFC 5531 §10.1 recommends an empty body; like the Linux
		 * server we refuse anything else. */
		if (c->cred.len != 0)
			return deny(r, c, RPCRDMA_RPC_AUTH_BADCRED);
		break;
	case RPCRDMA_RPC_AUTH_SYS: {
		struct rpcrdma_rpc_authsys s;
		if (rpcrdma_rpc_auth_get_sys(&c->cred, &s) != 0)
			return deny(r, c, RPCRDMA_RPC_AUTH_BADCRED);
		break;
	}
	default:
		/* Accepted by the caller's mask: the caller verifies it. */
		return 0;
	}
	/* RFC 5531 §10.1/§10.2: AUTH_NONE and AUTH_SYS calls carry an
	 * AUTH_NONE verifier. */
	if (!verf_is_empty_none(&c->verf))
		return deny(r, c, RPCRDMA_RPC_AUTH_BADVERF);
	return 0;
}

const char *rpcrdma_rpc_accept_stat_name(uint32_t s)
{
	static const char *const names[] = {
	    "SUCCESS",      "PROG_UNAVAIL", "PROG_MISMATCH",
	    "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR",
	};
	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *rpcrdma_rpc_auth_stat_name(uint32_t s)
{
	static const char *const names[] = {
	    "AUTH_OK",           "AUTH_BADCRED",           "AUTH_REJECTEDCRED",     "AUTH_BADVERF",
	    "AUTH_REJECTEDVERF", "AUTH_TOOWEAK",           "AUTH_INVALIDRESP",      "AUTH_FAILED",
	    "AUTH_KERB_GENERIC", "AUTH_TIMEEXPIRE",        "AUTH_TKT_FILE",         "AUTH_DECODE",
	    "AUTH_NET_ADDR",     "RPCSEC_GSS_CREDPROBLEM", "RPCSEC_GSS_CTXPROBLEM",
	};
	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
