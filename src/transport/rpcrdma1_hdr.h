/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA Version One transport header codec (RFC 8166 §4, same
 * layout as RFC 5666 §4.3), and the chunk-list checks a responder runs
 * before it acts on a call's chunks and a requester runs on a reply.
 *
 * Internal to the library (hidden symbols, not part of the public API).
 *
 * Ownership: the decoder fills a caller-provided struct rpcrdma1_hdr with
 * fixed-capacity arrays; it never allocates and never keeps a pointer into
 * the received buffer, so the receive buffer may be reposted as soon as
 * rpcrdma1_decode() returns. The encoders write through the caller's XDR
 * cursor and keep nothing.
 *
 * Limits. A header that exceeds one of these is well-formed XDR we refuse
 * (-E2BIG, answered with ERR_CHUNK). Linux's client puts at most
 * RPCRDMA_MAX_HDR_SEGS (8 in older kernels, 16 in 6.x) segments in any one
 * list and at most one chunk per list; Linux's server only echoes the
 * client's Write list and Reply chunk. 64 segments per list is 4x that, and
 * at least as many as fit in a list of a header that fits our default
 * 1 KiB inline threshold (1024 / 16 = 64 segments, 1024 / 24 = 42 reads).
 * Linux 6.1 svcrdma accepts up to RPCSVC_MAXPAGES (259) segments per Write
 * chunk, but only if they fit its receive buffer (4 KiB = 254 segments).
 */
#ifndef RPCRDMA_TRANSPORT_RPCRDMA1_HDR_H
#define RPCRDMA_TRANSPORT_RPCRDMA1_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_wire.h"

#define RPCRDMA1_MAX_READ_SEGS    64 /* Read list entries (all Read chunks) */
#define RPCRDMA1_MAX_WRITE_CHUNKS 16 /* Write chunks in the Write list */
#define RPCRDMA1_MAX_WRITE_SEGS   64 /* segments over all Write chunks */
#define RPCRDMA1_MAX_REPLY_SEGS   64 /* segments in the Reply chunk */

/* RFC 8166 §3.4.3: an RDMA segment (xdr_rdma_segment). */
struct rpcrdma1_segment {
	uint32_t handle; /* STag / R_key */
	uint32_t length; /* bytes */
	uint64_t offset; /* tagged offset (hyper) */
};

/* RFC 8166 §3.4.5: a Read segment (xdr_read_chunk: one Read list entry). */
struct rpcrdma1_read_segment {
	uint32_t position; /* XDR offset in the RPC message, from its start */
	struct rpcrdma1_segment seg;
};

/* One Write chunk: segments wsegs[first .. first + nsegs - 1]. */
struct rpcrdma1_write_chunk {
	uint32_t first;
	uint32_t nsegs;
};

/* The three chunk lists of RDMA_MSG / RDMA_NOMSG / RDMA_MSGP (RFC 8166
 * §4.3). Only the counts need initialising (rpcrdma1_chunks_init). */
struct rpcrdma1_chunks {
	uint32_t nreads;  /* Read list entries in reads[] */
	uint32_t nwrites; /* Write chunks in writes[] */
	uint32_t nwsegs;  /* segments used in wsegs[] */
	uint32_t nreply;  /* segments in reply[] */
	bool reply_present;
	struct rpcrdma1_read_segment reads[RPCRDMA1_MAX_READ_SEGS];
	struct rpcrdma1_write_chunk writes[RPCRDMA1_MAX_WRITE_CHUNKS];
	struct rpcrdma1_segment wsegs[RPCRDMA1_MAX_WRITE_SEGS];
	struct rpcrdma1_segment reply[RPCRDMA1_MAX_REPLY_SEGS];
};

/* A decoded (or to-be-encoded) transport header. Which members beyond the
 * four fixed words mean anything depends on proc. */
struct rpcrdma1_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;
	uint32_t proc;                 /* enum rpcrdma1_proc */
	uint32_t align;                /* RDMA_MSGP */
	uint32_t thresh;               /* RDMA_MSGP */
	uint32_t err;                  /* RDMA_ERROR: enum rpcrdma1_errcode */
	uint32_t vers_low;             /* RDMA_ERROR / ERR_VERS */
	uint32_t vers_high;            /* RDMA_ERROR / ERR_VERS */
	size_t hdr_len;                /* decode: bytes of header; the RPC message follows */
	struct rpcrdma1_chunks chunks; /* RDMA_MSG, RDMA_NOMSG, RDMA_MSGP */
};

/*
 * Decoding. rpcrdma1_decode() reads one header at the cursor; on success
 * the cursor sits just past it (h->hdr_len bytes later), where an RDMA_MSG
 * or RDMA_MSGP message's RPC message begins. On failure the cursor is
 * restored to where it was. h->xid, vers, credit and proc are filled in as
 * soon as they are read, so after any failure with at least
 * RPCRDMA1_FIXED_SIZE bytes of input they identify the message to answer.
 *
 * Return values and what a responder answers (rpcrdma1_error_reply):
 *   0                 decoded
 *   -EBADMSG          the input ends inside the header (truncated)   ERR_CHUNK
 *   -EPROTONOSUPPORT  rdma_vers is not 1; nothing after the four
 *                     fixed words was read (RFC 8166 §4.5.1)         ERR_VERS
 *                     Exception: an RDMA_ERROR carrying ERR_VERS is
 *                     decoded whatever its rdma_vers (Linux echoes the
 *                     call's version there), so low/high are reported;
 *                     it is never answered.
 *   -EOPNOTSUPP       rdma_proc is not one of 0..4 (Linux answers
 *                     ERR_CHUNK; RFC 8166 §4.5.2)                    ERR_CHUNK
 *   -E2BIG            a list holds more entries than our limits      ERR_CHUNK
 *   -EOVERFLOW        a segment count needs more bytes than remain
 *                     (checked by division before anything is stored) ERR_CHUNK
 *   -EINVAL           a value the XDR type does not allow: a list
 *                     discriminator other than 0/1, an RDMA_ERROR
 *                     errcode other than ERR_VERS/ERR_CHUNK          ERR_CHUNK
 * Which messages deserve an answer at all (a responder drops DONE and
 * ERROR, and any message shorter than RPCRDMA1_FIXED_SIZE) is the
 * transport's decision.
 */
int rpcrdma1_decode(struct rpcrdma_xdr *x, struct rpcrdma1_hdr *h);
/* The same over a flat buffer; the buffer is only read. */
int rpcrdma1_decode_buf(const void *buf, size_t len, struct rpcrdma1_hdr *h);
/* RPCRDMA1_ERR_VERS, RPCRDMA1_ERR_CHUNK, or 0 when rc is 0. */
uint32_t rpcrdma1_error_reply(int rc);

/*
 * Encoding. Each encoder writes one whole header at the cursor or, on
 * failure, nothing (the cursor is put back where it was):
 *   -EMSGSIZE  it does not fit in the space left
 *   -EINVAL    the header is not encodable (unknown proc or errcode,
 *              counts over the limits, Write chunk indices out of range)
 * rpcrdma1_encode() writes h->vers as given (so tests can build bad
 * headers); the per-procedure helpers write RPCRDMA1_VERSION. @c may be
 * NULL for "no chunks" (three empty lists).
 */
int rpcrdma1_encode(struct rpcrdma_xdr *x, const struct rpcrdma1_hdr *h);
int rpcrdma1_encode_msg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit,
			const struct rpcrdma1_chunks *c);
int rpcrdma1_encode_nomsg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit,
			  const struct rpcrdma1_chunks *c);
/* RFC 8166 §4.6.1 deprecates MSGP; only for RFC 5666-mode peers and tests. */
int rpcrdma1_encode_msgp(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t align,
			 uint32_t thresh, const struct rpcrdma1_chunks *c);
/* RFC 8166 §4.6.2 deprecates DONE (RFC 5666 §3.8 pull completion). */
int rpcrdma1_encode_done(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit);
/* RFC 8166 §4.5.1: the versions we support, low..high inclusive, in a
 * header whose rdma_vers is @vers: the version of the message answered
 * (a responder echoes it, xprt_encode_err_vers). */
int rpcrdma1_encode_err_vers(struct rpcrdma_xdr *x, uint32_t xid, uint32_t vers, uint32_t credit,
			     uint32_t low, uint32_t high);
/* RFC 8166 §4.5.2. */
int rpcrdma1_encode_err_chunk(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit);

/* Encoded size in bytes, before encoding (for the inline threshold
 * decision, RFC 8166 §3.3.2 / §3.5); 0 if the header is not encodable. */
size_t rpcrdma1_hdr_size(const struct rpcrdma1_hdr *h);
/* Size of the three chunk lists alone (NULL: 12, three empty lists). */
size_t rpcrdma1_chunks_size(const struct rpcrdma1_chunks *c);

/* Building chunk lists. Each returns 0, or -E2BIG when the list is full. */
void rpcrdma1_chunks_init(struct rpcrdma1_chunks *c);
int rpcrdma1_chunks_add_read(struct rpcrdma1_chunks *c, uint32_t position,
			     const struct rpcrdma1_segment *seg);
/* Opens a new (empty) Write chunk; add_write_seg appends to the last one
 * (-EINVAL if none is open). */
int rpcrdma1_chunks_add_write_chunk(struct rpcrdma1_chunks *c);
int rpcrdma1_chunks_add_write_seg(struct rpcrdma1_chunks *c, const struct rpcrdma1_segment *seg);
/* Marks the Reply chunk present and appends a segment to it. */
int rpcrdma1_chunks_add_reply_seg(struct rpcrdma1_chunks *c, const struct rpcrdma1_segment *seg);

/*
 * A responder echoes the requester's Write list and Reply chunk in its
 * reply with each segment's length rewritten to the bytes it actually
 * wrote there (RFC 8166 §3.4.6, §3.5.3.2): segments fill in order, a
 * partly filled one carries its byte count, later ones 0; the number of
 * segments, handles and offsets are unchanged. -EMSGSIZE (nothing changed)
 * when @bytes exceeds what the chunk offers; -ENOENT / -EINVAL as for
 * rpcrdma1_write_chunk_length().
 */
int rpcrdma1_write_chunk_set_written(struct rpcrdma1_chunks *c, uint32_t i, uint64_t bytes);
int rpcrdma1_reply_chunk_set_written(struct rpcrdma1_chunks *c, uint64_t bytes);

/*
 * Checks and sums run by a responder before it issues RDMA Reads or
 * Writes, and by a requester on a reply. 0 or -errno; they read only the
 * struct.
 */

/* One Read chunk: the run of Read list entries starting at @start that
 * share its position (RFC 8166 §3.4.5). Fills *position, *nsegs and
 * *length (sum of the segment lengths). -ENOENT if start >= nreads. */
int rpcrdma1_read_chunk(const struct rpcrdma1_chunks *c, uint32_t start, uint32_t *position,
			uint32_t *nsegs, uint64_t *length);
/*
 * The Read list rules (-EINVAL when broken), and the number of Read chunks
 * in *nchunks (may be NULL):
 *   - every position is a multiple of 4: a position is an offset in the
 *     XDR stream (RFC 8166 §3.4.5) and XDR items start on 4-byte
 *     boundaries (RFC 4506 §3; RFC 8166 §3.4.7 roundup); Linux svcrdma
 *     rejects position & 3;
 *   - all segments of one Read chunk carry the same position and are
 *     adjacent in the list (RFC 8166 §3.4.5, §4.3.1): a position that
 *     reappears after a different one is refused, since the responder
 *     could not tell in which order to concatenate the segments.
 */
int rpcrdma1_check_read_list(const struct rpcrdma1_chunks *c, uint32_t *nchunks);
/*
 * A received call's chunk lists, as a responder must see them before it
 * acts (-EINVAL when broken):
 *   - the Read list rules above;
 *   - RDMA_NOMSG (Long Call, RFC 8166 §3.5.3.1, §4.2.4): the RPC message
 *     is in the Position Zero Read chunk, so the Read list must not be
 *     empty and its first Read chunk must have position 0;
 *   - RDMA_MSG / RDMA_MSGP: the message is inline, so no Read chunk may
 *     have position 0 (RFC 8166 §3.5.3.1: Position Zero only with
 *     RDMA_NOMSG);
 *   - any other proc: -EINVAL (not a call).
 */
int rpcrdma1_check_call(const struct rpcrdma1_hdr *h);
/*
 * A received reply's header, as a requester must see it before it trusts
 * the chunk lengths (-EINVAL when broken; the same rules Linux's xprtrdma
 * applies in rpcrdma_decode_msg/_nomsg):
 *   - no Read list: Version One replies carry no Read chunks (RFC 8166
 *     §3.4.5 and §4.6.2: RDMA_DONE, which pulled them, is gone); the
 *     responder-provided Read chunks of the reliable-reply draft need their
 *     own check;
 *   - RDMA_MSG: the reply is inline, so no Reply chunk bytes were written
 *     (a Reply chunk may be echoed back with length 0); Write chunks may
 *     carry result data (RFC 8166 §3.4.6), the rest is inline;
 *   - RDMA_NOMSG (Long Reply, RFC 8166 §3.5.3.2): the reply is in the Reply
 *     chunk, which must show some bytes written; Write chunks may carry
 *     result data too (the Write list and the Reply chunk in one reply, as
 *     Linux svc_rdma_sendto sends whenever a Reply chunk was offered);
 *   - RDMA_ERROR: nothing to check;
 *   - RDMA_MSGP, RDMA_DONE: not a reply.
 */
int rpcrdma1_check_reply(const struct rpcrdma1_hdr *h);
/* Sum of the segment lengths of Write chunk @i (-ENOENT if i >= nwrites,
 * -EINVAL if its indices are out of range): how many bytes the requester
 * offered for that result (RFC 8166 §3.4.6). */
int rpcrdma1_write_chunk_length(const struct rpcrdma1_chunks *c, uint32_t i, uint64_t *length);
/* Sum over the whole Write list. */
int rpcrdma1_write_list_length(const struct rpcrdma1_chunks *c, uint64_t *length);
/* Sum of the Reply chunk's segment lengths (0 when absent). */
int rpcrdma1_reply_chunk_length(const struct rpcrdma1_chunks *c, uint64_t *length);

#endif
