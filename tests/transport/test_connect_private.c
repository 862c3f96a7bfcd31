/* SPDX-License-Identifier: MIT */
/*
 * RFC 8797 private data codec (src/transport/connect_private.c): the exact
 * bytes the Linux client and server exchange (docs/linux-peer.md, seen
 * in the MPA frames of tests/data/captures), every size code, and refusals
 * that leave the 1024/1024/no-invalidation defaults in place.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport/connect_private.h"

#include "lib/check.h"

static int is_default(const struct rpcrdma1_cm_private *p)
{
	return !p->remote_invalidate && p->send_size == 1024 && p->recv_size == 1024;
}

int main(void)
{
	/* Linux xprtrdma client: remote invalidation OK, 4 KiB both ways. */
	static const uint8_t linux_client[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
	/* Linux svcrdma: no remote invalidation, 4 KiB both ways. */
	static const uint8_t linux_server[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03};
	struct rpcrdma1_cm_private p;
	uint8_t buf[16];

	CHECK(rpcrdma1_cm_private_decode(linux_client, sizeof(linux_client), &p) == 0);
	CHECK(p.remote_invalidate && p.send_size == 4096 && p.recv_size == 4096);
	memset(buf, 0, sizeof(buf));
	CHECK(rpcrdma1_cm_private_encode(buf, 8, &p) == 0);
	CHECK(memcmp(buf, linux_client, 8) == 0);

	CHECK(rpcrdma1_cm_private_decode(linux_server, sizeof(linux_server), &p) == 0);
	CHECK(!p.remote_invalidate && p.send_size == 4096 && p.recv_size == 4096);
	CHECK(rpcrdma1_cm_private_encode(buf, sizeof(buf), &p) == 0);
	CHECK(memcmp(buf, linux_server, 8) == 0);

	/* Send and receive sizes are separate fields, in that order. */
	static const uint8_t asym[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x00, 0xff};
	CHECK(rpcrdma1_cm_private_decode(asym, sizeof(asym), &p) == 0);
	CHECK(p.send_size == 1024 && p.recv_size == 262144);
	CHECK(rpcrdma1_cm_private_encode(buf, 8, &p) == 0 && memcmp(buf, asym, 8) == 0);

	/* Reserved flag bits are ignored; bytes past the first 8 too. */
	static const uint8_t extra[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0x07, 0x01, 0xaa, 0xbb};
	CHECK(rpcrdma1_cm_private_decode(extra, sizeof(extra), &p) == 0);
	CHECK(!p.remote_invalidate && p.send_size == 8192 && p.recv_size == 2048);

	/* Every size code round-trips: (code + 1) * 1024. */
	for (unsigned code = 0; code < 256; code++) {
		uint8_t c = 0;
		uint32_t bytes = rpcrdma1_cm_size_decode((uint8_t)code);
		CHECK(bytes == (code + 1) * 1024);
		CHECK(rpcrdma1_cm_size_encode(bytes, &c) == 0 && c == code);
	}

	/* Refusals keep the defaults for the caller. */
	static const uint8_t bad_magic[] = {0xf6, 0xab, 0x0e, 0x19, 0x01, 0x01, 0x03, 0x03};
	static const uint8_t bad_vers0[] = {0xf6, 0xab, 0x0e, 0x18, 0x00, 0x01, 0x03, 0x03};
	static const uint8_t bad_vers2[] = {0xf6, 0xab, 0x0e, 0x18, 0x02, 0x01, 0x03, 0x03};
	CHECK(rpcrdma1_cm_private_decode(linux_client, 7, &p) == -EINVAL && is_default(&p));
	CHECK(rpcrdma1_cm_private_decode(bad_magic, 8, &p) == -EINVAL && is_default(&p));
	CHECK(rpcrdma1_cm_private_decode(bad_vers0, 8, &p) == -EINVAL && is_default(&p));
	CHECK(rpcrdma1_cm_private_decode(bad_vers2, 8, &p) == -EINVAL && is_default(&p));
	CHECK(rpcrdma1_cm_private_decode(NULL, 0, &p) == -EINVAL && is_default(&p));
	for (size_t len = 0; len < 8; len++)
		CHECK(rpcrdma1_cm_private_decode(linux_client, len, &p) == -EINVAL &&
		      is_default(&p));
	rpcrdma1_cm_private_defaults(&p);
	CHECK(is_default(&p));

	/* Encoder refusals. */
	struct rpcrdma1_cm_private q = {true, 4096, 4096};
	CHECK(rpcrdma1_cm_private_encode(buf, 7, &q) == -EMSGSIZE);
	const uint32_t bad_sizes[] = {0, 1000, 1023, 1500, 4095, 262145, 263168, 0xffffffffu};
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		uint8_t c;
		CHECK(rpcrdma1_cm_size_encode(bad_sizes[i], &c) == -EINVAL);
		q.send_size = bad_sizes[i];
		q.recv_size = 4096;
		CHECK(rpcrdma1_cm_private_encode(buf, 8, &q) == -EINVAL);
		q.send_size = 4096;
		q.recv_size = bad_sizes[i];
		CHECK(rpcrdma1_cm_private_encode(buf, 8, &q) == -EINVAL);
	}

	if (failures) {
		printf("FAIL: %d check(s) failed\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
