/* SPDX-License-Identifier: MIT */
/*
 * Internal hooks of the client and server used by the tests in tests/xprt
 * (hidden symbols: tests link the object libraries directly).
 */
#ifndef RPCRDMA_API_INT_H
#define RPCRDMA_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/client.h"
#include "rpcrdma/provider.h"
#include "rpcrdma/server.h"

/* Called (under the client's lock) with the transport header of every call
 * just before it is posted, and the RPC message length. */
struct clnt_testhook {
	void (*on_send)(void *arg, const uint8_t *hdr, size_t hdr_len, size_t msg_len);
	void *arg;
};

void rpcrdma_clnt_set_testhook(struct rpcrdma_clnt *c, const struct clnt_testhook *h);
/* Drop the connection as if the network failed (the client reconnects). */
int rpcrdma_clnt_test_disconnect(struct rpcrdma_clnt *c);

/* Server: on_recv is called with every received message (before any
 * check). Fault injection (fault tests): on_pull right after the RDMA Reads
 * of a call's Read chunks were posted, on_reply_writes right after the
 * RDMA Writes of a reply (Write or Reply chunk) were posted, before its
 * Send; returning true drops the connection exactly there. Called with the
 * server's lock held. */
struct svc_testhook {
	void (*on_recv)(void *arg, const uint8_t *msg, size_t len);
	bool (*on_pull)(void *arg, uint32_t xid);
	bool (*on_reply_writes)(void *arg, uint32_t xid);
	void *arg;
};
void rpcrdma_svc_set_testhook(struct rpcrdma_svc *s, const struct svc_testhook *h);

/* Between server.c and tirpc_svc.c. */
struct rpcrdma_rpc_reply;
int svc_reply_raw(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		  void *res);
/* End a request without any reply (an rpcgen procedure that returned NULL). */
void svc_req_drop(struct rpcrdma_svc_req *r);
void svc_tirpc_dispatch(struct rpcrdma_svc_req *r, rpcrdma_svc_tirpc_dispatch_t fn);

/* Between client.c and tirpc_clnt.c: the Reply chunk size the CLIENT
 * adapter offers (RPCRDMA_CLNT_OPT_TIRPC_REPLY). */
uint32_t clnt_tirpc_reply_size(const struct rpcrdma_clnt *c);

/* Shared by client.c, server.c and backchannel.c (api_common.c). */

/* CLOCK_MONOTONIC in nanoseconds: deadlines and timeouts. */
uint64_t api_now_ns(void);

/* The accept_stat an error reply carries: SUCCESS, PROG_MISMATCH (it needs
 * the version range) and unknown values become SYSTEM_ERR (RFC 5531 §9). */
uint32_t api_error_accept_stat(uint32_t accept_stat);

/* RDMA Write @len bytes at @base (registered as @lkey) into the segments
 * @seg[0..n), rewriting their lengths to what was written (RFC 8166
 * §3.4.6, §3.4.7); a segment left empty gets no Write. @tmpl gives wr_id
 * and flags; @post posts one Write WR for @ctx (lock held by the caller).
 * 0, -EMSGSIZE when the segments hold less than @len, or what @post
 * returned. */
struct rpcrdma1_segment;
int api_write_segments(const struct rpcrdma_send_wr *tmpl,
		       int (*post)(void *ctx, struct rpcrdma_send_wr *wr), void *ctx,
		       const uint8_t *base, uint32_t lkey, uint64_t len,
		       struct rpcrdma1_segment *seg, uint32_t n);

/* Fill @wr (and its one @sge) with a signaled RDMA Read of segment @sg
 * into @dst (registered as @lkey); an empty segment gets no SGE. */
void api_read_wr(struct rpcrdma_send_wr *wr, struct rpcrdma_sge *sge, uint64_t wr_id,
		 const struct rpcrdma1_segment *sg, uint8_t *dst, uint32_t lkey);

#endif
