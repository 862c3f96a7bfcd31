/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA Version One wire constants (RFC 8166, which keeps the
 * RFC 5666 layout) and the RFC 8797 RDMA-CM private data constants.
 *
 * Constants only: no runtime state, no structs cast over received bytes.
 * The codecs that use them are rpcrdma1_hdr.[ch] and connect_private.[ch].
 * Internal to the library (nothing here is exported).
 */
#ifndef RPCRDMA_TRANSPORT_RPCRDMA1_WIRE_H
#define RPCRDMA_TRANSPORT_RPCRDMA1_WIRE_H

/* RFC 8166 §4.2.2: this protocol's rdma_vers. */
#define RPCRDMA1_VERSION 1u

/* RFC 8166 §5 (RFC 5666 §10): IANA port for NFS/RDMA, iWARP and IB alike. */
#define RPCRDMA1_PORT 20049

/* RFC 8166 §5 and §9 (RFC 5666 §12): rpcbind netids. */
#define RPCRDMA1_NETID  "rdma"
#define RPCRDMA1_NETID6 "rdma6"

/* RFC 8166 §4.2.4 / §4.1 XDR: rdma_proc. MSGP and DONE are deprecated
 * (RFC 8166 §4.6) but still decoded. */
enum rpcrdma1_proc {
	RPCRDMA1_MSG = 0,   /* RDMA_MSG: chunk lists, then the RPC message */
	RPCRDMA1_NOMSG = 1, /* RDMA_NOMSG: chunk lists only; message moved by chunk */
	RPCRDMA1_MSGP = 2,  /* RDMA_MSGP: align, thresh, chunk lists, message */
	RPCRDMA1_DONE = 3,  /* RDMA_DONE: nothing follows */
	RPCRDMA1_ERROR = 4, /* RDMA_ERROR: rpc_rdma_errcode + body */
};

/* RFC 8166 §4.1 XDR / §4.5: rpc_rdma_errcode. */
enum rpcrdma1_errcode {
	RPCRDMA1_ERR_VERS = 1,  /* followed by rdma_vers_low, rdma_vers_high */
	RPCRDMA1_ERR_CHUNK = 2, /* nothing follows */
};

/* Encoded sizes in bytes (XDR: every item a multiple of 4). */
#define RPCRDMA1_FIXED_SIZE      16u /* xid, vers, credit, proc */
#define RPCRDMA1_SEGMENT_SIZE    16u /* handle, length, offset (hyper) */
#define RPCRDMA1_READ_ENTRY_SIZE 24u /* present word, position, segment */
#define RPCRDMA1_EMPTY_LISTS     12u /* three "not present" words */
#define RPCRDMA1_MIN_MSG_SIZE    28u /* MSG/NOMSG with no chunks */
#define RPCRDMA1_ERR_VERS_SIZE   28u /* fixed + errcode + low + high */
#define RPCRDMA1_ERR_CHUNK_SIZE  20u /* fixed + errcode */

/* RFC 8166 §3.3.2: the inline threshold when nothing else was agreed. */
#define RPCRDMA1_DEFAULT_INLINE 1024u

/* RFC 8797 §4 (private data message format, 8 bytes):
 *   0..3  magic 0xf6ab0e18 (network order)
 *   4     version (1)
 *   5     flags (bit 0: the sender accepts Send With Invalidate)
 *   6     send size code    (bytes = (code + 1) * 1024)
 *   7     receive size code (bytes = (code + 1) * 1024)
 */
#define RPCRDMA1_CM_MAGIC           0xf6ab0e18u
#define RPCRDMA1_CM_VERSION         1u
#define RPCRDMA1_CM_FLAG_REMOTE_INV 0x01u
#define RPCRDMA1_CM_SIZE            8u
#define RPCRDMA1_CM_SIZE_UNIT       1024u
#define RPCRDMA1_CM_SIZE_MAX        (256u * RPCRDMA1_CM_SIZE_UNIT) /* code 255 */
/* RFC 8797 §4.1 (and Linux): absent or unrecognised private data means
 * the peer's inline sizes are the RFC 8166 default. */
#define RPCRDMA1_CM_DEFAULT_SIZE RPCRDMA1_DEFAULT_INLINE

#endif
