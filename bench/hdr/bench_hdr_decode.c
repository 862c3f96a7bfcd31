/* SPDX-License-Identifier: MIT */
/*
 * Decodes one RPC-over-RDMA Version One header N times: "null" is an
 * RDMA_MSG with three empty lists (an NFS NULL call's), "lists" one with a
 * Read list of two segments, a Write list of one two-segment chunk and no
 * Reply chunk. For counting instructions of the decoder:
 *   valgrind --tool=callgrind bench_hdr_decode lists 100000
 * Usage: bench_hdr_decode null|lists [count]; prints a checksum of the
 * decoded fields so the loop cannot be dropped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rpcrdma1_hdr.h"
#include "util/be.h"

#define W(v) BE32_BYTES(v)

/* xid, vers 1, credit 32, RDMA_MSG, three empty lists. */
static const uint8_t null_call[] = {W(1), W(1), W(32), W(0), W(0), W(0), W(0)};

/* Two Read segments at positions 0 and 8, one Write chunk of two
 * segments, no Reply chunk. */
static const uint8_t lists_call[] = {
    W(2),    W(1),    W(32),   W(0),                       /* fixed words */
    W(1),    W(0),    W(0x11), W(4096),   W(0), W(0x1000), /* read seg 1 */
    W(1),    W(8),    W(0x12), W(4096),   W(0), W(0x2000), /* read seg 2 */
    W(0),                                                  /* end of Read list */
    W(1),    W(2),    W(0x21), W(8192),   W(0), W(0x3000), /* write chunk */
    W(0x22), W(8192), W(0),    W(0x5000), W(0),            /* end of Write list */
    W(0),                                                  /* no Reply chunk */
};

int main(int argc, char **argv)
{
	static struct rpcrdma1_hdr h;
	const uint8_t *p;
	size_t len;

	if (argc < 2 || (strcmp(argv[1], "null") && strcmp(argv[1], "lists"))) {
		fprintf(stderr, "usage: %s null|lists [count]\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "null"))
		p = null_call, len = sizeof(null_call);
	else
		p = lists_call, len = sizeof(lists_call);
	long count = argc > 2 ? strtol(argv[2], NULL, 0) : 1000000;
	uint64_t sum = 0;
	for (long i = 0; i < count; i++) {
		if (rpcrdma1_decode_buf(p, len, &h)) {
			fprintf(stderr, "decode failed\n");
			return 1;
		}
		sum += h.hdr_len + h.chunks.nreads + h.chunks.nwsegs;
	}
	printf("%s x%ld: hdr_len %zu, checksum %llu\n", argv[1], count, h.hdr_len,
	       (unsigned long long)sum);
	return 0;
}
