/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma-nfs41d: export one directory over NFSv4.1 (RFC 8881) on
 * RPC-over-RDMA (RFC 8166, RFC 8267), with NFSv4.1 callbacks as reverse
 * calls on the client's own connection (RFC 8167):
 *
 *   rpcrdma-nfs41d --export DIR [--port P] [--bind ADDR] [--credits N]
 *                  [--workers N] [--no-root-squash] [--stats-file FILE]
 *                  [--cb-wait MS]
 *
 * Prints "ready nfs=P" once it listens; SIGINT or SIGTERM stops it (the
 * counters of both directions go to stderr, and to FILE; SIGUSR1 writes
 * them to FILE while it runs). Each COMPOUND acts on the export with the
 * caller's AUTH_SYS identity, root squashed to nobody unless
 * --no-root-squash (examples/nfs3d/creds.c).
 *
 * Built like a user's program: only <rpcrdma.h>, -lrpcrdma and rpcgen's
 * routines of nfs41.x. This file holds the COMPOUND loop (RFC 8881
 * §16.2.3): the arguments decode operation by operation, so that an
 * operation the server does not know ends the list where it stands
 * (NFS4ERR_OP_ILLEGAL / NFS4ERR_NOTSUPP) instead of failing the call.
 */
#define _GNU_SOURCE
#include "nfs41d.h"

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

/* ---- arguments ---- */

struct n41_args {
	COMPOUND4args a;
	uint32_t ndec; /* operations decoded into a.argarray (the last may be unknown) */
	bool bad;      /* the operation after them did not decode */
	bool too_many; /* more than NFS41D_MAXOPS operations */
};

/* Operations this server runs (nfs_argop4 arms declared in nfs41.x). */
static bool op_known(nfs_opnum4 op)
{
	switch (op) {
	case OP_ACCESS:
	case OP_CLOSE:
	case OP_COMMIT:
	case OP_CREATE:
	case OP_DELEGRETURN:
	case OP_GETATTR:
	case OP_GETFH:
	case OP_LINK:
	case OP_LOOKUP:
	case OP_LOOKUPP:
	case OP_OPEN:
	case OP_OPEN_DOWNGRADE:
	case OP_PUTFH:
	case OP_PUTROOTFH:
	case OP_READ:
	case OP_READDIR:
	case OP_READLINK:
	case OP_REMOVE:
	case OP_RENAME:
	case OP_RESTOREFH:
	case OP_SAVEFH:
	case OP_SECINFO:
	case OP_SETATTR:
	case OP_WRITE:
	case OP_BIND_CONN_TO_SESSION:
	case OP_EXCHANGE_ID:
	case OP_CREATE_SESSION:
	case OP_DESTROY_SESSION:
	case OP_FREE_STATEID:
	case OP_SECINFO_NO_NAME:
	case OP_SEQUENCE:
	case OP_TEST_STATEID:
	case OP_DESTROY_CLIENTID:
	case OP_RECLAIM_COMPLETE:
		return true;
	default:
		return false;
	}
}

/* COMPOUND4args one operation at a time (see the top of the file). */
static bool_t xdr_n41_args(XDR *x, struct n41_args *p)
{
	COMPOUND4args *a = &p->a;
	uint32_t n;

	if (x->x_op == XDR_FREE) {
		for (uint32_t i = 0; i < p->ndec; i++)
			xdr_free((xdrproc_t)xdr_nfs_argop4, (char *)&a->argarray.argarray_val[i]);
		free(a->argarray.argarray_val);
		a->argarray.argarray_val = NULL;
		p->ndec = 0;
		return xdr_utf8str_cs(x, &a->tag);
	}
	if (x->x_op != XDR_DECODE)
		return FALSE;
	/* the tag is echoed, never read: bounded like an opaque limit */
	if (!xdr_bytes(x, &a->tag.utf8string_val, &a->tag.utf8string_len, NFS4_OPAQUE_LIMIT) ||
	    !xdr_u_int(x, &a->minorversion) || !xdr_u_int(x, &n))
		return FALSE;
	if (n > NFS41D_MAXOPS) {
		p->too_many = true;
		return TRUE;
	}
	a->argarray.argarray_val = calloc(n ? n : 1, sizeof(nfs_argop4));
	if (!a->argarray.argarray_val)
		return FALSE;
	a->argarray.argarray_len = n;
	for (uint32_t i = 0; i < n; i++) {
		if (!xdr_nfs_argop4(x, &a->argarray.argarray_val[i])) {
			xdr_free((xdrproc_t)xdr_nfs_argop4, (char *)&a->argarray.argarray_val[i]);
			p->bad = true;
			break;
		}
		p->ndec = i + 1;
		if (!op_known(a->argarray.argarray_val[i].argop))
			break;
	}
	return TRUE;
}

/* ---- helpers shared by the operation files ---- */

bool n41_keep(struct n41_compound *c, void *p)
{
	if (!p)
		return false;
	if (c->nkeep == c->capkeep) {
		uint32_t cap = c->capkeep ? 2 * c->capkeep : 16;
		void **k = realloc(c->keep, cap * sizeof(*k));
		if (!k) {
			free(p);
			return false;
		}
		c->keep = k;
		c->capkeep = cap;
	}
	c->keep[c->nkeep++] = p;
	return true;
}

void *n41_alloc(struct n41_compound *c, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	return n41_keep(c, p) ? p : NULL;
}

nfsstat4 n41_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return NFS4_OK;
	case EPERM:
		return NFS4ERR_PERM;
	case ENOENT:
		return NFS4ERR_NOENT;
	case ENXIO:
	case ENODEV:
		return NFS4ERR_NXIO;
	case EACCES:
		return NFS4ERR_ACCESS;
	case EEXIST:
		return NFS4ERR_EXIST;
	case EXDEV:
		return NFS4ERR_XDEV;
	case ENOTDIR:
		return NFS4ERR_NOTDIR;
	case EISDIR:
		return NFS4ERR_ISDIR;
	case EINVAL:
		return NFS4ERR_INVAL;
	case EFBIG:
		return NFS4ERR_FBIG;
	case ENOSPC:
		return NFS4ERR_NOSPC;
	case EROFS:
		return NFS4ERR_ROFS;
	case EMLINK:
		return NFS4ERR_MLINK;
	case ENAMETOOLONG:
		return NFS4ERR_NAMETOOLONG;
	case ENOTEMPTY:
		return NFS4ERR_NOTEMPTY;
	case EDQUOT:
		return NFS4ERR_DQUOT;
	case ESTALE:
		return NFS4ERR_STALE;
	case ELOOP:
		return NFS4ERR_SYMLINK;
	default:
		return NFS4ERR_IO;
	}
}

/* ---- the COMPOUND loop ---- */

/* Operations allowed without a SEQUENCE first (§2.10.6.1.1... and each
 * operation's own section: they create or destroy what SEQUENCE needs). */
static bool sessionless(nfs_opnum4 op)
{
	return op == OP_EXCHANGE_ID || op == OP_CREATE_SESSION || op == OP_DESTROY_SESSION ||
	       op == OP_DESTROY_CLIENTID || op == OP_BIND_CONN_TO_SESSION || op == OP_SEQUENCE;
}

/* The operations on state and sessions; false: not one of them. */
static bool session_op(struct n41_compound *c, nfs_argop4 *a, nfs_resop4 *r)
{
	switch (a->argop) {
	case OP_SEQUENCE:
		n41_sequence(c, &a->nfs_argop4_u.opsequence, &r->nfs_resop4_u.opsequence);
		return true;
	case OP_EXCHANGE_ID:
		n41_exchange_id(c, &a->nfs_argop4_u.opexchange_id, &r->nfs_resop4_u.opexchange_id);
		return true;
	case OP_CREATE_SESSION:
		n41_create_session(c, &a->nfs_argop4_u.opcreate_session,
				   &r->nfs_resop4_u.opcreate_session);
		return true;
	case OP_DESTROY_SESSION:
		r->nfs_resop4_u.opdestroy_session =
		    n41_destroy_session(c, &a->nfs_argop4_u.opdestroy_session);
		return true;
	case OP_DESTROY_CLIENTID:
		r->nfs_resop4_u.opdestroy_clientid =
		    n41_destroy_clientid(c, &a->nfs_argop4_u.opdestroy_clientid);
		return true;
	case OP_BIND_CONN_TO_SESSION:
		n41_bind_conn(c, &a->nfs_argop4_u.opbind_conn_to_session,
			      &r->nfs_resop4_u.opbind_conn_to_session);
		return true;
	case OP_RECLAIM_COMPLETE:
		/* No grace period: nothing to reclaim, nothing to wait for. */
		r->nfs_resop4_u.opreclaim_complete = NFS4_OK;
		return true;
	case OP_DELEGRETURN:
		r->nfs_resop4_u.opdelegreturn =
		    n41_delegreturn(c, &a->nfs_argop4_u.opdelegreturn.deleg_stateid);
		return true;
	case OP_FREE_STATEID:
		r->nfs_resop4_u.opfree_stateid =
		    n41_free_stateid(c, &a->nfs_argop4_u.opfree_stateid.fsa_stateid);
		return true;
	case OP_TEST_STATEID: {
		TEST_STATEID4args *ta = &a->nfs_argop4_u.optest_stateid;
		TEST_STATEID4res *tr = &r->nfs_resop4_u.optest_stateid;
		uint32_t n = ta->ts_stateids.ts_stateids_len;
		nfsstat4 *codes = n41_alloc(c, (size_t)n * sizeof(*codes));
		if (!codes) {
			tr->tsr_status = NFS4ERR_SERVERFAULT;
			return true;
		}
		for (uint32_t i = 0; i < n; i++)
			codes[i] = n41_test_stateid(c, &ta->ts_stateids.ts_stateids_val[i]);
		tr->tsr_status = NFS4_OK;
		tr->TEST_STATEID4res_u.tsr_resok4.tsr_status_codes.tsr_status_codes_len = n;
		tr->TEST_STATEID4res_u.tsr_resok4.tsr_status_codes.tsr_status_codes_val = codes;
		return true;
	}
	default:
		return false;
	}
}

/* Run the decoded operations into @res; returns the COMPOUND status. */
static nfsstat4 run_ops(struct n41_compound *c, struct n41_args *p, COMPOUND4res *res)
{
	uint32_t n = p->ndec + (p->bad ? 1u : 0u);
	nfs_resop4 *out = n41_alloc(c, (size_t)n * sizeof(*out));
	nfsstat4 st = NFS4_OK;

	if (!out)
		return NFS4ERR_SERVERFAULT;
	res->resarray.resarray_val = out;
	for (uint32_t i = 0; i < n; i++) {
		nfs_resop4 *r = &out[i];
		res->resarray.resarray_len = i + 1;
		if (i == p->ndec) { /* the operation that did not decode */
			r->resop = OP_ILLEGAL;
			r->nfs_resop4_u.opillegal = NFS4ERR_BADXDR;
			return NFS4ERR_BADXDR;
		}
		nfs_argop4 *a = &p->a.argarray.argarray_val[i];
		r->resop = a->argop;
		if (!op_known(a->argop)) {
			/* §15.2: a number outside the operations is ILLEGAL;
			 * one of NFSv4.1's this server does not run is NOTSUPP */
			bool legal = a->argop >= OP_ACCESS && a->argop <= OP_RECLAIM_COMPLETE;
			if (!legal)
				r->resop = OP_ILLEGAL;
			st = legal ? NFS4ERR_NOTSUPP : NFS4ERR_OP_ILLEGAL;
			r->nfs_resop4_u.opnotsupp = st;
			return st;
		}
		if (i == 0 && !sessionless(a->argop))
			st = NFS4ERR_OP_NOT_IN_SESSION;
		else if (i > 0 && a->argop == OP_SEQUENCE)
			st = NFS4ERR_SEQUENCE_POS;
		if (st != NFS4_OK) {
			/* every result starts with its status */
			r->nfs_resop4_u.opillegal = st;
			return st;
		}
		if (!session_op(c, a, r) && !n41_fs_op(c, a, r))
			r->nfs_resop4_u.opillegal = NFS4ERR_SERVERFAULT;
		st = n41_res_status(r);
		if (st != NFS4_OK)
			return st;
	}
	return NFS4_OK;
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

static void compound(struct rpcrdma_svc_req *req)
{
	struct n41_args *p = calloc(1, sizeof(*p));
	struct n41_compound *c = calloc(1, sizeof(*c));
	COMPOUND4res res;

	if (!p || !c) {
		free(p);
		free(c);
		rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
		return;
	}
	if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_n41_args, p) != 0) {
		rpcrdma_svc_freeargs(req, (xdrproc_t)xdr_n41_args, p);
		free(p);
		free(c);
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	c->req = req;
	caller_of(req, &c->caller);
	nfs3d_creds_map(&c->caller);
	memset(&res, 0, sizeof(res));
	res.tag = p->a.tag;
	if (p->too_many)
		res.status = NFS4ERR_RESOURCE;
	else if (p->a.minorversion != 1)
		res.status = NFS4ERR_MINOR_VERS_MISMATCH;
	else {
		nfs3d_creds_enter(&c->caller);
		res.status = run_ops(c, p, &res);
		nfs3d_creds_leave();
	}
	/* the reply goes out before the slot is released (a retransmission
	 * of it on the slot then finds the slot busy, not a new sequence) */
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_COMPOUND4res, &res);
	n41_compound_done(c);
	for (uint32_t i = 0; i < c->nkeep; i++)
		free(c->keep[i]);
	free(c->keep);
	free(c);
	xdr_free((xdrproc_t)xdr_n41_args, (char *)p);
	free(p);
}

/* NULL's empty arguments and results */
static bool_t xdr_nothing(XDR *xdrs, void *p)
{
	(void)xdrs;
	(void)p;
	return TRUE;
}

static void nfs_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	if (proc == NFSPROC4_NULL)
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_nothing, NULL);
	else if (proc == NFSPROC4_COMPOUND)
		compound(req);
	else
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
}

/* ---- startup ---- */

static void usage(FILE *out, int status)
{
	fprintf(out, "usage: rpcrdma-nfs41d --export DIR [--port P] [--bind ADDR] [--credits N] "
		     "[--workers N] [--no-root-squash] [--stats-file FILE] [--cb-wait MS]\n"
		     "       rpcrdma-nfs41d -h | --help | --version\n");
	exit(status);
}

static void print_stats(struct rpcrdma_svc *svc, FILE *out)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_bc_stats bc;
	if (rpcrdma_svc_stats(svc, &st) != 0)
		return;
	fprintf(out,
		"stats calls=%llu replies=%llu read_chunks=%llu read_bytes=%llu "
		"write_chunks=%llu write_bytes=%llu reply_chunks=%llu reply_bytes=%llu "
		"rpc_errors=%llu conn_errors=%llu\n",
		(unsigned long long)st.calls, (unsigned long long)st.replies,
		(unsigned long long)st.read_chunks, (unsigned long long)st.read_bytes,
		(unsigned long long)st.write_chunks, (unsigned long long)st.write_bytes,
		(unsigned long long)st.reply_chunks, (unsigned long long)st.reply_bytes,
		(unsigned long long)st.rpc_errors, (unsigned long long)st.conn_errors);
	struct n41_counters n;
	n41_counters(&n);
	fprintf(out,
		"nfs41 sessions=%llu cb_null_ok=%llu cb_null_fail=%llu delegations=%llu "
		"recalls=%llu recalls_ok=%llu recalls_fail=%llu delegreturns=%llu open_delay=%llu "
		"binds=%llu recall_delays=%llu\n",
		(unsigned long long)n.sessions, (unsigned long long)n.cb_null_ok,
		(unsigned long long)n.cb_null_fail, (unsigned long long)n.delegations,
		(unsigned long long)n.recalls, (unsigned long long)n.recalls_ok,
		(unsigned long long)n.recalls_fail, (unsigned long long)n.delegreturns,
		(unsigned long long)n.open_delay, (unsigned long long)n.binds,
		(unsigned long long)n.recall_delays);
	if (rpcrdma_svc_bc_stats(svc, &bc) == 0)
		fprintf(out,
			"bc_stats calls=%llu calls_sent=%llu replies=%llu retransmits=%llu "
			"timeouts=%llu gate_refusals=%llu unmatched=%llu\n",
			(unsigned long long)bc.calls, (unsigned long long)bc.calls_sent,
			(unsigned long long)bc.replies, (unsigned long long)bc.retransmits,
			(unsigned long long)bc.timeouts, (unsigned long long)bc.gate_refusals,
			(unsigned long long)bc.unmatched);
}

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
	if (chdir(nfs3d_exp.root) != 0)
		return -errno;
	/* §18.32.3: a write verifier that changes when the server restarts */
	clock_gettime(CLOCK_REALTIME, &now);
	uint32_t v0 = (uint32_t)now.tv_sec, v1 = (uint32_t)now.tv_nsec ^ ((uint32_t)getpid() << 20);
	memcpy(nfs3d_exp.write_verf, &v0, 4);
	memcpy(nfs3d_exp.write_verf + 4, &v1, 4);
	nfs3d_fh_init();
	return 0;
}

static const struct option longopts[] = {{"export", required_argument, NULL, 'e'},
					 {"port", required_argument, NULL, 'p'},
					 {"bind", required_argument, NULL, 'b'},
					 {"credits", required_argument, NULL, 'c'},
					 {"workers", required_argument, NULL, 'w'},
					 {"no-root-squash", no_argument, NULL, 'R'},
					 {"stats-file", required_argument, NULL, 's'},
					 {"help", no_argument, NULL, 'h'},
					 {"version", no_argument, NULL, 'V'},
					 {"cb-wait", required_argument, NULL, 'W'},
					 {NULL, 0, NULL, 0}};

int main(int argc, char **argv)
{
	const char *dir = NULL, *bind_addr = NULL, *stats_file = NULL;
	bool root_squash = true;
	unsigned long port = RPCRDMA_DEFAULT_PORT, credits = 64, workers = 8, cb_wait = 5000;
	int opt;
	while ((opt = getopt_long(argc, argv, "e:p:b:c:w:h", longopts, NULL)) != -1) {
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
		case 'W':
			cb_wait = num && v >= 100 && v <= 600000 ? v : 0;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'V':
			printf("rpcrdma-nfs41d (rpcrdma) %s\n", rpcrdma_version());
			return 0;
		default:
			usage(stderr, 2);
		}
	}
	/* OPEN may wait for a delegation's return on a worker: at least 2 */
	if (!dir || optind != argc || port > 65535 || credits < 1 || credits > 1024 ||
	    workers < 2 || workers > 64 || cb_wait == 0)
		usage(stderr, 2);
	nfs3d_creds_init(root_squash);
	static char stats_abs[PATH_MAX];
	if (stats_file && stats_file[0] != '/' && getcwd(stats_abs, sizeof(stats_abs)) &&
	    strlen(stats_abs) + strlen(stats_file) + 2 <= sizeof(stats_abs)) {
		strcat(stats_abs, "/");
		strcat(stats_abs, stats_file);
		stats_file = stats_abs;
	}
	int rc = setup_export(dir);
	if (rc != 0) {
		fprintf(stderr, "rpcrdma-nfs41d: export %s: %s\n", dir, strerror(-rc));
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
	o.inline_send = o.inline_recv = 4096; /* the Linux client's (RFC 8797) */
	o.workers = (uint32_t)workers;
	struct rpcrdma_bc_opts bo;
	memset(&bo, 0, sizeof(bo));
	/* A callback waits at most --cb-wait ms (5 s) for its answer, as long
	 * for the client to reconnect and bind the back channel again */
	bo.comp_mask = RPCRDMA_BC_OPT_TIMEOUT | RPCRDMA_BC_OPT_CONN_WAIT;
	bo.timeout_ms = (uint32_t)cb_wait;
	bo.conn_wait_ms = (uint32_t)cb_wait;
	struct rpcrdma_svc *svc = NULL;
	rc = port ? rpcrdma_svc_create(bind_addr, (uint16_t)port, &o, &svc)
		  : rpcrdma_svc_create_any(bind_addr, &o, &svc);
	if (rc == 0)
		rc = rpcrdma_svc_register(svc, NFS4_PROGRAM, NFS_V4, nfs_dispatch, NULL);
	if (rc == 0)
		rc = rpcrdma_svc_bc_init(svc, &bo, n41_bc_event, NULL);
	if (rc == 0) {
		n41_state_init(svc);
		rc = rpcrdma_svc_start(svc);
	}
	if (rc != 0) {
		fprintf(stderr, "rpcrdma-nfs41d: start: %s\n", rpcrdma_strerror(rc));
		rpcrdma_svc_destroy(svc);
		return 1;
	}
	printf("ready nfs=%u\n", rpcrdma_svc_port(svc));
	fflush(stdout);
	while (!stop_flag) {
		usleep(100 * 1000);
		if (stats_flag) {
			stats_flag = 0;
			save_stats(svc, stats_file);
		}
	}
	rc = rpcrdma_svc_stop(svc, 3000);
	print_stats(svc, stderr);
	save_stats(svc, stats_file);
	rpcrdma_svc_destroy(svc);
	return rc == 0 || rc == -ETIMEDOUT ? 0 : 1;
}
