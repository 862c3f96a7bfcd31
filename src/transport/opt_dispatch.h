/* SPDX-License-Identifier: MIT */
/*
 * Version Two optional messages (RDMA2_OPTIONAL, the early draft §3.1;
 * docs/rpcrdma2-extensions.md), dispatched by rdma_opttype through one
 * table per endpoint role (issue 35): the server (svc_vers.c), the client
 * (clnt_vers.c) and the client's reverse responder (bc_responder.c; the
 * server's reverse requester sees none: they reach the server first).
 *
 * One owner for the rules every role shares, here:
 *   - an opttype the role has no row for is answered RDMA2_ERROR /
 *     RDMA2_ERR_INVAL_OPTION with the message's xid, whatever it carried
 *     (draft §3.1);
 *   - the direction (rdma_optdir) is checked against the row: a message
 *     travelling the other way is answered ERR_INVAL_OPTION or dropped,
 *     as the row says;
 *   - what a row returns is answered (an RDMA2_ERROR code) or settled
 *     (no answer) through the role's two functions.
 * A row only does what its opttype means. Adding an opttype is one row
 * in the tables of the roles that take it.
 *
 * Internal to the library (hidden symbols, not part of the public API).
 */
#ifndef RPCRDMA_TRANSPORT_OPT_DISPATCH_H
#define RPCRDMA_TRANSPORT_OPT_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One received RDMA2_OPTIONAL (decoded by xprt_v2_decode, vers2.c). */
struct xprt_opt_msg {
	uint32_t xid, optdir, opttype;
	const uint8_t *optinfo; /* rdma_optinfo, optinfo_len bytes */
	uint32_t optinfo_len;
	const uint8_t *buf; /* the whole message (a payload may follow the header) */
	size_t len, hdr_len;
};

/* A row's optdir that takes either direction (the row judges). */
#define XPRT_OPT_EITHER UINT32_MAX

struct xprt_opt_row {
	uint32_t opttype;
	uint32_t optdir;      /* RPCRDMA2_CALL, RPCRDMA2_REPLY or XPRT_OPT_EITHER */
	bool wrong_dir_inval; /* the other direction: ERR_INVAL_OPTION (else dropped) */
	/* Handle @m: returns the RDMA2_ERROR code to answer it with, or 0
	 * (handled or dropped: settled); *@more is the role's "something
	 * left for the caller" (false when not set). */
	uint32_t (*fn)(void *ctx, const struct xprt_opt_msg *m, bool *more);
};

struct xprt_opt_role {
	const struct xprt_opt_row *rows;
	uint32_t nrows;
	/* Answer @m with RDMA2_ERROR @err, the role's way (and count it). */
	void (*answer)(void *ctx, const struct xprt_opt_msg *m, uint32_t err);
	/* @m is done with and not answered (NULL: nothing to do). */
	void (*settle)(void *ctx, const struct xprt_opt_msg *m);
};

/*
 * Dispatch @m on @role's table with @ctx (the role's). Returns the row's
 * *more (false when the message was answered or settled here).
 */
bool xprt_opt_dispatch(const struct xprt_opt_role *role, void *ctx, const struct xprt_opt_msg *m);

#endif
