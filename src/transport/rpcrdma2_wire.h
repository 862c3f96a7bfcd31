/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA Version Two wire constants: the early draft (Lever &
 * Noveck 2016; its XDR in docs/design.md) and
 * our own optional messages (docs/rpcrdma2-extensions.md).
 *
 * Constants only: no runtime state, no structs cast over received bytes.
 * The codecs that use them are rpcrdma2_hdr.[ch] and rpcrdma2_opt.[ch].
 * Internal to the library (nothing here is exported).
 */
#ifndef RPCRDMA_TRANSPORT_RPCRDMA2_WIRE_H
#define RPCRDMA_TRANSPORT_RPCRDMA2_WIRE_H

/* Draft §4.2 rpcrdma2_xprt_hdr.rdma_vers; §5: the first message of a
 * connection carries it. */
#define RPCRDMA2_VERSION 2u

/* RFC 5531 §9 msg_type, reused by the draft (§4.2) as rdma_direction and
 * rdma_optdir. */
enum rpcrdma2_msg_type {
	RPCRDMA2_CALL = 0,
	RPCRDMA2_REPLY = 1,
};

/* Draft §4.2 rpcrdma2_proc. 2 and 3 (Version One's MSGP and DONE) are not
 * Version Two procedures. */
enum rpcrdma2_proc {
	RPCRDMA2_MSG = 0,      /* direction, chunk lists, then the RPC message */
	RPCRDMA2_NOMSG = 1,    /* direction, chunk lists; message moved by chunk */
	RPCRDMA2_ERROR = 4,    /* rpcrdma2_errcode + body; never an RPC payload */
	RPCRDMA2_OPTIONAL = 5, /* optdir, opttype, optinfo<>; all, part or none of a message */
};

/* Draft §4.2 rpcrdma2_errcode. ERR_VERS keeps Version One's number and
 * body so any version decodes it (RFC 8166 §4.5.1). */
enum rpcrdma2_errcode {
	RPCRDMA2_ERR_VERS = 1,         /* followed by rdma_vers_low, rdma_vers_high */
	RPCRDMA2_ERR_BAD_HEADER = 2,   /* nothing follows */
	RPCRDMA2_ERR_INVAL_OPTION = 3, /* nothing follows (draft §3.1) */
};

/* Encoded sizes in bytes (XDR: every item a multiple of 4). */
#define RPCRDMA2_FIXED_SIZE    16u /* xid, vers, credit, proc */
#define RPCRDMA2_MIN_MSG_SIZE  32u /* MSG/NOMSG: fixed + direction + 3 empty lists */
#define RPCRDMA2_ERR_VERS_SIZE 28u /* fixed + errcode + low + high */
#define RPCRDMA2_ERR_SIZE      20u /* fixed + errcode (BAD_HEADER, INVAL_OPTION) */
#define RPCRDMA2_MIN_OPT_SIZE  28u /* fixed + optdir + opttype + optinfo length */

/* Draft §2.3: every Version Two receiver takes 4096-byte messages. */
#define RPCRDMA2_DEFAULT_INLINE 4096u
/* Draft §5: the first (negotiating) message fits Version One's default. */
#define RPCRDMA2_FIRST_MSG_MAX 1024u

/*
 * Our optional messages (docs/rpcrdma2-extensions.md §2). The draft leaves
 * opttype values to later Standards Track documents and none was ever
 * assigned (the later working-group drafts replaced RDMA2_OPTIONAL with
 * numbered header types), so we take values far from the small integers
 * any assignment would start at: "RDM" in ASCII, then a byte of ours.
 */
#define RPCRDMA2_OPTTYPE_BASE      0x52444d00u /* 'R' 'D' 'M' 0x00 */
#define RPCRDMA2_OPTTYPE_PROPS     0x52444d01u /* transport properties */
#define RPCRDMA2_OPTTYPE_PULL_DONE 0x52444d02u /* pull completion (reliable replies) */

/*
 * Transport property ids (rpcrdma2_propid). 1..5 are the numbers, types
 * and defaults of draft-ietf-nfsv4-rpcrdma-version-two-07 §5.2; ours sit
 * in the same private range as our opttypes.
 */
#define RPCRDMA2_PROP_MAX_SEND_SIZE 1u          /* RDMA2_PROPID_SBSIZ, uint32, default 4096 */
#define RPCRDMA2_PROP_RECV_BUF_SIZE 2u          /* RDMA2_PROPID_RBSIZ, uint32, default 4096 */
#define RPCRDMA2_PROP_MAX_SEG_SIZE  3u          /* RDMA2_PROPID_RSSIZ, uint32, default 1048576 */
#define RPCRDMA2_PROP_MAX_SEG_COUNT 4u          /* RDMA2_PROPID_RCSIZ, uint32, default 16 */
#define RPCRDMA2_PROP_REVERSE_DIR   5u          /* RDMA2_PROPID_BRS, uint32, default 0 (none) */
#define RPCRDMA2_PROP_RESP_READ     0x52444d10u /* ours: bool, default FALSE */
#define RPCRDMA2_PROP_REMOTE_INV    0x52444d11u /* ours: bool, default FALSE */

/* Values of RPCRDMA2_PROP_REVERSE_DIR (version-two-07 §5.2.5). */
#define RPCRDMA2_RVRSDIR_NONE   0u
#define RPCRDMA2_RVRSDIR_SIMPLE 1u /* simple messages, no chunks */
#define RPCRDMA2_RVRSDIR_CONT   2u /* simple or continued, no chunks */
#define RPCRDMA2_RVRSDIR_GENL   3u /* as in the forward direction */

#define RPCRDMA2_PROP_DEFAULT_SEND_SIZE RPCRDMA2_DEFAULT_INLINE
#define RPCRDMA2_PROP_DEFAULT_RECV_SIZE RPCRDMA2_DEFAULT_INLINE
#define RPCRDMA2_PROP_DEFAULT_SEG_SIZE  1048576u
#define RPCRDMA2_PROP_DEFAULT_SEG_COUNT 16u

#endif
