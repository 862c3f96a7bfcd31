/* SPDX-License-Identifier: MIT */
/*
 * The RPC-over-RDMA server (responder) API: listen for RPC-over-RDMA
 * Version One connections (RFC 8166), dispatch calls to registered
 * programs on worker threads, send replies with their bulk data placed by
 * RDMA Write into the client's Write chunks and long replies into its
 * Reply chunk.
 *
 * A dispatch function receives each call as a request handle. It decodes
 * the arguments with rpcrdma_svc_getargs() (any xdrproc_t; bulk items,
 * struct rpcrdma_bulk in client.h, point at data already pulled from the
 * client's Read chunks), and answers exactly once, from any thread and at
 * any later time, with rpcrdma_svc_reply() (success + results) or
 * rpcrdma_svc_error() (an RPC accept_stat). The request handle is freed by
 * that answer. Until then it owns the call's receive buffer and pulled
 * data, and it holds one of the connection's credits.
 *
 * Calls the transport refuses never reach dispatch (RFC 8166 §4.5): a
 * header with rdma_vers != 1 gets RDMA_ERROR ERR_VERS (1..1); a header
 * that does not decode, or whose chunks cannot be used, gets ERR_CHUNK;
 * RDMA_DONE and RDMA_ERROR from a client are dropped silently (as Linux
 * does). RPC-level refusals (wrong rpcvers, bad credentials, unknown
 * program or version) are answered by the server itself. Credentials
 * (RFC 5531 §8.2, §10): AUTH_NONE with an empty body and AUTH_SYS whose
 * body parses exactly (machine name of at most 255 bytes, at most 16
 * gids, no byte left over), each with an empty AUTH_NONE verifier, reach
 * dispatch; any other flavor, a malformed body, or an opaque_auth body
 * longer than 400 bytes is answered MSG_DENIED / AUTH_ERROR /
 * AUTH_BADCRED (a bad verifier: AUTH_BADVERF) without dispatching.
 *
 * RDMA Reads (RFC 6581 §9). The server's MPA reply advertises ORD 128 (it
 * pulls Read chunks by RDMA Read) bounded by the client's IRD, and IRD 0
 * (16 with a backchannel, whose client pulls reverse Read chunks), as
 * Linux svcrdma answers IRD 0 / ORD 128. It never has more Reads
 * outstanding on a connection than that ORD: a call with more Read
 * segments, and calls behind it, wait for Read Responses (stats:
 * max_reads_outstanding). Against a client that advertised IRD 0, a call
 * with Read chunks gets ERR_CHUNK.
 *
 * Every function returns 0 or a negative errno.
 */
#ifndef RPCRDMA_SERVER_H
#define RPCRDMA_SERVER_H

#include <rpc/xdr.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/client.h"
#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"

RPCRDMA_EXTERN_C_BEGIN

/* Most Read chunks one call may carry besides a Position-Zero chunk (RFC
 * 8166 §3.4.5): a call with more gets RDMA_ERROR ERR_CHUNK. */
#define RPCRDMA_SVC_MAX_READ_CHUNKS 16u

struct rpcrdma_svc;     /* opaque: a listening server */
struct rpcrdma_svc_req; /* opaque: one call awaiting its reply */

enum rpcrdma_svc_opt_mask {
	RPCRDMA_SVC_OPT_PROVIDER = 1u << 0,          /* provider */
	RPCRDMA_SVC_OPT_CREDITS = 1u << 1,           /* credits */
	RPCRDMA_SVC_OPT_INLINE = 1u << 2,            /* inline_send, inline_recv */
	RPCRDMA_SVC_OPT_WORKERS = 1u << 3,           /* workers */
	RPCRDMA_SVC_OPT_CPU = 1u << 4,               /* cpu */
	RPCRDMA_SVC_OPT_PROGRESS = 1u << 5,          /* progress */
	RPCRDMA_SVC_OPT_REMOTE_INV = 1u << 6,        /* remote_invalidate */
	RPCRDMA_SVC_OPT_MAX_CHUNK = 1u << 7,         /* max_chunk_bytes */
	RPCRDMA_SVC_OPT_MAX_CONNS = 1u << 8,         /* max_conns */
	RPCRDMA_SVC_OPT_MPA_CRC = 1u << 9,           /* mpa_crc */
	RPCRDMA_SVC_OPT_BACKLOG = 1u << 10,          /* backlog */
	RPCRDMA_SVC_OPT_MAX_PULL = 1u << 11,         /* max_pull_bytes */
	RPCRDMA_SVC_OPT_MAX_WRITE_CHUNKS = 1u << 12, /* max_write_chunks */
	RPCRDMA_SVC_OPT_RPCBIND = 1u << 13,          /* rpcbind */
	RPCRDMA_SVC_OPT_RDMA_VERSION = 1u << 14,     /* rdma_version, rdma_props */
	RPCRDMA_SVC_OPT_PRIVATE_DATA = 1u << 15,     /* private_data */
	RPCRDMA_SVC_OPT_DRC = 1u << 17,              /* drc, drc_max_entries, drc_max_bytes */
	RPCRDMA_SVC_OPT_PULL_TIMEOUT = 1u << 18,     /* pull_timeout_ms */
	RPCRDMA_SVC_OPT_SRQ = 1u << 19,              /* srq_depth */
	RPCRDMA_SVC_OPT_CCP = 1u << 20,              /* ccp */
	/* reliable_reply, exposed_timeout_ms, max_exposed_conn_bytes,
	 * max_exposed_bytes */
	RPCRDMA_SVC_OPT_RELIABLE_REPLY = 1u << 16,
};

/* Server options; a zeroed struct (or NULL) means all defaults. */
struct rpcrdma_svc_opts {
	uint32_t comp_mask;   /* RPCRDMA_SVC_OPT_* of the fields set */
	const char *provider; /* as in client.h (copied) */
	/* Credits granted to each client (default 64, 1..1024; never 0,
	 * RFC 8166 §3.3.1): receives posted per connection and calls each
	 * client may have outstanding. */
	uint32_t credits;
	/* Inline thresholds we advertise (RFC 8797), multiples of 1024 in
	 * 1024..262144 (default 4096, RPCRDMA_ADVERTISED_INLINE, as Linux);
	 * the ones used with a client are the minimum of ours and its (1024
	 * when it sent no valid private data, or we accept with none). */
	uint32_t inline_send, inline_recv;
	/* Worker threads that run dispatch functions (default 0: dispatch
	 * runs on the progress thread itself, the lowest latency; a dispatch
	 * function that blocks then delays every connection, so set workers
	 * when it may, or answer later from another thread). */
	uint32_t workers;
	int cpu;                             /* pin the progress thread (default: no) */
	enum rpcrdma_progress_mode progress; /* default RPCRDMA_PROGRESS_THREAD */
	int remote_invalidate;               /* default true (RFC 8797 flag) */
	/* Largest sum of Read chunk bytes one call may ask us to pull, and
	 * largest Write/Reply chunk we will write (default 64 MiB). A call
	 * over it gets ERR_CHUNK. */
	uint64_t max_chunk_bytes;
	uint32_t max_conns; /* simultaneous connections (default 1024) */
	int mpa_crc;        /* default true */
	int backlog;        /* listen backlog (default 128) */
	/* Most bytes of pulled Read chunk data held at once over all
	 * connections (default 16 MiB). Each call's Read chunks are pulled
	 * into memory allocated for that call and freed when it is answered;
	 * a call that does not fit waits (holding one credit) until earlier
	 * calls are answered; a call larger than this is pulled alone (the
	 * largest call is bounded by max_chunk_bytes). So memory grows with
	 * connections x credits x inline threshold (receive and send
	 * buffers) plus at most this and one call larger than it, not with
	 * the payload sizes in flight. One connection's calls hold at most a
	 * quarter of it at once (beyond their first call), and one call
	 * larger than it is pulled at a time, beside it: a client that does
	 * not answer our RDMA Reads holds up only its own calls. */
	uint64_t max_pull_bytes;
	/* Most Write chunks a call's Write list may hold (default and at most
	 * RPCRDMA_MAX_WRITE_CHUNKS of client.h, at least 1): a call with more
	 * gets ERR_CHUNK (RFC 8166 §4.5.2). Result bulk item i goes into
	 * Write chunk i when it fits, filling its segments in order; Write
	 * chunks the results do not use are echoed with length 0 (RFC 8166
	 * §3.4.6). */
	uint32_t max_write_chunks;
	/* Register with the local rpcbind (default false; rpcrdma/rpcbind.h):
	 * rpcrdma_svc_start() registers every program/version registered so
	 * far under netid "rdma" and/or "rdma6" (both for the default
	 * dual-stack listener) with the listener's universal address,
	 * replacing entries left by an earlier server, and fails with
	 * -ECONNREFUSED when no rpcbind runs; rpcrdma_svc_stop() (and
	 * rpcrdma_svc_destroy()) unregisters them. Registering takes the
	 * rights rpcbind asks of a local caller (root, or the owner of the
	 * entries). */
	int rpcbind;
	/* RPCRDMA_VERSION_1 (default: Version Two calls get ERR_VERS 1..1) or
	 * RPCRDMA_VERSION_2 (Version Two capable: each call is answered in
	 * its version; inline thresholds default to 4096, draft §2.3). */
	enum rpcrdma_version_policy rdma_version;
	/* Version Two: answer a client's transport properties with ours
	 * (default true; false answers them ERR_INVAL_OPTION, as a server
	 * that does not know the extension). */
	int rdma_props;
	/* Accept connections with RFC 8797 private data (default true). 0
	 * accepts with none: clients then assume 1024 bytes each way, and
	 * 4096 once Version Two is negotiated, until transport properties
	 * raise it. */
	int private_data;
	/* Duplicate request cache (default off). A client sends a call again
	 * only on a new connection, with its XID (RFC 8166 §3.3), when the
	 * reply to the first may have been lost with the old one. With drc
	 * set, a call that matches one seen before (same XID, client address
	 * without the port, program, version, procedure and CRC32c of the
	 * whole call) does not reach dispatch: while the first still runs it
	 * waits and gets the first one's reply; afterwards it is answered
	 * from the cache. Every reply of every program is kept, up to
	 * drc_max_entries replies (default 1024) and drc_max_bytes of encoded
	 * results (default 16 MiB; a reply over an eighth of it is not kept),
	 * least recently used out first. Stats: drc_hits,
	 * drc_inprogress_drops, drc_evictions. Off by default: it costs a
	 * CRC32c of every call and a copy of every reply, which only
	 * programs with non-idempotent procedures need; clients behind one
	 * address share its XID space (XIDs start at random values). */
	int drc;
	uint32_t drc_max_entries;
	uint64_t drc_max_bytes;
	/* Reliable replies (draft-cel-nfsv4-rpcrdma-reliable-reply,
	 * docs/reliable-replies.md; default false). A reply that fits neither
	 * the inline threshold nor the Reply chunk offered (Write chunks are
	 * still filled first) is exposed in a responder-provided Read chunk
	 * (RDMA_NOMSG, Position-Zero Read chunk) for the client to pull, and
	 * freed when it notifies pull completion. Version One: with every
	 * client (RFC 5666 behaviour; only for clients configured the same
	 * way); Version Two: with clients whose transport properties say
	 * they take such chunks. An exposed reply nobody notified is
	 * reclaimed after exposed_timeout_ms (default 10000; a later Read of
	 * it ends the connection). At most max_exposed_conn_bytes per
	 * connection (default 128 MiB) and max_exposed_bytes over all
	 * (default 512 MiB) are exposed at once, and at most one reply per
	 * credit per connection; beyond, the reply fails with ERR_CHUNK as
	 * without the option. */
	int reliable_reply;
	uint32_t exposed_timeout_ms;
	uint64_t max_exposed_conn_bytes;
	uint64_t max_exposed_bytes;
	/* A connection whose RDMA Reads (pulling its calls' Read chunks)
	 * get no answer for this long is ended (default 10000 ms; 0: never):
	 * neither iWARP nor InfiniBand times out a Read toward a peer that
	 * keeps the connection up. Stats: pull_timeouts. */
	uint32_t pull_timeout_ms;
	/* Receive buffers every connection shares (a shared receive queue,
	 * rpcrdma_srq_create; default 16 x credits; 0: a receive pool per
	 * connection, as on a provider without one). A connection starts
	 * with a grant of one credit; each reply raises it towards its
	 * share, srq_depth / connections (at most `credits`), as far as the
	 * receives not reserved yet allow; a grant never shrinks while its
	 * connection lives, and the pool grows beyond srq_depth only by the
	 * one credit each connection is always granted. So the receives
	 * posted always cover every grant (RFC 8166 §3.3.1): a client that
	 * keeps to its grant never meets an empty queue; one that sends
	 * more than it was granted is disconnected. */
	uint32_t srq_depth;
	/* Serve the Connection Configuration Protocol (RFC 5666 §6, program
	 * 100417 version 1, CONF_RDMA; docs/ccp.md) on every connection
	 * (default true; 0: calls to it get PROG_UNAVAIL). Where the client
	 * sent no RFC 8797 private data, its maxreply_sendsize (1 KiB or more)
	 * becomes our inline send threshold, bounded by the connection's send
	 * buffers (1024 bytes then, inline_send on a Version Two server), and
	 * we take inline calls as large as our receive buffers (inline_recv
	 * with the shared receive queue), which the answer says; with
	 * private data nothing changes (it takes precedence). A client's
	 * maxrdmaread of 0 stops replies being exposed to it (reliable
	 * replies). A program registered as 100417 replaces it. */
	int ccp;
};

/*
 * Create a server listening on @host (address or name; NULL or "" means
 * every address, IPv6 and IPv4: one dual-stack "::" listener whose IPv4
 * clients are reported as IPv4 addresses, or 0.0.0.0 on a host without
 * IPv6) and @port (0 means RPCRDMA_DEFAULT_PORT; use
 * rpcrdma_svc_create_any() for a kernel-chosen port). It does nothing
 * until rpcrdma_svc_start(). The caller owns *@out.
 */
RPCRDMA_API int rpcrdma_svc_create(const char *host, uint16_t port,
				   const struct rpcrdma_svc_opts *opts, struct rpcrdma_svc **out);
/* As rpcrdma_svc_create(), but port 0 really means "pick one". */
RPCRDMA_API int rpcrdma_svc_create_any(const char *host, const struct rpcrdma_svc_opts *opts,
				       struct rpcrdma_svc **out);
/* The port actually listened on. */
RPCRDMA_API uint16_t rpcrdma_svc_port(const struct rpcrdma_svc *svc);

/*
 * Dispatch function: called once per admitted call of a registered
 * program/version, on the progress thread (or a worker thread when
 * workers > 0). @proc is the procedure number, @args
 * the argument stream (also reachable with rpcrdma_svc_getargs), @ctx the
 * registration's. The function must answer @req exactly once, now or
 * later (from any thread).
 */
typedef void (*rpcrdma_svc_dispatch_t)(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args,
				       void *ctx);

/*
 * Register @prog/@vers. Calls for an unregistered program get
 * PROG_UNAVAIL; for a registered program with an unregistered version,
 * PROG_MISMATCH with the lowest and highest registered versions.
 * -EEXIST if already registered. Register before rpcrdma_svc_start().
 */
RPCRDMA_API int rpcrdma_svc_register(struct rpcrdma_svc *svc, uint32_t prog, uint32_t vers,
				     rpcrdma_svc_dispatch_t dispatch, void *ctx);

/*
 * Register an rpcgen-generated dispatcher (the `prog_1(struct svc_req *,
 * SVCXPRT *)` function of `rpcgen -m` or of foo_svc.c) for @prog/@vers: it
 * runs unchanged, its svc_getargs/svc_sendreply/svcerr_* calls reach this
 * server. Each call gets its own SVCXPRT, valid during the dispatcher call;
 * the reply must be sent before the dispatcher returns.
 */
struct svc_req;
struct __rpc_svcxprt;
typedef void (*rpcrdma_svc_tirpc_dispatch_t)(struct svc_req *rqstp, struct __rpc_svcxprt *xprt);
RPCRDMA_API int rpcrdma_svc_register_tirpc(struct rpcrdma_svc *svc, uint32_t prog, uint32_t vers,
					   rpcrdma_svc_tirpc_dispatch_t dispatch);

/* Start the progress thread and the workers: connections are accepted from
 * now on. With RPCRDMA_SVC_OPT_RPCBIND, register with rpcbind first (an
 * error there is returned and nothing starts). */
RPCRDMA_API int rpcrdma_svc_start(struct rpcrdma_svc *svc);

/*
 * Graceful shutdown: stop accepting connections and calls, wait up to
 * @timeout_ms for calls being dispatched to be answered and their replies
 * sent, then disconnect every client and stop the threads. Idempotent.
 * -ETIMEDOUT if requests were still unanswered (they are dropped).
 */
RPCRDMA_API int rpcrdma_svc_stop(struct rpcrdma_svc *svc, int timeout_ms);

/* Stop (if running, without waiting) and free everything. */
RPCRDMA_API void rpcrdma_svc_destroy(struct rpcrdma_svc *svc);

/* Counters summed over every connection since creation. */
RPCRDMA_API int rpcrdma_svc_stats(struct rpcrdma_svc *svc, struct rpcrdma_xprt_stats *st);

/*
 * One connection's counters, since it was accepted (the names and meanings
 * of struct rpcrdma_xprt_stats, server side). A retransmitted call is not
 * counted apart: it arrives on a new connection with its old XID, and the
 * server keeps no reply cache to recognise it (RFC 8166 §3.3 leaves that to
 * the ULP).
 */
struct rpcrdma_svc_conn_stats {
	uint32_t comp_mask;           /* reserved, 0 */
	uint32_t id;                  /* 1, 2, ... in the order connections were accepted */
	struct sockaddr_storage peer; /* the client's address (AF_UNSPEC if unknown) */
	uint32_t connected;           /* 1 while established, 0 once it went down */
	uint32_t credits;             /* credits granted to this client (RFC 8166 §3.3.1) */
	uint32_t inline_send;         /* inline thresholds agreed (RFC 8797) */
	uint32_t inline_recv;
	uint32_t outstanding; /* calls received and not answered yet */
	uint32_t reserved;
	uint64_t calls;   /* RPC calls received (their headers decoded) */
	uint64_t replies; /* replies sent */
	/* bytes_in = inline_bytes_rx + read_bytes; bytes_out =
	 * inline_bytes_tx + write_bytes + reply_bytes */
	uint64_t bytes_in, bytes_out;
	uint64_t inline_bytes_rx, inline_bytes_tx; /* Sends, transport headers included */
	uint64_t short_msgs;                       /* replies sent inline (RDMA_MSG) */
	uint64_t long_calls;                       /* calls in a Position-Zero Read chunk */
	uint64_t long_replies;                     /* replies in the Reply chunk (RDMA_NOMSG) */
	uint64_t read_chunks, read_bytes;          /* pulled by RDMA Read */
	uint64_t write_chunks, write_bytes;        /* RDMA Written into Write chunks */
	uint64_t reply_chunks, reply_bytes;        /* RDMA Written into Reply chunks */
	uint64_t err_vers_tx, err_chunk_tx;        /* RDMA_ERRORs sent, by kind (RFC 8166 §4.5) */
	uint64_t bad_headers;                      /* transport headers refused */
	uint64_t rpc_errors;                       /* RPC replies other than SUCCESS */
};

/* Called once per connection by rpcrdma_svc_conn_foreach(); a non-zero
 * return stops the iteration and is returned by it. */
typedef int (*rpcrdma_svc_conn_fn)(const struct rpcrdma_svc_conn_stats *cs, void *arg);

/*
 * Call @fn(cs, @arg) for each connection the server holds now (established,
 * or down with calls still being answered), oldest first, with a snapshot
 * of its counters. The snapshot is taken under the server's lock and @fn
 * runs after it is released, so @fn may call into the server. 0, -EINVAL,
 * -ENOMEM, or what @fn returned to stop.
 */
RPCRDMA_API int rpcrdma_svc_conn_foreach(struct rpcrdma_svc *svc, rpcrdma_svc_conn_fn fn,
					 void *arg);

/* ---- inside a dispatch function ---- */

RPCRDMA_API uint32_t rpcrdma_svc_req_xid(const struct rpcrdma_svc_req *req);
RPCRDMA_API uint32_t rpcrdma_svc_req_prog(const struct rpcrdma_svc_req *req);
RPCRDMA_API uint32_t rpcrdma_svc_req_vers(const struct rpcrdma_svc_req *req);
RPCRDMA_API uint32_t rpcrdma_svc_req_proc(const struct rpcrdma_svc_req *req);
/* The call's credential (AUTH_NONE or AUTH_SYS as admitted). */
RPCRDMA_API const struct rpcrdma_rpc_auth *rpcrdma_svc_req_cred(const struct rpcrdma_svc_req *req);
/* The call's AUTH_SYS parameters (uid, gid, gids, machine name, stamp;
 * RFC 5531 Appendix A) in *@s; -ENOENT when the credential is not
 * AUTH_SYS. */
RPCRDMA_API int rpcrdma_svc_req_authsys(const struct rpcrdma_svc_req *req,
					struct rpcrdma_rpc_authsys *s);
/* The caller's address (the connection's peer, IPv4 or IPv6) in *@addr and
 * its length in *@len (what svc_getrpccaller() gives an rpcgen
 * dispatcher). -ENOTCONN when the provider did not report one. */
RPCRDMA_API int rpcrdma_svc_req_caller(const struct rpcrdma_svc_req *req,
				       struct sockaddr_storage *addr, socklen_t *len);

/* Decode the arguments with @xargs into @args. -EBADMSG if they do not
 * decode (answer with rpcrdma_svc_error(req, GARBAGE_ARGS)). Bulk items
 * point into memory the request owns. */
RPCRDMA_API int rpcrdma_svc_getargs(struct rpcrdma_svc_req *req, xdrproc_t xargs, void *args);
/* Free what decoding @args allocated (xdr_free). */
RPCRDMA_API void rpcrdma_svc_freeargs(struct rpcrdma_svc_req *req, xdrproc_t xargs, void *args);

/*
 * The call's bulk data: Read chunk @i (0-based, in Read list order, not
 * counting a Position-Zero chunk) already pulled: *@data, *@len, and its
 * XDR position in the call (rdma_position: the offset in the complete
 * stream, as if every chunk's data and roundup were inline, RFC 8166
 * §3.4.5). -ENOENT if there is no such chunk.
 */
RPCRDMA_API int rpcrdma_svc_req_read_chunk(struct rpcrdma_svc_req *req, uint32_t i,
					   const void **data, uint32_t *len, uint32_t *position);
/* Capacity in bytes of the client's Write chunk @i (for result bulk item
 * i), or 0 if it offered none. */
RPCRDMA_API uint64_t rpcrdma_svc_req_write_space(const struct rpcrdma_svc_req *req, uint32_t i);

/*
 * Answer with SUCCESS and the results @xres(@res). Result bulk items
 * (struct rpcrdma_bulk) go by RDMA Write into the client's Write chunks
 * when it offered them (the Write list in the reply then carries the
 * bytes actually written, RFC 8166 §3.4.6), else inline; a reply too
 * large for the inline threshold goes into the client's Reply chunk as a
 * Long Reply (RDMA_NOMSG). Bulk buffers are not copied: they are
 * registered for the Write and must stay valid until this returns (it
 * waits for the Writes when there are any). Frees @req whatever the
 * result. -EMSGSIZE (the client got RDMA_ERROR ERR_CHUNK instead) when the
 * reply fits nowhere the client allowed; -ENOTCONN if the client is gone.
 */
RPCRDMA_API int rpcrdma_svc_reply(struct rpcrdma_svc_req *req, xdrproc_t xres, void *res);
/*
 * Answer with an RPC error @accept_stat (enum rpcrdma_rpc_accept_stat:
 * PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR). Frees @req.
 */
RPCRDMA_API int rpcrdma_svc_error(struct rpcrdma_svc_req *req, uint32_t accept_stat);

RPCRDMA_EXTERN_C_END

#endif
