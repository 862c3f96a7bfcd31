/* SPDX-License-Identifier: MIT */
/*
 * rpcbind (RFC 1833) for RPC-over-RDMA: finding a server's port by
 * program and version.
 *
 * RFC 8166 §9 (and RFC 5666 §12 before it) has RPC-over-RDMA servers
 * register with rpcbind under the netids "rdma" (IPv4) and "rdma6"
 * (IPv6), with the universal address of the RDMA listener
 * ("h1.h2.h3.h4.p1.p2", or an IPv6 address followed by ".p1.p2"), and
 * clients fall back to port 20049 (RPCRDMA_DEFAULT_PORT) when there is no
 * such entry.
 *
 * The server side is an option of rpcrdma_svc_create()
 * (RPCRDMA_SVC_OPT_RPCBIND in server.h): rpcrdma_svc_start() registers
 * every program/version registered on the server, rpcrdma_svc_stop()
 * unregisters them. The client side is below.
 *
 * Neither needs an "rdma" line in /etc/netconfig: the library speaks the
 * rpcbind protocol itself (libtirpc's clnt_vc), to the local rpcbind over
 * its AF_LOCAL socket (/run/rpcbind.sock, where rpcbind takes SET and
 * UNSET from local users) and to a remote one over TCP port 111.
 *
 * Every function returns 0 or a negative errno.
 */
#ifndef RPCRDMA_RPCBIND_H
#define RPCRDMA_RPCBIND_H

#include <stdint.h>

#include "rpcrdma/client.h"
#include "rpcrdma/common.h"

RPCRDMA_EXTERN_C_BEGIN

#define RPCRDMA_RPCB_NETID  "rdma"  /* RFC 8166 §9: IPv4 */
#define RPCRDMA_RPCB_NETID6 "rdma6" /* RFC 8166 §9: IPv6 */

/*
 * Ask the rpcbind on @host (name or address; NULL or "" means localhost)
 * for the port of @prog/@vers under the netid of @host's address family
 * ("rdma" for IPv4, "rdma6" for IPv6), waiting at most @timeout_ms (0:
 * 5000) for the connection and the answer. rpcbind's GETADDR answers for
 * the netid of the transport the question came on (RFC 1833 §2.2), so the
 * entries are read with RPCBPROC_DUMP (version 4, else 3) and matched
 * here. *@port is set on success only.
 * -ENOENT unknown host; -ENXIO rpcbind has no such entry; -ECONNREFUSED,
 * -ETIMEDOUT or -EHOSTUNREACH when rpcbind cannot be reached; -EPROTO
 * when it answered something else than a list of entries.
 */
RPCRDMA_API int rpcrdma_rpcb_getport(const char *host, uint32_t prog, uint32_t vers,
				     uint32_t timeout_ms, uint16_t *port);

/*
 * rpcrdma_clnt_create() with the port looked up by rpcrdma_rpcb_getport()
 * (within @opts' connect_timeout_ms), or RPCRDMA_DEFAULT_PORT (20049)
 * when rpcbind has no entry or cannot be reached (RFC 8166 §9). The client
 * connects to the address the lookup used, so a name that resolves to
 * both families gives the port registered for the family connected to.
 * Errors as rpcrdma_clnt_create().
 */
RPCRDMA_API int rpcrdma_clnt_create_rpcb(const char *host, uint32_t prog, uint32_t vers,
					 const struct rpcrdma_clnt_opts *opts,
					 struct rpcrdma_clnt **out);

RPCRDMA_EXTERN_C_END

#endif
