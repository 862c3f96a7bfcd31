/* SPDX-License-Identifier: MIT */
/*
 * The receive path harness of src/softiwarp/siw_fuzz.h in its two modes:
 * over a socketpair with the progress engine (fuzz_iwarp_conn) and in
 * memory (fuzz_iwarp_rx). Each case is a byte stream built here from RFC
 * 5044 / 5041 / 5040 with what it must do (bytes placed in the region, a
 * receive completed, the Terminate's layer, type and code, the Read
 * Response sent back); both modes must do exactly that, whole and cut in
 * small pieces, and report the same (state, bytes sent back, region). The
 * in-memory mode must also start every input from the same state (an
 * invalidated region is valid again) and refuse a second harness.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "softiwarp/iwarp.h"
#include "softiwarp/siw_fuzz.h"

#define REGION_LEN 65536u

static int failures;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__,       \
				cur_case, #c);                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static const char *cur_case = "";

struct stream {
	uint8_t b[16384];
	size_t n;
	bool crc;
};

/* RFC 5044 §4: ULPDU_Length, ULPDU, pad, CRC32c (little-endian, as
 * fuzz/fuzz_iwarp.h and Linux siw store it; zero without CRC) */
static void fpdu(struct stream *s, const uint8_t *ulpdu, size_t ulen, bool bad_crc)
{
	uint8_t *f = s->b + s->n;
	size_t covered = (2 + ulen + 3) & ~(size_t)3;

	memset(f, 0, covered + 4);
	put_be16(f, (uint16_t)ulen);
	memcpy(f + 2, ulpdu, ulen);
	if (s->crc) {
		uint32_t c = ~crc32_iscsi(f, (int)covered, 0xffffffffu);

		put_le32(f + covered, bad_crc ? c ^ 1u : c);
	}
	s->n += covered + 4;
}

/* RFC 5041 §4.3 tagged, RFC 5040 §4.1 control byte */
static void tagged(struct stream *s, uint8_t op, uint32_t stag, uint64_t to, const uint8_t *p,
		   size_t n, bool bad_crc)
{
	uint8_t u[DDP_TAGGED_HDR_LEN + 4096];

	u[0] = DDP_FLAG_TAGGED | DDP_FLAG_LAST | DDP_VERSION;
	u[1] = (uint8_t)(RDMAP_VERSION << RDMAP_RV_SHIFT | op);
	put_be32(u + DDP_T_OFF_STAG, stag);
	put_be64(u + DDP_T_OFF_TO, to);
	memcpy(u + DDP_TAGGED_HDR_LEN, p, n);
	fpdu(s, u, DDP_TAGGED_HDR_LEN + n, bad_crc);
}

/* RFC 5041 §4.4 untagged */
static void untagged(struct stream *s, uint8_t op, uint32_t qn, uint32_t msn, uint32_t rsvd,
		     const uint8_t *p, size_t n)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + 4096];

	u[0] = DDP_FLAG_LAST | DDP_VERSION;
	u[1] = (uint8_t)(RDMAP_VERSION << RDMAP_RV_SHIFT | op);
	put_be32(u + DDP_U_OFF_RSVDULP, rsvd);
	put_be32(u + DDP_U_OFF_QN, qn);
	put_be32(u + DDP_U_OFF_MSN, msn);
	put_be32(u + DDP_U_OFF_MO, 0);
	if (n)
		memcpy(u + DDP_UNTAGGED_HDR_LEN, p, n);
	fpdu(s, u, DDP_UNTAGGED_HDR_LEN + n, false);
}

struct outcome {
	struct siw_fuzz_info info;
	uint8_t region[REGION_LEN];
};

/* What the harness's endpoint does with @s fed in @chunk-byte pieces (0:
 * whole), then the peer's close when @close. Both modes give the region
 * the same STag (a new device's first registration, or the first of the
 * in-memory resources) and the same fixed address (see run_both). */
static int run(bool in_memory, const struct siw_fuzz_cfg *base, const struct stream *s,
	       size_t chunk, bool close, struct outcome *o)
{
	struct siw_fuzz_cfg cfg = *base;
	struct siw_fuzz *f;
	int rc;

	cfg.in_memory = in_memory;
	cfg.crc = s->crc;
	rc = siw_fuzz_create(&cfg, &f);
	if (rc)
		return rc;
	for (size_t off = 0; off < s->n;) {
		size_t k = chunk && chunk < s->n - off ? chunk : s->n - off;

		rc = siw_fuzz_feed(f, s->b + off, k);
		if (rc)
			break;
		off += k;
	}
	if (!rc && close)
		rc = siw_fuzz_close(f);
	if (!rc)
		rc = siw_fuzz_info(f, &o->info);
	if (!rc)
		memcpy(o->region, siw_fuzz_region(f), REGION_LEN);
	siw_fuzz_destroy(f);
	return rc;
}

static struct outcome out_mem, out_sock, out_piece;

/* Run @s both ways, whole and in 5-byte pieces: all must agree. The
 * in-memory outcome is left in out_mem for the case's own checks. */
static void run_both(const struct siw_fuzz_cfg *cfg, const struct stream *s, bool close)
{
	/* the socketpair harness first: the in-memory one keeps the region's
	 * fixed address (its Tagged Offset) until released */
	CHECK(run(false, cfg, s, 0, close, &out_sock) == 0);
	CHECK(run(true, cfg, s, 5, close, &out_piece) == 0);
	CHECK(run(true, cfg, s, 0, close, &out_mem) == 0);
	siw_fuzz_mem_release();
	const struct outcome *other[] = {&out_sock, &out_piece};

	for (size_t i = 0; i < 2; i++) {
		const struct siw_fuzz_info *a = &out_mem.info, *b = &other[i]->info;

		CHECK(a->state == b->state);
		CHECK(a->recvs_done == b->recvs_done);
		CHECK(a->tx_bytes == b->tx_bytes);
		CHECK(a->tx_keep_len == b->tx_keep_len &&
		      memcmp(a->tx_keep, b->tx_keep, a->tx_keep_len) == 0);
		CHECK(a->term_sent == b->term_sent);
		CHECK(a->term_layer == b->term_layer && a->term_etype == b->term_etype &&
		      a->term_code == b->term_code);
		CHECK(memcmp(out_mem.region, other[i]->region, REGION_LEN) == 0);
	}
}

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7u);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The region's STag and Tagged Offset, as the harness reports them. */
static void region_of(uint32_t *stag, uint64_t *to)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS};
	struct siw_fuzz *f;
	struct siw_fuzz_info *info = malloc(sizeof(*info));

	if (!info || siw_fuzz_create(&cfg, &f) != 0) {
		fprintf(stderr, "harness: cannot create\n");
		exit(1);
	}
	(void)siw_fuzz_info(f, info);
	*stag = info->stag;
	*to = info->to;
	siw_fuzz_destroy(f);
	free(info);
}

static uint32_t stag;
static uint64_t to0;
static struct stream s;

/* A Write then a Send, CRC off and on: placed, received, nothing sent. */
static void case_write_send(bool crc)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS};
	uint8_t w[100], m[50];

	cur_case = crc ? "write_send crc" : "write_send";
	memset(&s, 0, sizeof(s));
	s.crc = crc;
	pattern(w, sizeof(w), 1);
	pattern(m, sizeof(m), 2);
	tagged(&s, RDMAP_WRITE, stag, to0 + 1000, w, sizeof(w), false);
	untagged(&s, RDMAP_SEND, RDMAP_QN_SEND, 1, 0, m, sizeof(m));
	run_both(&cfg, &s, false);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_RTS);
	CHECK(memcmp(out_mem.region + 1000, w, sizeof(w)) == 0);
	CHECK(all_zero(out_mem.region, 1000) && all_zero(out_mem.region + 1100, REGION_LEN - 1100));
	CHECK(out_mem.info.recvs_done == 1);
	CHECK(out_mem.info.tx_bytes == 0 && !out_mem.info.term_sent);
}

/* A Write whose CRC is wrong (RFC 5044 §8: LLP, MPA, CRC error). */
static void case_bad_crc(void)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS};
	uint8_t w[64];

	cur_case = "bad_crc";
	memset(&s, 0, sizeof(s));
	s.crc = true;
	pattern(w, sizeof(w), 3);
	tagged(&s, RDMAP_WRITE, stag, to0, w, sizeof(w), true);
	run_both(&cfg, &s, false);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_ERROR && out_mem.info.term_sent);
	CHECK(out_mem.info.term_layer == TERM_LAYER_LLP &&
	      out_mem.info.term_etype == LLP_ETYPE_MPA && out_mem.info.term_code == LLP_ECODE_CRC);
	CHECK(out_mem.info.tx_bytes > 0);
}

/* A Write with an unknown STag, one past the region's end: Terminates
 * (RFC 5041 §7 tagged buffer errors), nothing placed. */
static void case_bad_tagged(bool bounds)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS};
	uint8_t w[100];

	cur_case = bounds ? "base_bounds" : "bad_stag";
	memset(&s, 0, sizeof(s));
	pattern(w, sizeof(w), 4);
	if (bounds)
		tagged(&s, RDMAP_WRITE, stag, to0 + REGION_LEN - 99, w, sizeof(w), false);
	else
		tagged(&s, RDMAP_WRITE, stag ^ 0x100u, to0, w, sizeof(w), false);
	run_both(&cfg, &s, false);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_ERROR && out_mem.info.term_sent);
	CHECK(out_mem.info.term_layer == TERM_LAYER_DDP &&
	      out_mem.info.term_etype == DDP_ETYPE_TAGGED);
	CHECK(out_mem.info.term_code ==
	      (bounds ? DDP_ECODE_T_BASE_BOUNDS : DDP_ECODE_T_INVALID_STAG));
	CHECK(all_zero(out_mem.region, REGION_LEN));
}

/* A Write, then a Read Request for those bytes: the Read Response that
 * goes back carries them to the requester's sink (RFC 5040 §4.4, §4.5). */
static void case_read_request(void)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS};
	uint8_t w[64], rr[RDMAP_RREQ_LEN];
	const uint8_t *t;

	cur_case = "read_request";
	memset(&s, 0, sizeof(s));
	pattern(w, sizeof(w), 5);
	tagged(&s, RDMAP_WRITE, stag, to0 + 256, w, sizeof(w), false);
	put_be32(rr + RDMAP_RREQ_SINK_STAG, 0x1234u);
	put_be64(rr + RDMAP_RREQ_SINK_TO, 0x5000u);
	put_be32(rr + RDMAP_RREQ_SIZE, sizeof(w));
	put_be32(rr + RDMAP_RREQ_SRC_STAG, stag);
	put_be64(rr + RDMAP_RREQ_SRC_TO, to0 + 256);
	untagged(&s, RDMAP_READ_REQ, RDMAP_QN_READ_REQ, 1, 0, rr, sizeof(rr));
	run_both(&cfg, &s, false);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_RTS && !out_mem.info.term_sent);
	/* one FPDU: length, tagged header, the 64 bytes, CRC word (zero) */
	CHECK(out_mem.info.tx_bytes == 2 + DDP_TAGGED_HDR_LEN + sizeof(w) + 4);
	t = out_mem.info.tx_keep;
	CHECK(get_be16(t) == DDP_TAGGED_HDR_LEN + sizeof(w));
	CHECK(t[2] == (DDP_FLAG_TAGGED | DDP_FLAG_LAST | DDP_VERSION));
	CHECK((t[3] & RDMAP_OPCODE_MASK) == RDMAP_READ_RESP);
	CHECK(get_be32(t + 2 + DDP_T_OFF_STAG) == 0x1234u);
	CHECK(get_be64(t + 2 + DDP_T_OFF_TO) == 0x5000u);
	CHECK(memcmp(t + 2 + DDP_TAGGED_HDR_LEN, w, sizeof(w)) == 0);
}

/* A Read posted at creation (its Read Request goes out), then its Read
 * Response: placed in the sink, the region's upper half. */
static void case_read_response(void)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS, .reads = 1, .pred_read = true};
	static uint8_t r[4096];
	const uint8_t *t;

	cur_case = "read_response";
	memset(&s, 0, sizeof(s));
	pattern(r, sizeof(r), 6);
	tagged(&s, RDMAP_READ_RESP, stag, to0 + 32768, r, sizeof(r), false);
	run_both(&cfg, &s, false);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_RTS && !out_mem.info.term_sent);
	CHECK(memcmp(out_mem.region + 32768, r, sizeof(r)) == 0);
	CHECK(all_zero(out_mem.region, 32768));
	/* what went out: the Read Request for it */
	t = out_mem.info.tx_keep;
	CHECK(out_mem.info.tx_bytes == 2 + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN + 4);
	CHECK((t[3] & RDMAP_OPCODE_MASK) == RDMAP_READ_REQ);
	CHECK(get_be32(t + 2 + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_SINK_STAG) == stag);
	CHECK(get_be64(t + 2 + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_SINK_TO) == to0 + 32768);
	CHECK(get_be32(t + 2 + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_SIZE) == sizeof(r));
}

/* The peer closes after a Write: the connection ends without Terminate. */
static void case_close(void)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS};
	uint8_t w[8] = {1, 2, 3, 4, 5, 6, 7, 8};

	cur_case = "close";
	memset(&s, 0, sizeof(s));
	tagged(&s, RDMAP_WRITE, stag, to0, w, sizeof(w), false);
	run_both(&cfg, &s, true);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_CLOSED && !out_mem.info.term_sent);
	CHECK(memcmp(out_mem.region, w, sizeof(w)) == 0);
}

/* In memory the resources outlive an input: one that invalidates the
 * region (Send with Invalidate, RFC 5040 §4.3) must not change the next,
 * and a second harness at the same time is refused. */
static void case_reset(void)
{
	struct siw_fuzz_cfg cfg = {.mode = SIW_FUZZ_RTS, .in_memory = true};
	struct siw_fuzz *f, *g;
	uint8_t w[16];

	cur_case = "reset";
	memset(&s, 0, sizeof(s));
	untagged(&s, RDMAP_SEND_INV, RDMAP_QN_SEND, 1, stag, NULL, 0);
	CHECK(run(true, &cfg, &s, 0, false, &out_mem) == 0);
	CHECK(out_mem.info.recvs_done == 1 && out_mem.info.state == SIW_FUZZ_ST_RTS);
	/* the same connection would now refuse a Write to it; a new input
	 * does not */
	memset(&s, 0, sizeof(s));
	pattern(w, sizeof(w), 7);
	tagged(&s, RDMAP_WRITE, stag, to0, w, sizeof(w), false);
	CHECK(run(true, &cfg, &s, 0, false, &out_mem) == 0);
	CHECK(out_mem.info.state == SIW_FUZZ_ST_RTS && !out_mem.info.term_sent);
	CHECK(memcmp(out_mem.region, w, sizeof(w)) == 0);
	CHECK(siw_fuzz_create(&cfg, &f) == 0);
	CHECK(siw_fuzz_create(&cfg, &g) == -EBUSY);
	siw_fuzz_destroy(f);
	siw_fuzz_mem_release();
}

int main(void)
{
	region_of(&stag, &to0);
	case_write_send(false);
	case_write_send(true);
	case_bad_crc();
	case_bad_tagged(false);
	case_bad_tagged(true);
	case_read_request();
	case_read_response();
	case_close();
	case_reset();
	if (failures) {
		fprintf(stderr, "test_siw_fuzz_mem: %d checks failed\n", failures);
		return 1;
	}
	printf("test_siw_fuzz_mem: ok\n");
	return 0;
}
