/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the tests/bidi end-to-end tests (RFC 8167): a forward
 * program BT (served by a server child process that also drives reverse
 * calls on request), a callback program CB (served by the client in the
 * reverse direction), their XDR routines and checks.
 */
#ifndef BIDI_TEST_H
#define BIDI_TEST_H

#include <rpc/rpc.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/test_server.h"
#include "rpcrdma.h"
#include "rpcrdma/backchannel.h"

/* Forward program (client -> server). */
#define BT_PROG 0x20000b1du
#define BT_VERS 1u
enum {
	BT_NULL = 0,
	BT_ECHO = 1, /* bt_echo_args -> bt_echo_res (hash of the data the server got) */
	BT_CTL = 2,  /* bt_ctl_args -> bt_ctl_res: drive the server's reverse calls */
	BT_READ = 3, /* bt_ctl_args (a: bytes, b: seed) -> bt_bulk_res (id = seed, the
			bytes bt_fill(a, seed) and their hash); mirrored as BT_ECHO */
};

/* Callback program (server -> client, reverse direction). */
#define CB_PROG 0x40000b1du
#define CB_VERS 1u
enum {
	CB_NULL = 0,
	CB_ECHO = 1, /* bt_echo_args -> bt_echo_res */
	CB_BULK = 2, /* bt_bulk_args -> bt_bulk_res (bulk arg by Read chunk, long reply) */
	CB_SLOW = 3, /* u_int ms -> void (sleeps while the client's slow budget lasts) */
};

/* BT_CTL operations (the server acts on the client the call came from). */
enum {
	CTL_MIRROR = 1,   /* a: n, b: max bytes: each of the next n BT_ECHO calls
			     starts an async reverse CB_ECHO with the same XID */
	CTL_REV_ECHO = 2, /* a: n calls, b: max bytes: start async CB_ECHO calls */
	CTL_REV_SLOW = 3, /* a: n calls, b: ms: start async CB_SLOW calls */
	CTL_RESULT = 4,   /* v: done, bad, overlap, max transmissions, calls_sent,
			     credit_stalls, retransmits, max_outstanding */
	CTL_TRY = 5,      /* one sync reverse CB_NULL now; v0 = calls_sent, v1 = gate_refusals */
	CTL_REV_BULK = 6, /* a: arg bytes, b: reply bytes, c: call flags; sync CB_BULK;
			     v: rdma_err, read_chunks, reply_chunk, reply_proc, call_proc, ok,
			     credits_ignored, reverse credit grant now */
	CTL_ARM_TMO = 7,  /* once its connection is gone, a sync CB_NULL (must time out) */
	CTL_RR_STATS = 8, /* v: rr_exposed, rr_replies, rr_notifications, rr_reclaimed,
			     rr_refused, rr_exposed_bytes (the server's, all connections) */
};

struct bt_echo_args {
	uint32_t id;
	char *val;
	u_int len;
};
struct bt_echo_res {
	uint32_t id;
	uint64_t hash;
};
struct bt_bulk_args {
	uint32_t id;
	uint32_t reply_len;
	rpcrdma_bulk data;
};
struct bt_bulk_res {
	uint32_t id;
	uint64_t hash;
	char *val;
	u_int len;
};
struct bt_ctl_args {
	uint32_t op, a, b, c;
};
struct bt_ctl_res {
	int32_t rc;
	uint32_t v[8];
};

bool_t xdr_bt_echo_args(XDR *x, struct bt_echo_args *a);
bool_t xdr_bt_echo_res(XDR *x, struct bt_echo_res *r);
bool_t xdr_bt_bulk_args(XDR *x, struct bt_bulk_args *a);
bool_t xdr_bt_bulk_res(XDR *x, struct bt_bulk_res *r);
bool_t xdr_bt_ctl_args(XDR *x, struct bt_ctl_args *a);
bool_t xdr_bt_ctl_res(XDR *x, struct bt_ctl_res *r);

static inline uint64_t bt_hash(const void *p, size_t n)
{
	return tl_hash(p, n);
}
static inline void bt_fill(void *p, size_t n, uint32_t seed)
{
	tl_fill(p, n, seed);
}
uint64_t bt_now_ns(void);

/* The server child. */
struct bt_srv_cfg {
	uint32_t slots;        /* reverse slots per client (0: 8) */
	int no_chunks;         /* reverse chunks off on the server */
	uint32_t conn_wait_ms; /* 0: 1000 */
	uint16_t port;         /* 0: any */
	uint32_t workers;      /* 0: 2 */
	int inline_cb;         /* RPCRDMA_BC_OPT_INLINE: async completions on the progress thread */
	int v2;                /* Version Two capable (RPCRDMA_SVC_OPT_RDMA_VERSION) */
	int rr;                /* reliable replies (RPCRDMA_SVC_OPT_RELIABLE_REPLY) */
	uint32_t inline_thr;   /* inline_send = inline_recv (0: the default) */
};
/* Fork the server child (tests/lib/test_server.h); srv->port is its port. It exits when its control
 * pipe closes, with status 0 if it saw no failure. */
int bt_server_start(struct tl_server *srv, const struct bt_srv_cfg *cfg);
int bt_server_stop(struct tl_server *srv);

/* The client side: a client with a backchannel (@bc may be NULL) and the
 * CB program registered. CB_SLOW sleeps while *bt_slow_budget > 0. While
 * bt_slow_hold is set, CB_SLOW first waits for it to clear (at most 30 s;
 * then it sets bt_slow_hold_expired); bt_slow_entered counts the CB_SLOW
 * calls that reached the callback. (Atomic access.) */
extern int bt_slow_budget;
extern int bt_slow_hold, bt_slow_hold_expired, bt_slow_entered;
/* Set before bt_client*: the client asks for reliable replies. */
extern int bt_client_rr;
int bt_client(uint16_t port, const struct rpcrdma_bc_opts *bc, uint32_t credits,
	      struct rpcrdma_clnt **out);
/* The same with RPC-over-RDMA version policy @vers (RPCRDMA_VERSION_*). */
int bt_client_vers(uint16_t port, const struct rpcrdma_bc_opts *bc, uint32_t credits,
		   enum rpcrdma_version_policy vers, struct rpcrdma_clnt **out);
/* The same with client options @co (bt_client_defaults, then changed). */
int bt_client_opts(uint16_t port, const struct rpcrdma_bc_opts *bc,
		   const struct rpcrdma_clnt_opts *co, struct rpcrdma_clnt **out);
/* bt_client_vers's options for @credits and @vers, to change. */
void bt_client_defaults(struct rpcrdma_clnt_opts *co, uint32_t credits,
			enum rpcrdma_version_policy vers);
/* Server child, then a client (bt_client) with the backchannel enabled:
 * -1 the server did not start (nothing to stop), otherwise 0 or the
 * client's error (the server runs: bt_server_stop). */
int bt_setup(struct tl_server *srv, const struct bt_srv_cfg *cfg, const struct rpcrdma_bc_opts *bc,
	     uint32_t credits, struct rpcrdma_clnt **out);
int bt_ctl(struct rpcrdma_clnt *c, uint32_t op, uint32_t a, uint32_t b, uint32_t cc,
	   struct bt_ctl_res *res);
/* Reverse calls that reuse the forward calls' XIDs (CTL_MIRROR: @n reverse
 * calls of @rev_len bytes) while @n forward ECHO calls of @base + @step * i
 * bytes are served, each checked; then wait (5 s at most) until the server
 * reports the @n reverse calls done; failures are counted (BT_CHECK).
 * *res holds the server's last CTL_RESULT. */
void bt_mirror(struct rpcrdma_clnt *c, uint32_t n, uint32_t rev_len, uint32_t base, uint32_t step,
	       struct bt_ctl_res *res);

extern int bt_failures;
#define BT_CHECK(c)                                                                                \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "[%d] %s:%d: CHECK failed: %s\n", (int)getpid(), __FILE__, \
				__LINE__, #c);                                                     \
			bt_failures++;                                                             \
		}                                                                                  \
	} while (0)

#endif
