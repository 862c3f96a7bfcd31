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

#include "daemon.h" /* the startup shared with rpcrdma-nfs3d (examples/nfs3d) */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nfs3d_export nfs3d_exp;

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
	nfsd_caller_of(req, &c->caller);
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

static void idle(void)
{
	usleep(100 * 1000);
}

static const struct option longopts[] = {
    NFSD_LONGOPTS, {"cb-wait", required_argument, NULL, 'W'}, {NULL, 0, NULL, 0}};

int main(int argc, char **argv)
{
	struct nfsd_main d = {
	    .name = "rpcrdma-nfs41d", .usage = usage, .print_stats = print_stats, .workers = 8};
	unsigned long cb_wait = 5000;
	int opt;
	nfsd_defaults(&d);
	while ((opt = getopt_long(argc, argv, NFSD_SHORTOPTS, longopts, NULL)) != -1) {
		if (nfsd_option(&d, opt))
			continue;
		if (opt == 'W') {
			char *end = NULL;
			unsigned long v = strtoul(optarg, &end, 10);
			cb_wait = *optarg && !*end && v >= 100 && v <= 600000 ? v : 0;
			continue;
		}
		usage(stderr, 2);
	}
	/* OPEN may wait for a delegation's return on a worker: at least 2 */
	if (!nfsd_args_ok(&d, argc) || d.workers < 2 || cb_wait == 0)
		usage(stderr, 2);
	if (nfsd_prepare(&d) != 0)
		return 1;

	struct rpcrdma_svc_opts o;
	nfsd_svc_opts(&d, &o);
	struct rpcrdma_bc_opts bo;
	memset(&bo, 0, sizeof(bo));
	/* A callback waits at most --cb-wait ms (5 s) for its answer, as long
	 * for the client to reconnect and bind the back channel again */
	bo.comp_mask = RPCRDMA_BC_OPT_TIMEOUT | RPCRDMA_BC_OPT_CONN_WAIT;
	bo.timeout_ms = (uint32_t)cb_wait;
	bo.conn_wait_ms = (uint32_t)cb_wait;
	int rc = nfsd_svc_create(&d, &o);
	if (rc == 0)
		rc = rpcrdma_svc_register(d.svc, NFS4_PROGRAM, NFS_V4, nfs_dispatch, NULL);
	if (rc == 0)
		rc = rpcrdma_svc_bc_init(d.svc, &bo, n41_bc_event, NULL);
	if (rc == 0) {
		n41_state_init(d.svc);
		rc = rpcrdma_svc_start(d.svc);
	}
	if (rc != 0)
		return nfsd_start_failed(&d, rc);
	printf("ready nfs=%u\n", rpcrdma_svc_port(d.svc));
	fflush(stdout);
	nfsd_run(&d, idle);
	return nfsd_exit(&d, rpcrdma_svc_stop(d.svc, 3000));
}
