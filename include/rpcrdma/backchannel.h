/* SPDX-License-Identifier: MIT */
/*
 * Bidirectional RPC-over-RDMA (RFC 8167): the server calls the client over
 * the connection the client opened (how NFSv4.1 callbacks travel).
 *
 * Roles. On one connection each endpoint is requester and responder at
 * once. The client (client.h) keeps calling forward; it also registers
 * callback programs whose procedures the server calls in the reverse
 * direction, dispatched like a server's. The server (server.h) keeps
 * answering; it also holds a handle for "the client on this connection",
 * struct rpcrdma_svc_client, on which it makes synchronous or asynchronous
 * reverse calls.
 *
 * Direction (RFC 8167 §2, §4.1). Every received message is classified by
 * the msg_type of its RPC message (CALL or REPLY), inline or, for
 * RDMA_NOMSG, by its chunks (a Position-Zero Read chunk carries a Call, a
 * Reply chunk alone a Reply) -- except that in Version One a forward reply
 * too may come in a Position-Zero Read chunk (reliable replies): on the
 * client, one whose XID is a forward call's on the wire is pulled first
 * and goes where its msg_type says (docs/reliable-replies.md §3).
 * Forward and reverse XIDs are separate spaces: the same XID may be live
 * in both directions. Credits are accounted per
 * direction (§4.1): forward grants come in forward replies, reverse
 * requests in reverse calls and reverse grants in reverse replies; the
 * credit value of a message whose direction cannot be told (RDMA_ERROR) is
 * ignored.
 *
 * Receive buffers (§4.3). A client created with rpcrdma_clnt_create_bc()
 * posts `credits` receives for its forward replies plus `rev_credits` for
 * reverse calls; a server with rpcrdma_svc_bc_init() posts, on every
 * connection, `credits` receives for forward calls plus `rev_slots` for the
 * replies to its reverse calls. Both sets are posted again on every new
 * connection. Inline thresholds are the forward ones (§4.2): a reverse call
 * fits the server's send threshold, its reply the client's.
 *
 * The gate (§6). A server must not send a reverse call before the client's
 * upper layer has said it is ready on that connection (NFSv4.1 does it with
 * CREATE_SESSION / BIND_CONN_TO_SESSION). Here:
 *   - the client calls rpcrdma_clnt_bc_enable(): it sends one forward RPC,
 *     program RPCRDMA_BC_PROG version 1 procedure 1 (BC_ENABLE), with its
 *     client identity (64 random bits, the same across reconnects), its
 *     reverse credits and whether it accepts reverse chunks. The server
 *     answers it inside the library (rpcrdma_svc_bc_init() registers the
 *     program) and from then on that connection is enabled. After a
 *     reconnect the client library sends BC_ENABLE again by itself (as an
 *     NFSv4.1 client sends BIND_CONN_TO_SESSION), which binds the same
 *     server-side handle to the new connection;
 *   - or a server upper layer that has its own signal (as nfsd has
 *     CREATE_SESSION) calls rpcrdma_svc_client_enable() itself.
 * Until then every reverse call on that handle fails at once with
 * -ENOPROTOOPT and nothing is sent.
 *
 * Reverse chunks (§5.3). Read chunks (bulk arguments, Long Calls) and
 * Reply chunks (Long Replies) work in the reverse direction as forward,
 * when both sides allow them (default). Either side can switch them off:
 * a server then sends only Short reverse calls (one that would need a
 * chunk fails locally with -EMSGSIZE); a client then answers any reverse
 * call carrying a chunk with RDMA_ERROR / ERR_CHUNK (the server's call
 * fails with -EREMOTEIO) and sends only Short replies. Write chunks are not
 * used in the reverse direction: result bulk items travel inline or in the
 * Reply chunk.
 *
 * Retransmission (§5.4). When the connection is lost, reverse calls on
 * the wire wait for the client to reconnect and re-enable, then go again
 * with the same XID. A call that waits longer than `conn_wait_ms` for a
 * connection, or longer than its timeout in all, fails with -ETIMEDOUT.
 *
 * Error codes of a reverse call: those of client.h (-ETIMEDOUT,
 * -EREMOTEIO, -EPFNOSUPPORT, -EOPNOTSUPP, -EBADMSG, -EMSGSIZE, ...) plus
 *   -ENOPROTOOPT  the backchannel is not enabled on this client's
 *                 connection (§6): nothing was sent
 *   -ECANCELED    the server is being destroyed
 *
 * Every function returns 0 or a negative errno.
 */
#ifndef RPCRDMA_BACKCHANNEL_H
#define RPCRDMA_BACKCHANNEL_H

#include <rpc/xdr.h>
#include <stdint.h>

#include "rpcrdma/client.h"
#include "rpcrdma/common.h"
#include "rpcrdma/server.h"

RPCRDMA_EXTERN_C_BEGIN

/* The transport's own gate program (a number in the RFC 5531 range for
 * locally administered programs, 0x20000000-0x3fffffff). */
#define RPCRDMA_BC_PROG        0x2b1d1001u
#define RPCRDMA_BC_VERS        1u
#define RPCRDMA_BC_PROC_NULL   0u
#define RPCRDMA_BC_PROC_ENABLE 1u
/* Most reverse credits / slots. */
#define RPCRDMA_BC_MAX_CREDITS 64u

enum rpcrdma_bc_opt_mask {
	RPCRDMA_BC_OPT_CREDITS = 1u << 0,   /* credits */
	RPCRDMA_BC_OPT_CHUNKS = 1u << 1,    /* chunks */
	RPCRDMA_BC_OPT_TIMEOUT = 1u << 2,   /* timeout_ms */
	RPCRDMA_BC_OPT_CONN_WAIT = 1u << 3, /* conn_wait_ms */
	RPCRDMA_BC_OPT_INLINE = 1u << 4,    /* inline */
};

/* Backchannel options of a client or a server; zeroed (or NULL) means all
 * defaults. */
struct rpcrdma_bc_opts {
	uint32_t comp_mask; /* RPCRDMA_BC_OPT_* of the fields set */
	/* Client: reverse credits granted, i.e. receives posted for reverse
	 * calls and reverse calls it runs at once (default 2, as Linux).
	 * Server: reverse call slots per client, the reverse credits it asks
	 * for and the extra receives per connection (default 2). 1..64. */
	uint32_t credits;
	/* Chunks in the reverse direction (default 1: on). */
	int chunks;
	/* Server: default reverse call timeout (default 30000 ms, 0 =
	 * forever). */
	uint32_t timeout_ms;
	/* Server: how long a reverse call may wait for the client to
	 * reconnect (default 10000 ms). */
	uint32_t conn_wait_ms;
	/* Run the backchannel's work on the thread that drives the device,
	 * with no thread handoff (default 0: on the backchannel thread).
	 * Client: callback dispatch functions run on the thread that received
	 * the reverse call (a library thread or a caller waiting for its own
	 * reply); they must not block nor make synchronous calls on the same
	 * client (that thread is the one that would receive the reply; an
	 * asynchronous call is fine). Server: completion callbacks of
	 * asynchronous reverse calls run on the server's progress thread. */
	int inline_dispatch;
};

/* Counters of the reverse direction (the forward ones are struct
 * rpcrdma_xprt_stats). On a server: the requester's side, summed over
 * clients or for one client; on a client: the responder's side. */
struct rpcrdma_bc_stats {
	uint32_t comp_mask; /* reserved, 0 */
	/* requester (server) */
	uint64_t calls;         /* reverse calls started */
	uint64_t calls_sent;    /* Sends of reverse calls (retransmissions included) */
	uint64_t replies;       /* reverse replies matched to a call */
	uint64_t retransmits;   /* reverse calls sent again on a new connection */
	uint64_t credit_stalls; /* reverse calls that waited for a reverse credit */
	uint64_t timeouts;      /* reverse calls failed with -ETIMEDOUT */
	uint64_t gate_refusals; /* reverse calls refused before the gate (-ENOPROTOOPT) */
	uint64_t err_chunk_rx;  /* RDMA_ERROR / ERR_CHUNK answering a reverse call */
	uint64_t unmatched;     /* reverse replies matching no reverse call */
	/* responder (client) */
	uint64_t calls_received; /* reverse calls received */
	uint64_t replies_sent;   /* reverse replies (and RDMA_ERRORs) sent */
	uint64_t err_chunk_tx;   /* RDMA_ERROR / ERR_CHUNK sent (chunks off) */
	uint64_t dropped;        /* reverse calls dropped (no program, no slot, bad) */
	uint64_t enables;        /* BC_ENABLE sent (client) / accepted (server) */
	/* both */
	uint64_t short_msgs, long_calls, long_replies;
	uint64_t read_chunks, read_bytes, reply_chunks, reply_bytes;
	uint64_t inline_bytes_tx, inline_bytes_rx;
	uint64_t credits_ignored; /* credit values of undetermined direction (§4.1) */
	/* state (current) */
	uint32_t credits;         /* server: reverse grant now; client: reverse credits granted */
	uint32_t peer_credits;    /* client: the server's latest reverse credit request */
	uint32_t outstanding;     /* reverse calls on the wire / being answered now */
	uint32_t max_outstanding; /* high-water mark (monotonic) */
	uint32_t enabled;         /* 1: the gate is open on the current connection */
	uint32_t connected;       /* 1: a connection is bound */
};

/* ------------------------------------------------------------------ */
/* Client: callback programs                                           */
/* ------------------------------------------------------------------ */

struct rpcrdma_bc_req; /* opaque: one reverse call awaiting its reply */

/*
 * As rpcrdma_clnt_create(), with the backchannel resources of @bc (may be
 * NULL: defaults) set up from the first connection on. The gate stays
 * closed until rpcrdma_clnt_bc_enable().
 */
RPCRDMA_API int rpcrdma_clnt_create_bc(const char *host, uint16_t port, uint32_t prog,
				       uint32_t vers, const struct rpcrdma_clnt_opts *opts,
				       const struct rpcrdma_bc_opts *bc, struct rpcrdma_clnt **out);

/* Dispatch function of a callback program: called once per reverse call,
 * on the client's backchannel thread. It answers @req exactly once (now or
 * later, from any thread) with rpcrdma_bc_reply() or rpcrdma_bc_error(). */
typedef void (*rpcrdma_bc_dispatch_t)(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args,
				      void *ctx);

/* Register callback program @prog/@vers (before or after enabling).
 * -EEXIST, -ENOSPC, -EINVAL (not a client made by rpcrdma_clnt_create_bc). */
RPCRDMA_API int rpcrdma_clnt_bc_register(struct rpcrdma_clnt *clnt, uint32_t prog, uint32_t vers,
					 rpcrdma_bc_dispatch_t dispatch, void *ctx);

/*
 * Open the gate (§6): tell the server this connection takes reverse calls
 * (sends BC_ENABLE and waits for its reply), and keep doing so after every
 * reconnect. Returns the forward call's status (e.g. -EPFNOSUPPORT: the
 * server has no backchannel).
 */
RPCRDMA_API int rpcrdma_clnt_bc_enable(struct rpcrdma_clnt *clnt);

/* Reverse-direction counters of the client. */
RPCRDMA_API int rpcrdma_clnt_bc_stats(struct rpcrdma_clnt *clnt, struct rpcrdma_bc_stats *st);

/* Inside a callback dispatch. */
RPCRDMA_API uint32_t rpcrdma_bc_req_xid(const struct rpcrdma_bc_req *req);
RPCRDMA_API uint32_t rpcrdma_bc_req_prog(const struct rpcrdma_bc_req *req);
RPCRDMA_API uint32_t rpcrdma_bc_req_vers(const struct rpcrdma_bc_req *req);
RPCRDMA_API uint32_t rpcrdma_bc_req_proc(const struct rpcrdma_bc_req *req);
/* Decode the arguments (bulk items point into memory @req owns). */
RPCRDMA_API int rpcrdma_bc_getargs(struct rpcrdma_bc_req *req, xdrproc_t xargs, void *args);
/*
 * Answer SUCCESS with @xres(@res): inline, or into the server's Reply
 * chunk when too large (Long Reply, if chunks are on). Frees @req.
 * -EMSGSIZE (the server got ERR_CHUNK) when it fits nowhere; -ENOTCONN
 * when the connection the call came on is gone (the server sends it
 * again on the next one).
 */
RPCRDMA_API int rpcrdma_bc_reply(struct rpcrdma_bc_req *req, xdrproc_t xres, void *res);
/* Answer with an RPC accept_stat (PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR).
 * Frees @req. */
RPCRDMA_API int rpcrdma_bc_error(struct rpcrdma_bc_req *req, uint32_t accept_stat);

/* ------------------------------------------------------------------ */
/* Server: calling the client                                          */
/* ------------------------------------------------------------------ */

struct rpcrdma_svc_client; /* opaque: the client on a connection */

enum rpcrdma_bc_event {
	RPCRDMA_BC_EV_ENABLED = 1, /* the gate opened on a (new) connection */
	RPCRDMA_BC_EV_DOWN = 2,    /* its connection was lost */
};
typedef void (*rpcrdma_bc_event_t)(struct rpcrdma_svc_client *cl, enum rpcrdma_bc_event ev,
				   void *ctx);

/*
 * Give every connection of @svc a backchannel (call before
 * rpcrdma_svc_start): extra receives for reverse replies, the BC_ENABLE
 * program, a thread for reverse completions and timeouts. @cb (may be
 * NULL) runs on that thread on every gate opening and connection loss.
 */
RPCRDMA_API int rpcrdma_svc_bc_init(struct rpcrdma_svc *svc, const struct rpcrdma_bc_opts *opts,
				    rpcrdma_bc_event_t cb, void *ctx);

/* The client on the connection @req came on (never NULL once
 * rpcrdma_svc_bc_init was called). The handle stays valid until the
 * server is destroyed (each connection ever accepted keeps a small one
 * until then); after a reconnect and re-enable the handle the client first
 * enabled designates it on its new connection. */
RPCRDMA_API struct rpcrdma_svc_client *rpcrdma_svc_req_client(struct rpcrdma_svc_req *req);

/* Open the gate from the server's upper layer (its own protocol said the
 * client is ready, as NFSv4.1 CREATE_SESSION does): @credits is the
 * client's reverse grant if known (0: start at 1). */
RPCRDMA_API int rpcrdma_svc_client_enable(struct rpcrdma_svc_client *cl, uint32_t credits);

/* As rpcrdma_svc_client_enable(), naming the client by @id, the upper
 * layer's own identity of it (an NFSv4.1 server: its session, bound again
 * by BIND_CONN_TO_SESSION on a new connection). When another handle
 * already carries @id (the same client on an earlier connection), that
 * handle takes over @cl's connection: its reverse calls waiting for a
 * connection go now with their XIDs (§5.4), and *@out is it; otherwise
 * @cl carries @id from now on and *@out is @cl. @out may be NULL. */
RPCRDMA_API int rpcrdma_svc_client_enable_id(struct rpcrdma_svc_client *cl, uint64_t id,
					     uint32_t credits, struct rpcrdma_svc_client **out);

/* Reverse calls: as rpcrdma_clnt_call() / _call_async(), but with the
 * program and version given per call. @opts: timeout_ms, reply_size,
 * flags, result and auth are honoured (recv_bulk is not: no Write chunks
 * in the reverse direction). Without RPCRDMA_CALL_OPT_AUTH the call goes
 * with AUTH_NONE; an NFSv4.1 server gives its callbacks the credential
 * the client chose in CREATE_SESSION (Linux's callback service refuses a
 * CB_COMPOUND with AUTH_NONE). The auth bytes must stay valid until the
 * call completes (a re-sent call is marshalled again). */
RPCRDMA_API int rpcrdma_svc_client_call(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers,
					uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres,
					void *res, const struct rpcrdma_call_opts *opts);
typedef void (*rpcrdma_svc_client_cb_t)(struct rpcrdma_svc_client *cl, int status, void *res,
					void *arg);
RPCRDMA_API int rpcrdma_svc_client_call_async(struct rpcrdma_svc_client *cl, uint32_t prog,
					      uint32_t vers, uint32_t proc, xdrproc_t xargs,
					      void *args, xdrproc_t xres, void *res,
					      const struct rpcrdma_call_opts *opts,
					      rpcrdma_svc_client_cb_t cb, void *cb_arg);

/* Counters of one client / of all clients of @svc. */
RPCRDMA_API int rpcrdma_svc_client_stats(struct rpcrdma_svc_client *cl,
					 struct rpcrdma_bc_stats *st);
RPCRDMA_API int rpcrdma_svc_bc_stats(struct rpcrdma_svc *svc, struct rpcrdma_bc_stats *st);

RPCRDMA_EXTERN_C_END

#endif
