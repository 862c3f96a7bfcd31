/* SPDX-License-Identifier: MIT */
/*
 * The NFSv4.1 operations on the exported file system (RFC 8881 §18),
 * relative to the COMPOUND's current and saved filehandles. Each runs with
 * the caller's identity (main.c entered it); handles resolve as the server
 * (examples/nfs3d/fh.c). READ data and WRITE data are the DDP-eligible
 * items of RFC 8267 §5.1.1 (rpcrdma_bulk in nfs41.x): READ's buffer goes
 * by RDMA Write into the client's Write chunk, WRITE's arrived by RDMA
 * Read from its Read chunk.
 */
#define _GNU_SOURCE
#include "nfs41d.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

nfsstat4 n41_fh_set(struct n41_fh *f, const char *rel)
{
	char abs[PATH_MAX];
	uint32_t gen = 0;
	int rc = nfs3d_abs(rel, abs);
	if (rc == 0)
		rc = nfs3d_lstat(abs, &f->st, &gen);
	if (rc != 0)
		return n41_errno(rc);
	if (f->st.st_dev != nfs3d_exp.dev)
		return NFS4ERR_XDEV; /* another file system mounted below */
	snprintf(f->rel, sizeof(f->rel), "%s", rel);
	nfs3d_fh_make(&f->st, gen, &f->fh);
	nfs3d_fh_note(rel, &f->st);
	f->set = true;
	return NFS4_OK;
}

/* §14.2: a component is a name in the directory, not a path */
static nfsstat4 check_name(const component4 *n, char *out)
{
	if (n->utf8string_len == 0)
		return NFS4ERR_INVAL;
	if (n->utf8string_len > NFS41D_MAXNAME)
		return NFS4ERR_NAMETOOLONG;
	if (memchr(n->utf8string_val, '/', n->utf8string_len) ||
	    memchr(n->utf8string_val, '\0', n->utf8string_len))
		return NFS4ERR_BADNAME;
	memcpy(out, n->utf8string_val, n->utf8string_len);
	out[n->utf8string_len] = '\0';
	if (strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		return NFS4ERR_BADNAME;
	return NFS4_OK;
}

static nfsstat4 need_dir(const struct n41_fh *f)
{
	if (!f->set)
		return NFS4ERR_NOFILEHANDLE;
	return S_ISDIR(f->st.st_mode) ? NFS4_OK : NFS4ERR_NOTDIR;
}

/* The path of @name in the current directory (@out, PATH_MAX). */
static nfsstat4 child(const struct n41_fh *dir, const component4 *name, char *out)
{
	char n[NFS41D_MAXNAME + 1];
	nfsstat4 st = need_dir(dir);
	if (st == NFS4_OK)
		st = check_name(name, n);
	if (st == NFS4_OK && nfs3d_join(dir->rel, n, out) != 0)
		st = NFS4ERR_NAMETOOLONG;
	return st;
}

static changeid4 change_of(const char *rel)
{
	char abs[PATH_MAX];
	struct stat st;
	if (nfs3d_abs(rel, abs) != 0 || nfs3d_lstat(abs, &st, NULL) != 0)
		return 0;
	return (changeid4)st.st_ctim.tv_sec * 1000000000u + (changeid4)st.st_ctim.tv_nsec;
}

static void cinfo(change_info4 *ci, changeid4 before, const char *dir)
{
	ci->atomic = FALSE;
	ci->before = before;
	ci->after = change_of(dir);
}

/* open(2) of @f as the caller; the owner may read and write its own file
 * whatever its mode (as a Linux export allows). */
static int open_as(const struct n41_fh *f, int flags)
{
	char abs[PATH_MAX];
	int rc = nfs3d_abs(f->rel, abs);
	if (rc)
		return rc;
	int fd = open(abs, flags | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == EACCES && nfs3d_creds_owns(&f->st)) {
		uint32_t prev = nfs3d_creds_suspend();
		fd = open(abs, flags | O_CLOEXEC | O_NOFOLLOW);
		nfs3d_creds_resume(prev);
	}
	return fd < 0 ? -errno : fd;
}

static nfsstat4 need_file(const struct n41_fh *f)
{
	if (!f->set)
		return NFS4ERR_NOFILEHANDLE;
	if (S_ISDIR(f->st.st_mode))
		return NFS4ERR_ISDIR;
	if (S_ISLNK(f->st.st_mode))
		return NFS4ERR_SYMLINK;
	return S_ISREG(f->st.st_mode) ? NFS4_OK : NFS4ERR_INVAL;
}

/* ---- filehandles ---- */

static nfsstat4 op_putfh(struct n41_compound *c, const nfs_fh4 *fh)
{
	char rel[PATH_MAX];
	struct stat st;
	int r = nfs3d_fh_resolve((const uint8_t *)fh->nfs_fh4_val, fh->nfs_fh4_len, rel, &st);
	if (r != 0)
		return r == NFS41D_FH_STALE ? NFS4ERR_STALE : NFS4ERR_BADHANDLE;
	return n41_fh_set(&c->cur, rel);
}

static nfsstat4 op_lookupp(struct n41_compound *c)
{
	nfsstat4 st = need_dir(&c->cur);
	if (st != NFS4_OK)
		return st;
	if (!c->cur.rel[0])
		return NFS4ERR_NOENT; /* §18.14.3: the root has no parent here */
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", c->cur.rel);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	else
		parent[0] = '\0';
	return n41_fh_set(&c->cur, parent);
}

/* ---- ACCESS (§18.1) ---- */

static void op_access(struct n41_compound *c, ACCESS4args *a, ACCESS4res *r)
{
	char abs[PATH_MAX];
	uint32_t want = a->access, ok = 0;
	bool dir = S_ISDIR(c->cur.st.st_mode);
	r->status = c->cur.set ? NFS4_OK : NFS4ERR_NOFILEHANDLE;
	if (r->status != NFS4_OK || nfs3d_abs(c->cur.rel, abs) != 0)
		return;
	uint32_t supp = ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND |
			ACCESS4_DELETE | ACCESS4_EXECUTE;
	bool owner = nfs3d_creds_owns(&c->cur.st);
	bool r_ok = owner || faccessat(AT_FDCWD, abs, R_OK, AT_EACCESS) == 0;
	bool w_ok = owner || faccessat(AT_FDCWD, abs, W_OK, AT_EACCESS) == 0;
	bool x_ok = faccessat(AT_FDCWD, abs, X_OK, AT_EACCESS) == 0;
	if (S_ISLNK(c->cur.st.st_mode))
		r_ok = true, w_ok = x_ok = false;
	if (r_ok)
		ok |= ACCESS4_READ;
	if (w_ok)
		ok |= ACCESS4_MODIFY | ACCESS4_EXTEND | (dir ? ACCESS4_DELETE : 0);
	if (x_ok)
		ok |= dir ? ACCESS4_LOOKUP : ACCESS4_EXECUTE;
	r->ACCESS4res_u.resok4.supported = want & supp;
	r->ACCESS4res_u.resok4.access = want & supp & ok;
}

/* ---- READDIR (§18.23): cookies are entry positions + 3 (0, 1, 2 are
 * reserved), the verifier is not used ---- */

static void op_readdir(struct n41_compound *c, READDIR4args *a, READDIR4res *r)
{
	READDIR4resok *ok = &r->READDIR4res_u.resok4;
	r->status = need_dir(&c->cur);
	if (r->status != NFS4_OK)
		return;
	if (a->cookie == 1 || a->cookie == 2) {
		r->status = NFS4ERR_BAD_COOKIE;
		return;
	}
	char abs[PATH_MAX];
	DIR *d = nfs3d_abs(c->cur.rel, abs) == 0 ? opendir(abs) : NULL;
	if (!d) {
		r->status = n41_errno(errno);
		return;
	}
	uint64_t pos = 0, start = a->cookie ? a->cookie - 3 + 1 : 0;
	uint32_t used = 16 + 8, limit = a->maxcount < 1024u * 1024u ? a->maxcount : 1024u * 1024u;
	entry4 **tail = &ok->reply.entries;
	bool eof = true;
	struct dirent *de;
	memset(ok->cookieverf, 0, sizeof(ok->cookieverf));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		uint64_t here = pos++;
		if (here < start)
			continue;
		struct n41_fh *f = calloc(1, sizeof(*f));
		char rel[PATH_MAX];
		if (!f || nfs3d_join(c->cur.rel, de->d_name, rel) != 0 || n41_fh_set(f, rel) != 0) {
			free(f); /* gone meanwhile (or another file system): left out */
			continue;
		}
		entry4 *e = n41_alloc(c, sizeof(*e));
		size_t nl = strlen(de->d_name);
		char *name = n41_alloc(c, nl + 1);
		if (!e || !name ||
		    n41_getattr(c, &a->attr_request, &f->st, &f->fh, &e->attrs) != NFS4_OK) {
			free(f);
			r->status = NFS4ERR_SERVERFAULT;
			break;
		}
		free(f);
		memcpy(name, de->d_name, nl + 1);
		e->cookie = here + 3;
		e->name.utf8string_len = (u_int)nl;
		e->name.utf8string_val = name;
		uint32_t sz = 8 + 4 + ((uint32_t)nl + 3) / 4 * 4 + 4 +
			      4 * e->attrs.attrmask.bitmap4_len + 4 +
			      e->attrs.attr_vals.attrlist4_len + 4;
		if (used + sz > limit) {
			eof = false;
			if (!ok->reply.entries)
				r->status = NFS4ERR_TOOSMALL;
			break;
		}
		used += sz;
		*tail = e;
		tail = &e->nextentry;
	}
	closedir(d);
	ok->reply.eof = eof;
}

/* ---- OPEN (§18.16) ---- */

static nfsstat4 open_create(struct n41_compound *c, const char *rel, createhow4 *how,
			    bitmap4 *attrset)
{
	struct n41_sattr sa;
	int flags = O_CREAT | O_WRONLY;
	uint32_t none[3] = {0, 0, 0};
	memset(&sa, 0, sizeof(sa));
	switch (how->mode) {
	case UNCHECKED4:
	case GUARDED4: {
		nfsstat4 st = n41_sattr_decode(&how->createhow4_u.createattrs, &sa);
		if (st != NFS4_OK)
			return st;
		if (how->mode == GUARDED4)
			flags |= O_EXCL;
		break;
	}
	case EXCLUSIVE4_1: {
		nfsstat4 st = n41_sattr_decode(&how->createhow4_u.ch_createboth.cva_attrs, &sa);
		if (st != NFS4_OK)
			return st;
	}
		/* fall through */
	default:
		/* the verifier is not kept: a retried exclusive create
		 * finds the file there (EXIST) */
		flags |= O_EXCL;
		break;
	}
	char abs[PATH_MAX];
	if (nfs3d_abs(rel, abs) != 0)
		return NFS4ERR_NAMETOOLONG;
	int fd = open(abs, flags | O_CLOEXEC | O_NOFOLLOW, sa.mode ? sa.mode_v : 0644);
	if (fd < 0 && errno == EISDIR)
		return NFS4ERR_ISDIR;
	if (fd < 0)
		return n41_errno(errno);
	close(fd);
	/* the creator may set the rest (owner, size, times) of its new file */
	int rc = n41_sattr_apply(rel, &sa, false);
	if (rc != 0)
		return n41_errno(rc);
	n41_bitmap_out(c, rc == 0 ? sa.set : none, attrset);
	return NFS4_OK;
}

static void op_open(struct n41_compound *c, OPEN4args *a, OPEN4res *r)
{
	OPEN4resok *ok = &r->OPEN4res_u.resok4;
	char rel[PATH_MAX];
	nfsstat4 st = NFS4_OK;
	changeid4 before = 0;
	bool by_name = false;
	char dir[PATH_MAX];
	switch (a->claim.claim) {
	case CLAIM_NULL:
		st = child(&c->cur, &a->claim.open_claim4_u.file, rel);
		by_name = true;
		break;
	case CLAIM_DELEGATE_CUR:
		st = child(&c->cur, &a->claim.open_claim4_u.delegate_cur_info.file, rel);
		by_name = true;
		break;
	case CLAIM_FH:
	case CLAIM_DELEG_CUR_FH:
	case CLAIM_PREVIOUS: /* no grace period: a reclaim is an open by handle */
		st = c->cur.set ? NFS4_OK : NFS4ERR_NOFILEHANDLE;
		snprintf(rel, sizeof(rel), "%s", c->cur.rel);
		break;
	default:
		st = NFS4ERR_NOTSUPP;
		break;
	}
	memset(ok, 0, sizeof(*ok));
	if (st == NFS4_OK && by_name) {
		snprintf(dir, sizeof(dir), "%s", c->cur.rel);
		before = change_of(dir);
		if (a->openhow.opentype == OPEN4_CREATE)
			st = open_create(c, rel, &a->openhow.openflag4_u.how, &ok->attrset);
	}
	struct n41_fh *f = &c->cur;
	if (st == NFS4_OK)
		st = n41_fh_set(f, rel);
	if (st == NFS4_OK)
		st = need_file(f);
	/* the caller's permission: open(2) as the caller, for what it asks */
	uint32_t acc = a->share_access & OPEN4_SHARE_ACCESS_BOTH;
	if (st == NFS4_OK && acc == 0)
		st = NFS4ERR_INVAL;
	if (st == NFS4_OK) {
		int fl = acc == OPEN4_SHARE_ACCESS_BOTH    ? O_RDWR
			 : acc == OPEN4_SHARE_ACCESS_WRITE ? O_WRONLY
							   : O_RDONLY;
		int fd = open_as(f, fl);
		if (fd < 0)
			st = n41_errno(fd);
		else
			close(fd);
	}
	if (st == NFS4_OK)
		st = n41_open_state(c, &f->st, a->share_access, a->share_deny, &ok->stateid,
				    &ok->delegation);
	r->status = st;
	if (st != NFS4_OK)
		return;
	if (by_name)
		cinfo(&ok->cinfo, before, dir);
	ok->rflags = OPEN4_RESULT_LOCKTYPE_POSIX;
	if (!ok->attrset.bitmap4_val) {
		uint32_t none[3] = {0, 0, 0};
		n41_bitmap_out(c, none, &ok->attrset);
	}
}

/* ---- READ, WRITE, COMMIT (§18.22, §18.32, §18.3) ---- */

static void op_read(struct n41_compound *c, READ4args *a, READ4res *r)
{
	READ4resok *ok = &r->READ4res_u.resok4;
	r->status = need_file(&c->cur);
	if (r->status != NFS4_OK)
		return;
	uint32_t n = a->count < NFS41D_MAXIO ? a->count : NFS41D_MAXIO;
	char *buf = n41_alloc(c, n);
	int fd = buf ? open_as(&c->cur, O_RDONLY) : -ENOMEM;
	if (fd < 0) {
		r->status = n41_errno(fd);
		return;
	}
	ssize_t got = 0;
	while ((uint32_t)got < n) {
		ssize_t k =
		    pread(fd, buf + got, n - (size_t)got, (off_t)(a->offset + (uint64_t)got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k < 0)
				r->status = n41_errno(errno);
			break;
		}
		got += k;
	}
	struct stat st;
	bool eof = fstat(fd, &st) == 0 && a->offset + (uint64_t)got >= (uint64_t)st.st_size;
	close(fd);
	ok->eof = eof;
	ok->data.base = buf;
	ok->data.len = (uint32_t)got;
}

static void op_write(struct n41_compound *c, WRITE4args *a, WRITE4res *r)
{
	WRITE4resok *ok = &r->WRITE4res_u.resok4;
	r->status = need_file(&c->cur);
	if (r->status == NFS4_OK)
		r->status = n41_break_deleg(c, &c->cur.st);
	if (r->status != NFS4_OK)
		return;
	int fd = open_as(&c->cur, O_WRONLY);
	if (fd < 0) {
		r->status = n41_errno(fd);
		return;
	}
	const char *p = a->data.base;
	uint32_t done = 0;
	while (done < a->data.len) {
		ssize_t k = pwrite(fd, p + done, a->data.len - done, (off_t)(a->offset + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r->status = n41_errno(k < 0 ? errno : EIO);
			break;
		}
		done += (uint32_t)k;
	}
	if (r->status == NFS4_OK && a->stable != UNSTABLE4 && fdatasync(fd) != 0)
		r->status = n41_errno(errno);
	close(fd);
	ok->count = done;
	ok->committed = a->stable == UNSTABLE4 ? UNSTABLE4 : FILE_SYNC4;
	memcpy(ok->writeverf, nfs3d_exp.write_verf, sizeof(ok->writeverf));
}

static void op_commit(struct n41_compound *c, COMMIT4res *r)
{
	r->status = need_file(&c->cur);
	if (r->status != NFS4_OK)
		return;
	int fd = open_as(&c->cur, O_RDONLY);
	if (fd < 0) {
		r->status = n41_errno(fd);
		return;
	}
	if (fdatasync(fd) != 0)
		r->status = n41_errno(errno);
	close(fd);
	memcpy(r->COMMIT4res_u.resok4.writeverf, nfs3d_exp.write_verf, NFS4_VERIFIER_SIZE);
}

/* ---- CREATE, REMOVE, RENAME, LINK (§18.4, §18.25, §18.26, §18.9) ---- */

static void op_create(struct n41_compound *c, CREATE4args *a, CREATE4res *r)
{
	CREATE4resok *ok = &r->CREATE4res_u.resok4;
	char rel[PATH_MAX], abs[PATH_MAX], dir[PATH_MAX];
	struct n41_sattr sa;
	nfsstat4 st = child(&c->cur, &a->objname, rel);
	if (st == NFS4_OK)
		st = n41_sattr_decode(&a->createattrs, &sa);
	if (st == NFS4_OK && nfs3d_abs(rel, abs) != 0)
		st = NFS4ERR_NAMETOOLONG;
	if (st != NFS4_OK) {
		r->status = st;
		return;
	}
	snprintf(dir, sizeof(dir), "%s", c->cur.rel);
	changeid4 before = change_of(dir);
	mode_t mode = sa.mode ? sa.mode_v : 0755;
	int rc = 0;
	switch (a->objtype.type) {
	case NF4DIR:
		rc = mkdir(abs, mode);
		break;
	case NF4LNK: {
		linktext4 *t = &a->objtype.createtype4_u.linkdata;
		char target[PATH_MAX];
		if (t->utf8string_len == 0 || t->utf8string_len >= sizeof(target) ||
		    memchr(t->utf8string_val, '\0', t->utf8string_len)) {
			r->status = NFS4ERR_INVAL;
			return;
		}
		memcpy(target, t->utf8string_val, t->utf8string_len);
		target[t->utf8string_len] = '\0';
		rc = symlink(target, abs);
		break;
	}
	case NF4FIFO:
		rc = mkfifo(abs, mode);
		break;
	case NF4SOCK:
		rc = mknod(abs, S_IFSOCK | mode, 0);
		break;
	case NF4BLK:
	case NF4CHR: {
		specdata4 *d = &a->objtype.createtype4_u.devdata;
		rc = mknod(abs, (a->objtype.type == NF4BLK ? S_IFBLK : S_IFCHR) | mode,
			   makedev(d->specdata1, d->specdata2));
		break;
	}
	default:
		r->status = NFS4ERR_BADTYPE;
		return;
	}
	if (rc != 0) {
		r->status = n41_errno(errno);
		return;
	}
	rc = n41_sattr_apply(rel, &sa, false);
	r->status = rc ? n41_errno(rc) : n41_fh_set(&c->cur, rel);
	if (r->status != NFS4_OK)
		return;
	cinfo(&ok->cinfo, before, dir);
	n41_bitmap_out(c, sa.set, &ok->attrset);
}

static void op_remove(struct n41_compound *c, REMOVE4args *a, REMOVE4res *r)
{
	char rel[PATH_MAX], abs[PATH_MAX];
	struct stat st;
	r->status = child(&c->cur, &a->target, rel);
	if (r->status == NFS4_OK && (nfs3d_abs(rel, abs) != 0 || nfs3d_lstat(abs, &st, NULL) != 0))
		r->status = NFS4ERR_NOENT;
	if (r->status == NFS4_OK && S_ISREG(st.st_mode))
		r->status = n41_break_deleg(c, &st);
	if (r->status != NFS4_OK)
		return;
	changeid4 before = change_of(c->cur.rel);
	if ((S_ISDIR(st.st_mode) ? rmdir(abs) : unlink(abs)) != 0) {
		r->status = n41_errno(errno);
		return;
	}
	nfs3d_fh_forget(rel);
	cinfo(&r->REMOVE4res_u.resok4.cinfo, before, c->cur.rel);
}

static void op_rename(struct n41_compound *c, RENAME4args *a, RENAME4res *r)
{
	RENAME4resok *ok = &r->RENAME4res_u.resok4;
	char from[PATH_MAX], to[PATH_MAX], afrom[PATH_MAX], ato[PATH_MAX];
	struct stat st;
	/* §18.26.3: saved filehandle = source directory, current = target */
	r->status = child(&c->saved, &a->oldname, from);
	if (r->status == NFS4_OK)
		r->status = child(&c->cur, &a->newname, to);
	if (r->status == NFS4_OK && (nfs3d_abs(from, afrom) != 0 || nfs3d_abs(to, ato) != 0))
		r->status = NFS4ERR_NAMETOOLONG;
	if (r->status == NFS4_OK && nfs3d_lstat(ato, &st, NULL) == 0 && S_ISREG(st.st_mode))
		r->status = n41_break_deleg(c, &st); /* the target goes */
	if (r->status != NFS4_OK)
		return;
	changeid4 b1 = change_of(c->saved.rel), b2 = change_of(c->cur.rel);
	if (rename(afrom, ato) != 0) {
		r->status = n41_errno(errno);
		return;
	}
	nfs3d_fh_forget(from);
	nfs3d_fh_forget(to);
	if (nfs3d_lstat(ato, &st, NULL) == 0)
		nfs3d_fh_note(to, &st);
	cinfo(&ok->source_cinfo, b1, c->saved.rel);
	cinfo(&ok->target_cinfo, b2, c->cur.rel);
}

static void op_link(struct n41_compound *c, LINK4args *a, LINK4res *r)
{
	char to[PATH_MAX], afrom[PATH_MAX], ato[PATH_MAX];
	/* §18.9.3: saved filehandle = the object, current = the directory */
	r->status = c->saved.set ? child(&c->cur, &a->newname, to) : NFS4ERR_NOFILEHANDLE;
	if (r->status == NFS4_OK && S_ISDIR(c->saved.st.st_mode))
		r->status = NFS4ERR_ISDIR;
	if (r->status == NFS4_OK &&
	    (nfs3d_abs(c->saved.rel, afrom) != 0 || nfs3d_abs(to, ato) != 0))
		r->status = NFS4ERR_NAMETOOLONG;
	if (r->status != NFS4_OK)
		return;
	changeid4 before = change_of(c->cur.rel);
	if (link(afrom, ato) != 0) {
		r->status = n41_errno(errno);
		return;
	}
	cinfo(&r->LINK4res_u.resok4.cinfo, before, c->cur.rel);
}

/* ---- SETATTR (§18.30), READLINK (§18.24), SECINFO (§18.29, §18.45) ---- */

static void op_setattr(struct n41_compound *c, SETATTR4args *a, SETATTR4res *r)
{
	struct n41_sattr sa;
	uint32_t none[3] = {0, 0, 0};
	n41_bitmap_out(c, none, &r->attrsset);
	r->status = c->cur.set ? n41_sattr_decode(&a->obj_attributes, &sa) : NFS4ERR_NOFILEHANDLE;
	if (r->status == NFS4_OK && sa.size && !S_ISREG(c->cur.st.st_mode))
		r->status = S_ISDIR(c->cur.st.st_mode) ? NFS4ERR_ISDIR : NFS4ERR_INVAL;
	if (r->status == NFS4_OK && sa.size)
		r->status = n41_break_deleg(c, &c->cur.st);
	if (r->status != NFS4_OK)
		return;
	int rc = n41_sattr_apply(c->cur.rel, &sa, true);
	if (rc == -EACCES && sa.size && !sa.mode && !sa.uid && !sa.gid &&
	    nfs3d_creds_owns(&c->cur.st)) {
		/* the owner truncates its own file whatever the mode */
		uint32_t prev = nfs3d_creds_suspend();
		rc = n41_sattr_apply(c->cur.rel, &sa, false);
		nfs3d_creds_resume(prev);
	}
	r->status = n41_errno(rc);
	if (rc == 0) {
		n41_bitmap_out(c, sa.set, &r->attrsset);
		(void)n41_fh_set(&c->cur, c->cur.rel);
	}
}

static void op_readlink(struct n41_compound *c, READLINK4res *r)
{
	char abs[PATH_MAX];
	char *buf = n41_alloc(c, PATH_MAX);
	if (!c->cur.set) {
		r->status = NFS4ERR_NOFILEHANDLE;
		return;
	}
	if (!S_ISLNK(c->cur.st.st_mode)) {
		r->status = NFS4ERR_WRONG_TYPE;
		return;
	}
	ssize_t n = buf && nfs3d_abs(c->cur.rel, abs) == 0 ? readlink(abs, buf, PATH_MAX) : -1;
	if (n < 0) {
		r->status = n41_errno(errno);
		return;
	}
	r->status = NFS4_OK;
	r->READLINK4res_u.resok4.link.utf8string_len = (u_int)n;
	r->READLINK4res_u.resok4.link.utf8string_val = buf;
}

/* AUTH_SYS, then AUTH_NONE (RFC 5531 flavors 1 and 0). */
static void secinfo(struct n41_compound *c, SECINFO4res *r)
{
	secinfo4 *v = n41_alloc(c, 2 * sizeof(*v));
	r->status = v ? NFS4_OK : NFS4ERR_SERVERFAULT;
	if (!v)
		return;
	v[0].flavor = 1;
	v[1].flavor = 0;
	r->SECINFO4res_u.resok4.SECINFO4resok_len = 2;
	r->SECINFO4res_u.resok4.SECINFO4resok_val = v;
	/* §2.6.3.1.1.8: SECINFO consumes the current filehandle */
	c->cur.set = false;
}

/* ---- the dispatch of these operations ---- */

nfsstat4 n41_res_status(const nfs_resop4 *r)
{
	/* every arm of nfs_resop4 begins with its nfsstat4 */
	return r->nfs_resop4_u.opillegal;
}

static bool op_main(struct n41_compound *c, nfs_argop4 *a, nfs_resop4 *r)
{
	switch (a->argop) {
	case OP_PUTROOTFH:
		r->nfs_resop4_u.opputrootfh = n41_fh_set(&c->cur, "");
		return true;
	case OP_PUTFH:
		r->nfs_resop4_u.opputfh = op_putfh(c, &a->nfs_argop4_u.opputfh.object);
		return true;
	case OP_GETFH: {
		GETFH4res *g = &r->nfs_resop4_u.opgetfh;
		g->status = c->cur.set ? NFS4_OK : NFS4ERR_NOFILEHANDLE;
		g->GETFH4res_u.resok4.object.nfs_fh4_len = c->cur.fh.len;
		g->GETFH4res_u.resok4.object.nfs_fh4_val = (char *)c->cur.fh.data;
		return true;
	}
	case OP_SAVEFH:
		r->nfs_resop4_u.opsavefh = c->cur.set ? NFS4_OK : NFS4ERR_NOFILEHANDLE;
		if (c->cur.set)
			c->saved = c->cur;
		return true;
	case OP_RESTOREFH:
		r->nfs_resop4_u.oprestorefh = c->saved.set ? NFS4_OK : NFS4ERR_RESTOREFH;
		if (c->saved.set)
			c->cur = c->saved;
		return true;
	case OP_LOOKUP: {
		char rel[PATH_MAX];
		nfsstat4 st = child(&c->cur, &a->nfs_argop4_u.oplookup.objname, rel);
		r->nfs_resop4_u.oplookup = st == NFS4_OK ? n41_fh_set(&c->cur, rel) : st;
		return true;
	}
	case OP_LOOKUPP:
		r->nfs_resop4_u.oplookupp = op_lookupp(c);
		return true;
	case OP_GETATTR: {
		GETATTR4res *g = &r->nfs_resop4_u.opgetattr;
		g->status =
		    c->cur.set ? n41_getattr(c, &a->nfs_argop4_u.opgetattr.attr_request, &c->cur.st,
					     &c->cur.fh, &g->GETATTR4res_u.resok4.obj_attributes)
			       : NFS4ERR_NOFILEHANDLE;
		return true;
	}
	default:
		return false;
	}
}

bool n41_fs_op(struct n41_compound *c, nfs_argop4 *a, nfs_resop4 *r)
{
	if (op_main(c, a, r))
		return true;
	switch (a->argop) {
	case OP_ACCESS:
		op_access(c, &a->nfs_argop4_u.opaccess, &r->nfs_resop4_u.opaccess);
		return true;
	case OP_READDIR:
		op_readdir(c, &a->nfs_argop4_u.opreaddir, &r->nfs_resop4_u.opreaddir);
		return true;
	case OP_OPEN:
		op_open(c, &a->nfs_argop4_u.opopen, &r->nfs_resop4_u.opopen);
		return true;
	case OP_CLOSE: {
		CLOSE4res *cr = &r->nfs_resop4_u.opclose;
		cr->status = n41_close_state(c, &a->nfs_argop4_u.opclose.open_stateid);
		/* §18.2.4: the stateid returned is not to be used again */
		memset(&cr->CLOSE4res_u.open_stateid, 0, sizeof(stateid4));
		return true;
	}
	case OP_OPEN_DOWNGRADE: {
		OPEN_DOWNGRADE4args *d = &a->nfs_argop4_u.opopen_downgrade;
		OPEN_DOWNGRADE4res *dr = &r->nfs_resop4_u.opopen_downgrade;
		dr->status =
		    n41_downgrade_state(c, &d->open_stateid, d->share_access, d->share_deny,
					&dr->OPEN_DOWNGRADE4res_u.open_stateid);
		return true;
	}
	case OP_READ:
		op_read(c, &a->nfs_argop4_u.opread, &r->nfs_resop4_u.opread);
		return true;
	case OP_WRITE:
		op_write(c, &a->nfs_argop4_u.opwrite, &r->nfs_resop4_u.opwrite);
		return true;
	case OP_COMMIT:
		op_commit(c, &r->nfs_resop4_u.opcommit);
		return true;
	case OP_CREATE:
		op_create(c, &a->nfs_argop4_u.opcreate, &r->nfs_resop4_u.opcreate);
		return true;
	case OP_REMOVE:
		op_remove(c, &a->nfs_argop4_u.opremove, &r->nfs_resop4_u.opremove);
		return true;
	case OP_RENAME:
		op_rename(c, &a->nfs_argop4_u.oprename, &r->nfs_resop4_u.oprename);
		return true;
	case OP_LINK:
		op_link(c, &a->nfs_argop4_u.oplink, &r->nfs_resop4_u.oplink);
		return true;
	case OP_SETATTR:
		op_setattr(c, &a->nfs_argop4_u.opsetattr, &r->nfs_resop4_u.opsetattr);
		return true;
	case OP_READLINK:
		op_readlink(c, &r->nfs_resop4_u.opreadlink);
		return true;
	case OP_SECINFO:
	case OP_SECINFO_NO_NAME:
		secinfo(c, &r->nfs_resop4_u.opsecinfo);
		return true;
	default:
		return false;
	}
}
