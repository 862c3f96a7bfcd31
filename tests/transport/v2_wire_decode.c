// SPDX-License-Identifier: MIT
/*
 * The decoder of the Version Two wire check (tests/xprt/xprt_v2_wire.sh):
 * Wireshark 4.0 does not know Version Two, so each captured Send payload
 * is decoded with our codec through rpcrdma2_hdr_print().
 * Input, one Send per line: "FRAME SRCPORT HEXBYTES".
 * Output, one line per Send, key=value words separated by spaces:
 *   frame port xid vers credit proc; then by proc direction, reads, writes,
 *   reply (1 when a Reply chunk is present), and for RDMA2_MSG the inline
 *   RPC message's rpc_xid and rpc_type (0 call, 1 reply); err (ERROR);
 *   optdir opttype (OPTIONAL); hdr_len; or error=<errno name> when the
 *   header does not decode (then the exit status is 1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hex.h"
#include "rpcrdma2_print.h"
#include "util/be.h"

/* The printer's "name value" lines as one line of key=value words; the
 * chunk lines ("read N ...", "write N segments ...", "reply segments N")
 * are counted instead. Returns hdr_len (0 if not printed). */
static size_t one_line(char *text, unsigned *reads, unsigned *writes, unsigned *reply)
{
	size_t hdr_len = 0;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char key[32], val[64];

		if (strncmp(line, "read ", 5) == 0) {
			(*reads)++;
			continue;
		}
		if (strncmp(line, "write ", 6) == 0) {
			*writes += strstr(line, "segments") != NULL;
			continue;
		}
		if (strncmp(line, "reply segments ", 15) == 0) {
			*reply = 1;
			continue;
		}
		if (strncmp(line, "reply ", 6) == 0 || strncmp(line, "prop ", 5) == 0)
			continue;
		if (sscanf(line, "%31s %63s", key, val) != 2)
			continue;
		if (strcmp(key, "hdr_len") == 0)
			hdr_len = strtoul(val, NULL, 10);
		printf(" %s=%s", key, val);
	}
	return hdr_len;
}

int main(void)
{
	static char line[1 << 20];
	static uint8_t msg[1 << 19];
	int bad = 0;

	while (fgets(line, sizeof(line), stdin)) {
		unsigned long frame, port;
		unsigned reads = 0, writes = 0, reply = 0;
		int off = 0;
		char *text = NULL;
		size_t tlen = 0, hdr_len;
		long n;
		FILE *m;
		int rc;

		if (sscanf(line, "%lu %lu %n", &frame, &port, &off) != 2 || !off)
			continue;
		n = tl_unhex(line + off, msg, sizeof(msg));
		printf("frame=%lu port=%lu len=%ld", frame, port, n);
		if (n < 0) {
			printf(" error=hex\n");
			bad = 1;
			continue;
		}
		m = open_memstream(&text, &tlen);
		if (!m)
			return 2;
		rc = rpcrdma2_hdr_print(m, msg, (size_t)n);
		fclose(m);
		hdr_len = one_line(text, &reads, &writes, &reply);
		free(text);
		if (rc) {
			printf("\n");
			bad = 1;
			continue;
		}
		printf(" reads=%u writes=%u reply=%u", reads, writes, reply);
		/* RDMA2_MSG: the RPC message follows the header inline */
		if (get_be32(msg + 12) == 0 && (size_t)n >= hdr_len + 8)
			printf(" rpc_xid=0x%08x rpc_type=%u", (unsigned)get_be32(msg + hdr_len),
			       (unsigned)get_be32(msg + hdr_len + 4));
		printf("\n");
	}
	return bad;
}
