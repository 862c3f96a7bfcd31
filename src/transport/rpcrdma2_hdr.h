/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA Version Two transport header codec (the early draft,
 * its §4.2; docs/design.md and docs/rpcrdma2-extensions.md), with
 * the same hostile-input contract as the Version One codec
 * (rpcrdma1_hdr.h): bounded decoding, overflow-checked counts, no
 * allocation, decoding into caller-provided storage.
 *
 * The chunk lists have Version One's layout and limits and are coded by
 * the same code (chunks_xdr.h), so a decoded header carries a
 * struct rpcrdma1_chunks and every Version One chunk check
 * (rpcrdma1_check_read_list, rpcrdma1_write_chunk_length, ...) applies.
 *
 * Ownership: the decoder never allocates and keeps no pointer into the
 * received buffer. An RDMA2_OPTIONAL header's rdma_optinfo is reported as
 * an offset and a length from the header's first byte: the caller reads
 * it (rpcrdma2_opt.h for ours) before it reposts the receive buffer.
 *
 * Internal to the library (hidden symbols, not part of the public API).
 */
#ifndef RPCRDMA_TRANSPORT_RPCRDMA2_HDR_H
#define RPCRDMA_TRANSPORT_RPCRDMA2_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"
#include "transport/rpcrdma2_wire.h"

/* A decoded (or to-be-encoded) Version Two header. Which members beyond
 * the four fixed words mean anything depends on proc. */
struct rpcrdma2_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;
	uint32_t proc;        /* enum rpcrdma2_proc */
	uint32_t direction;   /* MSG, NOMSG: rdma_direction, enum rpcrdma2_msg_type */
	uint32_t err;         /* ERROR: enum rpcrdma2_errcode */
	uint32_t vers_low;    /* ERROR / ERR_VERS */
	uint32_t vers_high;   /* ERROR / ERR_VERS */
	uint32_t optdir;      /* OPTIONAL: rdma_optdir, enum rpcrdma2_msg_type */
	uint32_t opttype;     /* OPTIONAL: rdma_opttype, any value (the caller judges) */
	uint32_t optinfo_len; /* OPTIONAL: bytes of rdma_optinfo, without padding */
	size_t optinfo_off;   /* decode: where rdma_optinfo starts, from the header's start */
	size_t hdr_len;       /* decode: bytes of header; any RPC payload follows */
	struct rpcrdma1_chunks chunks; /* MSG, NOMSG */
};

/*
 * Decoding. rpcrdma2_decode() reads one header at the cursor; on success
 * the cursor sits just past it (h->hdr_len bytes later, optinfo and its
 * padding included), where an RDMA2_MSG's RPC message or an
 * RDMA2_OPTIONAL's payload (if any) begins. On failure the cursor is
 * restored. h->xid, vers, credit and proc are filled in as soon as they
 * are read, so after any failure with at least RPCRDMA2_FIXED_SIZE bytes
 * they identify the message to answer.
 *
 * Return values, and what a responder answers (rpcrdma2_error_reply):
 *   0                 decoded
 *   -EBADMSG          the input ends inside the header     ERR_BAD_HEADER
 *   -EPROTONOSUPPORT  rdma_vers is not 2; nothing after the fixed words
 *                     was read                             ERR_VERS
 *                     Exception, as in Version One: an RDMA2_ERROR with
 *                     ERR_VERS decodes whatever its rdma_vers.
 *   -EOPNOTSUPP       rdma_proc is not 0, 1, 4 or 5        ERR_BAD_HEADER
 *   -E2BIG            a list holds more than our limits    ERR_BAD_HEADER
 *   -EOVERFLOW        a segment count or the optinfo length
 *                     needs more bytes than remain (checked
 *                     before anything is read or stored)   ERR_BAD_HEADER
 *   -EINVAL           a value the XDR does not allow: a
 *                     discriminator other than 0/1, a direction or optdir
 *                     other than CALL/REPLY, an errcode other than 1..3,
 *                     non-zero optinfo padding             ERR_BAD_HEADER
 * An unknown rdma_opttype is not an error here: the caller answers
 * ERR_INVAL_OPTION (draft §3.1). Whether a message deserves an answer at
 * all (an RDMA2_ERROR never does) is the transport's decision.
 */
int rpcrdma2_decode(struct rpcrdma_xdr *x, struct rpcrdma2_hdr *h);
/* The same over a flat buffer; the buffer is only read. */
int rpcrdma2_decode_buf(const void *buf, size_t len, struct rpcrdma2_hdr *h);
/* RPCRDMA2_ERR_VERS, RPCRDMA2_ERR_BAD_HEADER, or 0 when rc is 0. Also maps
 * rpcrdma2_check_direction()'s -EPROTO to ERR_BAD_HEADER (§4.2.2). */
uint32_t rpcrdma2_error_reply(int rc);

/*
 * Draft §4.2.2: rdma_direction of RDMA2_MSG / RDMA2_NOMSG, and rdma_optdir
 * of an RDMA2_OPTIONAL that carries all or part of an RPC message, must
 * equal the payload's RPC msg_type. 0 when they agree, -EPROTO when they
 * do not (answered with ERR_BAD_HEADER, same xid), -EINVAL for an
 * RDMA2_ERROR (it carries no payload; §4.2.1) or an unknown proc.
 * For RDMA2_NOMSG the payload arrives by chunk: check once it has.
 */
int rpcrdma2_check_direction(const struct rpcrdma2_hdr *h, uint32_t rpc_msg_type);
/* The msg_type word of an RPC message (RFC 5531 §9: xid, then msg_type):
 * -EBADMSG if fewer than 8 bytes, -EINVAL if it is neither CALL nor REPLY. */
int rpcrdma2_payload_msg_type(const void *payload, size_t len, uint32_t *msg_type);

/*
 * Encoding. Each encoder writes one whole header at the cursor or, on
 * failure, nothing:
 *   -EMSGSIZE  it does not fit in the space left
 *   -EINVAL    not encodable: unknown proc or errcode, direction or optdir
 *              other than CALL/REPLY, chunk counts over the limits, Write
 *              chunk indices out of range, optinfo NULL with a length
 * rpcrdma2_encode() writes h->vers as given (so tests can build bad
 * headers) and, for RDMA2_OPTIONAL, h->optinfo_len bytes from @optinfo
 * (ignored for other procs); the helpers write RPCRDMA2_VERSION. @c may
 * be NULL for "no chunks" (three empty lists).
 */
int rpcrdma2_encode(struct rpcrdma_xdr *x, const struct rpcrdma2_hdr *h, const void *optinfo);
int rpcrdma2_encode_msg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t direction,
			const struct rpcrdma1_chunks *c);
int rpcrdma2_encode_nomsg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t direction,
			  const struct rpcrdma1_chunks *c);
/* RDMA2_ERROR travels in the REPLY direction and has no direction word
 * (DESIGN.md §3: we follow the draft's XDR, not its §3.2 prose). */
int rpcrdma2_encode_err_vers(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t low,
			     uint32_t high);
/* ERR_BAD_HEADER or ERR_INVAL_OPTION (-EINVAL for anything else). */
int rpcrdma2_encode_error(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t err);
int rpcrdma2_encode_optional(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t optdir,
			     uint32_t opttype, const void *optinfo, uint32_t optinfo_len);

/* Encoded size in bytes, before encoding (for the inline threshold
 * decision); 0 if the header is not encodable. */
size_t rpcrdma2_hdr_size(const struct rpcrdma2_hdr *h);

#endif
