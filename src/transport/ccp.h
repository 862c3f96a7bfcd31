/* SPDX-License-Identifier: MIT */
/*
 * The Connection Configuration Protocol (RFC 5666 §6; docs/ccp.md):
 * program 100417, version 1, one procedure CONF_RDMA (1) taking a
 * config_rdma_req and returning a config_rdma_reply (xdr/ccp.x). RFC 8166
 * dropped it from Version One and nobody we know implemented it; it is
 * optional for both sides (§6: "Use ... by an upper layer is OPTIONAL").
 *
 * Three files, one per role (issue 35):
 *   ccp_xdr.c   the codec (wire room): both structs are three XDR
 *               uint32 words, read and written with util/be.h; bounded,
 *               no allocation, a fuzz target (fuzz/fuzz_ccp.c);
 *   ccp_svc.c   the responder's handler: every connection of a server is
 *               answered unless RPCRDMA_SVC_OPT_CCP turns it off
 *               (svc_loop.c looks it up after the registered programs,
 *               so those pay nothing for it);
 *   ccp_clnt.c  the requester's query, made right after the first
 *               connection when RPCRDMA_CLNT_OPT_CCP asks for it, and
 *               the application of the answer.
 *
 * Hand-coded rather than generated from xdr/ccp.x by rpcgen: rpcgen's
 * routines go through libtirpc's XDR stream and its allocation rules,
 * while every decoder the library ships must be bounded, allocation-free
 * and fuzzed on plain bytes (STYLE.md habit 4); six words do not justify
 * the difference. xdr/ccp.x is the reference (tests/transport/
 * test_ccp.c checks our codec against an rpcgen build of it).
 *
 * Internal to the library (hidden symbols, not part of the public API).
 */
#ifndef RPCRDMA_TRANSPORT_CCP_H
#define RPCRDMA_TRANSPORT_CCP_H

#include <stddef.h>
#include <stdint.h>

#include <rpc/xdr.h>

#define RPCRDMA_CCP_PROG      100417u /* RFC 5666 §12 */
#define RPCRDMA_CCP_VERS      1u
#define RPCRDMA_CCP_CONF_RDMA 1u
#define RPCRDMA_CCP_SIZE      12u /* either struct: three uint32 */
/* RFC 5666 §6.1: the basic level every connection provides, "at least one
 * RPC message at a time that is at least 1 KB in size". A size below it
 * is not taken (the connection keeps its thresholds). */
#define RPCRDMA_CCP_MIN_SIZE 1024u

/* config_rdma_req: the client's requirements. */
struct ccp_req {
	uint32_t maxcall_sendsize;  /* largest inline call it may send */
	uint32_t maxreply_sendsize; /* largest inline reply it accepts */
	uint32_t maxrdmaread;       /* RDMA Reads it lets the server have active */
};

/* config_rdma_reply: the server's limits. */
struct ccp_reply {
	uint32_t maxcall_sendsize; /* largest inline call the server accepts */
	uint32_t align;            /* the server's receive buffer alignment */
	uint32_t maxrdmaread;      /* RDMA Reads the server has active at most */
};

/*
 * ccp_xdr.c. Decode the three words at @buf (@len bytes): 0, or -EBADMSG
 * when fewer than RPCRDMA_CCP_SIZE bytes are there. Bytes after the
 * twelfth are not read (the caller judges them: an RPC argument stream
 * may carry more). Any value decodes; what a value means is the caller's.
 */
int ccp_decode(const void *buf, size_t len, uint32_t w[3]);
/* Encode three words into @buf: 0, or -EMSGSIZE when @room < 12. */
int ccp_encode(void *buf, size_t room, const uint32_t w[3]);
int ccp_req_decode(const void *buf, size_t len, struct ccp_req *r);
int ccp_req_encode(void *buf, size_t room, const struct ccp_req *r);
int ccp_reply_decode(const void *buf, size_t len, struct ccp_reply *r);
int ccp_reply_encode(void *buf, size_t room, const struct ccp_reply *r);
/* The same as xdrproc_t routines, for the RPC argument and result
 * streams (each a struct ccp_req * / struct ccp_reply *). */
bool_t xdr_ccp_req(XDR *x, struct ccp_req *r);
bool_t xdr_ccp_reply(XDR *x, struct ccp_reply *r);

/* ccp_svc.c (responder). The dispatch function of CONF_RDMA, with a
 * struct rpcrdma_svc * as @ctx, and the table entry svc_loop.c finds it
 * by: NULL unless @svc serves the protocol and @prog is 100417. */
struct rpcrdma_svc;
struct svc_prog;
const struct svc_prog *svc_ccp_prog(const struct rpcrdma_svc *svc, uint32_t prog);

/* ccp_clnt.c (requester). No lock held, right after the client's first
 * connection: ask CONF_RDMA and apply the answer to that connection (see
 * ccp_clnt.c for what applying means). The outcome is kept for
 * rpcrdma_clnt_ccp(); it never fails the client: the protocol is
 * optional, a server that does not serve it leaves the thresholds as
 * they are. */
struct rpcrdma_clnt;
void clnt_ccp_query(struct rpcrdma_clnt *c);

#endif
