/* SPDX-License-Identifier: MIT */
/*
 * RDMA_ERROR / ERR_VERS with an rdma_vers other than 1
 * (src/transport/rpcrdma1_hdr.c, decode_other_version):
 *   - Linux's svcrdma answers a call whose rdma_vers is 2 with an
 *     ERR_VERS whose fixed words echo vers 2 (the exact 28 bytes seen from
 *     Linux 6.1 in the interop suite, tests/interop): it decodes, with
 *     err ERR_VERS and low 1 / high 1, hdr_len 28, also from bytes cut
 *     into 2- and 3-byte iovecs; other versions and other ranges likewise;
 *     rpcrdma1_hdr_size() predicts it and re-encoding gives the same bytes,
 *     as does rpcrdma1_encode_err_vers() with the call's rdma_vers (what
 *     our responder sends, issue 32);
 *   - everything else with rdma_vers != 1 stays -EPROTONOSUPPORT with the
 *     cursor unmoved and no error body reported: RDMA_MSG, RDMA_NOMSG,
 *     RDMA_DONE, ERR_CHUNK, an unknown errcode, a truncated ERR_VERS (no
 *     low/high, only low), a header of just the fixed words;
 *   - with rdma_vers 1 nothing changed: ERR_VERS decodes, and an RDMA_ERROR
 *     with an unknown errcode is still -EINVAL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"

#include "lib/check.h"
#include "util/be.h"

/* Big-endian words. */
#define W(v) BE32_BYTES(v)

/* Linux 6.1 svcrdma's answer to an RDMA_MSG with rdma_vers 2 (xid
 * 0x2a000004 as test_interop_connect numbers its calls): rdma_vers echoed
 * as 2, credit 64, RDMA_ERROR (4), ERR_VERS (1), low 1, high 1. */
static const uint8_t linux_err_vers[] = {W(0x2a000004), W(2), W(64), W(4), W(1), W(1), W(1)};

/* Decode @len bytes of @buf; with @piece, from iovecs of @piece bytes. */
static int decode(const uint8_t *buf, size_t len, size_t piece, struct rpcrdma1_hdr *h)
{
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	struct rpcrdma_xdr x;
	unsigned int n = 0;
	int rc;

	if (!piece) {
		rpcrdma_xdr_init(&x, (void *)(uintptr_t)buf, len, RPCRDMA_XDR_DECODE);
	} else {
		for (size_t off = 0; off < len; off += piece) {
			if (n == RPCRDMA_XDR_MAX_IOV)
				abort();
			iov[n].iov_base = (void *)(uintptr_t)(buf + off);
			iov[n].iov_len = len - off < piece ? len - off : piece;
			n++;
		}
		if (rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_DECODE) != 0)
			abort();
	}
	rc = rpcrdma1_decode(&x, h);
	if (rc && rpcrdma_xdr_getpos(&x) != 0) {
		fprintf(stderr, "cursor moved on failure (rc %d)\n", rc);
		failures++;
	}
	if (!rc && rpcrdma_xdr_getpos(&x) != h->hdr_len) {
		fprintf(stderr, "cursor at %zu after a %zu-byte header\n", rpcrdma_xdr_getpos(&x),
			h->hdr_len);
		failures++;
	}
	return rc;
}

static void test_linux_reply(void)
{
	static struct rpcrdma1_hdr h;
	uint8_t out[64];
	struct rpcrdma_xdr x;

	/* One iovec, then 2-byte and 3-byte pieces (words straddling). */
	const size_t pieces[] = {0, 2, 3};
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		memset(&h, 0xa5, sizeof(h));
		CHECK(decode(linux_err_vers, sizeof(linux_err_vers), pieces[i], &h) == 0);
		CHECK(h.xid == 0x2a000004 && h.vers == 2 && h.credit == 64);
		CHECK(h.proc == RPCRDMA1_ERROR && h.err == RPCRDMA1_ERR_VERS);
		CHECK(h.vers_low == 1 && h.vers_high == 1);
		CHECK(h.hdr_len == RPCRDMA1_ERR_VERS_SIZE && h.hdr_len == 28);
		CHECK(h.chunks.nreads == 0 && h.chunks.nwrites == 0 && !h.chunks.reply_present);
	}
	/* Size prediction and the canonical encoding, rdma_vers as received. */
	CHECK(rpcrdma1_hdr_size(&h) == sizeof(linux_err_vers));
	rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	CHECK(rpcrdma1_encode(&x, &h) == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == sizeof(linux_err_vers));
	CHECK(memcmp(out, linux_err_vers, sizeof(linux_err_vers)) == 0);
	/* What our responder sends for that call (issue 32): the same 28
	 * bytes, rdma_vers echoed, 1..1 in the body. */
	rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	CHECK(rpcrdma1_encode_err_vers(&x, 0x2a000004, 2, 64, 1, 1) == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == sizeof(linux_err_vers));
	CHECK(memcmp(out, linux_err_vers, sizeof(linux_err_vers)) == 0);
	printf("Linux ERR_VERS (rdma_vers 2): err %u, versions %u..%u, %zu bytes\n", h.err,
	       h.vers_low, h.vers_high, h.hdr_len);

	/* Other versions in the fixed words, other ranges in the body; bytes
	 * after the header are the caller's business (hdr_len says where the
	 * header ends). */
	const uint32_t versions[] = {0, 2, 3, 0xffffffffu};
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		uint8_t b[32];

		memcpy(b, linux_err_vers, sizeof(linux_err_vers));
		put_be32(b + 4, versions[i]);
		put_be32(b + 20, 1 + (uint32_t)i);
		put_be32(b + 24, 7 + (uint32_t)i);
		put_be32(b + 28, 0xdeadbeef);
		CHECK(decode(b, sizeof(b), 0, &h) == 0);
		CHECK(h.vers == versions[i] && h.err == RPCRDMA1_ERR_VERS);
		CHECK(h.vers_low == 1 + i && h.vers_high == 7 + i && h.hdr_len == 28);
	}
}

static void test_still_refused(void)
{
	static struct rpcrdma1_hdr h;
	struct {
		const char *what;
		uint8_t b[64];
		size_t len;
	} cases[] = {
	    {"RDMA_MSG, empty lists", {W(1), W(2), W(64), W(0), W(0), W(0), W(0)}, 28},
	    {"RDMA_NOMSG, empty lists", {W(1), W(2), W(64), W(1), W(0), W(0), W(0)}, 28},
	    {"RDMA_MSGP", {W(1), W(2), W(64), W(2), W(0), W(0), W(0), W(0), W(0)}, 36},
	    {"RDMA_DONE", {W(1), W(2), W(64), W(3)}, 16},
	    {"ERR_CHUNK", {W(1), W(2), W(64), W(4), W(2)}, 20},
	    {"unknown errcode 3", {W(1), W(2), W(64), W(4), W(3), W(1), W(1)}, 28},
	    {"ERR_VERS, no low/high", {W(1), W(2), W(64), W(4), W(1)}, 20},
	    {"ERR_VERS, low only", {W(1), W(2), W(64), W(4), W(1), W(1)}, 24},
	    {"ERR_VERS, high cut in half", {W(1), W(2), W(64), W(4), W(1), W(1), W(1)}, 26},
	    {"RDMA_ERROR, no errcode", {W(1), W(2), W(64), W(4)}, 16},
	    {"ERR_VERS, rdma_vers 0", {W(1), W(0), W(64), W(4), W(1)}, 20},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&h, 0xa5, sizeof(h));
		int rc = decode(cases[i].b, cases[i].len, 0, &h);

		if (rc != -EPROTONOSUPPORT) {
			fprintf(stderr, "%s: rc %d, want -EPROTONOSUPPORT\n", cases[i].what, rc);
			failures++;
		}
		/* The fixed words are there to answer with; nothing else. */
		CHECK(h.xid == 1 && h.credit == 64);
		CHECK(h.err == 0 && h.vers_low == 0 && h.vers_high == 0 && h.hdr_len == 0);
		CHECK(rpcrdma1_error_reply(rc) == RPCRDMA1_ERR_VERS);
	}
	printf("%zu other headers with rdma_vers != 1: -EPROTONOSUPPORT, nothing parsed\n",
	       sizeof(cases) / sizeof(cases[0]));
}

static void test_version_one_unchanged(void)
{
	static struct rpcrdma1_hdr h;
	const uint8_t ok[] = {W(9), W(1), W(64), W(4), W(1), W(1), W(2)};
	const uint8_t bad[] = {W(9), W(1), W(64), W(4), W(3)};

	CHECK(decode(ok, sizeof(ok), 0, &h) == 0);
	CHECK(h.vers == 1 && h.err == RPCRDMA1_ERR_VERS && h.vers_low == 1 && h.vers_high == 2);
	CHECK(decode(bad, sizeof(bad), 0, &h) == -EINVAL);
}

int main(void)
{
	test_linux_reply();
	test_still_refused();
	test_version_one_unchanged();
	printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
