/* SPDX-License-Identifier: MIT */
/*
 * The combination matrix (issue 32): shared by the client (test_matrix.c)
 * and the server child (matrix_server.c). One cell is one combination of
 * RPC-over-RDMA version policy, backchannel, reliable replies, inline
 * threshold and RFC 8797 private data; its calls carry payloads at every
 * size boundary that matters, checked by a hash on the receiving side.
 *
 * Program MX (forward, client -> server):
 *   MX_ECHO    mx_echo_args -> mx_echo_res: the server checks the argument
 *              bytes against tl_fill(seed) and answers reply_len bytes of
 *              tl_fill(seed + 1) with the hash of what it received
 *   MX_REV     mx_rev_args -> int: start the reverse calls listed (a
 *              thread of the server, all asynchronous), return at once
 *   MX_RESULT  void -> mx_result: the server's view (reverse calls done and
 *              bad, argument mismatches, exposed replies, registrations)
 * Program MXCB (reverse, server -> client, RFC 8167):
 *   MXCB_ECHO  the same as MX_ECHO, served by the client
 */
#ifndef MATRIX_H
#define MATRIX_H

#include <rpc/rpc.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/test_server.h"
#include "rpcrdma.h"
#include "rpcrdma/backchannel.h"

#define MX_PROG 0x20000b32u
#define MX_VERS 1u
enum { MX_NULL = 0, MX_ECHO = 1, MX_REV = 2, MX_RESULT = 3 };
#define MXCB_PROG 0x40000b32u
#define MXCB_VERS 1u
enum { MXCB_ECHO = 1 };

/* Largest payload either way (1 MiB + 3 is the largest boundary). */
#define MX_MAX_LEN (2u << 20)
/* Most reverse calls one MX_REV starts. */
#define MX_MAX_REV 32u

/* Bytes of everything but the payload (AUTH_NONE): the RPC call header
 * (10 words) + id, seed, reply_len, opaque length; the RPC reply header
 * (6 words) + id, hash, opaque length. The transport header comes on top:
 * 7 words in Version One (RDMA_MSG, three empty lists), 8 in Version Two
 * (rdma_direction more). */
#define MX_CALL_OVERHEAD  56u
#define MX_REPLY_OVERHEAD 40u
#define MX_HDR_V1         28u
#define MX_HDR_V2         32u
/* A call that offers a Reply chunk of one segment carries 5 words more in
 * its transport header (present, segment count, handle, length, offset:
 * the same in both versions). */
#define MX_REPLY_CHUNK_HDR 20u

struct mx_echo_args {
	uint32_t id, seed, reply_len;
	char *val;
	u_int len;
};
struct mx_echo_res {
	uint32_t id;
	uint64_t hash;
	char *val;
	u_int len;
	u_int cap; /* decode: the most val may take (val preset or not) */
};
/* Reverse calls to make: call i sends arg_len[i] bytes and asks for
 * reply_len[i], its reply size declared exactly (i < nknown) or not. A
 * reply too large for the inline threshold with its size not declared
 * fits nothing offered: ERR_CHUNK by design (no reliable replies in the
 * reverse direction). */
struct mx_rev_args {
	uint32_t n;
	uint32_t arg_len[MX_MAX_REV], reply_len[MX_MAX_REV];
	uint32_t timeout_ms;
	uint32_t hdr; /* the transport header: reverse calls of at most
			 inline - hdr - MX_CALL_OVERHEAD payload go inline */
	uint32_t inline_thr;
	uint32_t nknown; /* calls nknown..n-1 do not declare their reply size */
};
struct mx_result {
	uint32_t rev_started, rev_done, rev_bad;
	uint32_t arg_bad;        /* forward arguments that did not match */
	uint32_t rr_exposed;     /* replies exposed now (reliable replies) */
	uint32_t rr_reclaimed;   /* exposed replies reclaimed on the timeout */
	uint32_t rr_replies;     /* replies exposed in all */
	uint32_t regs_remote;    /* valid registrations with remote access */
	uint32_t regs_all;       /* valid registrations */
	uint32_t pull_bytes;     /* pulled Read chunk memory held now */
	int32_t rev_first_err;   /* the first bad reverse call's status */
	uint32_t rev_first_id;   /* and its id */
	uint32_t rev_wrong_proc; /* reverse calls or replies not sent as expected */
	uint32_t rev_refused;    /* reverse calls ERR_CHUNK as expected */
};

bool_t xdr_mx_echo_args(XDR *x, struct mx_echo_args *a);
bool_t xdr_mx_echo_res(XDR *x, struct mx_echo_res *r);
bool_t xdr_mx_rev_args(XDR *x, struct mx_rev_args *a);
bool_t xdr_mx_result(XDR *x, struct mx_result *r);
bool_t xdr_mx_void(XDR *x, void *p);

/* RPC message sizes of an echo call / reply with @len payload bytes. */
static inline uint32_t mx_call_size(uint32_t len)
{
	return MX_CALL_OVERHEAD + ((len + 3u) & ~3u);
}
static inline uint32_t mx_reply_size(uint32_t len)
{
	return MX_REPLY_OVERHEAD + ((len + 3u) & ~3u);
}

/* Whether a call of @len payload bytes goes as a Long Call (RDMA_NOMSG,
 * 1) or a Short one (RDMA_MSG, 0) over a connection with inline threshold
 * @thr and transport header @hdr; @reply_chunk: it offers one. */
static inline uint32_t mx_call_proc(uint32_t len, uint32_t thr, uint32_t hdr, bool reply_chunk)
{
	return hdr + (reply_chunk ? MX_REPLY_CHUNK_HDR : 0u) + mx_call_size(len) > thr;
}
/* Whether a reply of @len payload bytes fits inline. */
static inline bool mx_reply_fits(uint32_t len, uint32_t thr, uint32_t hdr)
{
	return hdr + mx_reply_size(len) <= thr;
}

/* Whether @p holds the @len bytes of tl_fill(@seed). */
bool mx_data_ok(const void *p, uint32_t len, uint32_t seed);

/* Registrations of @dev (softiwarp only: its STag table) that are valid:
 * all of them in *all, those granting a remote right in *remote. -ENOTSUP
 * on another provider. */
int mx_dev_regs(struct rpcrdma_dev *dev, uint32_t *remote, uint32_t *all);

/* A server configuration. */
struct mx_srv_cfg {
	enum rpcrdma_version_policy vers; /* RPCRDMA_VERSION_1 or _2 */
	bool bc, rr, pdata;
	uint32_t inline_thr;
};
/* Fork the server child (tests/lib/test_server.h). */
int mx_server_start(struct tl_server *srv, const struct mx_srv_cfg *cfg);

#endif
