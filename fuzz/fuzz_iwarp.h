/* SPDX-License-Identifier: MIT */
/*
 * The softiwarp receive path fuzz targets' common body: fuzz_iwarp_rx (the
 * endpoint in memory, resources made once: fast) and fuzz_iwarp_conn (the
 * endpoint over a socketpair, driven by the progress engine, everything
 * made per input: slow, but with epoll, real socket reads and the
 * connection request of the responder as a listener has it). Both feed
 * MPA start frames (as responder and as initiator), FPDUs with and without
 * CRC, DDP tagged and untagged headers and every RDMAP opcode, placed into
 * the registered 64 KiB region of a fake connection
 * (src/softiwarp/siw_fuzz.h).
 *
 * Input: control bytes, then the byte stream the peer sends.
 *   byte 0: bits 0-1 mode (0 established, 1 MPA responder, 2 MPA initiator,
 *           3 established with MPA revision 1)
 *           bit 2   MPA CRC in use / requested
 *           bit 3   small maximum ULPDU (64) for what we send back
 *           bit 4   IRD/ORD 1 instead of the default
 *           bit 5   MPA initiator: offer an RFC 6581 RTR, zero-length Read
 *                   (zero-length Write when bit 4 is set too)
 *           bit 6   recompute the CRC of every FPDU in the stream (so the
 *                   fuzzer gets past the CRC check with CRC on)
 *           bit 7   rewrite the STag / Tagged Offset of tagged segments, the
 *                   source STag / TO of Read Requests and the Invalidate
 *                   STag of Sends with Invalidate to name the endpoint's
 *                   region (offsets kept modulo its length)
 *   byte 1: bits 0-5 how the stream is split across siw_fuzz_feed() calls:
 *           0 whole, else chunks of that many bytes (the receive state
 *           machine must resume anywhere, STYLE.md "resumable state
 *           machines"); bit 6 Read Response receive prediction off (it is
 *           opt-in in the provider; the fuzzer keeps it on by default, as
 *           before bit 6 meant this); bit 7 unused.
 *   byte 2 (fuzz_iwarp_rx only): bits 0-1 RDMA Reads posted before the
 *           stream (siw_fuzz_cfg.reads: Read Responses then have a sink;
 *           with bit 7 of byte 0 a tagged segment's offset is kept in the
 *           sinks, the region's upper half); bit 2 the peer closes after
 *           the stream; bits 3-7 unused.
 * The rewriting walks the stream as the provider would (MPA start frame
 * first when in an MPA mode, then FPDUs without markers) and stops at the
 * first frame that does not fit; it only ever changes bytes in a copy.
 *
 * Checks beyond "no crash, no leak" (ASan, UBSan): the state never goes
 * back to MPA negotiation once established, and the endpoint's region keeps
 * its address and length whatever the peer sends.
 */
#ifndef RPCRDMA_FUZZ_IWARP_H
#define RPCRDMA_FUZZ_IWARP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "softiwarp/siw_fuzz.h"
#include "util/be.h"

/* RFC 5044 §6: CRC32c over ULPDU_Length | ULPDU | pad, stored so that it
 * reads little-endian (what Linux siw and Wireshark do). ISA-L's
 * crc32_iscsi takes the running value un-inverted: pass ~0 and invert. */
static void fix_crc(uint8_t *fpdu, size_t covered)
{
	uint32_t c = ~crc32_iscsi(fpdu, (int)covered, 0xffffffffu);

	put_le32(fpdu + covered, c);
}

static void rewrite(uint8_t *s, size_t n, bool mpa_frame, bool crc, bool tags,
		    const struct siw_fuzz_info *info, bool sinks)
{
	size_t off = 0;
	/* tagged placement into the posted Reads' sinks (upper half) */
	uint64_t base = sinks ? info->len / 2 : 0, span = sinks ? info->len / 2 : info->len;

	if (mpa_frame) {
		/* RFC 5044 §7.1: 16-byte key, flags, PD_Length, PD */
		if (n < 20)
			return;
		off = 20 + (size_t)get_be16(s + 18);
	}
	while (off + 2 <= n) {
		size_t ulen = get_be16(s + off);
		size_t covered = (2 + ulen + 3) & ~(size_t)3;
		if (off + covered + 4 > n)
			return;
		uint8_t *u = s + off + 2;
		if (tags && ulen >= 14 && (u[0] & 0x80)) {
			/* RFC 5041 §4.3: tagged: STag at 2, TO at 6 */
			put_be32(u + 2, info->stag);
			put_be64(u + 6, info->to + base + get_be64(u + 6) % span);
		} else if (tags && ulen >= 46 && !(u[0] & 0x80) && (u[1] & 0x0f) == 1) {
			/* RFC 5040 §4.4: Read Request source STag at 34 */
			put_be32(u + 34, info->stag);
			put_be64(u + 38, info->to + get_be64(u + 38) % info->len);
		} else if (tags && ulen >= 18 && !(u[0] & 0x80) &&
			   ((u[1] & 0x0f) == 4 || (u[1] & 0x0f) == 6)) {
			/* RFC 5040 §4.3: Send with (SE and) Invalidate names
			 * the STag to invalidate at 2 */
			put_be32(u + 2, info->stag);
		}
		if (crc)
			fix_crc(s + off, covered);
		off += covered + 4;
	}
}

/* One input; @in_memory: fuzz_iwarp_rx (three control bytes). */
static int iwarp_one(const uint8_t *data, size_t size, bool in_memory)
{
	struct siw_fuzz_cfg cfg;
	struct siw_fuzz *f;
	struct siw_fuzz_info *info;
	size_t nctl = in_memory ? 3 : 2;
	uint8_t extra = 0;

	if (size < nctl)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.in_memory = in_memory;
	if (in_memory) {
		extra = data[2];
		cfg.reads = extra & 3u;
	}
	switch (data[0] & 3) {
	case 1:
		cfg.mode = SIW_FUZZ_MPA_RESPONDER;
		break;
	case 2:
		cfg.mode = SIW_FUZZ_MPA_INITIATOR;
		break;
	case 3:
		cfg.mode = SIW_FUZZ_RTS;
		cfg.mpa_rev = 1;
		break;
	default:
		cfg.mode = SIW_FUZZ_RTS;
		break;
	}
	cfg.crc = (data[0] & 4) != 0;
	if (data[0] & 8)
		cfg.max_ulpdu = 64;
	if (data[0] & 16)
		cfg.ird = cfg.ord = 1;
	if (data[0] & 32)
		cfg.rtr = (data[0] & 16) ? 1 : 2; /* enum rpcrdma_rtr: Write / Read */
	size_t chunk = data[1] & 0x3fu;

	cfg.pred_read = (data[1] & 0x40u) == 0;
	const uint8_t *in = data + nctl;
	size_t n = size - nctl;

	if (siw_fuzz_create(&cfg, &f) != 0)
		return 0;
	info = malloc(sizeof(*info));
	uint8_t *s = malloc(n ? n : 1);
	if (!info || !s)
		goto out;
	memcpy(s, in, n);
	if (siw_fuzz_info(f, info) != 0)
		goto out;
	uint8_t *region = siw_fuzz_region(f);
	if (data[0] & 0xc0)
		rewrite(s, n, cfg.mode != SIW_FUZZ_RTS, (data[0] & 0x40) && cfg.crc,
			(data[0] & 0x80) != 0, info, cfg.reads != 0);

	bool established = info->state == SIW_FUZZ_ST_RTS;
	for (size_t off = 0; off < n;) {
		size_t take = chunk ? chunk : n;
		if (take > n - off)
			take = n - off;
		if (siw_fuzz_feed(f, s + off, take) != 0)
			break;
		off += take;
		enum siw_fuzz_state st = siw_fuzz_state(f);

		/* an established connection never goes back to MPA setup */
		if (established && st == SIW_FUZZ_ST_MPA)
			__builtin_trap();
		established |= st == SIW_FUZZ_ST_RTS;
		if (st == SIW_FUZZ_ST_ERROR || st == SIW_FUZZ_ST_CLOSED)
			break;
	}
	if ((extra & 4u) && siw_fuzz_close(f) == 0 && established &&
	    siw_fuzz_state(f) == SIW_FUZZ_ST_MPA)
		__builtin_trap();
	/* the region pointer and length stay what they were */
	if (siw_fuzz_info(f, info) == 0 && (siw_fuzz_region(f) != region || info->len != 65536))
		__builtin_trap();
out:
	free(s);
	free(info);
	siw_fuzz_destroy(f);
	return 0;
}

#endif
