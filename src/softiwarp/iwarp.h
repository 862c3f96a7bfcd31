/* SPDX-License-Identifier: MIT */
/*
 * iWARP wire format only: MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and
 * RDMAP (RFC 5040) constants, field offsets and sizes. No runtime state.
 * Multi-byte fields are big-endian on the wire except the MPA CRC, which
 * Linux siw and Wireshark read as little-endian (see crc.c). Headers are
 * always encoded/decoded field by field through these offsets, never by
 * casting a struct over received bytes.
 */
#ifndef SIW_IWARP_H
#define SIW_IWARP_H

#include <stdint.h>
#include <string.h>

#include "util/be.h" /* get_be32 and the like: DDP/RDMAP headers, the MPA CRC */

/* ---- MPA start frames, RFC 5044 §7.1 ---- */
#define MPA_KEY_REQ       "MPA ID Req Frame"
#define MPA_KEY_REP       "MPA ID Rep Frame"
#define MPA_KEY_LEN       16u
#define MPA_HDR_LEN       20u     /* key(16) | flags/rev(2) | PD_Length(2) */
#define MPA_MAX_PD        512u    /* RFC 5044 §7.1: Private Data Length <= 512 */
#define MPA_FLAG_MARKERS  0x8000u /* M */
#define MPA_FLAG_CRC      0x4000u /* C */
#define MPA_FLAG_REJECT   0x2000u /* R */
#define MPA_FLAG_ENHANCED 0x1000u /* RFC 6581 §7: IRD/ORD word present */
#define MPA_FLAG_RES_0800 0x0800u /* reserved; Linux siw sets it: tolerated */
#define MPA_REV_MASK      0x00ffu
#define MPA_REV1          1u
#define MPA_REV2          2u

/* RFC 6581 §9: the enhanced connection data, first 4 bytes of private data:
 * IRD word (P2P flag, Send-RTR flag, 14-bit IRD), ORD word (Write-RTR flag,
 * Read-RTR flag, 14-bit ORD). */
#define MPA_V2_WORD_LEN     4u
#define MPA_V2_PEER_TO_PEER 0x8000u /* in IRD */
#define MPA_V2_SEND_RTR     0x4000u /* in IRD: zero-length Send as RTR */
#define MPA_V2_WRITE_RTR    0x8000u /* in ORD */
#define MPA_V2_READ_RTR     0x4000u /* in ORD */
#define MPA_V2_IRD_ORD_MASK 0x3fffu

/* ---- FPDU, RFC 5044 §4 ---- */
#define MPA_LEN_SIZE  2u /* ULPDU_Length */
#define MPA_CRC_SIZE  4u
#define MPA_MAX_ULPDU 0xffffu
/* Pad so that 2 + ULPDU + pad is a multiple of 4 (RFC 5044 §4.1). */
static inline uint32_t mpa_pad(uint32_t ulpdu_len)
{
	return (4u - ((MPA_LEN_SIZE + ulpdu_len) & 3u)) & 3u;
}

/* ---- DDP, RFC 5041 §4 ---- */
/* First byte: T(0x80) L(0x40) Rsvd(4 bits) DV(2 bits). */
#define DDP_FLAG_TAGGED 0x80u
#define DDP_FLAG_LAST   0x40u
#define DDP_DV_MASK     0x03u
#define DDP_VERSION     1u
/* Tagged header: ctrl(1) RsvdULP(1) STag(4) TO(8). */
#define DDP_TAGGED_HDR_LEN 14u
#define DDP_T_OFF_STAG     2u
#define DDP_T_OFF_TO       6u
/* Untagged header: ctrl(1) RsvdULP(1) RsvdULP(4) QN(4) MSN(4) MO(4). */
#define DDP_UNTAGGED_HDR_LEN 18u
#define DDP_U_OFF_RSVDULP    2u /* RDMAP: Invalidate STag (RFC 5040 §4.2) */
#define DDP_U_OFF_QN         6u
#define DDP_U_OFF_MSN        10u
#define DDP_U_OFF_MO         14u
#define DDP_MAX_HDR_LEN      DDP_UNTAGGED_HDR_LEN

/* RFC 5040 §5.1: untagged queues. */
enum rdmap_qn {
	RDMAP_QN_SEND = 0,
	RDMAP_QN_READ_REQ = 1,
	RDMAP_QN_TERMINATE = 2,
};

/* ---- RDMAP, RFC 5040 §4 ---- */
/* Second byte: RV(2 bits) Rsvd(2 bits) OpCode(4 bits). */
#define RDMAP_VERSION     1u
#define RDMAP_RV_SHIFT    6u
#define RDMAP_OPCODE_MASK 0x0fu

enum rdmap_opcode {
	RDMAP_WRITE = 0x0,
	RDMAP_READ_REQ = 0x1,
	RDMAP_READ_RESP = 0x2,
	RDMAP_SEND = 0x3,
	RDMAP_SEND_INV = 0x4,
	RDMAP_SEND_SE = 0x5,
	RDMAP_SEND_SE_INV = 0x6,
	RDMAP_TERMINATE = 0x7,
};

/* RFC 5040 §4.4: RDMA Read Request header after the untagged DDP header. */
#define RDMAP_RREQ_LEN       28u
#define RDMAP_RREQ_SINK_STAG 0u
#define RDMAP_RREQ_SINK_TO   4u
#define RDMAP_RREQ_SIZE      12u
#define RDMAP_RREQ_SRC_STAG  16u
#define RDMAP_RREQ_SRC_TO    20u

/* RFC 5040 §4.8: Terminate Control, 4 bytes after the untagged header:
 * Layer(4) EType(4) | Error Code(8) | M D R + reserved(13).
 * Linux siw writes byte 0 as EType<<4 | Layer and M/D/R in the low bits of
 * byte 2 (docs/linux-peer.md); siw_term_decode() reads both. */
#define RDMAP_TERM_CTRL_LEN 4u
#define RDMAP_TERM_FLAG_M   0x80u /* byte 2: DDP Segment Length valid */
#define RDMAP_TERM_FLAG_D   0x40u /* byte 2: DDP header included */
#define RDMAP_TERM_FLAG_R   0x20u /* byte 2: RDMAP header included */

enum term_layer {
	TERM_LAYER_RDMAP = 0x0,
	TERM_LAYER_DDP = 0x1,
	TERM_LAYER_LLP = 0x2, /* MPA */
};

/* RFC 5040 §7: RDMAP error types and codes. */
enum rdmap_etype {
	RDMAP_ETYPE_CATASTROPHIC = 0x0,
	RDMAP_ETYPE_REMOTE_PROT = 0x1,
	RDMAP_ETYPE_REMOTE_OP = 0x2,
};

enum rdmap_ecode {
	RDMAP_ECODE_INVALID_STAG = 0x00,
	RDMAP_ECODE_BASE_BOUNDS = 0x01,
	RDMAP_ECODE_ACCESS_RIGHTS = 0x02,
	RDMAP_ECODE_STAG_NOT_ASSOC = 0x03,
	RDMAP_ECODE_TO_WRAP = 0x04,
	RDMAP_ECODE_VERSION = 0x05,
	RDMAP_ECODE_OPCODE = 0x06,
	RDMAP_ECODE_CATASTROPHIC_STREAM = 0x07,
	RDMAP_ECODE_CATASTROPHIC_GLOBAL = 0x08,
	RDMAP_ECODE_CANNOT_INVALIDATE = 0x09,
	RDMAP_ECODE_UNSPECIFIED = 0xff,
};

/* RFC 5041 §7: DDP error types and codes. */
enum ddp_etype {
	DDP_ETYPE_CATASTROPHIC = 0x0,
	DDP_ETYPE_TAGGED = 0x1,
	DDP_ETYPE_UNTAGGED = 0x2,
};

enum ddp_ecode {
	/* tagged buffer errors */
	DDP_ECODE_T_INVALID_STAG = 0x00,
	DDP_ECODE_T_BASE_BOUNDS = 0x01,
	DDP_ECODE_T_STAG_NOT_ASSOC = 0x02,
	DDP_ECODE_T_TO_WRAP = 0x03,
	DDP_ECODE_T_VERSION = 0x04,
	/* untagged buffer errors */
	DDP_ECODE_UT_INVALID_QN = 0x01,
	DDP_ECODE_UT_INVALID_MSN_NOBUF = 0x02,
	DDP_ECODE_UT_INVALID_MSN_RANGE = 0x03,
	DDP_ECODE_UT_INVALID_MO = 0x04,
	DDP_ECODE_UT_MSG_TOO_LONG = 0x05,
	DDP_ECODE_UT_VERSION = 0x06,
	/* catastrophic */
	DDP_ECODE_CATASTROPHIC = 0x00,
};

/* RFC 5044 §8 and RFC 6581 §10: MPA (LLP) error codes, etype 0. */
enum llp_ecode {
	LLP_ECODE_STREAM_LOST = 0x01,
	LLP_ECODE_CRC = 0x02,
	LLP_ECODE_FPDU_START = 0x03, /* marker/ULPDU length mismatch, bad framing */
	LLP_ECODE_INVALID_REQ_RESP = 0x04,
	LLP_ECODE_LOCAL_CATASTROPHIC = 0x05,
	LLP_ECODE_INSUFFICIENT_IRD = 0x06,
	LLP_ECODE_NO_MATCHING_RTR = 0x07,
};
#define LLP_ETYPE_MPA 0x0u

#endif
