/* SPDX-License-Identifier: MIT */
/*
 * RFC 8797 RDMA-CM private data for RPC-over-RDMA Version One: the 8 bytes
 * each side puts in its connection request / accept (carried by MPA
 * private data on iWARP) to advertise its inline sizes and whether it
 * accepts Send With Invalidate.
 *
 * Internal to the library. Pure byte codec: no allocation, no state.
 */
#ifndef RPCRDMA_TRANSPORT_CONNECT_PRIVATE_H
#define RPCRDMA_TRANSPORT_CONNECT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/rpcrdma1_wire.h"

struct rpcrdma1_cm_private {
	/* RFC 8797 §4 "Remote Invalidation": the sender of this private data
	 * accepts Send With Invalidate. */
	bool remote_invalidate;
	/* Largest RPC-over-RDMA message the sender will Send, in bytes. */
	uint32_t send_size;
	/* Largest message the sender can receive (its receive buffers). */
	uint32_t recv_size;
};

/* 1024 / 1024 / no remote invalidation: what a peer without (valid)
 * private data is assumed to have (RFC 8797 §4.1, RFC 8166 §3.3.2). */
void rpcrdma1_cm_private_defaults(struct rpcrdma1_cm_private *p);

/*
 * Decode @len bytes of received private data. Bytes past the first 8 are
 * ignored (a later version may append fields).
 *   0        *out holds the peer's advertisement
 *   -EINVAL  too short, wrong magic or a version other than 1; *out holds
 *            the defaults (as Linux does: the connection goes ahead)
 * @buf may be NULL when @len is 0 (no private data at all).
 */
int rpcrdma1_cm_private_decode(const void *buf, size_t len, struct rpcrdma1_cm_private *out);

/*
 * Encode into @buf (@len >= RPCRDMA1_CM_SIZE bytes).
 *   0          8 bytes written
 *   -EMSGSIZE  @len < 8
 *   -EINVAL    a size is not a multiple of 1024 in 1024..262144 (the
 *              code is one byte, bytes / 1024 - 1; rounding would make us
 *              advertise a size we do not have)
 */
int rpcrdma1_cm_private_encode(void *buf, size_t len, const struct rpcrdma1_cm_private *in);

/* The one-byte size code: bytes / 1024 - 1 (-EINVAL as above). */
int rpcrdma1_cm_size_encode(uint32_t bytes, uint8_t *code);
/* (code + 1) * 1024: 1 KiB .. 256 KiB. */
uint32_t rpcrdma1_cm_size_decode(uint8_t code);

#endif
