// SPDX-License-Identifier: MIT
/*
 * What both clients do with their CLIENT handle: PUT a buffer and compare
 * the server's checksum with ours, GET one and check its bytes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bulk.h"
#include "bulk_data.h"
#include "bulk_check.h"

int bulk_check(CLIENT *cl, uint32_t len)
{
	rpcrdma_bulk data = {.base = malloc(len), .len = len};
	get_args ga = {.len = len, .seed = 2};
	rpcrdma_bulk *got;
	u_quad_t *h;
	uint64_t want;
	int bad = 0;

	if (!data.base)
		return 1;
	bulk_fill(data.base, len, 1);
	want = bulk_hash(data.base, len);
	h = put_1(&data, cl);
	if (!h) {
		clnt_perror(cl, "PUT");
		bad = 1;
	} else {
		printf("PUT %u bytes: checksum %016llx, server %016llx: %s\n", len,
		       (unsigned long long)want, (unsigned long long)*h,
		       *h == want ? "ok" : "MISMATCH");
		bad |= *h != want;
	}
	free(data.base);

	/* the expected bytes */
	data.base = malloc(len);
	if (!data.base)
		return 1;
	bulk_fill(data.base, len, ga.seed);
	want = bulk_hash(data.base, len);
	free(data.base);
	got = get_1(&ga, cl);
	if (!got) {
		clnt_perror(cl, "GET");
		return 1;
	}
	printf("GET %u bytes: got %u, checksum %016llx, want %016llx: %s\n", len, got->len,
	       (unsigned long long)bulk_hash(got->base, got->len), (unsigned long long)want,
	       got->len == len && bulk_hash(got->base, got->len) == want ? "ok" : "MISMATCH");
	bad |= got->len != len || bulk_hash(got->base, got->len) != want;
	clnt_freeres(cl, (xdrproc_t)xdr_rpcrdma_bulk, (char *)got);
	return bad;
}
