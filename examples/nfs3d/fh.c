/* SPDX-License-Identifier: MIT */
/*
 * File handles: "N3D1", generation, st_dev, st_ino (24 bytes). A handle
 * names an object by identity, not by path, so it survives renames and
 * server restarts. To act on the object the server needs a path: a cache
 * (inode -> export-relative path) filled by every LOOKUP, CREATE and
 * READDIRPLUS answers most resolutions; a cached path is always verified
 * by lstat (same inode and generation), and on a miss or a stale entry
 * (renamed directory, fresh server) the export tree is walked breadth
 * first, caching what it sees, until the inode turns up. A handle whose
 * object is gone gives NFS3ERR_STALE. Resolution runs as the server, not
 * as the caller (creds.c).
 */
#define _GNU_SOURCE
#include "export.h"
#include "nfs3.h" /* nfsstat3 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/sysmacros.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FH_LEN   24u
#define NBUCKETS 8192u

struct centry {
	struct centry *next;
	uint64_t ino;
	char *rel;
};

static struct centry *buckets[NBUCKETS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The handle's bytes are XDR (RFC 4506) of magic, generation, device and
 * inode number, written and read with libtirpc over a memory stream. */
static bool_t xdr_handle(XDR *x, char *magic, uint32_t *gen, uint64_t *dev, uint64_t *ino)
{
	return xdr_opaque(x, magic, 4) && xdr_uint32_t(x, gen) && xdr_uint64_t(x, dev) &&
	       xdr_uint64_t(x, ino);
}

int nfs3d_lstat(const char *abs, struct stat *st, uint32_t *gen)
{
	struct statx sx;
	if (statx(AT_FDCWD, abs, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0)
		return -errno;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	st->st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	st->st_size = (off_t)sx.stx_size;
	st->st_blksize = (blksize_t)sx.stx_blksize;
	st->st_blocks = (blkcnt_t)sx.stx_blocks;
	st->st_atim.tv_sec = sx.stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx.stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx.stx_ctime.tv_nsec;
	if (gen)
		*gen = (sx.stx_mask & STATX_BTIME)
			   ? (uint32_t)sx.stx_btime.tv_sec ^ sx.stx_btime.tv_nsec
			   : 0;
	return 0;
}

void nfs3d_fh_make(const struct stat *st, uint32_t gen, struct nfs3d_fh *fh)
{
	char magic[4] = {'N', '3', 'D', '1'};
	uint64_t dev = (uint64_t)st->st_dev, ino = (uint64_t)st->st_ino;
	XDR x;
	xdrmem_create(&x, (char *)fh->data, FH_LEN, XDR_ENCODE);
	fh->len = xdr_handle(&x, magic, &gen, &dev, &ino) ? FH_LEN : 0;
	xdr_destroy(&x);
}

int nfs3d_abs(const char *rel, char *abs)
{
	/* relative to the working directory, the export root (setup_export) */
	int n = rel[0] ? snprintf(abs, PATH_MAX, "%s", rel) : snprintf(abs, PATH_MAX, ".");
	return (n < 0 || n >= PATH_MAX) ? -ENAMETOOLONG : 0;
}

int nfs3d_join(const char *dir, const char *name, char *out)
{
	int n = dir[0] ? snprintf(out, PATH_MAX, "%s/%s", dir, name)
		       : snprintf(out, PATH_MAX, "%s", name);
	return (n < 0 || n >= PATH_MAX) ? -ENAMETOOLONG : 0;
}

static void cache_put_locked(uint64_t ino, const char *rel)
{
	struct centry **b = &buckets[ino % NBUCKETS];
	for (struct centry *c = *b; c; c = c->next) {
		if (c->ino == ino) {
			if (strcmp(c->rel, rel) != 0) {
				char *d = strdup(rel);
				if (d) {
					free(c->rel);
					c->rel = d;
				}
			}
			return;
		}
	}
	struct centry *c = malloc(sizeof(*c));
	if (!c)
		return;
	c->rel = strdup(rel);
	if (!c->rel) {
		free(c);
		return;
	}
	c->ino = ino;
	c->next = *b;
	*b = c;
}

static bool cache_get(uint64_t ino, char *rel)
{
	bool found = false;
	pthread_mutex_lock(&cache_lock);
	for (struct centry *c = buckets[ino % NBUCKETS]; c; c = c->next) {
		if (c->ino == ino) {
			snprintf(rel, PATH_MAX, "%s", c->rel);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return found;
}

void nfs3d_fh_note(const char *rel, const struct stat *st)
{
	if (st->st_dev != nfs3d_exp.dev || !rel[0])
		return;
	pthread_mutex_lock(&cache_lock);
	cache_put_locked((uint64_t)st->st_ino, rel);
	pthread_mutex_unlock(&cache_lock);
}

void nfs3d_fh_forget(const char *rel)
{
	pthread_mutex_lock(&cache_lock);
	for (unsigned i = 0; i < NBUCKETS; i++) {
		for (struct centry **p = &buckets[i]; *p;) {
			struct centry *c = *p;
			if (strcmp(c->rel, rel) == 0) {
				*p = c->next;
				free(c->rel);
				free(c);
			} else {
				p = &c->next;
			}
		}
	}
	pthread_mutex_unlock(&cache_lock);
}

void nfs3d_fh_init(void)
{
	memset(buckets, 0, sizeof(buckets));
}

/* Breadth-first walk of the export caching every entry's path; stops when
 * @want's inode is seen (its path in @rel). */
static bool walk_for(uint64_t want, char *rel)
{
	size_t n = 0, cap = 64, head = 0;
	char **queue = malloc(cap * sizeof(*queue));
	bool found = false;
	if (!queue)
		return false;
	queue[n++] = strdup("");
	while (head < n && !found) {
		char *dir = queue[head++];
		char abs[PATH_MAX];
		DIR *d = (dir && nfs3d_abs(dir, abs) == 0) ? opendir(abs) : NULL;
		struct dirent *de;
		while (d && (de = readdir(d)) != NULL) {
			char sub[PATH_MAX];
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    nfs3d_join(dir, de->d_name, sub) != 0)
				continue;
			pthread_mutex_lock(&cache_lock);
			cache_put_locked((uint64_t)de->d_ino, sub);
			pthread_mutex_unlock(&cache_lock);
			if ((uint64_t)de->d_ino == want) {
				snprintf(rel, PATH_MAX, "%s", sub);
				found = true;
				break;
			}
			if (de->d_type != DT_DIR)
				continue;
			if (n == cap) {
				char **q = realloc(queue, cap * 2 * sizeof(*queue));
				if (!q)
					continue;
				queue = q;
				cap *= 2;
			}
			queue[n++] = strdup(sub);
		}
		if (d)
			closedir(d);
	}
	for (size_t i = 0; i < n; i++)
		free(queue[i]);
	free(queue);
	return found;
}

static int resolve(const uint8_t *fh, uint32_t len, char *rel, struct stat *st)
{
	char magic[4], abs[PATH_MAX];
	uint32_t gen, g;
	uint64_t dev, ino;
	XDR x;
	if (len != FH_LEN)
		return NFS3ERR_BADHANDLE;
	xdrmem_create(&x, (char *)(uintptr_t)fh, FH_LEN, XDR_DECODE);
	bool ok = xdr_handle(&x, magic, &gen, &dev, &ino) && memcmp(magic, "N3D1", 4) == 0;
	xdr_destroy(&x);
	if (!ok)
		return NFS3ERR_BADHANDLE;
	if (dev != (uint64_t)nfs3d_exp.dev)
		return NFS3ERR_STALE;
	for (int attempt = 0; attempt < 2; attempt++) {
		bool have;
		if (ino == (uint64_t)nfs3d_exp.root_ino) {
			rel[0] = '\0';
			have = true;
		} else {
			have = attempt == 0 ? cache_get(ino, rel) : walk_for(ino, rel);
		}
		if (have && nfs3d_abs(rel, abs) == 0 && nfs3d_lstat(abs, st, &g) == 0 &&
		    (uint64_t)st->st_ino == ino && (uint64_t)st->st_dev == dev && g == gen)
			return 0;
	}
	return NFS3ERR_STALE;
}

int nfs3d_fh_resolve(const uint8_t *fh, uint32_t len, char *rel, struct stat *st)
{
	/* as the server: a handle names its object whatever the caller may search */
	uint32_t prev = nfs3d_creds_suspend();
	int s = resolve(fh, len, rel, st);
	nfs3d_creds_resume(prev);
	return s;
}
