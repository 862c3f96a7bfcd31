/* SPDX-License-Identifier: MIT */
/*
 * The server's duplicate request cache (RPCRDMA_SVC_OPT_DRC, server.h).
 * RPC-over-RDMA is reliable, so a client sends a call again only on a new
 * connection, with the same XID (RFC 8166 §3.3): after the reply to the
 * first transmission was lost with its connection. A non-idempotent
 * procedure must not run twice for it; the cache answers it instead.
 *
 * Key: XID, the client's address without its port (a reconnect gets a
 * new port), program, version, procedure, and the CRC32c of the whole
 * RPC call message (so an XID reused for another call is a miss).
 *   miss                  an entry "in progress" is made; the call runs
 *   hit, in progress      the retransmission waits in the entry (no
 *                         handler run) and is answered with the first
 *                         call's reply when that is made; a newer
 *                         retransmission replaces it (the older is
 *                         dropped: stats drc_inprogress_drops)
 *   hit, done             answered from the cache (drc_hits)
 * What is cached: the reply's accept status and its results encoded
 * (RFC 4506), with each DDP-eligible bulk item (struct rpcrdma_bulk) kept
 * apart, so a replay places it by Write chunk exactly as the first reply
 * did. Bounded by entries and bytes, least recently used first out
 * (drc_evictions); a reply larger than an eighth of the byte bound is not
 * kept (its retransmission runs the handler again).
 *
 * Locking: the cache has its own lock, taken after the server's when
 * both are held; replies are sent with it dropped.
 */
#ifndef RPCRDMA_TRANSPORT_DRC_H
#define RPCRDMA_TRANSPORT_DRC_H

#include <rpc/xdr.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/rpc.h"

struct svc_drc;
struct svc_drc_entry;
struct rpcrdma_svc_req;

/* Default bounds (server.h documents them). */
#define SVC_DRC_DEF_ENTRIES 1024u
#define SVC_DRC_DEF_BYTES   (16u << 20)

/* Counters (added to the server's stats). */
struct svc_drc_stats {
	uint64_t hits, inprogress_drops, evictions, entries, bytes;
};

/* What identifies a call to the cache. */
struct svc_drc_key {
	uint32_t xid, prog, vers, proc, crc;
	uint8_t family;
	uint8_t addr[16]; /* IPv4 (4 bytes) or IPv6, port left out */
};

/* Create a cache of at most @max_entries replies and @max_bytes of reply
 * data (0: the defaults). 0 or -ENOMEM. */
int svc_drc_new(uint32_t max_entries, uint64_t max_bytes, struct svc_drc **out);
/* Free @d and every entry (requests parked in it are not touched: the
 * server is gone). */
void svc_drc_free(struct svc_drc *d);
void svc_drc_stats(struct svc_drc *d, struct svc_drc_stats *st);

/* The key of a call: @peer's address, the call's numbers, and the CRC32c
 * of its message @msg (@len bytes). */
void svc_drc_key(struct svc_drc_key *k, const struct sockaddr_storage *peer, uint32_t xid,
		 uint32_t prog, uint32_t vers, uint32_t proc, const void *msg, size_t len);

enum svc_drc_verdict {
	SVC_DRC_RUN = 0, /* run the call; *@e (NULL: not cached) takes its reply */
	SVC_DRC_PARKED,  /* a duplicate of a call in progress: @r waits in it */
	SVC_DRC_REPLAY,  /* answer @r from *@e (svc_drc_replay, then put) */
};

/* Look @k up for request @r (no lock held). *@dropped: an older parked
 * duplicate the caller must drop (svc_req_drop), or NULL. */
enum svc_drc_verdict svc_drc_lookup(struct svc_drc *d, const struct svc_drc_key *k,
				    struct rpcrdma_svc_req *r, struct svc_drc_entry **e,
				    struct rpcrdma_svc_req **dropped);

/* The call of in-progress entry @e is answered with @rep and results
 * @xres/@res: keep them (when they fit). *@waiter: the duplicate parked
 * meanwhile, or NULL. True: answer *@waiter from @e, then svc_drc_put();
 * false: the caller's reference is gone, and a *@waiter is to be dropped
 * (the reply could not be kept). */
bool svc_drc_done(struct svc_drc *d, struct svc_drc_entry *e, const struct rpcrdma_rpc_reply *rep,
		  xdrproc_t xres, void *res, struct rpcrdma_svc_req **waiter);
/* The call of @e ended without a reply (dropped): forget @e; its parked
 * duplicate, if any, is handed back to be dropped too. */
void svc_drc_abandon(struct svc_drc *d, struct svc_drc_entry *e, struct rpcrdma_svc_req **waiter);

/* The reply kept in done entry @e (for @r): *@rep with r's XID, and the
 * results routine and argument to send (xres NULL: no results). */
void svc_drc_reply_of(const struct svc_drc_entry *e, uint32_t xid, struct rpcrdma_rpc_reply *rep,
		      xdrproc_t *xres, void **arg);
/* Drop the reference a lookup (REPLAY) or done (waiter) gave. */
void svc_drc_put(struct svc_drc *d, struct svc_drc_entry *e);

#endif
