/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma-nfs3d: export one directory over NFSv3 on RPC-over-RDMA (RFC
 * 8166, RFC 8267) with MOUNT v3 over TCP, for the Linux kernel client:
 *
 *   rpcrdma-nfs3d --export DIR [--port P] [--mount-port M] [--bind ADDR]
 *                 [--credits N] [--workers N] [--no-root-squash]
 *                 [--stats-file FILE]
 *
 * Prints "ready nfs=P mount=M" once both listen; SIGINT or SIGTERM stops
 * it (the transport counters go to stderr, and to FILE). SIGUSR1 writes
 * the counters to FILE (replaced whole) while it runs, so a run that ends
 * in SIGKILL can keep them. Each request acts on the export with the
 * caller's AUTH_SYS identity, root squashed to nobody unless
 * --no-root-squash (creds.c; the server must run as root to switch).
 *
 * Built like a user's program: only <rpcrdma.h>, -lrpcrdma and rpcgen's
 * output of xdr/nfs3.x and xdr/mount3.x. NFS calls are dispatched natively
 * (rpcrdma_svc_register) through a table of procedures: their arguments
 * decode and their results encode with rpcgen's routines over the call's
 * and the reply's streams, with READ data and WRITE data declared
 * rpcrdma_bulk, the DDP-eligible items of RFC 8267 §4 (Write chunk, Read
 * chunk).
 */
#define _GNU_SOURCE
#include "nfs3d.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct nfs3d_export nfs3d_exp;

static volatile sig_atomic_t stop_flag, stats_flag;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		stats_flag = 1;
	else
		stop_flag = 1;
}

static void caller_of(struct rpcrdma_svc_req *req, struct nfs3d_caller *c)
{
	struct rpcrdma_rpc_authsys sys;
	memset(c, 0, sizeof(*c));
	if (rpcrdma_svc_req_authsys(req, &sys) != 0)
		return;
	c->sys = true;
	c->uid = sys.uid;
	c->gid = sys.gid;
	c->ngids = sys.ngids < 16 ? sys.ngids : 16;
	memcpy(c->gids, sys.gids, c->ngids * sizeof(c->gids[0]));
}

/* The procedures of NFS_V3 (RFC 1813 §3.3), by procedure number. */
static const struct {
	xdrproc_t xargs, xres;
	nfs3d_proc_fn *run;
} procs[] = {
#define P(num, NAME, name)                                                                         \
	[num] = {(xdrproc_t)xdr_##NAME##3args, (xdrproc_t)xdr_##NAME##3res, nfs3d_##name},
    NFS3D_PROCS(P)
#undef P
};

static void nfs_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	if (proc == NFSPROC3_NULL) {
		rpcrdma_svc_reply(req, NULL, NULL); /* no results */
		return;
	}
	if (proc >= sizeof(procs) / sizeof(procs[0]) || !procs[proc].run) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	union nfs3d_args *a = calloc(1, sizeof(*a));
	union nfs3d_res *r = calloc(1, sizeof(*r));
	if (!a || !r) {
		free(a);
		free(r);
		rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
		return;
	}
	if (rpcrdma_svc_getargs(req, procs[proc].xargs, a) != 0) {
		rpcrdma_svc_freeargs(req, procs[proc].xargs, a);
		free(a);
		free(r);
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	struct nfs3d_call c = {.proc = proc};
	caller_of(req, &c.who);
	nfs3d_creds_map(&c.who);
	nfs3d_creds_enter(&c.who);
	procs[proc].run(a, r, &c);
	nfs3d_creds_leave();
	/* the result points into c's memory, never into the arguments */
	rpcrdma_svc_freeargs(req, procs[proc].xargs, a);
	if (c.oom)
		rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
	else
		rpcrdma_svc_reply(req, procs[proc].xres, r);
	/* READ's buffer was registered for the Write and is done now */
	nfs3d_call_end(&c);
	free(a);
	free(r);
}

/* The usage text: to stdout with exit status 0 for --help, to stderr with
 * 2 after a bad command line. */
static void usage(FILE *out, int status)
{
	fprintf(out, "usage: rpcrdma-nfs3d --export DIR [--port P] [--mount-port M] "
		     "[--bind ADDR] [--credits N] [--workers N] [--no-root-squash] "
		     "[--stats-file FILE] [--register]\n"
		     "       rpcrdma-nfs3d -h | --help | --version\n"
		     "  --register: register NFS v3 with the local rpcbind under netids\n"
		     "  rdma and rdma6 (RFC 8166 section 9), and MOUNT v3 under netid tcp,\n"
		     "  while running\n"
		     "  -h, --help: print this help and exit\n"
		     "  --version: print the rpcrdma library version and exit\n");
	exit(status);
}

static void print_stats(struct rpcrdma_svc *svc, FILE *out)
{
	struct rpcrdma_xprt_stats st;
	if (rpcrdma_svc_stats(svc, &st) != 0)
		return;
	fprintf(
	    out,
	    "stats calls=%llu replies=%llu short=%llu long_replies=%llu "
	    "read_chunks=%llu read_bytes=%llu write_chunks=%llu write_bytes=%llu "
	    "reply_chunks=%llu reply_bytes=%llu remote_inv=%llu err_chunk_tx=%llu "
	    "err_vers_tx=%llu rpc_errors=%llu decode_errors=%llu conn_errors=%llu "
	    "credits=%u max_outstanding=%u inline_send=%u inline_recv=%u remote_invalidate=%u\n",
	    (unsigned long long)st.calls, (unsigned long long)st.replies,
	    (unsigned long long)st.short_msgs, (unsigned long long)st.long_replies,
	    (unsigned long long)st.read_chunks, (unsigned long long)st.read_bytes,
	    (unsigned long long)st.write_chunks, (unsigned long long)st.write_bytes,
	    (unsigned long long)st.reply_chunks, (unsigned long long)st.reply_bytes,
	    (unsigned long long)st.remote_invalidations, (unsigned long long)st.err_chunk_tx,
	    (unsigned long long)st.err_vers_tx, (unsigned long long)st.rpc_errors,
	    (unsigned long long)st.decode_errors, (unsigned long long)st.conn_errors, st.credits,
	    st.max_outstanding, st.inline_send, st.inline_recv, st.remote_invalidate);
}

/* The counters into @path, replaced whole (written aside, then renamed):
 * a reader never sees half a line. */
static void save_stats(struct rpcrdma_svc *svc, const char *path)
{
	char tmp[PATH_MAX];
	if (!path || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	print_stats(svc, f);
	if (fclose(f) == 0 && rename(tmp, path) == 0)
		return;
	unlink(tmp);
}

static int setup_export(const char *dir)
{
	struct stat st;
	struct timespec now;
	if (!realpath(dir, nfs3d_exp.root) || lstat(nfs3d_exp.root, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	nfs3d_exp.dev = st.st_dev;
	nfs3d_exp.root_ino = st.st_ino;
	/* paths of objects are relative to the export root (nfs3d_abs) */
	if (chdir(nfs3d_exp.root) != 0)
		return -errno;
	/* RFC 1813 §3.3.7: a verifier that changes when the server restarts */
	clock_gettime(CLOCK_REALTIME, &now);
	uint32_t v0 = (uint32_t)now.tv_sec, v1 = (uint32_t)now.tv_nsec ^ ((uint32_t)getpid() << 20);
	memcpy(nfs3d_exp.write_verf, &v0, 4);
	memcpy(nfs3d_exp.write_verf + 4, &v1, 4);
	nfs3d_fh_init();
	nfs3d_mount_set_alias(dir);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"export", required_argument, NULL, 'e'},
						 {"port", required_argument, NULL, 'p'},
						 {"mount-port", required_argument, NULL, 'm'},
						 {"bind", required_argument, NULL, 'b'},
						 {"credits", required_argument, NULL, 'c'},
						 {"workers", required_argument, NULL, 'w'},
						 {"no-root-squash", no_argument, NULL, 'R'},
						 {"stats-file", required_argument, NULL, 's'},
						 {"register", no_argument, NULL, 'r'},
						 {"help", no_argument, NULL, 'h'},
						 {"version", no_argument, NULL, 'V'},
						 {NULL, 0, NULL, 0}};
	const char *dir = NULL, *bind_addr = NULL, *stats_file = NULL;
	bool root_squash = true;
	unsigned long port = RPCRDMA_DEFAULT_PORT, mport = 20048, credits = 64, workers = 4;
	bool do_register = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "e:p:m:b:c:w:rh", longopts, NULL)) != -1) {
		char *end = NULL;
		unsigned long v = optarg ? strtoul(optarg, &end, 10) : 0;
		bool num = optarg && end && *end == '\0';
		switch (opt) {
		case 'e':
			dir = optarg;
			break;
		case 'b':
			bind_addr = optarg;
			break;
		case 'p':
			port = num && v <= 65535 ? v : 1u << 20;
			break;
		case 'm':
			mport = num && v <= 65535 ? v : 1u << 20;
			break;
		case 'c':
			credits = num ? v : 0;
			break;
		case 'w':
			workers = num ? v : 1u << 20;
			break;
		case 'R':
			root_squash = false;
			break;
		case 's':
			stats_file = optarg;
			break;
		case 'r':
			do_register = true;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'V':
			printf("rpcrdma-nfs3d (rpcrdma) %s\n", rpcrdma_version());
			return 0;
		default:
			usage(stderr, 2);
		}
	}
	if (!dir || optind != argc || port > 65535 || mport > 65535 || credits < 1 ||
	    credits > 1024 || workers > 64)
		usage(stderr, 2);
	nfs3d_creds_init(root_squash);
	/* a relative --stats-file names a file from here, not from the export */
	static char stats_abs[PATH_MAX];
	if (stats_file && stats_file[0] != '/' && getcwd(stats_abs, sizeof(stats_abs)) &&
	    strlen(stats_abs) + strlen(stats_file) + 2 <= sizeof(stats_abs)) {
		strcat(stats_abs, "/");
		strcat(stats_abs, stats_file);
		stats_file = stats_abs;
	}
	int rc = setup_export(dir);
	if (rc != 0) {
		fprintf(stderr, "rpcrdma-nfs3d: export %s: %s\n", dir, strerror(-rc));
		return 1;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct rpcrdma_svc_opts o;
	memset(&o, 0, sizeof(o));
	o.comp_mask = RPCRDMA_SVC_OPT_CREDITS | RPCRDMA_SVC_OPT_INLINE | RPCRDMA_SVC_OPT_WORKERS;
	o.credits = (uint32_t)credits;
	/* the Linux client's inline thresholds (RFC 8797: 4 KiB each way) */
	o.inline_send = o.inline_recv = 4096;
	o.workers = (uint32_t)workers;
	if (do_register) {
		o.comp_mask |= RPCRDMA_SVC_OPT_RPCBIND;
		o.rpcbind = 1;
	}
	struct rpcrdma_svc *svc = NULL;
	uint16_t mount_port = 0;
	rc = port ? rpcrdma_svc_create(bind_addr, (uint16_t)port, &o, &svc)
		  : rpcrdma_svc_create_any(bind_addr, &o, &svc);
	if (rc == 0)
		rc = rpcrdma_svc_register(svc, NFS_PROGRAM, NFS_V3, nfs_dispatch, NULL);
	if (rc == 0)
		rc = nfs3d_mount_start(bind_addr, (uint16_t)mport, do_register, &mount_port);
	if (rc == 0)
		rc = rpcrdma_svc_start(svc);
	if (rc != 0) {
		fprintf(stderr, "rpcrdma-nfs3d: start: %s\n", rpcrdma_strerror(rc));
		nfs3d_mount_stop();
		rpcrdma_svc_destroy(svc);
		return 1;
	}
	printf("ready nfs=%u mount=%u\n", rpcrdma_svc_port(svc), mount_port);
	fflush(stdout);
	while (!stop_flag) {
		nfs3d_mount_poll(200);
		if (stats_flag) {
			stats_flag = 0;
			save_stats(svc, stats_file);
		}
	}
	rc = rpcrdma_svc_stop(svc, 3000);
	nfs3d_mount_stop();
	print_stats(svc, stderr);
	save_stats(svc, stats_file);
	rpcrdma_svc_destroy(svc);
	return rc == 0 || rc == -ETIMEDOUT ? 0 : 1;
}
