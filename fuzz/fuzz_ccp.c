/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the Connection Configuration Protocol's codec
 * (src/transport/ccp_xdr.c, RFC 5666 §6.2). Any input either is shorter
 * than twelve bytes and refused (-EBADMSG, by the plain decoders and by
 * the XDR stream adapters alike) or decodes, and encoding what was
 * decoded gives back its first twelve bytes, for both structs and both
 * paths.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/xdr.h>

#include "fuzz_assert.h"
#include "transport/ccp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ccp_req q = {0};
	struct ccp_reply r = {0};
	uint8_t copy[64], out[RPCRDMA_CCP_SIZE];
	size_t n = size < sizeof(copy) ? size : sizeof(copy);
	int rq = ccp_req_decode(data, size, &q);
	int rr = ccp_reply_decode(data, size, &r);
	bool_t ok;
	XDR x;

	if (size < RPCRDMA_CCP_SIZE) {
		ASSERT(rq == -EBADMSG && rr == -EBADMSG);
	} else {
		ASSERT(rq == 0 && rr == 0);
		ASSERT(ccp_req_encode(out, sizeof(out), &q) == 0);
		ASSERT(memcmp(out, data, RPCRDMA_CCP_SIZE) == 0);
		ASSERT(ccp_reply_encode(out, sizeof(out), &r) == 0);
		ASSERT(memcmp(out, data, RPCRDMA_CCP_SIZE) == 0);
	}
	/* the stream adapters see the same bytes the same way */
	memcpy(copy, data, n);
	xdrmem_create(&x, (char *)copy, (u_int)n, XDR_DECODE);
	ok = xdr_ccp_req(&x, &q);
	ASSERT(ok == (n >= RPCRDMA_CCP_SIZE));
	if (ok) {
		ASSERT(xdr_getpos(&x) == RPCRDMA_CCP_SIZE);
		ASSERT(ccp_req_encode(out, sizeof(out), &q) == 0);
		ASSERT(memcmp(out, data, RPCRDMA_CCP_SIZE) == 0);
	}
	return 0;
}
