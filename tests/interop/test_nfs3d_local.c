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
#include <arpa/inet.h>
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
#include "util/be.h"

enum { ST_OK = 0, ST_PERM = 1, ST_ACCES = 13, ST_BADTYPE = 10007 };
enum { P_LOOKUP = 3, P_READ = 6, P_WRITE = 7, P_CREATE = 8, P_MKNOD = 11, P_SETATTR = 2 };

/* ---- XDR by hand: arguments as pre-encoded words, results as far as used ---- */

struct wbuf {
	uint8_t b[1024];
	uint32_t n;
};

static void w32(struct wbuf *w, uint32_t v)
{
	put_be32(w->b + w->n, v);
	w->n += 4;
}

static void wopaque(struct wbuf *w, const void *p, uint32_t len)
{
	w32(w, len);
	memcpy(w->b + w->n, p, len);
	memset(w->b + w->n + len, 0, (4 - (len & 3)) & 3);
	w->n += (len + 3) & ~3u;
}

static bool_t xdr_wbuf(XDR *x, struct wbuf *w)
{
	return xdr_opaque(x, (char *)w->b, w->n);
}

struct fh {
	uint8_t d[64];
	uint32_t len;
};

/* A result: the status, and for LOOKUP the handle, for READ the data. */
struct res {
	int proc;
	uint32_t status;
	struct fh fh;
	char data[64];
	uint32_t len;
};

static bool_t skip_post_attr(XDR *x)
{
	bool_t b;
	u_int w;
	if (!xdr_bool(x, &b))
		return FALSE;
	for (int i = 0; b && i < 21; i++) /* fattr3: 21 words */
		if (!xdr_u_int(x, &w))
			return FALSE;
	return TRUE;
}

static bool_t xdr_res(XDR *x, struct res *r)
{
	if (x->x_op != XDR_DECODE)
		return TRUE;
	if (!xdr_u_int(x, &r->status))
		return FALSE;
	if (r->status != ST_OK)
		return TRUE;
	char *p = (char *)r->fh.d;
	u_int n = 0;
	if (r->proc == P_LOOKUP) {
		if (!xdr_bytes(x, &p, &n, sizeof(r->fh.d)))
			return FALSE;
		r->fh.len = n;
	} else if (r->proc == P_READ) {
		u_int count, eof;
		p = r->data;
		if (!skip_post_attr(x) || !xdr_u_int(x, &count) || !xdr_u_int(x, &eof) ||
		    !xdr_bytes(x, &p, &n, sizeof(r->data) - 1))
			return FALSE;
		r->len = n;
	}
	return TRUE;
}

/* sattr3 with only the mode (mode >= 0) and/or the uid (uid >= 0) set */
static void wsattr(struct wbuf *w, long mode, long uid)
{
	w32(w, mode >= 0);
	if (mode >= 0)
		w32(w, (uint32_t)mode);
	w32(w, uid >= 0);
	if (uid >= 0)
		w32(w, (uint32_t)uid);
	w32(w, 0); /* gid */
	w32(w, 0); /* size */
	w32(w, 0); /* atime: DONT_CHANGE */
	w32(w, 0); /* mtime */
}

static void wdirop(struct wbuf *w, const struct fh *dir, const char *name)
{
	wopaque(w, dir->d, dir->len);
	wopaque(w, name, (uint32_t)strlen(name));
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

/* Call @proc with @w; the nfsstat3, or -1 when the call itself failed. */
static int call(int proc, struct wbuf *w, struct res *r)
{
	struct timeval tv = {10, 0};
	memset(r, 0, sizeof(*r));
	r->proc = proc;
	enum clnt_stat cs = clnt_call(nfs, (rpcproc_t)proc, (xdrproc_t)xdr_wbuf, (char *)w,
				      (xdrproc_t)xdr_res, (char *)r, tv);
	if (cs != RPC_SUCCESS) {
		printf("call %d: %s\n", proc, clnt_sperrno(cs));
		return -1;
	}
	return (int)r->status;
}

static int lookup(const struct fh *dir, const char *name, struct fh *out)
{
	struct wbuf w = {.n = 0};
	struct res r;
	wdirop(&w, dir, name);
	int s = call(P_LOOKUP, &w, &r);
	if (s == 0 && out)
		*out = r.fh;
	return s;
}

static int write_at(const struct fh *f, const char *data)
{
	struct wbuf w = {.n = 0};
	struct res r;
	uint32_t n = (uint32_t)strlen(data);
	wopaque(&w, f->d, f->len);
	w32(&w, 0); /* offset (64 bits) */
	w32(&w, 0);
	w32(&w, n);
	w32(&w, 2); /* FILE_SYNC */
	wopaque(&w, data, n);
	return call(P_WRITE, &w, &r);
}

static int read_all(const struct fh *f, char *out)
{
	struct wbuf w = {.n = 0};
	struct res r;
	wopaque(&w, f->d, f->len);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 60);
	int s = call(P_READ, &w, &r);
	memcpy(out, r.data, r.len);
	out[r.len] = '\0';
	return s;
}

static int create(const struct fh *dir, const char *name, long mode)
{
	struct wbuf w = {.n = 0};
	struct res r;
	wdirop(&w, dir, name);
	w32(&w, 0); /* UNCHECKED */
	wsattr(&w, mode, -1);
	return call(P_CREATE, &w, &r);
}

static int mknod_(const struct fh *dir, const char *name, uint32_t type, uint32_t maj, uint32_t min)
{
	struct wbuf w = {.n = 0};
	struct res r;
	wdirop(&w, dir, name);
	w32(&w, type);
	if (type == 3 || type == 4) {
		wsattr(&w, 0640, -1);
		w32(&w, maj);
		w32(&w, min);
	} else if (type == 6 || type == 7) {
		wsattr(&w, 0640, -1);
	}
	return call(P_MKNOD, &w, &r);
}

static int chown_(const struct fh *f, uint32_t uid)
{
	struct wbuf w = {.n = 0};
	struct res r;
	wopaque(&w, f->d, f->len);
	wsattr(&w, -1, uid);
	w32(&w, 0); /* no guard */
	return call(P_SETATTR, &w, &r);
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

static int mnt(uint16_t port, struct fh *root)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int sock = RPC_ANYSOCK;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	CLIENT *m = clnttcp_create(&sa, 100005, 3, &sock, 0, 0);
	if (!m)
		return -1;
	struct wbuf w = {.n = 0};
	struct res r;
	memset(&r, 0, sizeof(r));
	r.proc = P_LOOKUP; /* mountres3: status, then the handle first */
	wopaque(&w, "/", 1);
	struct timeval tv = {10, 0};
	enum clnt_stat cs =
	    clnt_call(m, 1, (xdrproc_t)xdr_wbuf, (char *)&w, (xdrproc_t)xdr_res, (char *)&r, tv);
	clnt_destroy(m);
	if (cs != RPC_SUCCESS || r.status != 0)
		return -1;
	*root = r.fh;
	return 0;
}

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
	FILE *f = fdopen(pfd[0], "r");
	char line[128] = "";
	unsigned np = 0, mp = 0;
	bool ok = f && fgets(line, sizeof(line), f) &&
		  sscanf(line, "ready nfs=%u mount=%u", &np, &mp) == 2;
	if (f)
		fclose(f);
	if (!ok)
		return -1;
	s->nfs_port = (uint16_t)np;
	s->mount_port = (uint16_t)mp;
	if (mnt(s->mount_port, &s->root) != 0)
		return -1;
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT, .timeout_ms = 10000};
	if (rpcrdma_clnt_create("127.0.0.1", s->nfs_port, 100003, 3, &o, &s->clnt) != 0)
		return -1;
	nfs = rpcrdma_clnt_tirpc(s->clnt);
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

static bool host_stat(const char *name, struct stat *st)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", exp_dir, name);
	return lstat(p, st) == 0;
}

static void host_file(const char *name, const char *text, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", exp_dir, name);
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
	CHECK_MSG(lookup(root, "rootfile", &rootfile) == ST_OK, "user: LOOKUP rootfile");
	CHECK_MSG(write_at(&rootfile, "user") == ST_ACCES,
		  "user: WRITE to root's 0644 file not ACCES");
	CHECK_MSG(read_all(&rootfile, buf) == ST_OK && !strcmp(buf, "root\n"),
		  "user: READ of root's 0644 file: %s", buf);
	CHECK_MSG(lookup(root, "sub700", &sub) == ST_OK, "user: LOOKUP sub700");
	CHECK_MSG(lookup(&sub, "inner", NULL) == ST_ACCES,
		  "user: LOOKUP in root's 0700 dir not ACCES");

	CHECK_MSG(create(root, "own", 0600) == ST_OK, "user: CREATE own");
	CHECK_MSG(host_stat("own", &st) && st.st_uid == 4242 && st.st_gid == 4242 &&
		      (st.st_mode & 07777) == 0600,
		  "host: own not 4242:4242 0600 (%u:%u %o)", st.st_uid, st.st_gid, st.st_mode);
	CHECK_MSG(lookup(root, "own", &own) == ST_OK, "user: LOOKUP own");
	CHECK_MSG(write_at(&own, "mine") == ST_OK, "user: WRITE own");
	char p[256];
	snprintf(p, sizeof(p), "%s/own", exp_dir);
	chmod(p, 0400);
	CHECK_MSG(write_at(&own, "MINE") == ST_OK, "user: WRITE own 0400 file (owner override)");
	CHECK_MSG(read_all(&own, buf) == ST_OK && !strcmp(buf, "MINE"), "user: READ own: %s", buf);
	CHECK_MSG(chown_(&own, 0) == ST_PERM, "user: chown own to root not PERM");
	CHECK_MSG(host_stat("own", &st) && st.st_uid == 4242, "host: own changed owner");

	CHECK_MSG(mknod_(root, "fifo", 7, 0, 0) == ST_OK, "user: MKNOD FIFO");
	CHECK_MSG(host_stat("fifo", &st) && S_ISFIFO(st.st_mode) && st.st_uid == 4242 &&
		      (st.st_mode & 0777) == 0640,
		  "host: fifo not a 4242 0640 FIFO");
	CHECK_MSG(mknod_(root, "sock", 6, 0, 0) == ST_OK, "user: MKNOD SOCK");
	CHECK_MSG(host_stat("sock", &st) && S_ISSOCK(st.st_mode), "host: sock not a socket");
	CHECK_MSG(mknod_(root, "udev", 4, 1, 3) == ST_PERM, "user: MKNOD CHR not PERM");
	CHECK_MSG(!host_stat("udev", &st), "host: user's device node exists");
	CHECK_MSG(mknod_(root, "reg", 1, 0, 0) == ST_BADTYPE, "MKNOD NF3REG not BADTYPE");
}

/* uid 0 and AUTH_NONE with root_squash: nobody */
static void as_squashed_root(const struct fh *root)
{
	struct fh rootfile;
	struct stat st;
	as_user(0, 0);
	CHECK_MSG(create(root, "squashed", 0644) == ST_OK, "root: CREATE");
	CHECK_MSG(host_stat("squashed", &st) && st.st_uid == 65534 && st.st_gid == 65534,
		  "host: squashed root's file not 65534:65534 (%u:%u)", st.st_uid, st.st_gid);
	CHECK_MSG(lookup(root, "rootfile", &rootfile) == ST_OK, "root: LOOKUP rootfile");
	CHECK_MSG(write_at(&rootfile, "root") == ST_ACCES,
		  "squashed root: WRITE rootfile not ACCES");
	CHECK_MSG(mknod_(root, "rdev", 4, 1, 3) == ST_PERM, "squashed root: MKNOD CHR not PERM");
	as_none();
	CHECK_MSG(create(root, "anon", 0644) == ST_OK, "AUTH_NONE: CREATE");
	CHECK_MSG(host_stat("anon", &st) && st.st_uid == 65534, "host: AUTH_NONE's file not 65534");
}

static void as_real_root(const struct fh *root)
{
	struct fh rootfile, f;
	struct stat st;
	char buf[64];
	as_user(0, 0);
	CHECK_MSG(create(root, "rootnew", 0644) == ST_OK, "root: CREATE");
	CHECK_MSG(host_stat("rootnew", &st) && st.st_uid == 0 && st.st_gid == 0,
		  "host: root's new file not 0:0");
	CHECK_MSG(lookup(root, "rootfile", &rootfile) == ST_OK, "root: LOOKUP rootfile");
	CHECK_MSG(write_at(&rootfile, "ROOT") == ST_OK, "root: WRITE rootfile");
	CHECK_MSG(read_all(&rootfile, buf) == ST_OK && !strncmp(buf, "ROOT", 4), "root: READ: %s",
		  buf);
	CHECK_MSG(lookup(root, "rootnew", &f) == ST_OK && chown_(&f, 4242) == ST_OK, "root: chown");
	CHECK_MSG(host_stat("rootnew", &st) && st.st_uid == 4242, "host: chown by root not done");
	CHECK_MSG(mknod_(root, "null", 4, 1, 3) == ST_OK, "root: MKNOD CHR 1,3");
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
