// SPDX-License-Identifier: MIT
/*
 * The Connection Configuration Protocol's two structs (RFC 5666 §6.2;
 * ccp.h): three XDR uint32 each, nothing variable. Hostile input: only
 * the length is checked, and it is checked before anything is read; any
 * value decodes, and the roles judge them (ccp_svc.c, ccp_clnt.c).
 */
#include <errno.h>

#include "transport/ccp.h"
#include "util/be.h"

int ccp_decode(const void *buf, size_t len, uint32_t w[3])
{
	const uint8_t *p = buf;

	if (!buf || len < RPCRDMA_CCP_SIZE)
		return -EBADMSG;
	w[0] = get_be32(p);
	w[1] = get_be32(p + 4);
	w[2] = get_be32(p + 8);
	return 0;
}

int ccp_encode(void *buf, size_t room, const uint32_t w[3])
{
	uint8_t *p = buf;

	if (!buf || room < RPCRDMA_CCP_SIZE)
		return -EMSGSIZE;
	put_be32(p, w[0]);
	put_be32(p + 4, w[1]);
	put_be32(p + 8, w[2]);
	return 0;
}

int ccp_req_decode(const void *buf, size_t len, struct ccp_req *r)
{
	uint32_t w[3];
	int rc = ccp_decode(buf, len, w);

	if (rc)
		return rc;
	r->maxcall_sendsize = w[0];
	r->maxreply_sendsize = w[1];
	r->maxrdmaread = w[2];
	return 0;
}

int ccp_req_encode(void *buf, size_t room, const struct ccp_req *r)
{
	const uint32_t w[3] = {r->maxcall_sendsize, r->maxreply_sendsize, r->maxrdmaread};

	return ccp_encode(buf, room, w);
}

int ccp_reply_decode(const void *buf, size_t len, struct ccp_reply *r)
{
	uint32_t w[3];
	int rc = ccp_decode(buf, len, w);

	if (rc)
		return rc;
	r->maxcall_sendsize = w[0];
	r->align = w[1];
	r->maxrdmaread = w[2];
	return 0;
}

int ccp_reply_encode(void *buf, size_t room, const struct ccp_reply *r)
{
	const uint32_t w[3] = {r->maxcall_sendsize, r->align, r->maxrdmaread};

	return ccp_encode(buf, room, w);
}

/* Through the stream as twelve opaque bytes: the stream's own bounds
 * check (a truncated argument fails XDR_GETBYTES), then ours. */
static bool_t stream(XDR *x, uint32_t w[3])
{
	uint8_t b[RPCRDMA_CCP_SIZE];

	switch (x->x_op) {
	case XDR_ENCODE:
		return !ccp_encode(b, sizeof(b), w) && xdr_opaque(x, (char *)b, sizeof(b));
	case XDR_DECODE:
		return xdr_opaque(x, (char *)b, sizeof(b)) && !ccp_decode(b, sizeof(b), w);
	default:
		return TRUE; /* XDR_FREE: nothing was allocated */
	}
}

bool_t xdr_ccp_req(XDR *x, struct ccp_req *r)
{
	uint32_t w[3] = {r->maxcall_sendsize, r->maxreply_sendsize, r->maxrdmaread};

	if (!stream(x, w))
		return FALSE;
	r->maxcall_sendsize = w[0];
	r->maxreply_sendsize = w[1];
	r->maxrdmaread = w[2];
	return TRUE;
}

bool_t xdr_ccp_reply(XDR *x, struct ccp_reply *r)
{
	uint32_t w[3] = {r->maxcall_sendsize, r->align, r->maxrdmaread};

	if (!stream(x, w))
		return FALSE;
	r->maxcall_sendsize = w[0];
	r->align = w[1];
	r->maxrdmaread = w[2];
	return TRUE;
}
