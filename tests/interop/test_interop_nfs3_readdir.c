/* SPDX-License-Identifier: MIT */
/*
 * Interop: NFSv3 READDIRPLUS of a 2,000-entry directory against the Linux
 * kernel's nfsd — the Long Reply case (RFC 8166 §3.5.3.2): every call
 * offers a 64 KiB Reply chunk, the kernel RDMA-Writes replies longer than
 * its 4 KiB inline threshold into it and answers RDMA_NOMSG with the Reply
 * chunk echoed at the length written, as a Send with Invalidate naming the
 * chunk's STag. MPA CRC on.
 *   - the listing, followed by cookie until eof, names f1..f2000 (made by
 *     guest/nfs-server.sh) each exactly once, plus "." and "..";
 *   - every entry carries attributes (a regular file of size 0) and a file
 *     handle, as READDIRPLUS promises;
 *   - at least one reply came through the Reply chunk (RDMA_NOMSG).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs3_client.h"

#define NFILES 2000

int main(void)
{
	struct iop_env env;
	struct iop_conn c;
	struct iop_fh root, dir;
	struct iop_dbuf b = {0};
	fattr3 a;
	uint8_t verf[NFS3_COOKIEVERFSIZE] = {0};
	static uint8_t seen[NFILES + 1];
	uint64_t cookie = 0, t0;
	unsigned int calls = 0, longs = 0, dots = 0, files = 0, bad = 0;
	bool eof = false;
	int rc = iop_nfs3_setup(&env, &c, &root, true);

	if (rc != IOP_PASS) {
		iop_close(&c);
		return rc;
	}
	if (iop_nfs3_lookup(&c, &root, "interop", &dir, &a) != NFS3_OK ||
	    iop_nfs3_lookup(&c, &dir, "dir2000", &dir, &a) != NFS3_OK || a.type != NF3DIR ||
	    iop_dbuf_alloc(&c, &b, 64u << 10) != 0) {
		printf("FAIL: setup (LOOKUP interop/dir2000, buffer)\n");
		iop_close(&c);
		return IOP_FAIL;
	}
	t0 = iop_now_ms();
	while (!eof && calls < 200) {
		READDIRPLUS3res res;
		bool long_reply = false;

		rc = iop_nfs3_readdirplus(&c, &dir, cookie, verf, 32768, &b, &res, &long_reply);
		if (rc != NFS3_OK) {
			printf("READDIRPLUS cookie %llu: status %d\n", (unsigned long long)cookie,
			       rc);
			iop_failures++;
			if (rc > 0)
				xdr_free((xdrproc_t)xdr_READDIRPLUS3res, (char *)&res);
			break;
		}
		calls++;
		longs += long_reply;
		memcpy(verf, res.READDIRPLUS3res_u.resok.cookieverf, sizeof(verf));
		for (entryplus3 *e = res.READDIRPLUS3res_u.resok.reply.entries; e;
		     e = e->nextentry) {
			char *end;
			unsigned long i;

			cookie = e->cookie;
			if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0) {
				dots++;
				continue;
			}
			i = e->name[0] == 'f' ? strtoul(e->name + 1, &end, 10) : 0;
			if (i == 0 || i > NFILES || *end != '\0' || seen[i]++) {
				printf("unexpected or repeated entry \"%s\"\n", e->name);
				bad++;
				continue;
			}
			files++;
			if (!e->name_attributes.attributes_follow ||
			    e->name_attributes.post_op_attr_u.attributes.type != NF3REG ||
			    e->name_attributes.post_op_attr_u.attributes.size != 0 ||
			    !e->name_handle.handle_follows ||
			    e->name_handle.post_op_fh3_u.handle.data.data_len == 0)
				bad++;
		}
		eof = res.READDIRPLUS3res_u.resok.reply.eof;
		xdr_free((xdrproc_t)xdr_READDIRPLUS3res, (char *)&res);
	}
	printf("READDIRPLUS dir2000: %u entries + %u dot entries in %u calls (%u long replies by "
	       "Reply chunk), %llu ms\n",
	       files, dots, calls, longs, (unsigned long long)(iop_now_ms() - t0));
	IOP_EXPECT(eof);
	IOP_EXPECT(files == NFILES && dots == 2 && bad == 0);
	IOP_EXPECT(longs >= 1);
	iop_dbuf_free(&b);
	iop_close(&c);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
