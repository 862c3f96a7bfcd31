/* SPDX-License-Identifier: MIT */
/*
 * READDIR and READDIRPLUS (RFC 1813 §3.3.16, §3.3.17). Entries come from
 * readdir() in the file system's order; each entry's cookie is its d_off,
 * where seekdir() resumes the next call. "." and ".." are not listed (the
 * Linux client does not need them). The reply is held to the client's
 * count (READDIR) or dircount/maxcount (READDIRPLUS); a long one travels
 * in the client's Reply chunk.
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

/* Encoded sizes (XDR words) */
#define HDR_BYTES  (4u + 4u + 84u + 8u)       /* status, post_op_attr, cookieverf */
#define TAIL_BYTES 8u                         /* value_follows FALSE, eof */
#define PLUS_EXTRA (4u + 84u + 4u + 4u + 24u) /* post_op_attr + post_op_fh3 */

bool nfs3d_readdir(const struct nfs3d_args *a, struct nfs3d_enc *e)
{
	bool plus = a->proc == 17;
	char rel[PATH_MAX], abs[PATH_MAX];
	struct stat st;
	int s = nfs3d_fh_resolve(a->fh, a->fhlen, rel, &st);
	if (s == 0 && !S_ISDIR(st.st_mode))
		s = NFS3ERR_NOTDIR;
	DIR *d = NULL;
	if (s == 0 && (nfs3d_abs(rel, abs) != 0 || (d = opendir(abs)) == NULL))
		s = (int)nfs3d_errno_to_stat(errno);
	if (s != 0) {
		nfs3d_put32(e, (uint32_t)s);
		nfs3d_put_post_attr(e, s == NFS3ERR_NOTDIR ? &st : NULL);
		return true;
	}
	if (a->cookie)
		seekdir(d, (long)a->cookie);
	uint32_t limit = plus ? a->maxcount : a->count;
	uint32_t dirlimit = a->count; /* READDIRPLUS: dircount */
	uint32_t used = HDR_BYTES + TAIL_BYTES, dirused = 0, n = 0;
	static const uint8_t zero_verf[8];
	nfs3d_put32(e, NFS3_OK);
	nfs3d_put_post_attr(e, &st);
	nfs3d_put_fixed(e, zero_verf, 8);
	bool eof = true;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		uint32_t nlen = (uint32_t)strlen(de->d_name);
		uint32_t base = 4u + 8u + 4u + ((nlen + 3u) & ~3u) + 8u;
		uint32_t need = base + (plus ? PLUS_EXTRA : 0);
		if (used + need > limit || dirused + base > dirlimit) {
			eof = false;
			break;
		}
		char erel[PATH_MAX], eabs[PATH_MAX];
		struct stat est;
		bool have = nfs3d_join(rel, de->d_name, erel) == 0 && nfs3d_abs(erel, eabs) == 0 &&
			    nfs3d_lstat(eabs, &est, NULL) == 0;
		nfs3d_put32(e, 1);
		nfs3d_put64(e, have ? (uint64_t)est.st_ino : (uint64_t)de->d_ino);
		nfs3d_put_opaque(e, de->d_name, nlen);
		nfs3d_put64(e, (uint64_t)de->d_off);
		if (plus) {
			nfs3d_put_post_attr(e, have ? &est : NULL);
			nfs3d_put32(e, have ? 1 : 0);
			if (have)
				nfs3d_put_fh(e, erel, &est);
		}
		if (have)
			nfs3d_fh_note(erel, &est);
		used += need;
		dirused += base;
		n++;
	}
	closedir(d);
	if (n == 0 && !eof) {
		/* not even one entry fits the client's count */
		e->len = 0;
		nfs3d_put32(e, NFS3ERR_TOOSMALL);
		nfs3d_put_post_attr(e, &st);
		return true;
	}
	nfs3d_put32(e, 0);
	nfs3d_put32(e, eof ? 1 : 0);
	return true;
}
