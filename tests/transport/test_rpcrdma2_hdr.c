/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA Version Two header codec (src/transport/rpcrdma2_hdr.c) and
 * our optional messages (src/transport/rpcrdma2_opt.c):
 *   - known-answer word arrays written out by hand for every proc and
 *     error code and for our two opttypes; the encoders produce exactly
 *     those bytes, rpcrdma2_hdr_size() predicts them, the decoder gives
 *     the fields back, also from iovecs cut at every byte;
 *   - random round trips (seed printed; RPCRDMA_TEST_SEED overrides);
 *   - every truncation of every vector, counts that overflow or exceed the
 *     limits, unknown proc, unknown error code, bad direction / optdir,
 *     optinfo length past the end, non-zero padding, each with its errno
 *     and its RDMA2_ERROR answer; the direction check (§4.2.2);
 *   - the property list: ids skipped, empty values, duplicates, bad
 *     lengths, truncation; the pull completion;
 *   - rpcrdma2_hdr_print() output for a few headers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"
#include "transport/rpcrdma2_print.h"

#include "lib/check.h"
#include "hdr_test.h"

/* ---- known answers ---- */

/* RDMA2_MSG, CALL, no chunks; then an RPC call (xid, CALL, ...). */
static const uint8_t kat_msg_call[] = {
    W(0x11223344), W(2), W(32), W(0), /* xid vers credit RDMA2_MSG */
    W(0),                             /* rdma_direction CALL */
    W(0),          W(0), W(0),        /* no Read list, Write list, Reply chunk */
    W(0x11223344), W(0), W(2),        /* RPC: xid CALL rpcvers ... */
};
#define KAT_MSG_CALL_HDR 32u

/* RDMA2_MSG, REPLY, echoing one Write chunk of two segments. */
static const uint8_t kat_msg_reply_write[] = {
    W(0x55667788), W(2),    W(64),
    W(0),                /* RDMA2_MSG */
    W(1),                /* REPLY */
    W(0),                /* no Read list */
    W(1),          W(2), /* a Write chunk of 2 segments */
    W(0xaa000001), W(4096), H(0x1000200030004000ull),
    W(0xaa000002), W(100),  H(0x0000000000000010ull),
    W(0), /* end of Write list */
    W(0), /* no Reply chunk */
};

/* RDMA2_NOMSG, CALL: a Position Zero Read chunk of one segment and a
 * Reply chunk of one segment (a long call expecting a long reply). */
static const uint8_t kat_nomsg_call[] = {
    W(0x01020304), W(2), W(8),          W(1), /* RDMA2_NOMSG */
    W(0),                                     /* CALL */
    W(1),          W(0), W(0xbb000001), W(2000),  H(0xdeadbeef00000000ull),
    W(0), /* end of Read list */
    W(0), /* no Write list */
    W(1),          W(1), W(0xcc000001), W(65536), H(0x7f0000001000ull),
};

static const uint8_t kat_err_vers[] = {
    W(0x0a0b0c0d), W(2), W(1), W(4), W(1), W(1), W(2), /* ERROR ERR_VERS 1..2 */
};
static const uint8_t kat_err_bad_header[] = {
    W(0x0a0b0c0e), W(2), W(1), W(4), W(2), /* ERROR ERR_BAD_HEADER */
};
static const uint8_t kat_err_inval_option[] = {
    W(0x0a0b0c0f), W(2), W(1), W(4), W(3), /* ERROR ERR_INVAL_OPTION */
};

/* RDMA2_OPTIONAL, CALL, our properties: max send size 65536, receive
 * buffer size 65536, reverse direction GENL, responder Read chunks. */
static const uint8_t kat_opt_props[] = {
    W(0x10000001), W(2), W(1),     W(5), /* RDMA2_OPTIONAL */
    W(0),                                /* optdir CALL */
    W(0x52444d01),                       /* opttype: transport properties */
    W(52),                               /* optinfo length */
    W(4),                                /* four rpcrdma2_propval */
    W(1),          W(4), W(65536),       /* max send size */
    W(2),          W(4), W(65536),       /* receive buffer size */
    W(5),          W(4), W(3),           /* reverse direction: GENL */
    W(0x52444d10), W(4), W(1),           /* responder Read chunks: TRUE */
};

/* RDMA2_OPTIONAL, CALL, pull completion of reply xid 0x77777777. */
static const uint8_t kat_opt_pull_done[] = {
    W(0x77777777), W(2), W(1), W(5), W(0), W(0x52444d02), W(4), W(0x77777777),
};

/* RDMA2_OPTIONAL, REPLY, an opttype nobody knows, 5 bytes of optinfo and
 * 3 of zero padding, then 8 bytes of payload. */
static const uint8_t kat_opt_unknown[] = {
    W(0x20000002), W(2), W(3), W(5), W(1), W(0x00000007), W(5), 0xde, 0xad, 0xbe,
    0xef,          0x42, 0,    0,    0,    W(0x20000002), W(1), /* payload: an RPC reply's xid and REPLY */
};
#define KAT_OPT_UNKNOWN_HDR 36u

/* Encodes with @fn into a buffer, checks the bytes and the size. */
#define CHECK_ENCODES(want, len, call)                                                             \
	do {                                                                                       \
		uint8_t out_[512];                                                                 \
		struct rpcrdma_xdr x_;                                                             \
		rpcrdma_xdr_init(&x_, out_, sizeof(out_), RPCRDMA_XDR_ENCODE);                     \
		struct rpcrdma_xdr *x = &x_;                                                       \
		CHECK_RC((call), 0);                                                               \
		CHECK(rpcrdma_xdr_getpos(&x_) == (len));                                           \
		CHECK(memcmp(out_, (want), (len)) == 0);                                           \
	} while (0)

/* Decoding @len bytes from iovecs cut at every pair of places gives @ref. */
static int same_hdr(const struct rpcrdma2_hdr *a, const struct rpcrdma2_hdr *b);

static void check_split_decodes(const uint8_t *p, size_t len, const struct rpcrdma2_hdr *ref)
{
	static struct rpcrdma2_hdr d;
	for (size_t a = 0; a <= len; a++) {
		for (size_t b = a; b <= len; b += 3) {
			struct iovec iov[3] = {
			    {(void *)p, a}, {(void *)(p + a), b - a}, {(void *)(p + b), len - b}};
			struct rpcrdma_xdr x;
			CHECK_RC(rpcrdma_xdr_init_iov(&x, iov, 3, RPCRDMA_XDR_DECODE), 0);
			int rc = rpcrdma2_decode(&x, &d);
			if (rc || !same_hdr(ref, &d) || rpcrdma_xdr_getpos(&x) != ref->hdr_len) {
				fprintf(stderr, "split %zu/%zu: rc %d\n", a, b, rc);
				failures++;
				return;
			}
		}
	}
}

static void test_kat_msg(void)
{
	static struct rpcrdma2_hdr h;
	static struct rpcrdma1_chunks c;

	CHECK_ENCODES(kat_msg_call, KAT_MSG_CALL_HDR,
		      rpcrdma2_encode_msg(x, 0x11223344, 32, RPCRDMA2_CALL, NULL));
	CHECK_RC(rpcrdma2_decode_buf(kat_msg_call, sizeof(kat_msg_call), &h), 0);
	CHECK(h.xid == 0x11223344 && h.vers == 2 && h.credit == 32 && h.proc == RPCRDMA2_MSG);
	CHECK(h.direction == RPCRDMA2_CALL && h.hdr_len == KAT_MSG_CALL_HDR);
	CHECK(h.chunks.nreads == 0 && h.chunks.nwrites == 0 && !h.chunks.reply_present);
	CHECK(rpcrdma2_hdr_size(&h) == KAT_MSG_CALL_HDR);
	/* The payload behind it is a CALL: the direction agrees (§4.2.2). */
	uint32_t mt = 9;
	CHECK_RC(rpcrdma2_payload_msg_type(kat_msg_call + h.hdr_len,
					   sizeof(kat_msg_call) - h.hdr_len, &mt),
		 0);
	CHECK(mt == RPCRDMA2_CALL);
	CHECK_RC(rpcrdma2_check_direction(&h, mt), 0);
	check_split_decodes(kat_msg_call, sizeof(kat_msg_call), &h);

	rpcrdma1_chunks_init(&c);
	CHECK_RC(rpcrdma1_chunks_add_write_chunk(&c), 0);
	struct rpcrdma1_segment s1 = seg(0xaa000001, 4096, 0x1000200030004000ull);
	struct rpcrdma1_segment s2 = seg(0xaa000002, 100, 0x10);
	CHECK_RC(rpcrdma1_chunks_add_write_seg(&c, &s1), 0);
	CHECK_RC(rpcrdma1_chunks_add_write_seg(&c, &s2), 0);
	CHECK_ENCODES(kat_msg_reply_write, sizeof(kat_msg_reply_write),
		      rpcrdma2_encode_msg(x, 0x55667788, 64, RPCRDMA2_REPLY, &c));
	CHECK_RC(rpcrdma2_decode_buf(kat_msg_reply_write, sizeof(kat_msg_reply_write), &h), 0);
	CHECK(h.direction == RPCRDMA2_REPLY && h.chunks.nwrites == 1 && h.chunks.nwsegs == 2);
	CHECK(h.chunks.wsegs[1].handle == 0xaa000002 && h.chunks.wsegs[1].length == 100);
	CHECK(h.chunks.wsegs[0].offset == 0x1000200030004000ull);
	/* The Version One chunk checks apply unchanged. */
	uint64_t total = 0;
	CHECK_RC(rpcrdma1_write_list_length(&h.chunks, &total), 0);
	CHECK(total == 4196);
	check_split_decodes(kat_msg_reply_write, sizeof(kat_msg_reply_write), &h);

	rpcrdma1_chunks_init(&c);
	struct rpcrdma1_segment r = seg(0xbb000001, 2000, 0xdeadbeef00000000ull);
	struct rpcrdma1_segment rep = seg(0xcc000001, 65536, 0x7f0000001000ull);
	CHECK_RC(rpcrdma1_chunks_add_read(&c, 0, &r), 0);
	CHECK_RC(rpcrdma1_chunks_add_reply_seg(&c, &rep), 0);
	CHECK_ENCODES(kat_nomsg_call, sizeof(kat_nomsg_call),
		      rpcrdma2_encode_nomsg(x, 0x01020304, 8, RPCRDMA2_CALL, &c));
	CHECK_RC(rpcrdma2_decode_buf(kat_nomsg_call, sizeof(kat_nomsg_call), &h), 0);
	CHECK(h.proc == RPCRDMA2_NOMSG && h.chunks.nreads == 1 && h.chunks.reads[0].position == 0);
	CHECK(h.chunks.reply_present && h.chunks.nreply == 1 && h.chunks.reply[0].length == 65536);
	CHECK(rpcrdma2_hdr_size(&h) == sizeof(kat_nomsg_call));
	check_split_decodes(kat_nomsg_call, sizeof(kat_nomsg_call), &h);
}

static void test_kat_error(void)
{
	static struct rpcrdma2_hdr h;

	CHECK_ENCODES(kat_err_vers, sizeof(kat_err_vers),
		      rpcrdma2_encode_err_vers(x, 0x0a0b0c0d, 1, 1, 2));
	CHECK_ENCODES(kat_err_bad_header, sizeof(kat_err_bad_header),
		      rpcrdma2_encode_error(x, 0x0a0b0c0e, 1, RPCRDMA2_ERR_BAD_HEADER));
	CHECK_ENCODES(kat_err_inval_option, sizeof(kat_err_inval_option),
		      rpcrdma2_encode_error(x, 0x0a0b0c0f, 1, RPCRDMA2_ERR_INVAL_OPTION));

	CHECK_RC(rpcrdma2_decode_buf(kat_err_vers, sizeof(kat_err_vers), &h), 0);
	CHECK(h.proc == RPCRDMA2_ERROR && h.err == RPCRDMA2_ERR_VERS);
	CHECK(h.vers_low == 1 && h.vers_high == 2 && h.hdr_len == sizeof(kat_err_vers));
	CHECK(rpcrdma2_hdr_size(&h) == sizeof(kat_err_vers));
	/* An ERROR carries no payload: there is no direction to check. */
	CHECK_RC(rpcrdma2_check_direction(&h, RPCRDMA2_REPLY), -EINVAL);
	check_split_decodes(kat_err_vers, sizeof(kat_err_vers), &h);

	CHECK_RC(rpcrdma2_decode_buf(kat_err_bad_header, sizeof(kat_err_bad_header), &h), 0);
	CHECK(h.err == RPCRDMA2_ERR_BAD_HEADER && h.hdr_len == 20);
	CHECK_RC(rpcrdma2_decode_buf(kat_err_inval_option, sizeof(kat_err_inval_option), &h), 0);
	CHECK(h.err == RPCRDMA2_ERR_INVAL_OPTION && h.hdr_len == 20);
	CHECK(rpcrdma2_hdr_size(&h) == 20);
}

static void test_kat_optional(void)
{
	static struct rpcrdma2_hdr h;
	struct rpcrdma2_props p, q;
	uint8_t info[128];
	uint32_t len = 0;

	rpcrdma2_props_init(&p);
	p.present = RPCRDMA2_PROPF_MAX_SEND_SIZE | RPCRDMA2_PROPF_RECV_BUF_SIZE |
		    RPCRDMA2_PROPF_REVERSE_DIR | RPCRDMA2_PROPF_RESP_READ;
	p.max_send_size = 65536;
	p.recv_buf_size = 65536;
	p.reverse_dir = RPCRDMA2_RVRSDIR_GENL;
	p.resp_read = true;
	CHECK(rpcrdma2_props_size(&p) == 52);
	CHECK_RC(rpcrdma2_props_encode(info, sizeof(info), &p, &len), 0);
	CHECK(len == 52 && memcmp(info, kat_opt_props + 28, 52) == 0);
	CHECK_ENCODES(kat_opt_props, sizeof(kat_opt_props),
		      rpcrdma2_encode_optional(x, 0x10000001, 1, RPCRDMA2_CALL,
					       RPCRDMA2_OPTTYPE_PROPS, info, len));
	CHECK_RC(rpcrdma2_decode_buf(kat_opt_props, sizeof(kat_opt_props), &h), 0);
	CHECK(h.proc == RPCRDMA2_OPTIONAL && h.optdir == RPCRDMA2_CALL);
	CHECK(h.opttype == RPCRDMA2_OPTTYPE_PROPS && rpcrdma2_opttype_known(h.opttype));
	CHECK(h.optinfo_len == 52 && h.optinfo_off == 28 && h.hdr_len == sizeof(kat_opt_props));
	CHECK(rpcrdma2_hdr_size(&h) == sizeof(kat_opt_props));
	CHECK_RC(rpcrdma2_props_decode(kat_opt_props + h.optinfo_off, h.optinfo_len, &q), 0);
	CHECK(q.present == p.present && q.max_send_size == 65536 && q.recv_buf_size == 65536);
	CHECK(q.reverse_dir == 3 && q.resp_read && !q.remote_inv && q.nunknown == 0);
	CHECK(q.max_seg_size == RPCRDMA2_PROP_DEFAULT_SEG_SIZE && q.max_seg_count == 16);
	check_split_decodes(kat_opt_props, sizeof(kat_opt_props), &h);

	CHECK_RC(rpcrdma2_pull_done_encode(info, sizeof(info), 0x77777777, &len), 0);
	CHECK(len == 4);
	CHECK_ENCODES(kat_opt_pull_done, sizeof(kat_opt_pull_done),
		      rpcrdma2_encode_optional(x, 0x77777777, 1, RPCRDMA2_CALL,
					       RPCRDMA2_OPTTYPE_PULL_DONE, info, len));
	CHECK_RC(rpcrdma2_decode_buf(kat_opt_pull_done, sizeof(kat_opt_pull_done), &h), 0);
	uint32_t xid = 0;
	CHECK_RC(rpcrdma2_pull_done_decode(kat_opt_pull_done + h.optinfo_off, h.optinfo_len, &xid),
		 0);
	CHECK(xid == 0x77777777);

	static const uint8_t five[] = {0xde, 0xad, 0xbe, 0xef, 0x42};
	CHECK_ENCODES(kat_opt_unknown, KAT_OPT_UNKNOWN_HDR,
		      rpcrdma2_encode_optional(x, 0x20000002, 3, RPCRDMA2_REPLY, 7, five, 5));
	CHECK_RC(rpcrdma2_decode_buf(kat_opt_unknown, sizeof(kat_opt_unknown), &h), 0);
	CHECK(h.opttype == 7 && !rpcrdma2_opttype_known(h.opttype));
	CHECK(h.optinfo_len == 5 && h.optinfo_off == 28 && h.hdr_len == KAT_OPT_UNKNOWN_HDR);
	CHECK(memcmp(kat_opt_unknown + h.optinfo_off, five, 5) == 0);
	CHECK(rpcrdma2_hdr_size(&h) == KAT_OPT_UNKNOWN_HDR);
	/* A partial payload follows; it is a REPLY, as optdir says. */
	uint32_t mt = 9;
	CHECK_RC(rpcrdma2_payload_msg_type(kat_opt_unknown + h.hdr_len,
					   sizeof(kat_opt_unknown) - h.hdr_len, &mt),
		 0);
	CHECK_RC(rpcrdma2_check_direction(&h, mt), 0);
	check_split_decodes(kat_opt_unknown, sizeof(kat_opt_unknown), &h);
}

/* ---- truncation ---- */

static const struct vec vectors[] = {
    {"msg call", kat_msg_call, KAT_MSG_CALL_HDR},
    {"msg reply write", kat_msg_reply_write, sizeof(kat_msg_reply_write)},
    {"nomsg call", kat_nomsg_call, sizeof(kat_nomsg_call)},
    {"err vers", kat_err_vers, sizeof(kat_err_vers)},
    {"err bad header", kat_err_bad_header, sizeof(kat_err_bad_header)},
    {"err inval option", kat_err_inval_option, sizeof(kat_err_inval_option)},
    {"opt props", kat_opt_props, sizeof(kat_opt_props)},
    {"opt pull done", kat_opt_pull_done, sizeof(kat_opt_pull_done)},
    {"opt unknown", kat_opt_unknown, KAT_OPT_UNKNOWN_HDR},
};

static int dec(struct rpcrdma_xdr *x, void *h)
{
	return rpcrdma2_decode(x, h);
}

static int dec_buf(const void *buf, size_t len, void *h)
{
	return rpcrdma2_decode_buf(buf, len, h);
}

static uint32_t xid_of(const void *h)
{
	return ((const struct rpcrdma2_hdr *)h)->xid;
}

static size_t len_of(const void *h)
{
	return ((const struct rpcrdma2_hdr *)h)->hdr_len;
}

static const struct hdr_codec codec = {
    .decode = dec,
    .decode_buf = dec_buf,
    .error_reply = rpcrdma2_error_reply,
    .xid = xid_of,
    .hdr_len = len_of,
    .bad_header = RPCRDMA2_ERR_BAD_HEADER,
};

static void test_truncation(void)
{
	static struct rpcrdma2_hdr h;
	test_truncation_of(vectors, sizeof(vectors) / sizeof(vectors[0]), &h);
}

/* ---- hostile headers ---- */

static void test_hostile_fixed(void)
{
	static struct rpcrdma2_hdr h;

	/* Unknown procs, including Version One's MSGP and DONE. */
	static const uint32_t procs[] = {2, 3, 6, 0x7fffffff, 0xffffffff};
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		CHECK_RC(DECODE(&h, 9, 2, 1, procs[i], 0, 0, 0, 0), -EOPNOTSUPP);
		CHECK(h.xid == 9 && h.proc == procs[i]);
		CHECK(rpcrdma2_error_reply(-EOPNOTSUPP) == RPCRDMA2_ERR_BAD_HEADER);
	}
	/* Another version: nothing past the fixed words is read... */
	CHECK_RC(DECODE(&h, 9, 1, 1, RPCRDMA2_MSG, 0, 0, 0, 0), -EPROTONOSUPPORT);
	CHECK_RC(DECODE(&h, 9, 3, 1, RPCRDMA2_OPTIONAL, 0, 0, 0), -EPROTONOSUPPORT);
	CHECK(rpcrdma2_error_reply(-EPROTONOSUPPORT) == RPCRDMA2_ERR_VERS);
	/* ... except an ERR_VERS, which any version decodes. */
	CHECK_RC(DECODE(&h, 9, 1, 1, RPCRDMA2_ERROR, RPCRDMA2_ERR_VERS, 1, 1), 0);
	CHECK(h.vers == 1 && h.vers_low == 1 && h.vers_high == 1);
	CHECK_RC(DECODE(&h, 9, 1, 1, RPCRDMA2_ERROR, RPCRDMA2_ERR_BAD_HEADER), -EPROTONOSUPPORT);
	/* Unknown error codes (RFC 4506 §4.15: a discriminant with no arm). */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_ERROR, 0), -EINVAL);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_ERROR, 4), -EINVAL);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_ERROR, 0xffffffff), -EINVAL);
	CHECK(h.xid == 9 && h.proc == RPCRDMA2_ERROR);
	/* A direction or optdir that is not a msg_type. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 2, 0, 0, 0), -EINVAL);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_NOMSG, 0xffffffff, 0, 0, 0), -EINVAL);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 2, 7, 0), -EINVAL);
	/* List discriminators other than 0/1. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 0, 2, 0, 0), -EINVAL);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 0, 0, 0, 7), -EINVAL);
	/* Fewer than the fixed words. */
	CHECK_RC(DECODE(&h, 9, 2, 1), -EBADMSG);
	CHECK(h.xid == 9 && h.vers == 2 && h.credit == 1);
}

static void test_hostile_counts(void)
{
	static struct rpcrdma2_hdr h;
	static uint32_t w[2048];
	size_t n;

	/* A Write chunk segment count that wraps a 32-bit count x 16. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 0, 0, 1, 0x10000001, 0, 0, 0, 0), -E2BIG);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 0, 0, 1, 0xffffffff, 0, 0), -E2BIG);
	/* Within our limit but past the end of the input. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 0, 0, 1, 3, 1, 2, 0, 0, 0, 0), -EOVERFLOW);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_MSG, 0, 0, 0, 1, 64, 0, 0), -EOVERFLOW);
	CHECK(rpcrdma2_error_reply(-EOVERFLOW) == RPCRDMA2_ERR_BAD_HEADER);

	/* 65 Read list entries: one past RPCRDMA1_MAX_READ_SEGS. */
	n = 0;
	w[n++] = 9, w[n++] = 2, w[n++] = 1, w[n++] = RPCRDMA2_MSG, w[n++] = RPCRDMA2_CALL;
	for (int i = 0; i < RPCRDMA1_MAX_READ_SEGS + 1; i++) {
		w[n++] = 1, w[n++] = 8, w[n++] = 1, w[n++] = 4, w[n++] = 0, w[n++] = 0;
	}
	w[n++] = 0, w[n++] = 0, w[n++] = 0;
	CHECK_RC(decode_words(w, n, &h), -E2BIG);
	/* Exactly the limit decodes. */
	n = 5;
	for (int i = 0; i < RPCRDMA1_MAX_READ_SEGS; i++) {
		w[n++] = 1, w[n++] = 8, w[n++] = 1, w[n++] = 4, w[n++] = 0, w[n++] = 0;
	}
	w[n++] = 0, w[n++] = 0, w[n++] = 0;
	CHECK_RC(decode_words(w, n, &h), 0);
	CHECK(h.chunks.nreads == RPCRDMA1_MAX_READ_SEGS);

	/* 17 Write chunks of no segments: one past RPCRDMA1_MAX_WRITE_CHUNKS. */
	n = 6;
	for (int i = 0; i < RPCRDMA1_MAX_WRITE_CHUNKS + 1; i++)
		w[n++] = 1, w[n++] = 0;
	w[n++] = 0, w[n++] = 0;
	w[5] = 0; /* empty Read list */
	CHECK_RC(decode_words(w, n, &h), -E2BIG);

	/* A Reply chunk of 65 segments, all present. */
	n = 7;
	w[5] = 0, w[6] = 0;
	w[n++] = 1, w[n++] = RPCRDMA1_MAX_REPLY_SEGS + 1;
	for (int i = 0; i < RPCRDMA1_MAX_REPLY_SEGS + 1; i++)
		w[n++] = 1, w[n++] = 4, w[n++] = 0, w[n++] = 0;
	CHECK_RC(decode_words(w, n, &h), -E2BIG);
}

static void test_hostile_optinfo(void)
{
	static struct rpcrdma2_hdr h;

	/* optinfo length past the end: by one byte, by far, and wrapping
	 * once padded. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 5, 0x41000000), -EOVERFLOW);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 9, 0, 0), -EOVERFLOW);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 0x7fffffff, 0), -EOVERFLOW);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 0xffffffff, 0), -EOVERFLOW);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 0xfffffffd), -EOVERFLOW);
	/* 5 bytes of optinfo that are all there but their padding is not. */
	static const uint8_t nopad[] = {W(9), W(2), W(1), W(5), W(0), W(7), W(5), 1, 2, 3, 4, 5};
	CHECK_RC(rpcrdma2_decode_buf(nopad, sizeof(nopad), &h), -EOVERFLOW);
	/* 3 bytes of optinfo whose padding is not zero. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 3, 0x41424301), -EINVAL);
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 1, 0x41000100), -EINVAL);
	/* ... and whose padding is. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 0, 7, 3, 0x41424300), 0);
	CHECK(h.optinfo_len == 3 && h.hdr_len == 32);
	/* An empty optinfo, then payload. */
	CHECK_RC(DECODE(&h, 9, 2, 1, RPCRDMA2_OPTIONAL, 1, 7, 0, 9, 1), 0);
	CHECK(h.optinfo_len == 0 && h.optinfo_off == 28 && h.hdr_len == 28);
}

static void test_direction(void)
{
	static struct rpcrdma2_hdr h;
	uint32_t mt;
	static const uint8_t reply[] = {W(5), W(1)}, bad[] = {W(5), W(2)}, shrt[] = {W(5), 0, 0};

	/* §4.2.2: MSG says CALL, the payload is a REPLY: ERR_BAD_HEADER. */
	CHECK_RC(DECODE(&h, 5, 2, 1, RPCRDMA2_MSG, RPCRDMA2_CALL, 0, 0, 0), 0);
	CHECK_RC(rpcrdma2_payload_msg_type(reply, sizeof(reply), &mt), 0);
	CHECK(mt == RPCRDMA2_REPLY);
	CHECK_RC(rpcrdma2_check_direction(&h, mt), -EPROTO);
	CHECK(rpcrdma2_error_reply(-EPROTO) == RPCRDMA2_ERR_BAD_HEADER);
	CHECK_RC(rpcrdma2_check_direction(&h, RPCRDMA2_CALL), 0);
	CHECK_RC(DECODE(&h, 5, 2, 1, RPCRDMA2_NOMSG, RPCRDMA2_REPLY, 0, 0, 0), 0);
	CHECK_RC(rpcrdma2_check_direction(&h, RPCRDMA2_CALL), -EPROTO);
	CHECK_RC(rpcrdma2_check_direction(&h, RPCRDMA2_REPLY), 0);
	CHECK_RC(DECODE(&h, 5, 2, 1, RPCRDMA2_OPTIONAL, RPCRDMA2_REPLY, 7, 0), 0);
	CHECK_RC(rpcrdma2_check_direction(&h, RPCRDMA2_CALL), -EPROTO);
	/* Payloads too short for a msg_type, or with a bad one. */
	CHECK_RC(rpcrdma2_payload_msg_type(shrt, sizeof(shrt), &mt), -EBADMSG);
	CHECK_RC(rpcrdma2_payload_msg_type(NULL, 0, &mt), -EBADMSG);
	CHECK_RC(rpcrdma2_payload_msg_type(bad, sizeof(bad), &mt), -EINVAL);
	h.proc = 3;
	CHECK_RC(rpcrdma2_check_direction(&h, RPCRDMA2_CALL), -EINVAL);
}

/* ---- encoder refusals ---- */

static void test_encode_errors(void)
{
	static struct rpcrdma2_hdr h;
	static struct rpcrdma1_chunks c;
	uint8_t out[64];
	struct rpcrdma_xdr x;

	/* One byte short of each KAT: -EMSGSIZE, nothing written. */
	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
		CHECK_RC(rpcrdma2_decode_buf(vectors[v].p, vectors[v].len, &h), 0);
		const uint8_t *info = vectors[v].p + h.optinfo_off;
		static uint8_t big[256];
		rpcrdma_xdr_init(&x, big, h.hdr_len - 1, RPCRDMA_XDR_ENCODE);
		CHECK_RC(rpcrdma2_encode(&x, &h, info), -EMSGSIZE);
		CHECK(rpcrdma_xdr_getpos(&x) == 0);
		rpcrdma_xdr_init(&x, big, sizeof(big), RPCRDMA_XDR_ENCODE);
		CHECK_RC(rpcrdma2_encode(&x, &h, info), 0);
		CHECK(rpcrdma_xdr_getpos(&x) == h.hdr_len);
		CHECK(memcmp(big, vectors[v].p, h.hdr_len) == 0);
	}

	rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	CHECK_RC(rpcrdma2_encode_msg(&x, 1, 1, 2, NULL), -EINVAL);
	CHECK_RC(rpcrdma2_encode_nomsg(&x, 1, 1, 0xffffffff, NULL), -EINVAL);
	CHECK_RC(rpcrdma2_encode_error(&x, 1, 1, RPCRDMA2_ERR_VERS), -EINVAL);
	CHECK_RC(rpcrdma2_encode_error(&x, 1, 1, 0), -EINVAL);
	CHECK_RC(rpcrdma2_encode_optional(&x, 1, 1, 2, 7, NULL, 0), -EINVAL);
	CHECK_RC(rpcrdma2_encode_optional(&x, 1, 1, 0, 7, NULL, 4), -EINVAL);
	rpcrdma1_chunks_init(&c);
	c.nreply = 1; /* segments without reply_present */
	CHECK_RC(rpcrdma2_encode_msg(&x, 1, 1, 0, &c), -EINVAL);
	rpcrdma1_chunks_init(&c);
	c.nwrites = 1, c.writes[0].first = 0, c.writes[0].nsegs = 1; /* past nwsegs */
	CHECK_RC(rpcrdma2_encode_msg(&x, 1, 1, 0, &c), -EINVAL);
	memset(&h, 0, sizeof(h));
	h.vers = 2, h.proc = 3;
	CHECK_RC(rpcrdma2_encode(&x, &h, NULL), -EINVAL);
	CHECK(rpcrdma2_hdr_size(&h) == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == 0);
}

/* ---- transport properties and pull completion ---- */

static int props_words(struct rpcrdma2_props *p, const uint32_t *words, size_t n)
{
	uint8_t buf[512];
	size_t len = hdr_build(buf, sizeof(buf), words, n);
	return rpcrdma2_props_decode(buf, len, p);
}

#define PROPS(p, ...)                                                                              \
	props_words((p), (const uint32_t[]){__VA_ARGS__},                                          \
		    sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

static int same_props(const struct rpcrdma2_props *a, const struct rpcrdma2_props *b)
{
	return a->present == b->present && a->max_send_size == b->max_send_size &&
	       a->recv_buf_size == b->recv_buf_size && a->max_seg_size == b->max_seg_size &&
	       a->max_seg_count == b->max_seg_count && a->reverse_dir == b->reverse_dir &&
	       a->resp_read == b->resp_read && a->remote_inv == b->remote_inv &&
	       a->nunknown == b->nunknown;
}

static void test_props(void)
{
	struct rpcrdma2_props p, q;
	uint8_t buf[256];
	uint32_t len;

	/* Empty list: nothing present, all defaults. */
	CHECK_RC(PROPS(&p, 0), 0);
	CHECK(p.present == 0 && p.max_send_size == 4096 && p.recv_buf_size == 4096);
	CHECK(p.max_seg_size == 1048576 && p.max_seg_count == 16 && p.reverse_dir == 0);
	CHECK(!p.resp_read && !p.remote_inv);
	/* Unknown ids are skipped whatever their length (padding included);
	 * an empty known value is its default. */
	CHECK_RC(PROPS(&p, 4, 99, 5, 0x01020304, 0x05000000, 3, 0, 6, 8, 1, 2, 0x52444d11, 4, 1),
		 0);
	CHECK(p.nunknown == 2 &&
	      p.present == (RPCRDMA2_PROPF_MAX_SEG_SIZE | RPCRDMA2_PROPF_REMOTE_INV));
	CHECK(p.max_seg_size == 1048576 && p.remote_inv);
	/* Every known id once, then re-encoded canonically. */
	CHECK_RC(PROPS(&p, 7, 1, 4, 8192, 2, 4, 16384, 3, 4, 65536, 4, 4, 32, 5, 4, 1, 0x52444d10,
		       4, 0, 0x52444d11, 4, 1),
		 0);
	CHECK(p.present == RPCRDMA2_PROPF_ALL && p.max_send_size == 8192);
	CHECK(p.recv_buf_size == 16384 && p.max_seg_size == 65536 && p.max_seg_count == 32);
	CHECK(p.reverse_dir == 1 && !p.resp_read && p.remote_inv);
	CHECK_RC(rpcrdma2_props_encode(buf, sizeof(buf), &p, &len), 0);
	CHECK(len == rpcrdma2_props_size(&p) && len == 4 + 7 * 12);
	CHECK_RC(rpcrdma2_props_decode(buf, len, &q), 0);
	CHECK(same_props(&p, &q));
	CHECK_RC(rpcrdma2_props_encode(buf, len - 1, &p, &len), -EMSGSIZE);
	p.present |= 0x80;
	CHECK_RC(rpcrdma2_props_encode(buf, sizeof(buf), &p, &len), -EINVAL);

	/* Hostile lists. */
	CHECK_RC(PROPS(&p, 2, 1, 4, 1, 1, 4, 2), -EINVAL);     /* the same id twice */
	CHECK_RC(PROPS(&p, 1, 1, 3, 0x01020300), -EINVAL);     /* uint32 in 3 bytes */
	CHECK_RC(PROPS(&p, 1, 1, 8, 1, 2), -EINVAL);           /* uint32 in 8 bytes */
	CHECK_RC(PROPS(&p, 1, 0x52444d10, 4, 2), -EINVAL);     /* bool 2 */
	CHECK_RC(PROPS(&p, 1, 99, 1, 0x01000001), -EINVAL);    /* non-zero padding */
	CHECK_RC(PROPS(&p, 1, 1, 4, 1, 0), -EINVAL);           /* bytes after the list */
	CHECK_RC(PROPS(&p, 1, 99, 9, 1, 2), -EOVERFLOW);       /* value past the end */
	CHECK_RC(PROPS(&p, 1, 99, 0xffffffff, 1), -EOVERFLOW); /* length wraps */
	CHECK_RC(PROPS(&p, 2, 1, 4, 1), -EOVERFLOW);           /* count past the end */
	CHECK_RC(PROPS(&p, 0xffffffff, 1, 4, 1), -E2BIG);      /* count over the limit */
	CHECK_RC(PROPS(&p, RPCRDMA2_PROPS_MAX + 1, 1, 4, 1), -E2BIG);
	CHECK_RC(rpcrdma2_props_decode(NULL, 0, &p), -EBADMSG);
	CHECK_RC(rpcrdma2_props_decode(buf, 3, &p), -EBADMSG);

	/* Every truncation of the KAT's list fails. */
	const uint8_t *info = kat_opt_props + 28;
	for (size_t cut = 0; cut < 52; cut++) {
		uint8_t *b = malloc(cut ? cut : 1);
		if (!b)
			abort();
		memcpy(b, info, cut);
		int rc = rpcrdma2_props_decode(b, cut, &p);
		CHECK(rc == -EBADMSG || rc == -EOVERFLOW);
		free(b);
	}

	/* Pull completion: exactly one xid. */
	uint32_t xid;
	static const uint8_t four[] = {W(0xabcdef01)}, five[] = {W(1), 0};
	CHECK_RC(rpcrdma2_pull_done_decode(four, 4, &xid), 0);
	CHECK(xid == 0xabcdef01);
	CHECK_RC(rpcrdma2_pull_done_decode(four, 3, &xid), -EBADMSG);
	CHECK_RC(rpcrdma2_pull_done_decode(five, 5, &xid), -EINVAL);
	CHECK_RC(rpcrdma2_pull_done_encode(buf, 3, 1, &len), -EMSGSIZE);
}

/* ---- the printer ---- */

static void check_print(const uint8_t *p, size_t len, int want_rc, const char *want)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	if (!f)
		abort();
	int rc = rpcrdma2_hdr_print(f, p, len);
	fclose(f);
	CHECK_RC(rc, want_rc);
	if (strcmp(text, want) != 0) {
		fprintf(stderr, "printed:\n%swanted:\n%s", text, want);
		failures++;
	}
	free(text);
}

static void test_print(void)
{
	check_print(kat_msg_reply_write, sizeof(kat_msg_reply_write), 0,
		    "xid 0x55667788\nvers 2\ncredit 64\nproc MSG\ndirection REPLY\n"
		    "write 0 segments 2\n"
		    "write 0.0 handle 0xaa000001 length 4096 offset 0x1000200030004000\n"
		    "write 0.1 handle 0xaa000002 length 100 offset 0x0000000000000010\n"
		    "hdr_len 72\n");
	check_print(kat_nomsg_call, sizeof(kat_nomsg_call), 0,
		    "xid 0x01020304\nvers 2\ncredit 8\nproc NOMSG\ndirection CALL\n"
		    "read 0 position 0 handle 0xbb000001 length 2000 offset 0xdeadbeef00000000\n"
		    "reply segments 1\n"
		    "reply 0 handle 0xcc000001 length 65536 offset 0x00007f0000001000\n"
		    "hdr_len 76\n");
	check_print(kat_err_vers, sizeof(kat_err_vers), 0,
		    "xid 0x0a0b0c0d\nvers 2\ncredit 1\nproc ERROR\nerr ERR_VERS\n"
		    "vers_range 1..2\nhdr_len 28\n");
	check_print(kat_opt_props, sizeof(kat_opt_props), 0,
		    "xid 0x10000001\nvers 2\ncredit 1\nproc OPTIONAL\noptdir CALL\n"
		    "opttype 0x52444d01\noptinfo_len 52\nprop max_send_size 65536\n"
		    "prop recv_buf_size 65536\nprop reverse_dir 3\nprop resp_read 1\n"
		    "hdr_len 80\n");
	check_print(kat_opt_pull_done, sizeof(kat_opt_pull_done), 0,
		    "xid 0x77777777\nvers 2\ncredit 1\nproc OPTIONAL\noptdir CALL\n"
		    "opttype 0x52444d02\noptinfo_len 4\npull_done xid 0x77777777\nhdr_len 32\n");
	check_print(kat_opt_props, 40, -EOVERFLOW,
		    "xid 0x10000001\nvers 2\ncredit 1\nproc OPTIONAL\nerror EOVERFLOW\n");
}

/* ---- random round trips ---- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static struct rpcrdma1_segment rnd_seg(void)
{
	return seg(rnd(), rnd(), (uint64_t)rnd() << 32 | rnd());
}

static void random_chunks(struct rpcrdma1_chunks *c)
{
	rpcrdma1_chunks_init(c);
	uint32_t n = rnd_below(4) ? rnd_below(4) : rnd_below(RPCRDMA1_MAX_READ_SEGS + 1);
	for (uint32_t i = 0; i < n; i++) {
		struct rpcrdma1_segment s = rnd_seg();
		rpcrdma1_chunks_add_read(c, rnd_below(64) * 4, &s);
	}
	n = rnd_below(4) ? rnd_below(3) : rnd_below(RPCRDMA1_MAX_WRITE_CHUNKS + 1);
	for (uint32_t i = 0; i < n; i++) {
		rpcrdma1_chunks_add_write_chunk(c);
		uint32_t k = rnd_below(5);
		for (uint32_t j = 0; j < k; j++) {
			struct rpcrdma1_segment s = rnd_seg();
			rpcrdma1_chunks_add_write_seg(c, &s); /* -E2BIG past the limit: fine */
		}
	}
	if (rnd_below(2)) {
		c->reply_present = true;
		n = rnd_below(4) ? rnd_below(4) : rnd_below(RPCRDMA1_MAX_REPLY_SEGS + 1);
		for (uint32_t i = 0; i < n; i++) {
			struct rpcrdma1_segment s = rnd_seg();
			rpcrdma1_chunks_add_reply_seg(c, &s);
		}
	}
}

static uint8_t rnd_info[512];

static void random_header(struct rpcrdma2_hdr *h)
{
	static const uint32_t procs[] = {RPCRDMA2_MSG, RPCRDMA2_NOMSG, RPCRDMA2_ERROR,
					 RPCRDMA2_OPTIONAL};
	memset(h, 0, offsetof(struct rpcrdma2_hdr, chunks));
	rpcrdma1_chunks_init(&h->chunks);
	h->xid = rnd();
	h->vers = RPCRDMA2_VERSION;
	h->credit = rnd_below(3) ? rnd_below(256) : rnd();
	h->proc = procs[rnd_below(4)];
	switch (h->proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		h->direction = rnd_below(2);
		random_chunks(&h->chunks);
		break;
	case RPCRDMA2_ERROR:
		h->err = 1 + rnd_below(3);
		if (h->err == RPCRDMA2_ERR_VERS)
			h->vers_low = rnd(), h->vers_high = rnd();
		break;
	default:
		h->optdir = rnd_below(2);
		h->opttype = rnd_below(2) ? RPCRDMA2_OPTTYPE_BASE + rnd_below(4) : rnd();
		h->optinfo_len = rnd_below(sizeof(rnd_info) + 1);
		for (uint32_t i = 0; i < h->optinfo_len; i++)
			rnd_info[i] = (uint8_t)rnd();
		break;
	}
}

static int same_hdr(const struct rpcrdma2_hdr *a, const struct rpcrdma2_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit ||
	    a->proc != b->proc || a->direction != b->direction || a->err != b->err ||
	    a->vers_low != b->vers_low || a->vers_high != b->vers_high || a->optdir != b->optdir ||
	    a->opttype != b->opttype || a->optinfo_len != b->optinfo_len)
		return 0;
	return chunks_eq(&a->chunks, &b->chunks);
}

static void test_random(uint64_t seed, int rounds)
{
	static struct rpcrdma2_hdr h, d;
	static uint8_t buf[8192], out[8192];
	rng_state = seed;

	for (int r = 0; r < rounds; r++) {
		random_header(&h);
		size_t want = rpcrdma2_hdr_size(&h);
		struct rpcrdma_xdr x;
		rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
		int rc = rpcrdma2_encode(&x, &h, rnd_info);
		if (rc || want == 0 || rpcrdma_xdr_getpos(&x) != want) {
			fprintf(stderr, "round %d: encode rc %d size %zu\n", r, rc, want);
			failures++;
			continue;
		}
		size_t len = want + rnd_below(64); /* a payload may follow */
		rc = rpcrdma2_decode_buf(buf, len, &d);
		if (rc || d.hdr_len != want || !same_hdr(&h, &d) ||
		    (h.proc == RPCRDMA2_OPTIONAL &&
		     memcmp(buf + d.optinfo_off, rnd_info, d.optinfo_len) != 0)) {
			fprintf(stderr, "round %d: decode rc %d hdr_len %zu want %zu\n", r, rc,
				d.hdr_len, want);
			failures++;
			continue;
		}
		/* Re-encoding the decoded header gives the same bytes. */
		rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
		CHECK_RC(rpcrdma2_encode(&x, &d, buf + d.optinfo_off), 0);
		CHECK(rpcrdma_xdr_getpos(&x) == want && memcmp(out, buf, want) == 0);
		/* Cut into iovecs at random places. */
		struct iovec iov[RPCRDMA_XDR_MAX_IOV];
		unsigned int cnt = 1 + rnd_below(RPCRDMA_XDR_MAX_IOV);
		cut_iov(iov, cnt, buf, len, rnd_below);
		CHECK_RC(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_DECODE), 0);
		rc = rpcrdma2_decode(&x, &d);
		if (rc || d.hdr_len != want || !same_hdr(&h, &d)) {
			fprintf(stderr, "round %d: iovec decode rc %d (%u iovecs)\n", r, rc, cnt);
			failures++;
		}
		/* Encoding into iovecs gives the same bytes too. */
		recut_iov(iov, cnt, out, sizeof(out));
		memset(out, 0xee, sizeof(out));
		CHECK_RC(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_ENCODE), 0);
		CHECK_RC(rpcrdma2_encode(&x, &d, buf + d.optinfo_off), 0);
		CHECK(rpcrdma_xdr_getpos(&x) == want && memcmp(out, buf, want) == 0);
	}
}

int main(void)
{
	uint64_t seed = test_seed(0x5eed0002u);

	test_kat_msg();
	test_kat_error();
	test_kat_optional();
	test_truncation();
	test_hostile_fixed();
	test_hostile_counts();
	test_hostile_optinfo();
	test_direction();
	test_encode_errors();
	test_props();
	test_print();
	test_random(seed, 20000);
	return test_verdict();
}
