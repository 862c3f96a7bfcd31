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

#include "fuzz_assert.h"
#include "transport/connect_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma1_cm_private p;
	uint8_t out[RPCRDMA1_CM_SIZE];

	int rc = rpcrdma1_cm_private_decode(data, size, &p);
	if (rc) {
		ASSERT(rc == -EINVAL);
		ASSERT(!p.remote_invalidate && p.send_size == 1024 && p.recv_size == 1024);
		return 0;
	}
	ASSERT(size >= RPCRDMA1_CM_SIZE);
	ASSERT(p.send_size >= 1024 && p.send_size <= 262144 && p.send_size % 1024 == 0);
	ASSERT(p.recv_size >= 1024 && p.recv_size <= 262144 && p.recv_size % 1024 == 0);
	ASSERT(rpcrdma1_cm_private_encode(out, sizeof(out), &p) == 0);
	ASSERT(memcmp(out, data, 5) == 0);
	ASSERT(out[5] == (data[5] & RPCRDMA1_CM_FLAG_REMOTE_INV));
	ASSERT(out[6] == data[6] && out[7] == data[7]);
	return 0;
}
