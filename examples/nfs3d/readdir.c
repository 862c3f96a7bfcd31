/* SPDX-License-Identifier: MIT */
/*
 * READDIR and READDIRPLUS (RFC 1813 §3.3.16, §3.3.17). Entries come from
 * readdir() in the file system's order; each entry's cookie is its d_off,
 * where seekdir() resumes the next call (valid across server restarts; the
 * cookie verifier is always zero). "." and ".." are not listed (the Linux
 * client does not need them). The reply is held to the client's count
 * (READDIR) or dircount/maxcount (READDIRPLUS), and to NFS3D_MAXDIR: the
 * entries are a linked list that rpcgen's routine encodes recursively, one
 * level per entry. A long reply travels in the client's Reply chunk.
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

/* Largest reply (bytes) we build, whatever the count asked: at most
 * 4681 entries (28 bytes each at least), whose recursive encoding took
 * between 512 KiB and 1 MiB of stack (gcc -O2, 2026-12-07), well inside a
 * worker thread's default 8 MiB. The Linux client asks dtpref (FSINFO:
 * 64 KiB). */
#define NFS3D_MAXDIR (128u * 1024u)

/* Encoded sizes (XDR, RFC 1813 §3.3.16-17) */
#define HDR_BYTES  (4u + 4u + 84u + 8u)       /* status, post_op_attr, cookieverf */
#define TAIL_BYTES 8u                         /* value_follows FALSE, eof */
#define PLUS_EXTRA (4u + 84u + 4u + 4u + 24u) /* post_op_attr + post_op_fh3 */

/* One directory listing, for either procedure. */
struct listing {
	bool plus;
	const nfs_fh3 *dir;
	cookie3 cookie;
	uint32_t limit, dirlimit; /* reply bytes, and READDIRPLUS's dircount */
	/* results: */
	nfsstat3 status;
	struct stat st; /* the directory's attributes (status OK or NOTDIR) */
	entry3 *entries, **tail;
	entryplus3 *plus_entries, **plus_tail;
	bool eof;
};

static bool add_entry(struct listing *l, struct nfs3d_call *c, const struct dirent *de,
		      const char *rel)
{
	char erel[PATH_MAX], eabs[PATH_MAX];
	struct stat est;
	bool have = nfs3d_join(rel, de->d_name, erel) == 0 && nfs3d_abs(erel, eabs) == 0 &&
		    nfs3d_lstat(eabs, &est, NULL) == 0;
	size_t nlen = strlen(de->d_name);
	char *name = nfs3d_alloc(c, nlen + 1);
	if (!name)
		return false;
	memcpy(name, de->d_name, nlen + 1);
	fileid3 fileid = have ? (fileid3)est.st_ino : (fileid3)de->d_ino;
	cookie3 cookie = (cookie3)de->d_off;
	/* the fields entry3 and entryplus3 share (RFC 1813 §3.3.16, §3.3.17),
	 * the rest zero: no attributes, no handle, the end of the list */
	if (l->plus) {
		entryplus3 *e = nfs3d_alloc(c, sizeof(*e));
		if (!e)
			return false;
		*e = (entryplus3){.fileid = fileid, .name = name, .cookie = cookie};
		nfs3d_post_attr(have ? &est : NULL, &e->name_attributes);
		e->name_handle.handle_follows = have;
		if (have)
			nfs3d_fh3(c, erel, &est, &e->name_handle.post_op_fh3_u.handle);
		*l->plus_tail = e;
		l->plus_tail = &e->nextentry;
	} else {
		entry3 *e = nfs3d_alloc(c, sizeof(*e));
		if (!e)
			return false;
		*e = (entry3){.fileid = fileid, .name = name, .cookie = cookie};
		*l->tail = e;
		l->tail = &e->nextentry;
	}
	if (have)
		nfs3d_fh_note(erel, &est);
	return true;
}

static void list_dir(struct listing *l, struct nfs3d_call *c)
{
	char rel[PATH_MAX], abs[PATH_MAX];
	int s = nfs3d_resolve(l->dir, rel, &l->st);
	if (s == 0 && !S_ISDIR(l->st.st_mode))
		s = NFS3ERR_NOTDIR;
	DIR *d = NULL;
	if (s == 0 && (nfs3d_abs(rel, abs) != 0 || (d = opendir(abs)) == NULL))
		s = (int)nfs3d_errno_to_stat(errno);
	l->status = (nfsstat3)s;
	if (s != 0)
		return;
	if (l->cookie)
		seekdir(d, (long)l->cookie);
	uint32_t used = HDR_BYTES + TAIL_BYTES, dirused = 0, n = 0;
	l->tail = &l->entries;
	l->plus_tail = &l->plus_entries;
	struct dirent *de;
	l->eof = true;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		uint32_t nlen = (uint32_t)strlen(de->d_name);
		uint32_t base = 4u + 8u + 4u + ((nlen + 3u) & ~3u) + 8u;
		uint32_t need = base + (l->plus ? PLUS_EXTRA : 0);
		if (used + need > l->limit || dirused + base > l->dirlimit) {
			l->eof = false;
			break;
		}
		if (!add_entry(l, c, de, rel))
			break; /* c->oom: the answer is SYSTEM_ERR */
		used += need;
		dirused += base;
		n++;
	}
	closedir(d);
	if (n == 0 && !l->eof)
		l->status = NFS3ERR_TOOSMALL; /* not even one entry fits the count */
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The parts READDIR and READDIRPLUS results share, from @l: the status,
 * the directory's attributes (on success, and on a failure the directory
 * itself answered: NOTDIR, TOOSMALL) and eof. True on success (the
 * caller then sets the entries). */
static bool fill_res(const struct listing *l, nfsstat3 *status, post_op_attr *ok_attr,
		     post_op_attr *fail_attr, bool_t *eof)
{
	*status = l->status;
	if (l->status != NFS3_OK) {
		bool found = l->status == NFS3ERR_NOTDIR || l->status == NFS3ERR_TOOSMALL;
		nfs3d_post_attr(found ? &l->st : NULL, fail_attr);
		return false;
	}
	nfs3d_post_attr(&l->st, ok_attr);
	*eof = l->eof;
	return true;
}

void nfs3d_readdir(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	const READDIR3args *ra = &a->readdir;
	struct listing l = {.dir = &ra->dir, .cookie = ra->cookie};
	READDIR3resok *ok = &r->readdir.READDIR3res_u.resok;
	l.limit = l.dirlimit = min_u32(ra->count, NFS3D_MAXDIR);
	list_dir(&l, c);
	if (fill_res(&l, &r->readdir.status, &ok->dir_attributes,
		     &r->readdir.READDIR3res_u.resfail.dir_attributes, &ok->reply.eof))
		ok->reply.entries = l.entries;
}

void nfs3d_readdirplus(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	const READDIRPLUS3args *ra = &a->readdirplus;
	struct listing l = {.plus = true, .dir = &ra->dir, .cookie = ra->cookie};
	READDIRPLUS3resok *ok = &r->readdirplus.READDIRPLUS3res_u.resok;
	l.limit = min_u32(ra->maxcount, NFS3D_MAXDIR);
	l.dirlimit = ra->dircount;
	list_dir(&l, c);
	if (fill_res(&l, &r->readdirplus.status, &ok->dir_attributes,
		     &r->readdirplus.READDIRPLUS3res_u.resfail.dir_attributes, &ok->reply.eof))
		ok->reply.entries = l.plus_entries;
}
