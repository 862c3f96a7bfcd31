/* SPDX-License-Identifier: MIT */
/*
 * The server's reverse requester (RFC 8167): its state and the functions
 * the API (src/api/bc_svc.c) calls. Hidden symbols. bc_requester.c holds
 * the engine; the hooks svc_conn.c calls are in backchannel_hooks.h.
 *
 * Locking: everything here is under the server's lock (struct bc_svc
 * lock); "lock held" says the caller holds it.
 */
#ifndef RPCRDMA_TRANSPORT_BC_REQUESTER_H
#define RPCRDMA_TRANSPORT_BC_REQUESTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/backchannel.h"
#include "transport/backchannel.h"
#include "transport/backchannel_hooks.h"
#include "transport/evloop.h"
#include "util/futex_cond.h"
#include "util/futex_mutex.h"

/* What the API keeps per reverse call slot, next to struct xprt_rslot. */
struct bc_scall {
	bool fin;      /* status final */
	bool released; /* the owner is done with it */
	bool async;
	bool cb_taken; /* the thread is running its callback */
	rpcrdma_svc_client_cb_t cb;
	void *cb_arg;
};

struct rpcrdma_svc_client {
	struct bc_svc *b;
	uint64_t id;
	bool has_id;
	bool ever_enabled; /* the gate opened once: calls may wait for a reconnect */
	bool enabled;      /* the gate is open on the bound connection */
	struct bc_conn *conn;
	uint32_t conn_gen; /* bumped on every bind */
	uint32_t peer_credits;
	struct xprt_rslots rs;
	bool rs_ready;
	struct bc_scall *sc;
	struct futex_cond cv; /* a slot was freed or a call finished */
	struct rpcrdma_bc_stats st;
	struct rpcrdma_svc_client *next;
};

struct bc_conn {
	struct bc_svc *b;
	struct rpcrdma_ep *ep;
	struct xprt_limits lim;
	bool up;
	struct rpcrdma_svc_client *cl; /* the client on this connection */
};

#define BC_MAX_EVENTS 64

struct bc_svc {
	struct futex_mutex *lock; /* the server's */
	struct rpcrdma_pd *pd;
	uint32_t inline_send;
	uint32_t slots;
	bool chunks;
	uint32_t timeout_ms, conn_wait_ms;
	rpcrdma_bc_event_t cb;
	void *ctx;
	struct rpcrdma_svc_client *clients;
	struct {
		struct rpcrdma_svc_client *cl;
		enum rpcrdma_bc_event ev;
	} ev[BC_MAX_EVENTS];
	uint32_t nev;
	/* Its thread runs a loop without a device (evloop.h): events and
	 * async completions at each wake-up on cv, deadlines at its tick. */
	struct evloop loop;
	pthread_t thr;
	struct futex_cond cv;
	bool thr_started, stop;
	/* RPCRDMA_BC_OPT_INLINE: async completions run by bc_svc_run_inline()
	 * on the server's progress thread; how many wait (atomic). */
	bool inline_cb;
	unsigned int inline_pending;
	struct rpcrdma1_hdr scratch;
};

/* Lock held: open the gate of the client on @bc (RFC 8167 §6); with an
 * id, the handle that already carries it takes this connection over. */
int bc_svc_cl_enable(struct bc_conn *bc, bool has_id, uint64_t id, uint32_t credits);
/* Start the thread of @b (completions, events, timeouts); 0 or -errno. */
int bc_svc_start(struct bc_svc *b);
/* No lock held: a reverse call to @cl (synchronous unless @async). */
int bc_svc_client_call(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers, uint32_t proc,
		       xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
		       const struct rpcrdma_call_opts *opts, bool async, rpcrdma_svc_client_cb_t cb,
		       void *cb_arg);
/* Lock held: the counters of @cl. */
void bc_svc_client_stats(struct rpcrdma_svc_client *cl, struct rpcrdma_bc_stats *st);

#endif
