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

/* RPC-over-RDMA version policy of a client or server (docs/rpcrdma2.md). */
enum rpcrdma_version_policy {
	/* Version One only (RFC 8166), the default. A server answers a
	 * Version Two call with ERR_VERS 1..1. */
	RPCRDMA_VERSION_1 = 0,
	/* Client: Version Two preferred; against a server that answers
	 * ERR_VERS, Version One on the same connection. */
	RPCRDMA_VERSION_AUTO = 1,
	/* Client: Version Two only (calls fail with -EPROTONOSUPPORT against
	 * a Version One server). Server: Version Two capable, answering every
	 * call in the version it came in. */
	RPCRDMA_VERSION_2 = 2,
};

/* Symbols are hidden by default (-fvisibility=hidden); RPCRDMA_API marks the
 * public ones, and src/librpcrdma.map versions them. */
#define RPCRDMA_API __attribute__((visibility("default")))

#endif
