/* SPDX-License-Identifier: MIT */
/*
 * Interop: NFSv3 WRITE with the data carried by a Read chunk — the Linux
 * kernel's nfsd/svcrdma RDMA-Reads it from memory our soft-iWARP provider
 * registered (our provider serves the Read Requests as responder), then
 * replies with Send with Invalidate naming the chunk's STag. MPA CRC off.
 *
 *   - write-1m: 1 MiB in pieces of at most wtmax (FSINFO), UNSTABLE, then
 *     COMMIT; every WRITE returns the same write verifier as the COMMIT;
 *   - write-odd: 333333 bytes (odd length: the chunk carries no XDR
 *     padding, RFC 8166 §3.4.5) from an odd source address, FILE_SYNC;
 *   - each WRITE3resok reports the whole count written; the reply has no
 *     chunks and is a Send with Invalidate naming our Read chunk's STag;
 *   - both files are READ back (Write chunks) and compared byte for byte;
 *   - the cksums are written to STATE/expected-write.cksum, which
 *     interop_write_verify compares with the guest's own cksum of the
 *     files after the run (what the kernel has on disk).
 */
#include <stdio.h>
#include <string.h>

#include "nfs3_client.h"

static int write_file(struct iop_conn *c, const struct iop_env *env, const struct iop_fh *dir,
		      const char *name, size_t size, size_t boff, uint32_t wtmax, stable_how how,
		      struct iop_dbuf *src, struct iop_dbuf *back)
{
	struct iop_fh fh;
	fattr3 a;
	uint8_t verf[NFS3_WRITEVERFSIZE], v0[NFS3_WRITEVERFSIZE];
	uint64_t done = 0, t0;
	uint32_t pieces = 0, got;
	bool eof;

	IOP_CHECK(boff + size <= src->cap && size <= back->cap);
	IOP_CHECK(iop_nfs3_lookup(c, dir, name, &fh, &a) == NFS3_OK);
	iop_fill(src->p + boff, size, (uint64_t)size * 31u + 7u);
	t0 = iop_now_ms();
	while (done < size) {
		uint32_t n = size - done < wtmax ? (uint32_t)(size - done) : wtmax, w = 0;
		stable_how com = UNSTABLE;

		IOP_CHECK(iop_nfs3_write(c, &fh, done, n, how, src, boff + done, &w, &com, verf) ==
			  NFS3_OK);
		if (w != n) {
			fprintf(stderr, "%s: WRITE of %u bytes at %llu wrote %u\n", name, n,
				(unsigned long long)done, w);
			iop_failures++;
			return -1;
		}
		/* RFC 1813 §3.3.7: committed is at least what was asked */
		IOP_EXPECT((int)com >= (int)how);
		if (pieces == 0)
			memcpy(v0, verf, sizeof(v0));
		IOP_EXPECT(memcmp(v0, verf, sizeof(v0)) == 0);
		done += n;
		pieces++;
	}
	if (how == UNSTABLE) {
		IOP_CHECK(iop_nfs3_commit(c, &fh, verf) == NFS3_OK);
		IOP_EXPECT(memcmp(v0, verf, sizeof(v0)) == 0);
	}
	uint64_t ms = iop_now_ms() - t0;
	uint32_t crc = iop_cksum(src->p + boff, size);

	printf("WRITE %s: %zu bytes in %u Read-chunk WRITEs (%s%s), %llu ms (%.2f MB/s), cksum "
	       "%u\n",
	       name, size, pieces, how == UNSTABLE ? "UNSTABLE" : "FILE_SYNC",
	       how == UNSTABLE ? " + COMMIT" : "", (unsigned long long)ms,
	       ms ? (double)size / 1000.0 / (double)ms : 0.0, crc);
	IOP_CHECK(iop_nfs3_getattr(c, &fh, &a) == NFS3_OK);
	IOP_EXPECT(a.size == size);

	/* Read back through Write chunks. */
	memset(back->p, 0, back->cap);
	done = 0;
	while (done < size) {
		uint32_t n = size - done < wtmax ? (uint32_t)(size - done) : wtmax;

		IOP_CHECK(iop_nfs3_read(c, &fh, done, n, back, done, &got, &eof) == NFS3_OK);
		IOP_CHECK(got > 0);
		done += got;
	}
	if (memcmp(back->p, src->p + boff, size) != 0) {
		size_t i = 0;

		while (back->p[i] == src->p[boff + i])
			i++;
		fprintf(stderr, "%s: read-back differs from the data written at byte %zu\n", name,
			i);
		iop_failures++;
	} else {
		printf("READ back %s: %zu bytes identical\n", name, size);
	}
	if (env->state[0]) {
		char path[600];
		FILE *f;

		snprintf(path, sizeof(path), "%s/expected-write.cksum", env->state);
		f = fopen(path, "a");
		IOP_CHECK(f);
		fprintf(f, "%u %zu %s\n", crc, size, name);
		fclose(f);
	}
	return 0;
}

int main(void)
{
	struct iop_env env;
	struct iop_conn c;
	struct iop_fh root, dir;
	struct iop_dbuf src = {0}, back = {0};
	FSINFO3resok fi;
	fattr3 a;
	struct rpcrdma_ep_stats st;
	int rc = iop_nfs3_setup(&env, &c, &root, false);

	if (rc != IOP_PASS) {
		iop_close(&c);
		return rc;
	}
	if (env.state[0]) {
		char path[600];

		snprintf(path, sizeof(path), "%s/expected-write.cksum", env.state);
		remove(path);
	}
	memset(&fi, 0, sizeof(fi));
	if (iop_nfs3_fsinfo(&c, &root, &fi) != NFS3_OK || fi.wtmax == 0 ||
	    iop_nfs3_lookup(&c, &root, "interop", &dir, &a) != NFS3_OK ||
	    iop_dbuf_alloc(&c, &src, (1u << 20) + 64) != 0 ||
	    iop_dbuf_alloc(&c, &back, (1u << 20) + 64) != 0) {
		printf("FAIL: setup (FSINFO, LOOKUP interop, buffers)\n");
		iop_close(&c);
		return IOP_FAIL;
	}
	printf("wtmax %u\n", fi.wtmax);
	write_file(&c, &env, &dir, "write-1m", 1u << 20, 0, fi.wtmax, UNSTABLE, &src, &back);
	write_file(&c, &env, &dir, "write-odd", 333333, 3, fi.wtmax, FILE_SYNC, &src, &back);

	IOP_EXPECT(rpcrdma_ep_query_stats(c.ep, &st) == 0);
	printf("stats: %llu RDMA Read Requests served for the peer, %llu tx bytes, %llu "
	       "Terminates\n",
	       (unsigned long long)st.reads_in, (unsigned long long)st.tx_bytes,
	       (unsigned long long)(st.terminates_rx + st.terminates_tx));
	IOP_EXPECT(st.terminates_rx == 0 && st.terminates_tx == 0);
	/* nfsd pulled our Read chunks: counted where the provider sees the
	 * peer's Read Requests (softiwarp; not a verbs device) */
	IOP_EXPECT(st.reads_in > 0 || !iop_peer_ops_counted(&c));
	iop_dbuf_free(&src);
	iop_dbuf_free(&back);
	iop_close(&c);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
