/* SPDX-License-Identifier: MIT */
/* Shared definitions for every public rpcrdma header. */
#ifndef RPCRDMA_COMMON_H
#define RPCRDMA_COMMON_H

#include <errno.h>

#ifdef __cplusplus
#define RPCRDMA_EXTERN_C_BEGIN extern "C" {
#define RPCRDMA_EXTERN_C_END   }
#else
#define RPCRDMA_EXTERN_C_BEGIN
#define RPCRDMA_EXTERN_C_END
#endif

/* Error codes. Every function returns 0 or a negative errno, and
 * rpcrdma_strerror() (client.h) names each. Two errnos Linux has no other
 * use for here say what a connect found when the peer answered the MPA
 * request (RFC 5044 §7.1) with something that is not an MPA reply; when
 * the provider cannot tell what the peer is, the connect fails -EPROTO
 * ("peer is not an RPC-over-RDMA server (MPA handshake failed)"). */
#define RPCRDMA_EPEER_HTTP   EMEDIUMTYPE     /* the peer answered like an HTTP server */
#define RPCRDMA_EPEER_ONCRPC ESOCKTNOSUPPORT /* it sent an ONC RPC record (RPC over TCP) */

/* Symbols are hidden by default (-fvisibility=hidden); RPCRDMA_API marks the
 * public ones, and src/librpcrdma.map versions them. */
#define RPCRDMA_API __attribute__((visibility("default")))

#endif
