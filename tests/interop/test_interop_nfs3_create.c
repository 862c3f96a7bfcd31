/* SPDX-License-Identifier: MIT */
/*
 * Interop: NFSv3 CREATE and REMOVE (RFC 1813 §3.3.8, §3.3.12) against the
 * Linux kernel's nfsd over RDMA, with data through the new file:
 *   - CREATE create-u UNCHECKED (mode 0644): NFS3_OK, a handle, a regular
 *     empty file of mode 0644; CREATE UNCHECKED again: NFS3_OK, the same
 *     handle (UNCHECKED does not check for an existing file);
 *   - CREATE create-g GUARDED: NFS3_OK; a second GUARDED: NFS3ERR_EXIST;
 *   - WRITE 99999 bytes (odd length, odd source address) into create-g by
 *     Read chunk, FILE_SYNC; READ them back by Write chunk into an odd
 *     address: count 99999, eof, same cksum; GETATTR size 99999;
 *   - the guest confirms from its own file system: `cksum` of
 *     /export/interop/create-g inside the guest equals ours;
 *   - REMOVE both: NFS3_OK; LOOKUP then NFS3ERR_NOENT, REMOVE again
 *     NFS3ERR_NOENT; the guest confirms the files are gone.
 * Every reply is a plain Send with grant 64, except WRITE/READ (Send with
 * Invalidate of the chunk's STag), all checked in nfs3_client.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs3_client.h"

#define DATA_LEN 99999u

static const char *st_name(int st)
{
	switch (st) {
	case NFS3_OK:
		return "NFS3_OK";
	case NFS3ERR_NOENT:
		return "NFS3ERR_NOENT";
	case NFS3ERR_EXIST:
		return "NFS3ERR_EXIST";
	case NFS3ERR_ACCES:
		return "NFS3ERR_ACCES";
	}
	return st < 0 ? "(exchange failed)" : "other";
}

/* Ask the guest's shell; the answer's first line in @out. */
static int guest(const struct iop_env *env, const char *name, const char *line, int *status,
		 char *out, size_t cap)
{
	if (iop_guest_sh(env, name, line, 60000, status, out, cap) != 0) {
		printf("guest command '%s': no answer\n", line);
		iop_failures++;
		return -1;
	}
	printf("guest: %s -> rc=%d '%s'\n", line, *status, out);
	return 0;
}

int main(void)
{
	struct iop_env env;
	struct iop_conn c;
	struct iop_fh root, dir, fu, fu2, fg, fg2, tmp;
	struct iop_dbuf src = {0}, back = {0};
	fattr3 a;
	char ans[512];
	int rc = iop_nfs3_setup(&env, &c, &root, false), st, gst;

	if (rc != IOP_PASS) {
		iop_close(&c);
		return rc;
	}
	if (iop_nfs3_lookup(&c, &root, "interop", &dir, &a) != NFS3_OK ||
	    iop_dbuf_alloc(&c, &src, DATA_LEN + 64) != 0 ||
	    iop_dbuf_alloc(&c, &back, DATA_LEN + 64) != 0) {
		printf("FAIL: setup (LOOKUP interop, buffers)\n");
		iop_close(&c);
		return IOP_FAIL;
	}
	/* A rerun against the same guest starts clean. */
	iop_nfs3_remove(&c, &dir, "create-u");
	iop_nfs3_remove(&c, &dir, "create-g");

	/* UNCHECKED, twice */
	memset(&a, 0, sizeof(a));
	st = iop_nfs3_create(&c, &dir, "create-u", UNCHECKED, 0644, &fu, &a);
	printf("CREATE create-u UNCHECKED: %s, %u-byte handle, type %d mode %o size %llu\n",
	       st_name(st), fu.len, a.type, a.mode, (unsigned long long)a.size);
	IOP_EXPECT(st == NFS3_OK);
	IOP_EXPECT(a.type == NF3REG && (a.mode & 07777) == 0644 && a.size == 0);
	st = iop_nfs3_create(&c, &dir, "create-u", UNCHECKED, 0644, &fu2, NULL);
	printf("CREATE create-u UNCHECKED again: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3_OK);
	IOP_EXPECT(st == NFS3_OK && fu2.len == fu.len && memcmp(fu2.data, fu.data, fu.len) == 0);

	/* GUARDED, twice */
	st = iop_nfs3_create(&c, &dir, "create-g", GUARDED, 0644, &fg, &a);
	printf("CREATE create-g GUARDED: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3_OK && a.type == NF3REG && a.size == 0);
	st = iop_nfs3_create(&c, &dir, "create-g", GUARDED, 0644, &tmp, NULL);
	printf("CREATE create-g GUARDED again: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3ERR_EXIST);
	IOP_EXPECT(iop_nfs3_lookup(&c, &dir, "create-g", &fg2, &a) == NFS3_OK);
	IOP_EXPECT(fg2.len == fg.len && memcmp(fg2.data, fg.data, fg.len) == 0);

	/* Data through the new file: Read chunk in, Write chunk out. */
	{
		uint32_t w = 0, got = 0, crc;
		stable_how com = UNSTABLE;
		bool eof = false;

		iop_fill(src.p + 3, DATA_LEN, 0xc4ea7e);
		crc = iop_cksum(src.p + 3, DATA_LEN);
		st = iop_nfs3_write(&c, &fg, 0, DATA_LEN, FILE_SYNC, &src, 3, &w, &com, NULL);
		printf("WRITE create-g %u bytes (Read chunk, from an odd address): %s, wrote %u, "
		       "committed %d\n",
		       DATA_LEN, st_name(st), w, com);
		IOP_EXPECT(st == NFS3_OK && w == DATA_LEN && com == FILE_SYNC);
		memset(back.p, 0, back.cap);
		st = iop_nfs3_read(&c, &fg, 0, DATA_LEN, &back, 5, &got, &eof);
		printf("READ create-g (Write chunk, into an odd address): %s, %u bytes, eof %d, "
		       "cksum %u (written %u)\n",
		       st_name(st), got, eof, iop_cksum(back.p + 5, got), crc);
		IOP_EXPECT(st == NFS3_OK && got == DATA_LEN && eof);
		IOP_EXPECT(memcmp(back.p + 5, src.p + 3, DATA_LEN) == 0);
		/* no byte of the sink outside the chunk was touched */
		for (size_t i = 0; i < 5; i++)
			IOP_EXPECT(back.p[i] == 0);
		IOP_EXPECT(back.p[5 + DATA_LEN] == 0);
		IOP_EXPECT(iop_nfs3_getattr(&c, &fg, &a) == NFS3_OK && a.size == DATA_LEN);

		/* The guest's own view of the file. */
		if (guest(&env, "create-cksum", "cksum /export/interop/create-g", &gst, ans,
			  sizeof(ans)) == 0) {
			unsigned long gcrc = 0, gsize = 0;

			IOP_EXPECT(gst == 0);
			IOP_EXPECT(sscanf(ans, "%lu %lu", &gcrc, &gsize) == 2);
			IOP_EXPECT(gcrc == crc && gsize == DATA_LEN);
		}
	}

	/* REMOVE, then the name is gone */
	st = iop_nfs3_remove(&c, &dir, "create-g");
	printf("REMOVE create-g: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3_OK);
	st = iop_nfs3_remove(&c, &dir, "create-u");
	printf("REMOVE create-u: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3_OK);
	st = iop_nfs3_lookup(&c, &dir, "create-g", &tmp, NULL);
	printf("LOOKUP create-g after REMOVE: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3ERR_NOENT);
	IOP_EXPECT(iop_nfs3_lookup(&c, &dir, "create-u", &tmp, NULL) == NFS3ERR_NOENT);
	st = iop_nfs3_remove(&c, &dir, "create-g");
	printf("REMOVE create-g again: %s\n", st_name(st));
	IOP_EXPECT(st == NFS3ERR_NOENT);
	if (guest(&env, "create-gone",
		  "! ls /export/interop/create-g /export/interop/create-u 2>/dev/null", &gst, ans,
		  sizeof(ans)) == 0)
		IOP_EXPECT(gst == 0);

	iop_dbuf_free(&src);
	iop_dbuf_free(&back);
	iop_close(&c);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
