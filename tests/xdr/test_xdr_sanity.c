/* SPDX-License-Identifier: MIT */
/*
 * Quick sanity check of the XDR cursor: a few known-answer encodings over a
 * flat buffer and the same bytes decoded through single-byte iovecs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rpcrdma/xdr.h"

#define CHECK_ON_FAIL return 1
#include "lib/check.h"

int main(void)
{
	uint8_t buf[64];
	struct rpcrdma_xdr x;

	/* RFC 4506 §4.1, §4.5, §4.10, §4.11 */
	static const uint8_t want[] = {
	    0x12, 0x34, 0x56, 0x78,                         /* uint 0x12345678 */
	    0xff, 0xff, 0xff, 0xfe,                         /* int -2 */
	    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* hyper */
	    0x00, 0x00, 0x00, 0x01,                         /* bool TRUE */
	    0x00, 0x00, 0x00, 0x03, 'a',  'b',  'c',  0x00, /* string "abc" */
	};
	rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
	CHECK(rpcrdma_xdr_put_u32(&x, 0x12345678u) == 0);
	CHECK(rpcrdma_xdr_put_i32(&x, -2) == 0);
	CHECK(rpcrdma_xdr_put_u64(&x, 0x0102030405060708ull) == 0);
	CHECK(rpcrdma_xdr_put_bool(&x, true) == 0);
	CHECK(rpcrdma_xdr_put_string(&x, "abc", 16) == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == sizeof(want));
	CHECK(memcmp(buf, want, sizeof(want)) == 0);

	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	uint8_t in[sizeof(want)];
	memcpy(in, want, sizeof(want));
	/* 15 one-byte iovecs then the rest: every item straddles. */
	for (unsigned i = 0; i < 15; i++) {
		iov[i].iov_base = in + i;
		iov[i].iov_len = 1;
	}
	iov[15].iov_base = in + 15;
	iov[15].iov_len = sizeof(in) - 15;
	CHECK(rpcrdma_xdr_init_iov(&x, iov, 16, RPCRDMA_XDR_DECODE) == 0);
	uint32_t u;
	int32_t i32;
	uint64_t u64;
	bool b;
	char s[8];
	CHECK(rpcrdma_xdr_get_u32(&x, &u) == 0 && u == 0x12345678u);
	CHECK(rpcrdma_xdr_get_i32(&x, &i32) == 0 && i32 == -2);
	CHECK(rpcrdma_xdr_get_u64(&x, &u64) == 0 && u64 == 0x0102030405060708ull);
	CHECK(rpcrdma_xdr_get_bool(&x, &b) == 0 && b);
	CHECK(rpcrdma_xdr_get_string(&x, s, sizeof(s)) == 0 && strcmp(s, "abc") == 0);
	CHECK(rpcrdma_xdr_remaining(&x) == 0);
	size_t pos = rpcrdma_xdr_getpos(&x);
	CHECK(rpcrdma_xdr_get_u32(&x, &u) == -EBADMSG);
	CHECK(rpcrdma_xdr_getpos(&x) == pos);
	printf("xdr sanity ok\n");
	return 0;
}
