/* SPDX-License-Identifier: MIT */
/*
 * Interop: NFSv3 READ with the data delivered by Write chunk — the Linux
 * kernel's nfsd/svcrdma RDMA-Writes into memory our soft-iWARP provider
 * registered, then replies with Send with Invalidate (MPA CRC on, so every
 * data FPDU the kernel sends is CRC-checked by our provider).
 *
 * For each file guest/nfs-server.sh created (1 MiB, 1000003 bytes, 4097
 * bytes, 14 bytes), read in pieces of at most rtmax (FSINFO), each piece
 * through its own Write chunk of exactly that size:
 *   - the reply's Write list echoes our chunk (same STag and offset) with
 *     the length rewritten to the bytes written (RFC 8166 §3.4.6), the
 *     inline READ3resok keeps the data length word and nothing after it;
 *   - the reply is a Send with Invalidate naming the chunk's STag, and the
 *     STag is invalid afterwards;
 *   - the bytes placed have the POSIX cksum the guest computed for the file
 *     (export.cksum), and no byte before or after the chunk was touched
 *     (odd sizes: the kernel must not write XDR padding into a chunk);
 *   - a READ at end of file returns count 0 with eof set.
 * The 4097-byte file lands at an odd address (chunk offset ends in 1).
 * Prints MB/s of the 1 MiB file (TCG guest: a figure, not a target).
 */
#include <stdio.h>
#include <string.h>

#include "nfs3_client.h"

#define SENTINEL 0xa5

static int read_file(struct iop_conn *c, const struct iop_env *env, const struct iop_fh *dir,
		     const char *name, uint32_t rtmax, struct iop_dbuf *b, size_t boff)
{
	char ck[600];
	struct iop_fh fh;
	fattr3 a;
	uint32_t want_crc, got, pieces = 0;
	uint64_t size, done = 0, t0;
	bool eof = false;

	snprintf(ck, sizeof(ck), "%s/export.cksum", env->guest_out);
	IOP_CHECK(iop_cksum_lookup(ck, name, &want_crc, &size) == 0);
	IOP_CHECK(boff + size + 8 <= b->cap);
	IOP_CHECK(iop_nfs3_lookup(c, dir, name, &fh, &a) == NFS3_OK);
	IOP_CHECK(a.size == size);
	memset(b->p, SENTINEL, b->cap);
	t0 = iop_now_ms();
	while (done < size) {
		uint32_t want = size - done < rtmax ? (uint32_t)(size - done) : rtmax;

		IOP_CHECK(iop_nfs3_read(c, &fh, done, want, b, boff + done, &got, &eof) == NFS3_OK);
		IOP_CHECK(got > 0 && got <= want);
		done += got;
		pieces++;
	}
	uint64_t ms = iop_now_ms() - t0;

	IOP_EXPECT(eof); /* the last piece reaches the end */
	uint32_t crc = iop_cksum(b->p + boff, size);

	printf("READ %s: %llu bytes in %u Write-chunk READs, %llu ms (%.2f MB/s), cksum %u "
	       "(guest %u)\n",
	       name, (unsigned long long)size, pieces, (unsigned long long)ms,
	       ms ? (double)size / 1000.0 / (double)ms : 0.0, crc, want_crc);
	IOP_EXPECT(crc == want_crc);
	for (size_t i = 0; i < boff; i++)
		IOP_EXPECT(b->p[i] == SENTINEL);
	for (size_t i = 0; i < 8; i++)
		if (b->p[boff + size + i] != SENTINEL) {
			fprintf(stderr, "%s: byte %zu after the data was written (0x%02x)\n", name,
				i, b->p[boff + size + i]);
			iop_failures++;
			break;
		}

	/* At end of file: nothing placed, eof set. */
	got = 1;
	eof = false;
	IOP_CHECK(iop_nfs3_read(c, &fh, size, 4096, b, 0, &got, &eof) == NFS3_OK);
	printf("READ %s at EOF: count %u eof %d\n", name, got, eof);
	IOP_EXPECT(got == 0 && eof);
	return 0;
}

int main(void)
{
	struct iop_env env;
	struct iop_conn c;
	struct iop_fh root, dir;
	struct iop_dbuf b = {0};
	FSINFO3resok fi;
	fattr3 a;
	struct rpcrdma_ep_stats st;
	int rc = iop_nfs3_setup(&env, &c, &root, true);

	if (rc != IOP_PASS) {
		iop_close(&c);
		return rc;
	}
	memset(&fi, 0, sizeof(fi));
	if (iop_nfs3_fsinfo(&c, &root, &fi) != NFS3_OK || fi.rtmax == 0 ||
	    iop_nfs3_lookup(&c, &root, "interop", &dir, &a) != NFS3_OK ||
	    iop_dbuf_alloc(&c, &b, (2u << 20) + 64) != 0) {
		printf("FAIL: setup (FSINFO, LOOKUP interop, buffer)\n");
		iop_close(&c);
		return IOP_FAIL;
	}
	printf("rtmax %u\n", fi.rtmax);
	read_file(&c, &env, &dir, "read-1m", fi.rtmax, &b, 0);
	read_file(&c, &env, &dir, "read-odd", fi.rtmax, &b, 0);
	read_file(&c, &env, &dir, "read-4097", fi.rtmax, &b, 1);
	read_file(&c, &env, &dir, "hello.txt", fi.rtmax, &b, 0);

	IOP_EXPECT(rpcrdma_ep_query_stats(c.ep, &st) == 0);
	printf("stats: %llu RDMA Writes placed for the peer, %llu rx bytes, %llu CRC errors, %llu "
	       "Terminates\n",
	       (unsigned long long)st.writes_in, (unsigned long long)st.rx_bytes,
	       (unsigned long long)st.crc_errors,
	       (unsigned long long)(st.terminates_rx + st.terminates_tx));
	IOP_EXPECT(st.crc_errors == 0 && st.terminates_rx == 0 && st.terminates_tx == 0);
	iop_dbuf_free(&b);
	iop_close(&c);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
