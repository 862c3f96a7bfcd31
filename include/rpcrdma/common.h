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
	 * ERR_VERS, Version One on the same connection; against one that
	 * leaves the first Version Two call unanswered until its deadline
	 * (that call fails -ETIMEDOUT), Version One on a new connection and
	 * every later one (docs/rpcrdma2.md reading 3). */
	RPCRDMA_VERSION_AUTO = 1,
	/* Client: Version Two only (calls fail with -EPROTONOSUPPORT against
	 * a Version One server). Server: Version Two capable, answering every
	 * call in the version it came in. */
	RPCRDMA_VERSION_2 = 2,
};

/* Symbols are hidden by default (-fvisibility=hidden); RPCRDMA_API marks the
 * public ones, and src/librpcrdma.map versions them. */
#define RPCRDMA_API __attribute__((visibility("default")))

RPCRDMA_EXTERN_C_BEGIN

/*
 * Debug log: what happens per connection, for both the client and the
 * server, as one line of text per event. Off by default.
 *
 *   RPCRDMA_LOG_ERR    connections lost, refused or rejected, completion
 *                      errors, Terminates, RDMA_ERRORs sent and received
 *   RPCRDMA_LOG_INFO   and connects, accepts (MPA revision, CRC, IRD/ORD,
 *                      RFC 8797 private data and the inline sizes agreed,
 *                      credits granted), disconnects, reconnects, changes
 *                      of the credit grant a client receives
 *   RPCRDMA_LOG_DEBUG  and every call retransmitted after a reconnect
 *
 * The environment variable RPCRDMA_DEBUG, read once when the library is
 * loaded, sets the starting level (0-3 or off, err, info, debug); its
 * messages go to stderr as "rpcrdma: <message>". When the level is off a
 * log point costs one compare of a global: nothing is formatted.
 */
enum rpcrdma_log_level {
	RPCRDMA_LOG_OFF = 0,
	RPCRDMA_LOG_ERR = 1,
	RPCRDMA_LOG_INFO = 2,
	RPCRDMA_LOG_DEBUG = 3,
};

/* A log sink: @msg is one message without a trailing newline, valid during
 * the call. Called from library threads (progress, leader) with the log's
 * own lock held, one message at a time; it must not call
 * rpcrdma_set_log(). */
typedef void (*rpcrdma_log_fn)(int level, const char *msg, void *arg);

/*
 * Send messages up to @level to @fn(level, msg, @arg), or to stderr when
 * @fn is NULL; @level RPCRDMA_LOG_OFF turns the log off. Replaces the
 * RPCRDMA_DEBUG setting for the whole process. Once this returns the
 * previous sink is never called again. -EINVAL if @level is not one of
 * enum rpcrdma_log_level.
 */
RPCRDMA_API int rpcrdma_set_log(rpcrdma_log_fn fn, void *arg, int level);

RPCRDMA_EXTERN_C_END

#endif
