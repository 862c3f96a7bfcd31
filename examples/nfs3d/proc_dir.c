/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 procedures on directory entries (RFC 1813 §3.3): LOOKUP, CREATE,
 * MKDIR, SYMLINK, MKNOD (FIFOs, sockets, and device nodes for a caller
 * allowed to make them), REMOVE, RMDIR, RENAME, LINK (READDIR and
 * READDIRPLUS: readdir.c). They run as the caller (creds.c), so new
 * objects belong to the caller's uid and gid and the kernel enforces
 * permissions.
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The directory an entry argument names: its path in @rel, attributes in
 * *@st; 0 or an nfsstat3. */
static int dir_of(const diropargs3 *d, char *rel, struct stat *st)
{
	int s = nfs3d_resolve(&d->dir, rel, st);
	if (s == 0 && !S_ISDIR(st->st_mode))
		s = NFS3ERR_NOTDIR;
	return s;
}

/* @rel/@name into @out (export-relative) and @abs; "." and ".." and names
 * with a slash are refused (no entry of that name can be made or removed). */
static int entry_path(const char *rel, const char *name, char *out, char *abs)
{
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return NFS3ERR_INVAL;
	if (nfs3d_join(rel, name, out) != 0 || nfs3d_abs(out, abs) != 0)
		return NFS3ERR_NAMETOOLONG;
	return 0;
}

void nfs3d_lookup(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	char drel[PATH_MAX], rel[PATH_MAX], abs[PATH_MAX];
	struct stat dst, st;
	const diropargs3 *what = &a->lookup.what;
	int s = dir_of(what, drel, &dst);
	const char *name = what->name;
	if (s == 0 && !strcmp(name, ".")) {
		snprintf(rel, sizeof(rel), "%s", drel);
	} else if (s == 0 && !strcmp(name, "..")) {
		/* the parent, never above the export's root */
		snprintf(rel, sizeof(rel), "%s", drel);
		char *slash = strrchr(rel, '/');
		if (slash)
			*slash = '\0';
		else
			rel[0] = '\0';
	} else if (s == 0) {
		s = entry_path(drel, name, rel, abs);
	}
	if (s == 0 && nfs3d_abs(rel, abs) == 0 && nfs3d_lstat(abs, &st, NULL) != 0)
		s = (int)nfs3d_errno_to_stat(errno);
	r->lookup.status = (nfsstat3)s;
	if (s != 0) {
		nfs3d_post_attr(s == NFS3ERR_NOENT ? &dst : NULL,
				&r->lookup.LOOKUP3res_u.resfail.dir_attributes);
		return;
	}
	LOOKUP3resok *ok = &r->lookup.LOOKUP3res_u.resok;
	nfs3d_fh_note(rel, &st);
	nfs3d_fh3(c, rel, &st, &ok->object);
	nfs3d_post_attr(&st, &ok->obj_attributes);
	nfs3d_post_attr(&dst, &ok->dir_attributes);
}

/* MKNOD (RFC 1813 §3.3.11): ftype3 -> the S_IF* bits of mknod(); 0 for the
 * types MKNOD does not make (NFS3ERR_BADTYPE). */
static mode_t mknod_type(ftype3 type)
{
	switch (type) {
	case NF3BLK:
		return S_IFBLK;
	case NF3CHR:
		return S_IFCHR;
	case NF3SOCK:
		return S_IFSOCK;
	case NF3FIFO:
		return S_IFIFO;
	default:
		return 0;
	}
}

/* What CREATE, MKDIR, SYMLINK and MKNOD make, from their arguments. */
struct make {
	uint32_t proc;
	const diropargs3 *where;
	sattr3 sa;          /* the attributes to set (none for EXCLUSIVE) */
	createmode3 how;    /* CREATE */
	const char *verf;   /* CREATE EXCLUSIVE: createverf3 */
	const char *target; /* SYMLINK */
	ftype3 type;        /* MKNOD */
	uint32_t major, minor;
};

static struct make make_of(const union nfs3d_args *a, uint32_t proc)
{
	struct make m;
	memset(&m, 0, sizeof(m));
	m.proc = proc;
	switch (proc) {
	case NFSPROC3_CREATE:
		m.where = &a->create.where;
		m.how = a->create.how.mode;
		if (m.how == EXCLUSIVE)
			m.verf = a->create.how.createhow3_u.verf;
		else
			m.sa = a->create.how.createhow3_u.obj_attributes;
		break;
	case NFSPROC3_MKDIR:
		m.where = &a->mkdir.where;
		m.sa = a->mkdir.attributes;
		break;
	case NFSPROC3_SYMLINK:
		m.where = &a->symlink.where;
		m.sa = a->symlink.symlink.symlink_attributes;
		m.target = a->symlink.symlink.symlink_data;
		break;
	default: { /* MKNOD: mknoddata3 */
		const mknoddata3 *w = &a->mknod.what;
		m.where = &a->mknod.where;
		m.type = w->type;
		if (w->type == NF3CHR || w->type == NF3BLK) {
			m.sa = w->mknoddata3_u.device.dev_attributes;
			m.major = w->mknoddata3_u.device.spec.specdata1;
			m.minor = w->mknoddata3_u.device.spec.specdata2;
		} else if (w->type == NF3SOCK || w->type == NF3FIFO) {
			m.sa = w->mknoddata3_u.pipe_attributes;
		}
		break;
	}
	}
	return m;
}

/* Make @m at @abs; the caller's identity is in effect, so the new object
 * is the caller's. */
static int make_obj(struct make *m, const char *abs)
{
	sattr3 *sa = &m->sa;
	mode_t mode = sa->mode.set_it ? (mode_t)(sa->mode.set_mode3_u.mode & 07777) : 0644;
	if (m->proc == NFSPROC3_MKNOD) {
		mode_t type = mknod_type(m->type);
		dev_t dev = S_ISBLK(type) || S_ISCHR(type) ? makedev(m->major, m->minor) : 0;
		if (mknod(abs, type | mode, dev) != 0)
			return -errno;
	} else if (m->proc == NFSPROC3_MKDIR) {
		if (mkdir(abs, sa->mode.set_it ? mode : 0755) != 0)
			return -errno;
	} else if (m->proc == NFSPROC3_SYMLINK) {
		if (symlink(m->target, abs) != 0)
			return -errno;
		sa->mode.set_it = FALSE;
	} else if (m->how == EXCLUSIVE) {
		/* EXCLUSIVE (RFC 1813 §3.3.8): the verifier is kept in the
		 * times until the client's SETATTR; a retransmission finds it */
		struct timespec ts[2] = {{0, 0}, {0, 0}};
		uint32_t v0, v1;
		memcpy(&v0, m->verf, 4);
		memcpy(&v1, m->verf + 4, 4);
		ts[0].tv_sec = v0 & 0x7fffffff;
		ts[1].tv_sec = v1 & 0x7fffffff;
		int fd = open(abs, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0) {
			struct stat st;
			if (errno == EEXIST && lstat(abs, &st) == 0 &&
			    st.st_atim.tv_sec == ts[0].tv_sec && st.st_mtim.tv_sec == ts[1].tv_sec)
				return 0;
			return -errno;
		}
		int rc = futimens(fd, ts) != 0 ? -errno : 0;
		close(fd);
		return rc;
	} else {
		/* UNCHECKED of an existing file keeps its owner */
		int fd = open(abs, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
		if (fd < 0 && errno == EEXIST && m->how == UNCHECKED) {
			fd = open(abs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0)
				return -errno;
			close(fd);
			return nfs3d_apply_sattr(abs, sa);
		}
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return nfs3d_apply_sattr(abs, sa);
}

/* CREATE, MKDIR, SYMLINK and MKNOD: their results have the same shape
 * (RFC 1813 §3.3.8-11), rpcgen's four types alike member for member. */
static void do_make(const union nfs3d_args *a, struct nfs3d_call *c, nfsstat3 *status,
		    post_op_fh3 *obj, post_op_attr *obj_attr, wcc_data *ok_wcc, wcc_data *fail_wcc)
{
	char drel[PATH_MAX], rel[PATH_MAX], abs[PATH_MAX];
	struct stat dst;
	struct make m = make_of(a, c->proc);
	int s = dir_of(m.where, drel, &dst);
	if (s == 0)
		s = entry_path(drel, m.where->name, rel, abs);
	if (s == 0 && m.proc == NFSPROC3_MKNOD && !mknod_type(m.type))
		s = NFS3ERR_BADTYPE;
	if (s == 0)
		s = (int)nfs3d_errno_to_stat(make_obj(&m, abs));
	*status = (nfsstat3)s;
	if (s == 0)
		nfs3d_new_obj(c, rel, obj, obj_attr);
	bool have = s != NFS3ERR_STALE && s != NFS3ERR_BADHANDLE;
	nfs3d_wcc(have ? &dst : NULL, have ? drel : NULL, s == 0 ? ok_wcc : fail_wcc);
}

void nfs3d_create(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	CREATE3res *x = &r->create;
	do_make(a, c, &x->status, &x->CREATE3res_u.resok.obj, &x->CREATE3res_u.resok.obj_attributes,
		&x->CREATE3res_u.resok.dir_wcc, &x->CREATE3res_u.resfail.dir_wcc);
}

void nfs3d_mkdir(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	MKDIR3res *x = &r->mkdir;
	do_make(a, c, &x->status, &x->MKDIR3res_u.resok.obj, &x->MKDIR3res_u.resok.obj_attributes,
		&x->MKDIR3res_u.resok.dir_wcc, &x->MKDIR3res_u.resfail.dir_wcc);
}

void nfs3d_symlink(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	SYMLINK3res *x = &r->symlink;
	do_make(a, c, &x->status, &x->SYMLINK3res_u.resok.obj,
		&x->SYMLINK3res_u.resok.obj_attributes, &x->SYMLINK3res_u.resok.dir_wcc,
		&x->SYMLINK3res_u.resfail.dir_wcc);
}

void nfs3d_mknod(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	MKNOD3res *x = &r->mknod;
	do_make(a, c, &x->status, &x->MKNOD3res_u.resok.obj, &x->MKNOD3res_u.resok.obj_attributes,
		&x->MKNOD3res_u.resok.dir_wcc, &x->MKNOD3res_u.resfail.dir_wcc);
}

/* REMOVE and RMDIR: resok and resfail are both the directory's wcc_data. */
static void do_remove(const diropargs3 *where, bool dir, nfsstat3 *status, wcc_data *wcc)
{
	char drel[PATH_MAX], rel[PATH_MAX], abs[PATH_MAX];
	struct stat dst;
	int s = dir_of(where, drel, &dst);
	if (s == 0)
		s = entry_path(drel, where->name, rel, abs);
	if (s == 0 && (dir ? rmdir(abs) : unlink(abs)) != 0)
		s = (int)nfs3d_errno_to_stat(errno);
	if (s == 0)
		nfs3d_fh_forget(rel);
	*status = (nfsstat3)s;
	bool have = s != NFS3ERR_STALE && s != NFS3ERR_BADHANDLE && s != NFS3ERR_NOTDIR;
	nfs3d_wcc(have ? &dst : NULL, have ? drel : NULL, wcc);
}

void nfs3d_remove(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	REMOVE3res *x = &r->remove;
	wcc_data wcc;
	(void)c;
	do_remove(&a->remove.object, false, &x->status, &wcc);
	if (x->status == NFS3_OK)
		x->REMOVE3res_u.resok.dir_wcc = wcc;
	else
		x->REMOVE3res_u.resfail.dir_wcc = wcc;
}

void nfs3d_rmdir(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	RMDIR3res *x = &r->rmdir;
	wcc_data wcc;
	(void)c;
	do_remove(&a->rmdir.object, true, &x->status, &wcc);
	if (x->status == NFS3_OK)
		x->RMDIR3res_u.resok.dir_wcc = wcc;
	else
		x->RMDIR3res_u.resfail.dir_wcc = wcc;
}

/* RENAME (@from given) or LINK (@file given) to @to: the status, the
 * source's wcc_data (RENAME) or attributes (LINK), the target directory's
 * wcc_data; resok and resfail carry the same. */
static void do_rename_link(const diropargs3 *from, const nfs_fh3 *file, const diropargs3 *to,
			   nfsstat3 *status, wcc_data *from_wcc, post_op_attr *file_attr,
			   wcc_data *to_wcc)
{
	char frel[PATH_MAX], fdir[PATH_MAX], fabs[PATH_MAX];
	char tdir[PATH_MAX], trel[PATH_MAX], tabs[PATH_MAX];
	struct stat fst, tst, obj;
	int s = 0, sf = 0;
	if (from) {
		sf = dir_of(from, fdir, &fst);
		if (sf == 0)
			sf = entry_path(fdir, from->name, frel, fabs);
	} else {
		sf = nfs3d_resolve(file, frel, &fst);
		if (sf == 0 && nfs3d_abs(frel, fabs) != 0)
			sf = NFS3ERR_NAMETOOLONG;
		if (sf == 0 && S_ISDIR(fst.st_mode))
			sf = NFS3ERR_ISDIR;
	}
	int st_ = dir_of(to, tdir, &tst);
	s = sf ? sf : st_;
	if (s == 0)
		s = entry_path(tdir, to->name, trel, tabs);
	if (s == 0 && (from ? rename(fabs, tabs) : link(fabs, tabs)) != 0)
		s = (int)nfs3d_errno_to_stat(errno);
	if (s == 0 && lstat(tabs, &obj) == 0) {
		if (from)
			nfs3d_fh_forget(frel);
		nfs3d_fh_note(trel, &obj);
	}
	*status = (nfsstat3)s;
	if (from) {
		bool fh_ok = sf == 0 || sf == NFS3ERR_INVAL || sf == NFS3ERR_NAMETOOLONG;
		nfs3d_wcc(fh_ok ? &fst : NULL, fh_ok ? fdir : NULL, from_wcc);
	} else {
		nfs3d_post_rel(sf == 0 ? frel : NULL, file_attr);
	}
	nfs3d_wcc(st_ == 0 ? &tst : NULL, st_ == 0 ? tdir : NULL, to_wcc);
}

void nfs3d_rename(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	RENAME3res *x = &r->rename;
	wcc_data from, to;
	(void)c;
	do_rename_link(&a->rename.from, NULL, &a->rename.to, &x->status, &from, NULL, &to);
	if (x->status == NFS3_OK)
		x->RENAME3res_u.resok = (RENAME3resok){.fromdir_wcc = from, .todir_wcc = to};
	else
		x->RENAME3res_u.resfail = (RENAME3resfail){.fromdir_wcc = from, .todir_wcc = to};
}

void nfs3d_link(const union nfs3d_args *a, union nfs3d_res *r, struct nfs3d_call *c)
{
	LINK3res *x = &r->link;
	post_op_attr file;
	wcc_data to;
	(void)c;
	do_rename_link(NULL, &a->link.file, &a->link.link, &x->status, NULL, &file, &to);
	if (x->status == NFS3_OK)
		x->LINK3res_u.resok = (LINK3resok){.file_attributes = file, .linkdir_wcc = to};
	else
		x->LINK3res_u.resfail = (LINK3resfail){.file_attributes = file, .linkdir_wcc = to};
}
