// SPDX-License-Identifier: MIT
/*
 * rpcrdma-nfs3d (examples/nfs3d) on this host, driven by our own client
 * over loopback (no guest): what a Linux export with root_squash does
 * with AUTH_SYS callers (RFC 1813 §4.4, RFC 5531 §10.2), MKNOD (RFC 1813
 * §3.3.11) and the counters file. As uid 4242 (not the owner):
 *   - WRITE to a root-owned 0644 file is NFS3ERR_ACCES and changes nothing,
 *     READ of it works; LOOKUP inside a root 0700 directory is ACCES;
 *   - CREATE gives a file owned 4242:4242, whose WRITE works, and still
 *     works after the owner made it 0400 (owner override); SETATTR chown
 *     of it to root is NFS3ERR_PERM;
 *   - MKNOD makes a FIFO and a socket (owned 4242), refuses a character
 *     device (PERM) and a regular file (BADTYPE);
 *   - uid 0 is squashed to 65534 (new objects 65534:65534, WRITE to the
 *     root file ACCES, MKNOD of a device PERM), AUTH_NONE as well;
 *   - SIGUSR1 writes the counters to --stats-file, which outlives SIGKILL.
 * The export's parent directory is 0700 (only the export itself matters).
 * Restarted with --no-root-squash: root creates root-owned files, writes
 * the root file, chowns, and makes a character device 1,3; SIGTERM
 * rewrites the counters file and exits 0.
 * Needs root (it switches identities and makes devices): skips otherwise.
 * usage: test_nfs3d_local PATH-TO-rpcrdma-nfs3d
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <rpc/rpc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/check.h"
#include "rpcrdma/client.h"

#include "nfs3.h" /* rpcgen, xdr/nfs3.x */
#include "nfs3d_tclnt.h"

/* ---- NFSv3 through rpcgen's types and routines ---- */

struct fh {
	uint8_t d[NFS3_FHSIZE];
	uint32_t len;
};

static nfs_fh3 fh3(const struct fh *f)
{
	nfs_fh3 h = {.data = {.data_len = f->len, .data_val = (char *)(uintptr_t)f->d}};
	return h;
}

static bool fh_from(struct fh *out, u_int len, const char *val)
{
	if (len > sizeof(out->d))
		return false;
	memcpy(out->d, val, len);
	out->len = len;
	return true;
}

/* sattr3 with only the mode (mode >= 0) and/or the uid (uid >= 0) set */
static sattr3 sattr(long mode, long uid)
{
	sattr3 sa;
	memset(&sa, 0, sizeof(sa)); /* gid, size: not set; times: DONT_CHANGE */
	sa.mode.set_it = mode >= 0;
	sa.mode.set_mode3_u.mode = (mode3)mode;
	sa.uid.set_it = uid >= 0;
	sa.uid.set_uid3_u.uid = (uid3)uid;
	return sa;
}

static diropargs3 dirop(const struct fh *dir, const char *fname)
{
	diropargs3 d = {.dir = fh3(dir), .name = (char *)(uintptr_t)fname};
	return d;
}

/* ---- calls ---- */

static CLIENT *nfs;

static void as_user(uint32_t uid, uint32_t gid)
{
	if (nfs->cl_auth)
		auth_destroy(nfs->cl_auth);
	gid_t g[1] = {gid};
	char host[] = "nfs3d-local";
	nfs->cl_auth = authunix_create(host, uid, gid, 1, g);
}

static void as_none(void)
{
	if (nfs->cl_auth)
		auth_destroy(nfs->cl_auth);
	nfs->cl_auth = authnone_create();
}

/* Call @proc; the nfsstat3 (the first member of every result), or -1 when
 * the call itself failed. The caller frees @res with xdr_free(@xres). */
static int call(rpcproc_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
	if (nfs3d_call(nfs, proc, xargs, args, xres, res, stdout) != 0)
		return -1;
	return (int)*(nfsstat3 *)res;
}

static int lookup(const struct fh *dir, const char *fname, struct fh *out)
{
	LOOKUP3args a = {.what = dirop(dir, fname)};
	LOOKUP3res r;
	memset(&r, 0, sizeof(r));
	int s =
	    call(NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a, (xdrproc_t)xdr_LOOKUP3res, &r);
	const nfs_fh3 *h = &r.LOOKUP3res_u.resok.object;
	if (s == NFS3_OK && out && !fh_from(out, h->data.data_len, h->data.data_val))
		s = -1;
	xdr_free((xdrproc_t)xdr_LOOKUP3res, &r);
	return s;
}

static int write_at(const struct fh *f, const char *data)
{
	uint32_t n = (uint32_t)strlen(data);
	WRITE3args a = {.file = fh3(f), .offset = 0, .count = n, .stable = FILE_SYNC};
	WRITE3res r;
	a.data.base = (void *)(uintptr_t)data;
	a.data.len = n;
	memset(&r, 0, sizeof(r));
	int s = call(NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args, &a, (xdrproc_t)xdr_WRITE3res, &r);
	xdr_free((xdrproc_t)xdr_WRITE3res, &r);
	return s;
}

/* READ up to 60 bytes at 0 into @out (61 bytes), NUL-terminated */
static int read_all(const struct fh *f, char *out)
{
	READ3args a = {.file = fh3(f), .offset = 0, .count = 60};
	READ3res r;
	memset(&r, 0, sizeof(r));
	int s = call(NFSPROC3_READ, (xdrproc_t)xdr_READ3args, &a, (xdrproc_t)xdr_READ3res, &r);
	const rpcrdma_bulk *d = &r.READ3res_u.resok.data;
	out[0] = '\0';
	if (s == NFS3_OK && d->len <= 60) {
		memcpy(out, d->base, d->len);
		out[d->len] = '\0';
	}
	xdr_free((xdrproc_t)xdr_READ3res, &r);
	return s;
}

static int create(const struct fh *dir, const char *fname, long mode)
{
	CREATE3args a = {.where = dirop(dir, fname), .how = {.mode = UNCHECKED}};
	CREATE3res r;
	a.how.createhow3_u.obj_attributes = sattr(mode, -1);
	memset(&r, 0, sizeof(r));
	int s =
	    call(NFSPROC3_CREATE, (xdrproc_t)xdr_CREATE3args, &a, (xdrproc_t)xdr_CREATE3res, &r);
	xdr_free((xdrproc_t)xdr_CREATE3res, &r);
	return s;
}

static int mknod_(const struct fh *dir, const char *fname, ftype3 type, uint32_t maj, uint32_t min)
{
	MKNOD3args a = {.where = dirop(dir, fname), .what = {.type = type}};
	MKNOD3res r;
	if (type == NF3BLK || type == NF3CHR) {
		a.what.mknoddata3_u.device.dev_attributes = sattr(0640, -1);
		a.what.mknoddata3_u.device.spec.specdata1 = maj;
		a.what.mknoddata3_u.device.spec.specdata2 = min;
	} else if (type == NF3SOCK || type == NF3FIFO) {
		a.what.mknoddata3_u.pipe_attributes = sattr(0640, -1);
	}
	memset(&r, 0, sizeof(r));
	int s = call(NFSPROC3_MKNOD, (xdrproc_t)xdr_MKNOD3args, &a, (xdrproc_t)xdr_MKNOD3res, &r);
	xdr_free((xdrproc_t)xdr_MKNOD3res, &r);
	return s;
}

static int chown_(const struct fh *f, uint32_t uid)
{
	SETATTR3args a = {.object = fh3(f), .new_attributes = sattr(-1, uid)};
	SETATTR3res r;
	memset(&r, 0, sizeof(r));
	int s =
	    call(NFSPROC3_SETATTR, (xdrproc_t)xdr_SETATTR3args, &a, (xdrproc_t)xdr_SETATTR3res, &r);
	xdr_free((xdrproc_t)xdr_SETATTR3res, &r);
	return s;
}

/* ---- the server ---- */

static const char *server_bin;
static char base[64], exp_dir[96], stats_path[96];

struct server {
	pid_t pid;
	uint16_t nfs_port, mount_port;
	struct rpcrdma_clnt *clnt;
	struct fh root;
};

static int start(struct server *s, bool squash)
{
	int pfd[2];
	if (pipe(pfd) != 0)
		return -1;
	s->pid = fork();
	if (s->pid == 0) {
		char errp[128];
		snprintf(errp, sizeof(errp), "%s/server.err", base);
		int fd = open(errp, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(pfd[1], 1);
		if (fd >= 0)
			dup2(fd, 2);
		close(pfd[0]);
		/* with squash, the list ends before --no-root-squash */
		execl(server_bin, "rpcrdma-nfs3d", "--export", exp_dir, "--port", "0",
		      "--mount-port", "0", "--bind", "127.0.0.1", "--stats-file", stats_path,
		      squash ? (const char *)NULL : "--no-root-squash", (const char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	char h[NFS3_FHSIZE];
	u_int hlen = 0;
	if (nfs3d_ready(pfd[0], &s->nfs_port, &s->mount_port) != 0 ||
	    nfs3d_mnt(s->mount_port, h, &hlen) != 0 || !fh_from(&s->root, hlen, h))
		return -1;
	nfs = nfs3d_connect(s->nfs_port, &s->clnt);
	return nfs ? 0 : -1;
}

static void disconnect(struct server *s)
{
	if (nfs->cl_auth)
		auth_destroy(nfs->cl_auth);
	nfs->cl_auth = NULL;
	clnt_destroy(nfs);
	nfs = NULL;
	rpcrdma_clnt_destroy(s->clnt);
}

static bool host_stat(const char *fname, struct stat *st)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", exp_dir, fname);
	return lstat(p, st) == 0;
}

static void host_file(const char *fname, const char *text, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", exp_dir, fname);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(p, mode);
}

static long stats_calls(void)
{
	FILE *f = fopen(stats_path, "r");
	char line[1024] = "";
	long calls = -1;
	if (f && fgets(line, sizeof(line), f) && sscanf(line, "stats calls=%ld", &calls) != 1)
		calls = -1;
	if (f)
		fclose(f);
	return calls;
}

/* uid 4242 against root's objects, its own, and MKNOD */
static void as_plain_user(const struct fh *root)
{
	struct fh rootfile, sub, own;
	struct stat st;
	char buf[64];
	as_user(4242, 4242);
	CHECK_MSG(lookup(root, "rootfile", &rootfile) == NFS3_OK, "user: LOOKUP rootfile");
	CHECK_MSG(write_at(&rootfile, "user") == NFS3ERR_ACCES,
		  "user: WRITE to root's 0644 file not ACCES");
	CHECK_MSG(read_all(&rootfile, buf) == NFS3_OK && !strcmp(buf, "root\n"),
		  "user: READ of root's 0644 file: %s", buf);
	CHECK_MSG(lookup(root, "sub700", &sub) == NFS3_OK, "user: LOOKUP sub700");
	CHECK_MSG(lookup(&sub, "inner", NULL) == NFS3ERR_ACCES,
		  "user: LOOKUP in root's 0700 dir not ACCES");

	CHECK_MSG(create(root, "own", 0600) == NFS3_OK, "user: CREATE own");
	CHECK_MSG(host_stat("own", &st) && st.st_uid == 4242 && st.st_gid == 4242 &&
		      (st.st_mode & 07777) == 0600,
		  "host: own not 4242:4242 0600 (%u:%u %o)", st.st_uid, st.st_gid, st.st_mode);
	CHECK_MSG(lookup(root, "own", &own) == NFS3_OK, "user: LOOKUP own");
	CHECK_MSG(write_at(&own, "mine") == NFS3_OK, "user: WRITE own");
	char p[256];
	snprintf(p, sizeof(p), "%s/own", exp_dir);
	chmod(p, 0400);
	CHECK_MSG(write_at(&own, "MINE") == NFS3_OK, "user: WRITE own 0400 file (owner override)");
	CHECK_MSG(read_all(&own, buf) == NFS3_OK && !strcmp(buf, "MINE"), "user: READ own: %s",
		  buf);
	CHECK_MSG(chown_(&own, 0) == NFS3ERR_PERM, "user: chown own to root not PERM");
	CHECK_MSG(host_stat("own", &st) && st.st_uid == 4242, "host: own changed owner");

	CHECK_MSG(mknod_(root, "fifo", NF3FIFO, 0, 0) == NFS3_OK, "user: MKNOD FIFO");
	CHECK_MSG(host_stat("fifo", &st) && S_ISFIFO(st.st_mode) && st.st_uid == 4242 &&
		      (st.st_mode & 0777) == 0640,
		  "host: fifo not a 4242 0640 FIFO");
	CHECK_MSG(mknod_(root, "sock", NF3SOCK, 0, 0) == NFS3_OK, "user: MKNOD SOCK");
	CHECK_MSG(host_stat("sock", &st) && S_ISSOCK(st.st_mode), "host: sock not a socket");
	CHECK_MSG(mknod_(root, "udev", NF3CHR, 1, 3) == NFS3ERR_PERM, "user: MKNOD CHR not PERM");
	CHECK_MSG(!host_stat("udev", &st), "host: user's device node exists");
	CHECK_MSG(mknod_(root, "reg", NF3REG, 0, 0) == NFS3ERR_BADTYPE, "MKNOD NF3REG not BADTYPE");
}

/* uid 0 and AUTH_NONE with root_squash: nobody */
static void as_squashed_root(const struct fh *root)
{
	struct fh rootfile;
	struct stat st;
	as_user(0, 0);
	CHECK_MSG(create(root, "squashed", 0644) == NFS3_OK, "root: CREATE");
	CHECK_MSG(host_stat("squashed", &st) && st.st_uid == 65534 && st.st_gid == 65534,
		  "host: squashed root's file not 65534:65534 (%u:%u)", st.st_uid, st.st_gid);
	CHECK_MSG(lookup(root, "rootfile", &rootfile) == NFS3_OK, "root: LOOKUP rootfile");
	CHECK_MSG(write_at(&rootfile, "root") == NFS3ERR_ACCES,
		  "squashed root: WRITE rootfile not ACCES");
	CHECK_MSG(mknod_(root, "rdev", NF3CHR, 1, 3) == NFS3ERR_PERM,
		  "squashed root: MKNOD CHR not PERM");
	as_none();
	CHECK_MSG(create(root, "anon", 0644) == NFS3_OK, "AUTH_NONE: CREATE");
	CHECK_MSG(host_stat("anon", &st) && st.st_uid == 65534, "host: AUTH_NONE's file not 65534");
}

static void as_real_root(const struct fh *root)
{
	struct fh rootfile, f;
	struct stat st;
	char buf[64];
	as_user(0, 0);
	CHECK_MSG(create(root, "rootnew", 0644) == NFS3_OK, "root: CREATE");
	CHECK_MSG(host_stat("rootnew", &st) && st.st_uid == 0 && st.st_gid == 0,
		  "host: root's new file not 0:0");
	CHECK_MSG(lookup(root, "rootfile", &rootfile) == NFS3_OK, "root: LOOKUP rootfile");
	CHECK_MSG(write_at(&rootfile, "ROOT") == NFS3_OK, "root: WRITE rootfile");
	CHECK_MSG(read_all(&rootfile, buf) == NFS3_OK && !strncmp(buf, "ROOT", 4), "root: READ: %s",
		  buf);
	CHECK_MSG(lookup(root, "rootnew", &f) == NFS3_OK && chown_(&f, 4242) == NFS3_OK,
		  "root: chown");
	CHECK_MSG(host_stat("rootnew", &st) && st.st_uid == 4242, "host: chown by root not done");
	CHECK_MSG(mknod_(root, "null", NF3CHR, 1, 3) == NFS3_OK, "root: MKNOD CHR 1,3");
	CHECK_MSG(host_stat("null", &st) && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
		      minor(st.st_rdev) == 3,
		  "host: null not a character device 1,3");
}

static int wait_exit(pid_t pid)
{
	int ws = 0;
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, &ws, WNOHANG) == pid)
			return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	return -1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: test_nfs3d_local RPCRDMA_NFS3D\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("SKIP: not root (the server switches identities)\n");
		return 77;
	}
	server_bin = argv[1];
	snprintf(base, sizeof(base), "/tmp/nfs3d-local-XXXXXX");
	if (!mkdtemp(base))
		return 1;
	snprintf(exp_dir, sizeof(exp_dir), "%s/export", base);
	snprintf(stats_path, sizeof(stats_path), "%s/stats", base);
	char p[256];
	mkdir(exp_dir, 0777);
	chmod(exp_dir, 0777);
	/* the export's parent closed to others: callers need no search
	 * permission above the export root (the server works from inside it) */
	chmod(base, 0700);
	host_file("rootfile", "root\n", 0644);
	snprintf(p, sizeof(p), "%s/sub700", exp_dir);
	mkdir(p, 0700);
	host_file("sub700/inner", "x", 0644);

	struct server s;
	memset(&s, 0, sizeof(s));
	if (start(&s, true) != 0) {
		printf("FAIL: rpcrdma-nfs3d did not start (see %s/server.err)\n", base);
		return 1;
	}
	as_plain_user(&s.root);
	as_squashed_root(&s.root);
	struct stat st;
	CHECK_MSG(host_stat("rootfile", &st) && st.st_size == 5, "host: rootfile changed");
	disconnect(&s);
	/* the counters while it runs, then SIGKILL: the file stays */
	kill(s.pid, SIGUSR1);
	long calls = -1;
	for (int i = 0; i < 50 && calls < 0; i++) {
		usleep(100000);
		calls = stats_calls();
	}
	CHECK_MSG(calls >= 20, "SIGUSR1: stats file calls=%ld", calls);
	kill(s.pid, SIGKILL);
	wait_exit(s.pid);
	CHECK_MSG(stats_calls() == calls, "stats file after SIGKILL");
	printf("first server: %ld calls, counters saved on SIGUSR1\n", calls);

	unlink(stats_path);
	memset(&s, 0, sizeof(s));
	if (start(&s, false) != 0) {
		printf("FAIL: rpcrdma-nfs3d --no-root-squash did not start\n");
		return 1;
	}
	as_real_root(&s.root);
	disconnect(&s);
	kill(s.pid, SIGTERM);
	CHECK_MSG(wait_exit(s.pid) == 0, "SIGTERM: exit status");
	CHECK_MSG(stats_calls() > 0, "stats file at exit");
	if (failures == 0) {
		snprintf(p, sizeof(p), "rm -rf '%s'", base);
		if (system(p) != 0)
			printf("could not remove %s\n", base);
		printf("PASS\n");
	}
	return failures ? 1 : 0;
}
