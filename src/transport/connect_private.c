// SPDX-License-Identifier: MIT
/*
 * RFC 8797 private data codec. Byte layout (RFC 8797 §4), network order:
 *   magic(4) = 0xf6ab0e18, version(1) = 1, flags(1), send size code(1),
 *   receive size code(1).
 */
#include "transport/connect_private.h"

#include <errno.h>

#include "util/be.h"

void rpcrdma1_cm_private_defaults(struct rpcrdma1_cm_private *p)
{
	p->remote_invalidate = false;
	p->send_size = RPCRDMA1_CM_DEFAULT_SIZE;
	p->recv_size = RPCRDMA1_CM_DEFAULT_SIZE;
}

uint32_t rpcrdma1_cm_size_decode(uint8_t code)
{
	return ((uint32_t)code + 1u) * RPCRDMA1_CM_SIZE_UNIT;
}

int rpcrdma1_cm_size_encode(uint32_t bytes, uint8_t *code)
{
	if (bytes < RPCRDMA1_CM_SIZE_UNIT || bytes > RPCRDMA1_CM_SIZE_MAX ||
	    bytes % RPCRDMA1_CM_SIZE_UNIT)
		return -EINVAL;
	*code = (uint8_t)(bytes / RPCRDMA1_CM_SIZE_UNIT - 1u);
	return 0;
}

int rpcrdma1_cm_private_decode(const void *buf, size_t len, struct rpcrdma1_cm_private *out)
{
	const uint8_t *p = buf;

	rpcrdma1_cm_private_defaults(out);
	if (!p || len < RPCRDMA1_CM_SIZE)
		return -EINVAL;
	if (get_be32(p) != RPCRDMA1_CM_MAGIC || p[4] != RPCRDMA1_CM_VERSION)
		return -EINVAL;
	/* Other flag bits are reserved; a version 1 receiver ignores them. */
	out->remote_invalidate = (p[5] & RPCRDMA1_CM_FLAG_REMOTE_INV) != 0;
	out->send_size = rpcrdma1_cm_size_decode(p[6]);
	out->recv_size = rpcrdma1_cm_size_decode(p[7]);
	return 0;
}

int rpcrdma1_cm_private_encode(void *buf, size_t len, const struct rpcrdma1_cm_private *in)
{
	uint8_t *p = buf;
	uint8_t send_code, recv_code;

	if (!p || len < RPCRDMA1_CM_SIZE)
		return -EMSGSIZE;
	if (rpcrdma1_cm_size_encode(in->send_size, &send_code) ||
	    rpcrdma1_cm_size_encode(in->recv_size, &recv_code))
		return -EINVAL;
	put_be32(p, RPCRDMA1_CM_MAGIC);
	p[4] = RPCRDMA1_CM_VERSION;
	p[5] = in->remote_invalidate ? RPCRDMA1_CM_FLAG_REMOTE_INV : 0;
	p[6] = send_code;
	p[7] = recv_code;
	return 0;
}
