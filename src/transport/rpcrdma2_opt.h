/* SPDX-License-Identifier: MIT */
/*
 * Our RPC-over-RDMA Version Two optional messages (docs/rpcrdma2-extensions.md):
 * the rdma_optinfo of RPCRDMA2_OPTTYPE_PROPS (transport properties) and of
 * RPCRDMA2_OPTTYPE_PULL_DONE (pull completion). rpcrdma2_hdr.h decodes the
 * header around them and reports where optinfo lies; these read and write
 * the optinfo bytes themselves.
 *
 * Same hostile-input contract as the header codecs: bounded decoding,
 * overflow-checked counts and lengths, no allocation, caller-provided
 * storage; the input is only read and nothing points into it afterwards.
 *
 * Internal to the library (hidden symbols, not part of the public API).
 */
#ifndef RPCRDMA_TRANSPORT_RPCRDMA2_OPT_H
#define RPCRDMA_TRANSPORT_RPCRDMA2_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/rpcrdma2_wire.h"

/* Most rpcrdma2_propval entries we read in one message. Seven are known;
 * the rest of the room is for ids we skip. */
#define RPCRDMA2_PROPS_MAX 64u

/* Bits of struct rpcrdma2_props.present. */
#define RPCRDMA2_PROPF_MAX_SEND_SIZE (1u << 0)
#define RPCRDMA2_PROPF_RECV_BUF_SIZE (1u << 1)
#define RPCRDMA2_PROPF_MAX_SEG_SIZE  (1u << 2)
#define RPCRDMA2_PROPF_MAX_SEG_COUNT (1u << 3)
#define RPCRDMA2_PROPF_REVERSE_DIR   (1u << 4)
#define RPCRDMA2_PROPF_RESP_READ     (1u << 5)
#define RPCRDMA2_PROPF_REMOTE_INV    (1u << 6)
#define RPCRDMA2_PROPF_ALL           0x7fu

/*
 * One side's transport properties. A property whose bit is clear in
 * @present was not sent and has its default value (rpcrdma2_props_init);
 * a property sent with an empty value (version-two-07 §5.1: "the default
 * value") is present with its default value.
 */
struct rpcrdma2_props {
	uint32_t present;       /* RPCRDMA2_PROPF_* */
	uint32_t max_send_size; /* bytes the sender may Send */
	uint32_t recv_buf_size; /* bytes of each receive buffer the sender posts */
	uint32_t max_seg_size;  /* bytes in one RDMA segment */
	uint32_t max_seg_count; /* segments in one transport header */
	uint32_t reverse_dir;   /* RPCRDMA2_RVRSDIR_*, kept as sent (a uint32) */
	bool resp_read;         /* ours: takes responder-provided Read chunks */
	bool remote_inv;        /* ours: accepts Send With Invalidate */
	uint32_t nunknown;      /* decode: entries with ids we do not know, skipped */
};

/* All defaults, nothing present. */
void rpcrdma2_props_init(struct rpcrdma2_props *p);

/*
 * rpcrdma2_propset from @len bytes of optinfo. Returns 0, or:
 *   -EBADMSG    the input ends inside an entry
 *   -E2BIG      more than RPCRDMA2_PROPS_MAX entries
 *   -EOVERFLOW  the entry count or a value's length needs more bytes than
 *               remain (checked before anything is read)
 *   -EINVAL     a known id twice; a known value that is neither empty nor
 *               exactly its XDR type (uint32: 4 bytes; bool: 0 or 1);
 *               non-zero padding; bytes left over after the array
 * Unknown ids are skipped (counted in nunknown). The draft has no error
 * code for a bad property value, so a transport answers any failure with
 * RDMA2_ERR_BAD_HEADER (docs/rpcrdma2-extensions.md). *p is complete only
 * on success.
 */
int rpcrdma2_props_decode(const void *optinfo, size_t len, struct rpcrdma2_props *p);

/* Encoded size of the present properties (the optinfo length). */
size_t rpcrdma2_props_size(const struct rpcrdma2_props *p);
/*
 * Encodes the present properties, in id order, into @buf (@room bytes);
 * *len gets the optinfo length. -EMSGSIZE (nothing written) if it does
 * not fit, -EINVAL if @present has bits outside RPCRDMA2_PROPF_ALL.
 */
int rpcrdma2_props_encode(void *buf, size_t room, const struct rpcrdma2_props *p, uint32_t *len);

/*
 * Pull completion: optinfo is the xid (uint32) of the reply whose
 * responder-provided Read chunk the requester has pulled. -EBADMSG if
 * shorter than 4 bytes, -EINVAL if longer.
 */
#define RPCRDMA2_PULL_DONE_SIZE 4u
int rpcrdma2_pull_done_decode(const void *optinfo, size_t len, uint32_t *xid);
/* -EMSGSIZE if @room < 4; *len gets 4. */
int rpcrdma2_pull_done_encode(void *buf, size_t room, uint32_t xid, uint32_t *len);

/* True for the opttypes this library knows (answer others with
 * RDMA2_ERR_INVAL_OPTION, draft §3.1). */
bool rpcrdma2_opttype_known(uint32_t opttype);

#endif
