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

#include "daemon.h" /* the startup shared with rpcrdma-nfs41d */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nfs3d_export nfs3d_exp;

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
	nfsd_caller_of(req, &c.who);
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

static void idle(void)
{
	nfs3d_mount_poll(200);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {NFSD_LONGOPTS,
						 {"mount-port", required_argument, NULL, 'm'},
						 {"register", no_argument, NULL, 'r'},
						 {NULL, 0, NULL, 0}};
	struct nfsd_main d = {
	    .name = "rpcrdma-nfs3d", .usage = usage, .print_stats = print_stats, .workers = 4};
	unsigned long mport = 20048;
	bool do_register = false;
	int opt;
	nfsd_defaults(&d);
	while ((opt = getopt_long(argc, argv, NFSD_SHORTOPTS "m:r", longopts, NULL)) != -1) {
		if (nfsd_option(&d, opt))
			continue;
		switch (opt) {
		case 'm':
			mport = nfsd_num(optarg);
			break;
		case 'r':
			do_register = true;
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (!nfsd_args_ok(&d, argc) || mport > 65535)
		usage(stderr, 2);
	if (nfsd_prepare(&d) != 0)
		return 1;
	nfs3d_mount_set_alias(d.dir);

	struct rpcrdma_svc_opts o;
	nfsd_svc_opts(&d, &o);
	if (do_register) {
		o.comp_mask |= RPCRDMA_SVC_OPT_RPCBIND;
		o.rpcbind = 1;
	}
	uint16_t mount_port = 0;
	int rc = nfsd_svc_create(&d, &o);
	if (rc == 0)
		rc = rpcrdma_svc_register(d.svc, NFS_PROGRAM, NFS_V3, nfs_dispatch, NULL);
	if (rc == 0)
		rc = nfs3d_mount_start(d.bind_addr, (uint16_t)mport, do_register, &mount_port);
	if (rc == 0)
		rc = rpcrdma_svc_start(d.svc);
	if (rc != 0) {
		nfs3d_mount_stop();
		return nfsd_start_failed(&d, rc);
	}
	printf("ready nfs=%u mount=%u\n", rpcrdma_svc_port(d.svc), mount_port);
	fflush(stdout);
	nfsd_run(&d, idle);
	rc = rpcrdma_svc_stop(d.svc, 3000);
	nfs3d_mount_stop();
	return nfsd_exit(&d, rc);
}
