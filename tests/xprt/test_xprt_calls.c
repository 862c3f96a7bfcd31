// SPDX-License-Identifier: MIT
/*
 * End to end, two processes over loopback (softiwarp): every RPC-over-RDMA
 * message type and chunk combination, with checksums of the data that
 * crossed, and the transport header of one call of each kind compared
 * word by word with what RFC 8166 §4 says it must be:
 *   NULL                  Short (RDMA_MSG, three empty lists)
 *   ECHO 100 / 1023 B     Short, odd sizes (XDR roundup inline)
 *   WRITE 1 MiB           Chunked: Read chunk at the data's XDR position
 *   READ 1 MiB            Chunked: Write chunk; length rewritten to bytes written
 *   READ odd sizes        Write chunk, 1025 and 4097 bytes (no roundup written)
 *   MULTI                 two Read chunks at their positions in the complete
 *                         stream (RFC 8166 §3.4.5; first one of odd size)
 *   ECHOBULK 64 KiB       Read chunk + Write chunk in one call
 *   ECHO 8 KiB            Long Call (RDMA_NOMSG + Position-Zero Read chunk)
 *                         and Long Reply (Reply chunk) in one call
 *   WRITE forced Long     Position-Zero Read chunk + a Read chunk
 *   async x 300, 4 threads x 100: many calls in flight
 */
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "util/be.h"
#include "xprt/xprt_test.h"

static uint8_t last_hdr[1024];
/* The provider lets the server invalidate our STags (softiwarp does; the
 * verbs provider's ibv_reg_mr regions cannot be, so over it the client
 * leaves RFC 8797's Remote Invalidation flag clear and every reply is a
 * plain Send): the READs below expect remote invalidation only then. */
static bool remote_inv;
static size_t last_hdr_len, last_msg_len;

static void on_send(void *arg, const uint8_t *hdr, size_t len, size_t mlen)
{
	(void)arg;
	if (len > sizeof(last_hdr))
		len = sizeof(last_hdr);
	memcpy(last_hdr, hdr, len);
	last_hdr_len = len;
	last_msg_len = mlen;
}

static uint32_t w(size_t i)
{
	return get_be32(last_hdr + 4 * i);
}

static uint64_t w64(size_t i)
{
	return (uint64_t)w(i) << 32 | w(i + 1);
}

/* RPC call header of XTEST with AUTH_NONE: xid, CALL, 2, prog, vers,
 * proc, cred (2 words), verf (2 words) = 40 bytes. */
#define RPC_HDR 40u

static void t_null(struct rpcrdma_clnt *c)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};

	XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, &o) == 0);
	/* RFC 8166 §4.2: xid, vers 1, credits requested (64), RDMA_MSG, no
	 * Read list, no Write list, no Reply chunk. */
	XT_CHECK(last_hdr_len == 28);
	XT_CHECK(w(0) == r.xid && w(1) == 1 && w(2) == 64 && w(3) == 0);
	XT_CHECK(w(4) == 0 && w(5) == 0 && w(6) == 0);
	XT_CHECK(last_msg_len == RPC_HDR);
	XT_CHECK(r.call_proc == 0 && r.reply_proc == 0 && r.transmissions == 1);
}

static void t_echo(struct rpcrdma_clnt *c, u_int len, bool long_call)
{
	struct xt_opaque a = {malloc(len), len}, res = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE,
				      .result = &r,
				      .reply_size = len + 64};

	/* Short: the reply's exact size (RPC reply header, length, data),
	 * which with its 28-byte transport header fits 1 KiB: no Reply
	 * chunk (issue 32 counts the header; len + 64 would not fit). */
	if (!long_call)
		o.reply_size = (uint32_t)(24 + 4 + RPCRDMA_XDR_ROUNDUP(len));
	xt_fill(a.val, len, len);
	XT_CHECK(rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				   (xdrproc_t)xdr_xt_opaque, &res, &o) == 0);
	XT_CHECK(res.len == len && res.val && memcmp(res.val, a.val, len) == 0);
	if (long_call) {
		/* Long Call: RDMA_NOMSG, Read list = one Position-Zero entry
		 * covering the whole RPC message; no Write list; Reply chunk
		 * (one segment) because the reply may exceed 1 KiB. */
		XT_CHECK(r.call_proc == 1 && r.reply_proc == 1 && r.reply_chunk == 1);
		XT_CHECK(w(3) == 1);
		XT_CHECK(w(4) == 1 && w(5) == 0 && w(6) != 0);
		XT_CHECK(w(7) == RPC_HDR + 4 + RPCRDMA_XDR_ROUNDUP(len));
		XT_CHECK(w(10) == 0 /* end of Read list */ && w(11) == 0 /* no Write list */);
		XT_CHECK(w(12) == 1 && w(13) == 1 /* Reply chunk, 1 segment */);
		XT_CHECK(w(15) == RPCRDMA_XDR_ROUNDUP(len + 64));
		XT_CHECK(last_hdr_len == 16 + 24 + 4 + 4 + 4 + 4 + 16);
	} else {
		XT_CHECK(r.call_proc == 0 && r.reply_proc == 0 && r.reply_chunk == 0);
		XT_CHECK(last_hdr_len == 28 && w(3) == 0);
		XT_CHECK(last_msg_len == RPC_HDR + 4 + RPCRDMA_XDR_ROUNDUP(len));
	}
	xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&res);
	free(a.val);
}

static void t_write(struct rpcrdma_clnt *c, uint32_t len, bool force_long)
{
	uint8_t *buf = malloc(len);
	struct xt_write_args a = {.seed = 77, .data = {buf, len, 0}};
	struct xt_write_res res = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_FLAGS,
				      .result = &r,
				      .flags = force_long ? RPCRDMA_CALL_F_LONG : 0};

	xt_fill(buf, len, len + 1);
	XT_CHECK(rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				   (xdrproc_t)xdr_xt_write_res, &res, &o) == 0);
	XT_CHECK(res.len == len && res.hash == (xt_hash(buf, len) ^ 77));
	if (!force_long) {
		/* RDMA_MSG with one Read chunk: position = offset of the data
		 * in the RPC message (header, seed, length word), length
		 * without XDR roundup, offset = our buffer's address. */
		XT_CHECK(r.call_proc == 0 && r.read_chunks == 1);
		XT_CHECK(w(3) == 0 && w(4) == 1 && w(5) == RPC_HDR + 8);
		XT_CHECK(w(6) != 0 && w(7) == len && w64(8) == (uint64_t)(uintptr_t)buf);
		XT_CHECK(w(10) == 0 && w(11) == 0 && w(12) == 0 && last_hdr_len == 52);
		XT_CHECK(last_msg_len == RPC_HDR + 8);
	} else {
		/* Long Call with the bulk item still by its own Read chunk:
		 * Position Zero first, then the item at its position. */
		XT_CHECK(r.call_proc == 1 && r.read_chunks == 2);
		XT_CHECK(w(3) == 1 && w(4) == 1 && w(5) == 0 && w(7) == RPC_HDR + 8);
		XT_CHECK(w(10) == 1 && w(11) == RPC_HDR + 8 && w(13) == len);
		XT_CHECK(w64(14) == (uint64_t)(uintptr_t)buf);
		XT_CHECK(w(16) == 0 && w(17) == 0 && w(18) == 0);
	}
	free(buf);
}

static void t_read(struct rpcrdma_clnt *c, uint32_t len)
{
	uint8_t *buf = calloc(1, len + 8), *exp = malloc(len);
	struct xt_read_args a = {len, len * 3u};
	rpcrdma_bulk res = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_RECV_BULK,
				      .result = &r,
				      .nrecv_bulk = 1};

	o.recv_bulk[0].base = buf;
	o.recv_bulk[0].len = len + 8; /* room to spare: the written length must be exact */
	xt_fill(exp, len, len * 3u);
	XT_CHECK(rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &a,
				   (xdrproc_t)xdr_rpcrdma_bulk, &res, &o) == 0);
	XT_CHECK(res.base == buf && res.len == len && memcmp(buf, exp, len) == 0);
	XT_CHECK(r.recv_bulk_len[0] == len && r.write_chunks == 1);
	/* nothing written past the data: no roundup in the Write chunk */
	XT_CHECK(buf[len] == 0 && buf[len + 1] == 0);
	/* RDMA_MSG; no Read list; Write list of one chunk of one segment
	 * (our buffer); no Reply chunk. */
	XT_CHECK(w(3) == 0 && w(4) == 0 && w(5) == 1 && w(6) == 1 && w(7) != 0);
	XT_CHECK(w(8) == len + 8 && w64(9) == (uint64_t)(uintptr_t)buf);
	XT_CHECK(w(11) == 0 && w(12) == 0 && last_hdr_len == 52);
	/* RFC 8797: one STag exposed, both sides accept Send With Invalidate. */
	XT_CHECK(r.remote_invalidated == (remote_inv ? 1u : 0u));
	free(buf);
	free(exp);
}

static void t_multi(struct rpcrdma_clnt *c)
{
	uint32_t la = 5001, lb = 70001;
	uint8_t *a = malloc(la), *b = malloc(lb);
	struct xt_multi_args args = {{a, la, 0}, 4242, {b, lb, 0}};
	struct xt_multi_res res = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};

	xt_fill(a, la, 1);
	xt_fill(b, lb, 2);
	XT_CHECK(rpcrdma_clnt_call(c, XT_MULTI, (xdrproc_t)xdr_xt_multi_args, &args,
				   (xdrproc_t)xdr_xt_multi_res, &res, &o) == 0);
	XT_CHECK(res.ha == xt_hash(a, la) && res.hb == xt_hash(b, lb) && res.x == 4242);
	/* Two Read chunks. RFC 8166 §3.4.5: rdma_position is the offset in
	 * the complete XDR stream, as if every chunk's data were inline: a at
	 * RPC_HDR + 4 (after its length word); b after a's length word, a's
	 * data with its roundup (5001 -> 5004), x and b's length word, i.e.
	 * RPC_HDR + 4 + 5004 + 8, although a's data and roundup are not
	 * inline (the chunk carries 5001 bytes: the roundup is elided). */
	XT_CHECK(r.read_chunks == 2 && w(4) == 1 && w(5) == RPC_HDR + 4 && w(7) == la);
	XT_CHECK(w(10) == 1 && w(13) == lb && w(16) == 0);
	if (w(11) != RPC_HDR + 4 + 5004 + 8) {
		fprintf(stderr, "RFC 8166 §3.4.5: second Read chunk at position %u, want %u\n",
			w(11), RPC_HDR + 4 + 5004 + 8);
		xt_failures++;
	}
	free(a);
	free(b);
}

static void t_echobulk(struct rpcrdma_clnt *c, uint32_t len)
{
	uint8_t *src = malloc(len), *dst = calloc(1, len);
	rpcrdma_bulk a = {src, len, 0}, res = {0};
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_RECV_BULK,
				      .result = &r,
				      .nrecv_bulk = 1};

	o.recv_bulk[0].base = dst;
	o.recv_bulk[0].len = len;
	xt_fill(src, len, 99);
	XT_CHECK(rpcrdma_clnt_call(c, XT_ECHOBULK, (xdrproc_t)xdr_rpcrdma_bulk, &a,
				   (xdrproc_t)xdr_rpcrdma_bulk, &res, &o) == 0);
	XT_CHECK(res.len == len && memcmp(dst, src, len) == 0);
	XT_CHECK(r.read_chunks == 1 && r.write_chunks == 1 && r.recv_bulk_len[0] == len);
	/* two STags exposed: no remote invalidation */
	XT_CHECK(r.remote_invalidated == 0);
	free(src);
	free(dst);
}

static atomic_int async_done, async_bad, async_status;

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	struct xt_write_res *r = res;

	if (status || r->hash != ((uint64_t)(uintptr_t)arg)) {
		atomic_fetch_add(&async_bad, 1);
		if (status)
			atomic_store(&async_status, status);
	}
	atomic_fetch_add(&async_done, 1);
}

static void t_async(struct rpcrdma_clnt *c)
{
	enum { N = 300 };
	static struct xt_write_args a[N];
	static struct xt_write_res res[N];
	static uint8_t data[N][200];

	for (int i = 0; i < N; i++) {
		xt_fill(data[i], sizeof(data[i]), (uint32_t)i);
		a[i].seed = (uint32_t)i;
		a[i].data.base = data[i];
		a[i].data.len = 100 + (uint32_t)(i % 100);
		uint64_t exp = xt_hash(data[i], a[i].data.len) ^ (uint64_t)i;

		XT_CHECK(rpcrdma_clnt_call_async(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a[i],
						 (xdrproc_t)xdr_xt_write_res, &res[i], NULL, cb,
						 (void *)(uintptr_t)exp) == 0);
	}
	for (int i = 0; i < 1000 && atomic_load(&async_done) < N; i++)
		usleep(10000);
	if (atomic_load(&async_done) != N || atomic_load(&async_bad))
		fprintf(stderr, "async: %d of %d done, %d bad (last error %d)\n",
			atomic_load(&async_done), N, atomic_load(&async_bad),
			atomic_load(&async_status));
	XT_CHECK(atomic_load(&async_done) == N && atomic_load(&async_bad) == 0);
}

struct thr_arg {
	struct rpcrdma_clnt *c;
	int id, bad;
};

static void *thr_main(void *p)
{
	struct thr_arg *t = p;

	for (int i = 0; i < 100; i++) {
		uint32_t len = (uint32_t)(1 + (i * 37 + t->id * 11) % 3000);
		uint8_t *buf = malloc(len);
		struct xt_write_args a = {.seed = (uint32_t)i, .data = {buf, len, 0}};
		struct xt_write_res r = {0};

		xt_fill(buf, len, (uint32_t)(t->id * 1000 + i));
		if (rpcrdma_clnt_call(t->c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				      (xdrproc_t)xdr_xt_write_res, &r, NULL) ||
		    r.len != len || r.hash != (xt_hash(buf, len) ^ (uint64_t)i))
			t->bad++;
		free(buf);
	}
	return NULL;
}

static void t_threads(struct rpcrdma_clnt *c)
{
	pthread_t th[4];
	struct thr_arg ta[4];

	for (int i = 0; i < 4; i++) {
		ta[i] = (struct thr_arg){c, i, 0};
		pthread_create(&th[i], NULL, thr_main, &ta[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		XT_CHECK(ta[i].bad == 0);
	}
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	/* 1 KiB thresholds: the sizes below are chosen around them (the
	 * default advertises 4096, issue 32) */
	struct rpcrdma_clnt_opts co = {.comp_mask =
					   RPCRDMA_CLNT_OPT_TIMEOUT | RPCRDMA_CLNT_OPT_INLINE,
				       .timeout_ms = 15000,
				       .inline_send = 1024,
				       .inline_recv = 1024};
	struct clnt_testhook hook = {.on_send = on_send};
	struct rpcrdma_xprt_stats st;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	rc = xt_server_start(&srv, NULL, NULL);
	if (rc) {
		fprintf(stderr, "server start: %d\n", rc);
		return 1;
	}
	rc = rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &co, &c);
	if (rc) {
		fprintf(stderr, "clnt_create: %s\n", strerror(-rc));
		xt_server_stop(&srv);
		return 1;
	}
	rpcrdma_clnt_set_testhook(c, &hook);
	remote_inv = tl_remote_inv();
	t_null(c);
	t_echo(c, 100, false);
	t_echo(c, 1023 - RPC_HDR - 4 - 28 - 8, false);
	t_write(c, 1u << 20, false);
	t_read(c, 1u << 20);
	t_read(c, 1025);
	t_read(c, 4097);
	t_multi(c);
	t_echobulk(c, 65537);
	t_echo(c, 8191, true);
	t_write(c, 100003, true);
	t_async(c);
	t_threads(c);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	/* >= 2: thread calls of 977..1023 inline bytes do not fit 1 KiB either */
	XT_CHECK(st.long_calls >= 2 && st.long_replies == 1);
	XT_CHECK(st.read_chunks >= 7 && st.write_chunks == 4 && st.reply_chunks >= 1);
	XT_CHECK(st.write_bytes == (1u << 20) + 1025 + 4097 + 65537);
	XT_CHECK(st.unmatched_replies == 0 && st.bad_headers == 0 && st.err_chunk_rx == 0);
	XT_CHECK(st.credits == 64 && st.max_outstanding > 1 && st.max_outstanding <= 64);
	XT_CHECK(st.remote_invalidate == (remote_inv ? 1u : 0u) && st.inline_send == 1024);
	XT_CHECK(remote_inv ? st.remote_invalidations >= 3 : st.remote_invalidations == 0);
	printf("calls %llu replies %llu stalls %llu max_outstanding %u remote_inv %llu\n",
	       (unsigned long long)st.calls, (unsigned long long)st.replies,
	       (unsigned long long)st.credit_stalls, st.max_outstanding,
	       (unsigned long long)st.remote_invalidations);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
