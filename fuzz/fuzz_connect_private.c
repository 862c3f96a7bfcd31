/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: RFC 8797 private data codec
 * (src/transport/connect_private.c). Any input either decodes (then the
 * sizes are 1 KiB..256 KiB multiples of 1 KiB and re-encoding gives back
 * the first 8 bytes with the reserved flag bits cleared) or is refused with
 * -EINVAL and the 1024/1024/no-invalidation defaults left in place.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/connect_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma1_cm_private p;
	uint8_t out[RPCRDMA1_CM_SIZE];

	int rc = rpcrdma1_cm_private_decode(data, size, &p);
	if (rc) {
		REQUIRE(rc == -EINVAL);
		REQUIRE(!p.remote_invalidate && p.send_size == 1024 && p.recv_size == 1024);
		return 0;
	}
	REQUIRE(size >= RPCRDMA1_CM_SIZE);
	REQUIRE(p.send_size >= 1024 && p.send_size <= 262144 && p.send_size % 1024 == 0);
	REQUIRE(p.recv_size >= 1024 && p.recv_size <= 262144 && p.recv_size % 1024 == 0);
	REQUIRE(rpcrdma1_cm_private_encode(out, sizeof(out), &p) == 0);
	REQUIRE(memcmp(out, data, 5) == 0);
	REQUIRE(out[5] == (data[5] & RPCRDMA1_CM_FLAG_REMOTE_INV));
	REQUIRE(out[6] == data[6] && out[7] == data[7]);
	return 0;
}
