// SPDX-License-Identifier: MIT
/*
 * rpcrdma-nfs41d (examples/nfs41d) on this host, driven by two NFSv4.1
 * clients of our own (rpcrdma_clnt_create_bc, XDR from nfs41.x) over
 * loopback, no guest (label e2e). Asserts, against RFC 8881:
 *   - EXCHANGE_ID / CREATE_SESSION with CONN_BACK_CHAN: the server's CB_NULL
 *     probe reaches each client's backchannel (RFC 8167 reverse call) and
 *     SEQUENCE then reports no SEQ4_STATUS_CB_PATH_DOWN (§18.46.3);
 *   - OPEN (create, share BOTH) + WRITE of 300000 bytes by Read chunk +
 *     CLOSE: the export holds exactly those bytes, and the client's
 *     counters show them in one Read chunk, not inline (WRITE4args.data is
 *     rpcrdma_bulk in xdr/nfs41.x);
 *   - LOOKUP + GETATTR (type, size, fileid, mode, owner), CREATE of a
 *     directory and a symlink, READLINK, LINK (numlinks 2 on the host),
 *     RENAME, READDIR (the names), SETATTR size, REMOVE: the host sees each;
 *   - client A's OPEN for reading gets a read delegation; READ by Write
 *     chunk gives the bytes back (one Write chunk, FILE_SIZE bytes written
 *     into it); client B's OPEN for writing makes the
 *     server send A one CB_COMPOUND { CB_SEQUENCE (A's session, slot 0,
 *     sequence 1), CB_RECALL (the delegation's stateid, the file's handle) },
 *     and B's OPEN completes only after A's DELEGRETURN;
 *   - a recall whose CB_SEQUENCE A answers NFS4ERR_DELAY (Linux does while
 *     it binds its back channel to a new connection): sent again, taken,
 *     the delegation returned, not revoked;
 *   - a recall on the wire when A's connection is lost: after the
 *     reconnect and BIND_CONN_TO_SESSION, a CB_NULL probe and the same
 *     CB_COMPOUND again with the same XID; B's OPEN completes after A's
 *     DELEGRETURN;
 *   - a recall A refuses (NFS4ERR_SERVERFAULT): the delegation is revoked,
 *     B's OPEN goes on within the server's wait, A's next SEQUENCE carries
 *     SEQ4_STATUS_RECALLABLE_STATE_REVOKED, its DELEGRETURN is
 *     NFS4ERR_BAD_STATEID;
 *   - an unknown operation ends the COMPOUND with NFS4ERR_OP_ILLEGAL, a
 *     SEQUENCE of an unknown session is NFS4ERR_BADSESSION;
 *   - DESTROY_SESSION, DESTROY_CLIENTID.
 * usage: test_nfs41d_local PATH-TO-rpcrdma-nfs41d
 *
 * The interop test (nfs41d-test.sh) uses the same program as its second
 * client, whose OPEN for writing recalls the Linux client's delegation:
 *   test_nfs41d_local --append PORT NAME TEXT
 * opens NAME (in the export's root) for writing, appends TEXT, closes,
 * and exits 0 when the first OPEN was NFS4_OK (no NFS4ERR_DELAY: the
 * server had the delegation back within its wait) and the WRITE complete.
 * With --append-retry instead, an OPEN answered NFS4ERR_DELAY is sent
 * again (every 0.5 s, 90 s at most): the connection-cut part of the
 * interop test, where the recall waits for the client to reconnect.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/check.h"
#include "nfs41.h"
#include "api/api_int.h" /* rpcrdma_clnt_test_disconnect */
#include "rpcrdma/backchannel.h"
#include "rpcrdma/client.h"
#include "util/be.h"

#define CB_PROG   0x40000000u
#define FILE_SIZE 300000u

struct cli {
	const char *name;
	struct rpcrdma_clnt *cl;
	clientid4 clientid;
	uint32_t cs_seq;
	sessionid4 sid;
	uint32_t seq;
	uint32_t flags;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned cb_null, cb_compound, cb_recall, cb_bad;
	uint32_t cb_seq;
	stateid4 deleg;
	nfs_fh4 deleg_fh;
	bool refuse; /* answer CB_RECALL with NFS4ERR_SERVERFAULT */
	/* answer the next `busy` CB_SEQUENCEs NFS4ERR_DELAY (as Linux does
	 * while it binds its back channel to a new connection) */
	unsigned busy, cb_delayed;
	/* hold the next CB_COMPOUND unanswered (main drops the connection) */
	bool hold;
	struct rpcrdma_bc_req *held;
	uint32_t xids[8]; /* of the CB_COMPOUNDs received */
	unsigned nxids;
};

static const char *server_bin;
static char base[256], exp_dir[300];
static pid_t server_pid;
static uint16_t port;

static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

/* ---- the callback side ---- */

static void cb_compound(struct rpcrdma_bc_req *req, struct cli *c)
{
	pthread_mutex_lock(&c->mu);
	if (c->nxids < 8)
		c->xids[c->nxids++] = rpcrdma_bc_req_xid(req);
	if (c->hold) {
		c->hold = false;
		c->held = req;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		return;
	}
	pthread_mutex_unlock(&c->mu);
	CB_COMPOUND4args a;
	CB_COMPOUND4res r;
	nfs_cb_resop4 res[4];
	nfsstat4 st = NFS4_OK;
	u_int n = 0;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(res));
	if (rpcrdma_bc_getargs(req, (xdrproc_t)xdr_CB_COMPOUND4args, &a) != 0) {
		rpcrdma_bc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	pthread_mutex_lock(&c->mu);
	c->cb_compound++;
	for (u_int i = 0; st == NFS4_OK && i < a.argarray.argarray_len && i < 4; i++) {
		nfs_cb_argop4 *op = &a.argarray.argarray_val[i];
		res[n].resop = op->argop;
		if (op->argop == OP_CB_SEQUENCE && i == 0) {
			CB_SEQUENCE4args *s = &op->nfs_cb_argop4_u.opcbsequence;
			CB_SEQUENCE4resok *ok =
			    &res[n].nfs_cb_resop4_u.opcbsequence.CB_SEQUENCE4res_u.csr_resok4;
			if (memcmp(s->csa_sessionid, c->sid, sizeof(c->sid)) != 0 ||
			    s->csa_slotid != 0 || s->csa_sequenceid != c->cb_seq + 1)
				st = NFS4ERR_BADSESSION;
			else if (c->busy > 0) {
				c->busy--;
				c->cb_delayed++;
				st = NFS4ERR_DELAY; /* the slot stays where it was */
			} else {
				c->cb_seq = s->csa_sequenceid;
				memcpy(ok->csr_sessionid, c->sid, sizeof(c->sid));
				ok->csr_sequenceid = s->csa_sequenceid;
			}
			res[n].nfs_cb_resop4_u.opcbsequence.csr_status = st;
		} else if (op->argop == OP_CB_RECALL && i == 1) {
			CB_RECALL4args *ra = &op->nfs_cb_argop4_u.opcbrecall;
			if (c->refuse)
				st = NFS4ERR_SERVERFAULT;
			else if (memcmp(ra->stateid.other, c->deleg.other, NFS4_OTHER_SIZE) != 0 ||
				 ra->fh.nfs_fh4_len != c->deleg_fh.nfs_fh4_len ||
				 memcmp(ra->fh.nfs_fh4_val, c->deleg_fh.nfs_fh4_val,
					ra->fh.nfs_fh4_len) != 0)
				st = NFS4ERR_BAD_STATEID;
			else
				c->cb_recall++;
			res[n].nfs_cb_resop4_u.opcbrecall = st;
		} else {
			res[n].resop = OP_CB_ILLEGAL;
			st = NFS4ERR_OP_ILLEGAL;
			res[n].nfs_cb_resop4_u.opcbillegal = st;
		}
		n++;
	}
	if (st != NFS4_OK && st != NFS4ERR_DELAY)
		c->cb_bad++;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	r.status = st;
	r.tag = a.tag;
	r.resarray.resarray_len = n;
	r.resarray.resarray_val = res;
	rpcrdma_bc_reply(req, (xdrproc_t)xdr_CB_COMPOUND4res, &r);
	xdr_free((xdrproc_t)xdr_CB_COMPOUND4args, (char *)&a);
}

static void cb_dispatch(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct cli *c = ctx;
	(void)args;
	if (proc == CB_NULL) {
		rpcrdma_bc_reply(req, (xdrproc_t)xdr_nothing, NULL);
		pthread_mutex_lock(&c->mu);
		c->cb_null++;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	} else if (proc == CB_COMPOUND) {
		cb_compound(req, c);
	} else {
		rpcrdma_bc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
	}
}

/* *@v read under the callback thread's lock. */
static unsigned count_of(struct cli *c, const unsigned *v)
{
	pthread_mutex_lock(&c->mu);
	unsigned n = *v;
	pthread_mutex_unlock(&c->mu);
	return n;
}

/* Wait until *@v reaches @want (up to 10 s). */
static bool wait_count(struct cli *c, unsigned *v, unsigned want)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&c->mu);
	while (*v < want && pthread_cond_timedwait(&c->cv, &c->mu, &dl) == 0)
		;
	bool ok = *v >= want;
	pthread_mutex_unlock(&c->mu);
	return ok;
}

/* ---- the fore channel ---- */

static void op_seq(struct cli *c, nfs_argop4 *op)
{
	op->argop = OP_SEQUENCE;
	memcpy(op->nfs_argop4_u.opsequence.sa_sessionid, c->sid, sizeof(c->sid));
	op->nfs_argop4_u.opsequence.sa_sequenceid = ++c->seq;
}

/* One COMPOUND; @res freed by the caller (xdr_free). Returns its status
 * (or -errno when the call failed). */
static int compound(struct cli *c, nfs_argop4 *ops, u_int n, COMPOUND4res *res,
		    const struct rpcrdma_call_opts *o)
{
	COMPOUND4args a = {.minorversion = 1, .argarray = {.argarray_len = n, .argarray_val = ops}};
	memset(res, 0, sizeof(*res));
	int rc = rpcrdma_clnt_call(c->cl, NFSPROC4_COMPOUND, (xdrproc_t)xdr_COMPOUND4args, &a,
				   (xdrproc_t)xdr_COMPOUND4res, res, o);
	if (rc)
		return rc;
	if (n && ops[0].argop == OP_SEQUENCE && res->resarray.resarray_len &&
	    res->resarray.resarray_val[0].nfs_resop4_u.opsequence.sr_status == NFS4_OK)
		c->flags = res->resarray.resarray_val[0]
			       .nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_status_flags;
	return (int)res->status;
}

static nfs_resop4 *R(COMPOUND4res *res, u_int i)
{
	static nfs_resop4 none;
	return i < res->resarray.resarray_len ? &res->resarray.resarray_val[i] : &none;
}

static void done(COMPOUND4res *res)
{
	xdr_free((xdrproc_t)xdr_COMPOUND4res, (char *)res);
}

static component4 comp(const char *s)
{
	component4 c = {.utf8string_len = (u_int)strlen(s), .utf8string_val = (char *)s};
	return c;
}

static int session(struct cli *c)
{
	nfs_argop4 op;
	COMPOUND4res res;
	char owner[64];
	callback_sec_parms4 sec = {.cb_secflavor = CB_AUTH_SYS};
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT | RPCRDMA_CLNT_OPT_AUTH,
				      .timeout_ms = 20000,
				      .auth_flavor = RPCRDMA_RPC_AUTH_SYS};
	if (rpcrdma_clnt_create_bc("127.0.0.1", port, NFS4_PROGRAM, NFS_V4, &o, NULL, &c->cl) ||
	    rpcrdma_clnt_bc_register(c->cl, CB_PROG, 1, cb_dispatch, c))
		return -1;
	memset(&op, 0, sizeof(op));
	snprintf(owner, sizeof(owner), "nfs41d-local-%s-%d", c->name, (int)getpid());
	op.argop = OP_EXCHANGE_ID;
	op.nfs_argop4_u.opexchange_id.eia_clientowner.co_ownerid.co_ownerid_len =
	    (u_int)strlen(owner);
	op.nfs_argop4_u.opexchange_id.eia_clientowner.co_ownerid.co_ownerid_val = owner;
	CHECK(compound(c, &op, 1, &res, NULL) == NFS4_OK);
	c->clientid =
	    R(&res, 0)->nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4.eir_clientid;
	c->cs_seq =
	    R(&res, 0)->nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4.eir_sequenceid;
	done(&res);
	memset(&op, 0, sizeof(op));
	op.argop = OP_CREATE_SESSION;
	CREATE_SESSION4args *cs = &op.nfs_argop4_u.opcreate_session;
	cs->csa_clientid = c->clientid;
	cs->csa_sequence = c->cs_seq;
	cs->csa_flags = CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
	cs->csa_fore_chan_attrs.ca_maxrequestsize = 1u << 20;
	cs->csa_fore_chan_attrs.ca_maxresponsesize = 1u << 20;
	cs->csa_fore_chan_attrs.ca_maxoperations = 16;
	cs->csa_fore_chan_attrs.ca_maxrequests = 8;
	cs->csa_back_chan_attrs.ca_maxrequestsize = 4096;
	cs->csa_back_chan_attrs.ca_maxresponsesize = 4096;
	cs->csa_back_chan_attrs.ca_maxoperations = 2;
	cs->csa_back_chan_attrs.ca_maxrequests = 1;
	cs->csa_cb_program = CB_PROG;
	sec.callback_sec_parms4_u.cbsp_sys_cred.machinename = (char *)"local";
	cs->csa_sec_parms.csa_sec_parms_len = 1;
	cs->csa_sec_parms.csa_sec_parms_val = &sec;
	CHECK(compound(c, &op, 1, &res, NULL) == NFS4_OK);
	CREATE_SESSION4resok *ok =
	    &R(&res, 0)->nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u.csr_resok4;
	memcpy(c->sid, ok->csr_sessionid, sizeof(c->sid));
	CHECK(ok->csr_flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN);
	CHECK(ok->csr_fore_chan_attrs.ca_maxrequests >= 1);
	done(&res);
	/* the probe: one CB_NULL on our connection */
	CHECK(wait_count(c, &c->cb_null, 1));
	/* RECLAIM_COMPLETE; SEQUENCE now says the back channel is up */
	nfs_argop4 ops[2];
	memset(ops, 0, sizeof(ops));
	op_seq(c, &ops[0]);
	ops[1].argop = OP_RECLAIM_COMPLETE;
	CHECK(compound(c, ops, 2, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK((c->flags & SEQ4_STATUS_CB_PATH_DOWN) == 0);
	return 0;
}

/* PUTROOTFH + LOOKUP @name... (NULL-terminated) into ops; returns count. */
static u_int walk(struct cli *c, nfs_argop4 *ops, const char *name)
{
	u_int n = 0;
	op_seq(c, &ops[n++]);
	ops[n++].argop = OP_PUTROOTFH;
	if (name) {
		ops[n].argop = OP_LOOKUP;
		ops[n++].nfs_argop4_u.oplookup.objname = comp(name);
	}
	return n;
}

struct opened {
	stateid4 sid;
	nfs_fh4 fh;
	open_delegation_type4 dt;
	stateid4 deleg;
};

/* Handles OPEN returned, copied: freed at the end (fh_free_all). */
static pthread_mutex_t fh_mu = PTHREAD_MUTEX_INITIALIZER;
static void *fh_kept[64];
static unsigned fh_nkept;

static char *fh_copy(const nfs_fh4 *fh)
{
	char *p = malloc(fh->nfs_fh4_len ? fh->nfs_fh4_len : 1);
	if (!p)
		abort();
	memcpy(p, fh->nfs_fh4_val, fh->nfs_fh4_len);
	pthread_mutex_lock(&fh_mu);
	if (fh_nkept < 64)
		fh_kept[fh_nkept++] = p;
	pthread_mutex_unlock(&fh_mu);
	return p;
}

static void fh_free_all(void)
{
	for (unsigned i = 0; i < fh_nkept; i++)
		free(fh_kept[i]);
	fh_nkept = 0;
}

static int do_open(struct cli *c, const char *name, uint32_t access, bool create, struct opened *o)
{
	nfs_argop4 ops[6];
	COMPOUND4res res;
	uint32_t mode_bits[2] = {0, 1u << (FATTR4_MODE - 32)};
	uint8_t mode_be[4];

	put_be32(mode_be, 0640);
	memset(ops, 0, sizeof(ops));
	u_int n = walk(c, ops, NULL);
	OPEN4args *oa = &ops[n].nfs_argop4_u.opopen;
	ops[n++].argop = OP_OPEN;
	oa->share_access = access;
	oa->owner.clientid = c->clientid;
	oa->owner.owner.owner_len = 4;
	oa->owner.owner.owner_val = (char *)"open";
	if (create) {
		oa->openhow.opentype = OPEN4_CREATE;
		oa->openhow.openflag4_u.how.mode = UNCHECKED4;
		fattr4 *fa = &oa->openhow.openflag4_u.how.createhow4_u.createattrs;
		fa->attrmask.bitmap4_len = 2;
		fa->attrmask.bitmap4_val = mode_bits;
		fa->attr_vals.attrlist4_len = 4;
		fa->attr_vals.attrlist4_val = (char *)mode_be;
	}
	oa->claim.claim = CLAIM_NULL;
	oa->claim.open_claim4_u.file = comp(name);
	ops[n++].argop = OP_GETFH;
	int st = compound(c, ops, n, &res, NULL);
	if (st == NFS4_OK) {
		OPEN4resok *ok = &R(&res, 2)->nfs_resop4_u.opopen.OPEN4res_u.resok4;
		o->sid = ok->stateid;
		o->dt = ok->delegation.delegation_type;
		if (o->dt == OPEN_DELEGATE_READ)
			o->deleg = ok->delegation.open_delegation4_u.read.stateid;
		nfs_fh4 *fh = &R(&res, 3)->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
		o->fh.nfs_fh4_len = fh->nfs_fh4_len;
		o->fh.nfs_fh4_val = fh_copy(fh);
	}
	done(&res);
	return st;
}

static int by_fh(struct cli *c, const nfs_fh4 *fh, nfs_argop4 *op, COMPOUND4res *res,
		 const struct rpcrdma_call_opts *o)
{
	nfs_argop4 ops[3];
	memset(ops, 0, 2 * sizeof(ops[0]));
	op_seq(c, &ops[0]);
	ops[1].argop = OP_PUTFH;
	ops[1].nfs_argop4_u.opputfh.object = *fh;
	ops[2] = *op;
	return compound(c, ops, 3, res, o);
}

static int simple_fh(struct cli *c, const nfs_fh4 *fh, nfs_argop4 *op)
{
	COMPOUND4res res;
	int st = by_fh(c, fh, op, &res, NULL);
	done(&res);
	return st;
}

static int do_close(struct cli *c, struct opened *o)
{
	nfs_argop4 op;
	memset(&op, 0, sizeof(op));
	op.argop = OP_CLOSE;
	op.nfs_argop4_u.opclose.open_stateid = o->sid;
	return simple_fh(c, &o->fh, &op);
}

static int delegreturn(struct cli *c, const nfs_fh4 *fh, const stateid4 *d)
{
	nfs_argop4 op;
	memset(&op, 0, sizeof(op));
	op.argop = OP_DELEGRETURN;
	op.nfs_argop4_u.opdelegreturn.deleg_stateid = *d;
	return simple_fh(c, fh, &op);
}

static char *host_path(const char *name)
{
	static char p[600];
	snprintf(p, sizeof(p), "%s/%s", exp_dir, name);
	return p;
}

/* ---- B's conflicting OPEN, on a thread ---- */

struct conflict {
	struct cli *b;
	int status;
	unsigned recalls_returned_before; /* A's DELEGRETURNs done when B's OPEN answered */
	struct opened o;
};
static unsigned delegreturns_done;
static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;

static void *conflicting_open(void *arg)
{
	struct conflict *k = arg;
	/* NFS4ERR_DELAY: the holder has not returned it yet; try again */
	for (int i = 0; i < 10; i++) {
		k->status = do_open(k->b, "data", OPEN4_SHARE_ACCESS_WRITE, false, &k->o);
		if (k->status != NFS4ERR_DELAY)
			break;
		usleep(200 * 1000);
	}
	pthread_mutex_lock(&order_mu);
	k->recalls_returned_before = delegreturns_done;
	pthread_mutex_unlock(&order_mu);
	return NULL;
}

/* ---- server ---- */

static int start_server(void)
{
	int pfd[2];
	if (pipe(pfd) != 0)
		return -1;
	server_pid = fork();
	if (server_pid == 0) {
		char errp[300];
		snprintf(errp, sizeof(errp), "%s/server.err", base);
		int fd = open(errp, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(pfd[1], 1);
		if (fd >= 0)
			dup2(fd, 2);
		close(pfd[0]);
		execl(server_bin, "rpcrdma-nfs41d", "--export", exp_dir, "--port", "0", "--bind",
		      "127.0.0.1", "--no-root-squash", (const char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	char line[128] = "";
	unsigned p = 0;
	bool ok = f && fgets(line, sizeof(line), f) && sscanf(line, "ready nfs=%u", &p) == 1;
	if (f)
		fclose(f);
	port = (uint16_t)p;
	return ok ? 0 : -1;
}

static bool wait_held(struct cli *c)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&c->mu);
	while (!c->held && pthread_cond_timedwait(&c->cv, &c->mu, &dl) == 0)
		;
	bool ok = c->held != NULL;
	pthread_mutex_unlock(&c->mu);
	return ok;
}

/* @a returns its delegation (counted under order_mu, which the conflicting
 * OPEN's thread reads), then @b's conflicting OPEN (thread @t) completes
 * after it and @b closes it. */
static void return_then_open_completes(struct cli *a, struct cli *b, struct conflict *k,
				       pthread_t t)
{
	pthread_mutex_lock(&order_mu);
	int drc = delegreturn(a, &a->deleg_fh, &a->deleg);
	delegreturns_done++;
	pthread_mutex_unlock(&order_mu);
	CHECK(drc == NFS4_OK);
	pthread_join(t, NULL);
	CHECK(k->status == NFS4_OK && k->recalls_returned_before == delegreturns_done);
	if (k->status == NFS4_OK)
		CHECK(do_close(b, &k->o) == NFS4_OK);
}

/*
 * The recall is on the wire when A's connection is lost (A holds it
 * unanswered, then drops the connection). A's next call reconnects;
 * BIND_CONN_TO_SESSION (RFC 8881 §18.34) binds the new connection to the
 * session's back channel; the server probes it (CB_NULL) and sends the
 * recall again with the same XID (RFC 8167 §5.4); A answers, returns the
 * delegation, and B's OPEN (retried on NFS4ERR_DELAY) completes.
 */
static void reconnect(struct cli *a, struct cli *b)
{
	struct opened r;
	nfs_argop4 ops[2];
	COMPOUND4res res;
	memset(&r, 0, sizeof(r));
	CHECK(do_open(a, "data", OPEN4_SHARE_ACCESS_READ, false, &r) == NFS4_OK);
	CHECK(r.dt == OPEN_DELEGATE_READ);
	CHECK(do_close(a, &r) == NFS4_OK);
	pthread_mutex_lock(&a->mu);
	a->deleg = r.deleg;
	a->deleg_fh = r.fh;
	a->hold = true;
	a->nxids = 0;
	unsigned nulls = a->cb_null, recalls = a->cb_recall;
	pthread_mutex_unlock(&a->mu);
	struct conflict k = {.b = b};
	pthread_t t;
	pthread_create(&t, NULL, conflicting_open, &k);
	CHECK(wait_held(a));
	CHECK(rpcrdma_clnt_test_disconnect(a->cl) == 0);
	/* the call's connection is gone: this answer goes nowhere */
	(void)rpcrdma_bc_reply(a->held, NULL, NULL);
	a->held = NULL;
	memset(ops, 0, sizeof(ops));
	ops[1].argop = OP_BIND_CONN_TO_SESSION;
	memcpy(ops[1].nfs_argop4_u.opbind_conn_to_session.bctsa_sessid, a->sid, sizeof(a->sid));
	ops[1].nfs_argop4_u.opbind_conn_to_session.bctsa_dir = CDFC4_BACK_OR_BOTH;
	/* BIND_CONN_TO_SESSION goes alone (§18.34.3) */
	CHECK(compound(a, &ops[1], 1, &res, NULL) == NFS4_OK);
	CHECK(R(&res, 0)
		  ->nfs_resop4_u.opbind_conn_to_session.BIND_CONN_TO_SESSION4res_u.bctsr_resok4
		  .bctsr_dir == CDFS4_BOTH);
	done(&res);
	CHECK(wait_count(a, &a->cb_null, nulls + 1));
	CHECK(wait_count(a, &a->cb_recall, recalls + 1));
	pthread_mutex_lock(&a->mu);
	CHECK(a->nxids == 2 && a->xids[0] == a->xids[1]);
	pthread_mutex_unlock(&a->mu);
	return_then_open_completes(a, b, &k, t);
	memset(ops, 0, sizeof(ops));
	op_seq(a, &ops[0]);
	CHECK(compound(a, ops, 1, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK((a->flags & SEQ4_STATUS_CB_PATH_DOWN) == 0);
}

/* A answers the recall's CB_SEQUENCE NFS4ERR_DELAY once: the server sends
 * the CB_COMPOUND again (same slot sequence), A takes it and returns the
 * delegation, B's OPEN completes; nothing is revoked. */
static void busy_once(struct cli *a, struct cli *b)
{
	struct opened r;
	nfs_argop4 op;
	COMPOUND4res res;
	memset(&r, 0, sizeof(r));
	CHECK(do_open(a, "data", OPEN4_SHARE_ACCESS_READ, false, &r) == NFS4_OK);
	CHECK(r.dt == OPEN_DELEGATE_READ);
	CHECK(do_close(a, &r) == NFS4_OK);
	pthread_mutex_lock(&a->mu);
	a->deleg = r.deleg;
	a->deleg_fh = r.fh;
	a->busy = 1;
	unsigned recalls = a->cb_recall, bad = a->cb_bad;
	pthread_mutex_unlock(&a->mu);
	struct conflict k = {.b = b};
	pthread_t t;
	pthread_create(&t, NULL, conflicting_open, &k);
	CHECK(wait_count(a, &a->cb_recall, recalls + 1));
	pthread_mutex_lock(&a->mu);
	CHECK(a->busy == 0 && a->cb_delayed == 1 && a->cb_bad == bad);
	pthread_mutex_unlock(&a->mu);
	return_then_open_completes(a, b, &k, t);
	memset(&op, 0, sizeof(op));
	op_seq(a, &op);
	CHECK(compound(a, &op, 1, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK((a->flags & SEQ4_STATUS_RECALLABLE_STATE_REVOKED) == 0);
}

static void namespace_ops(struct cli *a)
{
	nfs_argop4 ops[8];
	COMPOUND4res res;
	struct stat st;
	/* LOOKUP + GETATTR of the file written */
	memset(ops, 0, sizeof(ops));
	u_int n = walk(a, ops, "data");
	uint32_t want[2] = {(1u << FATTR4_TYPE) | (1u << FATTR4_SIZE) | (1u << FATTR4_FILEID),
			    (1u << (FATTR4_MODE - 32)) | (1u << (FATTR4_OWNER - 32))};
	ops[n].argop = OP_GETATTR;
	ops[n].nfs_argop4_u.opgetattr.attr_request.bitmap4_len = 2;
	ops[n++].nfs_argop4_u.opgetattr.attr_request.bitmap4_val = want;
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	CHECK(stat(host_path("data"), &st) == 0);
	{
		fattr4 *fa =
		    &R(&res, 3)->nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes;
		XDR x;
		uint32_t type = 0, mode = 0;
		uint64_t size = 0, fileid = 0;
		char owner[32], *op = owner;
		CHECK(fa->attrmask.bitmap4_len == 2 && fa->attrmask.bitmap4_val[0] == want[0] &&
		      fa->attrmask.bitmap4_val[1] == want[1]);
		xdrmem_create(&x, fa->attr_vals.attrlist4_val, fa->attr_vals.attrlist4_len,
			      XDR_DECODE);
		CHECK(xdr_u_int(&x, &type) && xdr_uint64_t(&x, &size) &&
		      xdr_uint64_t(&x, &fileid) && xdr_u_int(&x, &mode) &&
		      xdr_string(&x, &op, sizeof(owner)));
		CHECK(type == NF4REG && size == FILE_SIZE && fileid == st.st_ino && mode == 0640);
		char uid[16];
		snprintf(uid, sizeof(uid), "%u", (unsigned)st.st_uid);
		CHECK(strcmp(owner, uid) == 0);
		xdr_destroy(&x);
	}
	done(&res);
	/* CREATE dir "d", symlink "d/s" -> "../data", READLINK */
	memset(ops, 0, sizeof(ops));
	n = walk(a, ops, NULL);
	ops[n].argop = OP_CREATE;
	ops[n].nfs_argop4_u.opcreate.objtype.type = NF4DIR;
	ops[n++].nfs_argop4_u.opcreate.objname = comp("d");
	ops[n].argop = OP_CREATE;
	ops[n].nfs_argop4_u.opcreate.objtype.type = NF4LNK;
	ops[n].nfs_argop4_u.opcreate.objtype.createtype4_u.linkdata = comp("../data");
	ops[n++].nfs_argop4_u.opcreate.objname = comp("s");
	ops[n++].argop = OP_READLINK;
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	{
		linktext4 *l = &R(&res, 4)->nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link;
		CHECK(l->utf8string_len == 7 && memcmp(l->utf8string_val, "../data", 7) == 0);
	}
	done(&res);
	char lt[64] = "";
	CHECK(readlink(host_path("d/s"), lt, sizeof(lt)) == 7 && strcmp(lt, "../data") == 0);
	/* LINK data -> d/hard: SAVEFH(data) PUTROOTFH LOOKUP d LINK */
	memset(ops, 0, sizeof(ops));
	n = walk(a, ops, "data");
	ops[n++].argop = OP_SAVEFH;
	ops[n++].argop = OP_PUTROOTFH;
	ops[n].argop = OP_LOOKUP;
	ops[n++].nfs_argop4_u.oplookup.objname = comp("d");
	ops[n].argop = OP_LINK;
	ops[n++].nfs_argop4_u.oplink.newname = comp("hard");
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK(stat(host_path("d/hard"), &st) == 0 && st.st_nlink == 2);
	/* RENAME d/hard -> moved (saved = d, current = root) */
	memset(ops, 0, sizeof(ops));
	n = walk(a, ops, "d");
	ops[n++].argop = OP_SAVEFH;
	ops[n++].argop = OP_PUTROOTFH;
	ops[n].argop = OP_RENAME;
	ops[n].nfs_argop4_u.oprename.oldname = comp("hard");
	ops[n++].nfs_argop4_u.oprename.newname = comp("moved");
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK(access(host_path("d/hard"), F_OK) != 0 && stat(host_path("moved"), &st) == 0);
	/* READDIR of the root: data, d, moved */
	memset(ops, 0, sizeof(ops));
	n = walk(a, ops, NULL);
	uint32_t rdattr[1] = {1u << FATTR4_FILEID};
	ops[n].argop = OP_READDIR;
	ops[n].nfs_argop4_u.opreaddir.maxcount = 8192;
	ops[n].nfs_argop4_u.opreaddir.dircount = 8192;
	ops[n].nfs_argop4_u.opreaddir.attr_request.bitmap4_len = 1;
	ops[n++].nfs_argop4_u.opreaddir.attr_request.bitmap4_val = rdattr;
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	{
		READDIR4resok *ok = &R(&res, 2)->nfs_resop4_u.opreaddir.READDIR4res_u.resok4;
		unsigned seen = 0, count = 0;
		for (entry4 *e = ok->reply.entries; e; e = e->nextentry, count++) {
			char nm[64];
			snprintf(nm, sizeof(nm), "%.*s", (int)e->name.utf8string_len,
				 e->name.utf8string_val);
			seen |= strcmp(nm, "data") == 0    ? 1u
				: strcmp(nm, "d") == 0     ? 2u
				: strcmp(nm, "moved") == 0 ? 4u
							   : 0u;
		}
		CHECK(seen == 7 && count == 3 && ok->reply.eof);
	}
	done(&res);
	/* SETATTR size of moved (a link of data: data's size too), REMOVE moved */
	memset(ops, 0, sizeof(ops));
	n = walk(a, ops, "moved");
	uint32_t sz_bits[1] = {1u << FATTR4_SIZE};
	uint8_t sz_be[8];

	put_be64(sz_be, 1000);
	ops[n].argop = OP_SETATTR;
	ops[n].nfs_argop4_u.opsetattr.obj_attributes.attrmask.bitmap4_len = 1;
	ops[n].nfs_argop4_u.opsetattr.obj_attributes.attrmask.bitmap4_val = sz_bits;
	ops[n].nfs_argop4_u.opsetattr.obj_attributes.attr_vals.attrlist4_len = 8;
	ops[n++].nfs_argop4_u.opsetattr.obj_attributes.attr_vals.attrlist4_val = (char *)sz_be;
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK(stat(host_path("data"), &st) == 0 && st.st_size == 1000);
	memset(ops, 0, sizeof(ops));
	n = walk(a, ops, NULL);
	ops[n].argop = OP_REMOVE;
	ops[n++].nfs_argop4_u.opremove.target = comp("moved");
	CHECK(compound(a, ops, n, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK(access(host_path("moved"), F_OK) != 0 && stat(host_path("data"), &st) == 0 &&
	      st.st_nlink == 1);
}

static uint64_t size_of(struct cli *c, const nfs_fh4 *fh)
{
	nfs_argop4 op;
	COMPOUND4res res;
	uint32_t bits[1] = {1u << FATTR4_SIZE};
	uint64_t size = UINT64_MAX;
	memset(&op, 0, sizeof(op));
	op.argop = OP_GETATTR;
	op.nfs_argop4_u.opgetattr.attr_request.bitmap4_len = 1;
	op.nfs_argop4_u.opgetattr.attr_request.bitmap4_val = bits;
	if (by_fh(c, fh, &op, &res, NULL) == NFS4_OK) {
		fattr4 *fa =
		    &R(&res, 2)->nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes;
		XDR x;
		xdrmem_create(&x, fa->attr_vals.attrlist4_val, fa->attr_vals.attrlist4_len,
			      XDR_DECODE);
		if (!xdr_uint64_t(&x, &size))
			size = UINT64_MAX;
		xdr_destroy(&x);
	}
	done(&res);
	return size;
}

/* --append: the first OPEN must succeed; --append-retry (a recall held up
 * by a connection cut) retries OPEN on NFS4ERR_DELAY for up to 90 s, as a
 * client does (§15.1.1.3), and says how many times it was told to wait. */
static int append_mode(const char *p, const char *name, const char *text, bool retry)
{
	static struct cli C = {
	    .name = "append", .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	struct opened o;
	struct timespec t0, t1;
	port = (uint16_t)atoi(p);
	if (session(&C) != 0 || failures)
		return 1;
	memset(&o, 0, sizeof(o));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int st = do_open(&C, name, OPEN4_SHARE_ACCESS_WRITE, false, &o);
	unsigned delays = 0;
	for (; retry && st == NFS4ERR_DELAY && delays < 180; delays++) {
		usleep(500 * 1000);
		memset(&o, 0, sizeof(o));
		st = do_open(&C, name, OPEN4_SHARE_ACCESS_WRITE, false, &o);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("append: OPEN %s for writing: status %d after %.3f s, %u NFS4ERR_DELAY\n", name, st,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, delays);
	if (st != NFS4_OK)
		return 1;
	uint64_t off = size_of(&C, &o.fh);
	nfs_argop4 op;
	COMPOUND4res res;
	memset(&op, 0, sizeof(op));
	op.argop = OP_WRITE;
	op.nfs_argop4_u.opwrite.stateid = o.sid;
	op.nfs_argop4_u.opwrite.offset = off;
	op.nfs_argop4_u.opwrite.stable = FILE_SYNC4;
	op.nfs_argop4_u.opwrite.data.base = (void *)text;
	op.nfs_argop4_u.opwrite.data.len = (uint32_t)strlen(text);
	st = by_fh(&C, &o.fh, &op, &res, NULL);
	bool ok = st == NFS4_OK &&
		  R(&res, 2)->nfs_resop4_u.opwrite.WRITE4res_u.resok4.count == strlen(text);
	done(&res);
	printf("append: WRITE of %zu bytes at %llu: status %d\n", strlen(text),
	       (unsigned long long)off, st);
	ok = ok && do_close(&C, &o) == NFS4_OK;
	rpcrdma_clnt_destroy(C.cl);
	fh_free_all();
	return ok && !failures ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--append") == 0)
		return append_mode(argv[2], argv[3], argv[4], false);
	if (argc == 5 && strcmp(argv[1], "--append-retry") == 0)
		return append_mode(argv[2], argv[3], argv[4], true);
	static struct cli A = {
	    .name = "A", .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	static struct cli B = {
	    .name = "B", .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	if (argc != 2) {
		fprintf(stderr, "usage: test_nfs41d_local PATH-TO-rpcrdma-nfs41d\n");
		return 2;
	}
	server_bin = argv[1];
	snprintf(base, sizeof(base), "/tmp/nfs41d-local-%d", (int)getpid());
	snprintf(exp_dir, sizeof(exp_dir), "%s/export", base);
	if (mkdir(base, 0700) != 0 || mkdir(exp_dir, 0755) != 0 || start_server() != 0) {
		fprintf(stderr, "rpcrdma-nfs41d did not start\n");
		return 1;
	}
	CHECK(session(&A) == 0);
	CHECK(session(&B) == 0);

	/* OPEN create + WRITE by Read chunk + CLOSE */
	uint8_t *data = malloc(FILE_SIZE), *back = malloc(FILE_SIZE), *host = malloc(FILE_SIZE);
	for (uint32_t i = 0; i < FILE_SIZE; i++)
		data[i] = (uint8_t)(i * 7 + (i >> 9));
	struct opened w;
	memset(&w, 0, sizeof(w));
	CHECK(do_open(&A, "data", OPEN4_SHARE_ACCESS_BOTH, true, &w) == NFS4_OK);
	CHECK(w.dt == OPEN_DELEGATE_NONE); /* no delegation for writing */
	nfs_argop4 op;
	COMPOUND4res res;
	memset(&op, 0, sizeof(op));
	op.argop = OP_WRITE;
	op.nfs_argop4_u.opwrite.stateid = w.sid;
	op.nfs_argop4_u.opwrite.stable = FILE_SYNC4;
	op.nfs_argop4_u.opwrite.data.base = data;
	op.nfs_argop4_u.opwrite.data.len = FILE_SIZE;
	/* WRITE4args.data is rpcrdma_bulk in xdr/nfs41.x: it goes by a Read
	 * chunk (the client's counters), not inline */
	struct rpcrdma_xprt_stats s0, s1;
	CHECK(rpcrdma_clnt_stats(A.cl, &s0) == 0);
	CHECK(by_fh(&A, &w.fh, &op, &res, NULL) == NFS4_OK);
	CHECK(R(&res, 2)->nfs_resop4_u.opwrite.WRITE4res_u.resok4.count == FILE_SIZE);
	done(&res);
	CHECK(rpcrdma_clnt_stats(A.cl, &s1) == 0);
	CHECK(s1.read_chunks == s0.read_chunks + 1 && s1.read_bytes - s0.read_bytes == FILE_SIZE);
	CHECK(s1.inline_bytes_tx - s0.inline_bytes_tx < 4096);
	CHECK(do_close(&A, &w) == NFS4_OK);
	int fd = open(host_path("data"), O_RDONLY);
	CHECK(fd >= 0 && read(fd, host, FILE_SIZE) == (ssize_t)FILE_SIZE &&
	      memcmp(host, data, FILE_SIZE) == 0);
	if (fd >= 0)
		close(fd);

	/* A: OPEN for reading, a read delegation; READ by Write chunk */
	struct opened r;
	memset(&r, 0, sizeof(r));
	CHECK(do_open(&A, "data", OPEN4_SHARE_ACCESS_READ, false, &r) == NFS4_OK);
	CHECK(r.dt == OPEN_DELEGATE_READ);
	A.deleg = r.deleg;
	A.deleg_fh = r.fh;
	struct rpcrdma_call_opts co = {.comp_mask = RPCRDMA_CALL_OPT_RECV_BULK, .nrecv_bulk = 1};
	co.recv_bulk[0].base = back;
	co.recv_bulk[0].len = FILE_SIZE;
	memset(&op, 0, sizeof(op));
	op.argop = OP_READ;
	op.nfs_argop4_u.opread.stateid = r.deleg;
	op.nfs_argop4_u.opread.count = FILE_SIZE;
	CHECK(rpcrdma_clnt_stats(A.cl, &s0) == 0);
	CHECK(by_fh(&A, &r.fh, &op, &res, &co) == NFS4_OK);
	CHECK(R(&res, 2)->nfs_resop4_u.opread.READ4res_u.resok4.data.len == FILE_SIZE &&
	      R(&res, 2)->nfs_resop4_u.opread.READ4res_u.resok4.eof);
	CHECK(memcmp(back, data, FILE_SIZE) == 0);
	done(&res);
	/* READ4resok.data (rpcrdma_bulk): the server wrote it into the Write
	 * chunk; the reply itself came inline */
	CHECK(rpcrdma_clnt_stats(A.cl, &s1) == 0);
	CHECK(s1.write_chunks == s0.write_chunks + 1 &&
	      s1.write_bytes - s0.write_bytes == FILE_SIZE);
	CHECK(s1.inline_bytes_rx - s0.inline_bytes_rx < 4096);
	CHECK(do_close(&A, &r) == NFS4_OK); /* the delegation stays */

	nfs_argop4 ops[3];
	/* B opens for writing: A is called back, returns, then B's OPEN ends */
	struct conflict k = {.b = &B};
	pthread_t t;
	pthread_create(&t, NULL, conflicting_open, &k);
	CHECK(wait_count(&A, &A.cb_recall, 1));
	CHECK(A.cb_compound == 1 && A.cb_seq == 1 && A.cb_bad == 0);
	pthread_mutex_lock(&order_mu);
	int drc = delegreturn(&A, &A.deleg_fh, &A.deleg);
	delegreturns_done++;
	pthread_mutex_unlock(&order_mu);
	CHECK(drc == NFS4_OK);
	pthread_join(t, NULL);
	CHECK(k.status == NFS4_OK && k.recalls_returned_before == 1);
	CHECK(k.o.dt == OPEN_DELEGATE_NONE);
	if (k.status == NFS4_OK)
		CHECK(do_close(&B, &k.o) == NFS4_OK);

	/* A refuses the next recall: the server revokes the delegation, B's
	 * OPEN goes on at once, A's next SEQUENCE says so (§18.46.3) and its
	 * late DELEGRETURN is NFS4ERR_BAD_STATEID */
	memset(&r, 0, sizeof(r));
	CHECK(do_open(&A, "data", OPEN4_SHARE_ACCESS_READ, false, &r) == NFS4_OK);
	CHECK(r.dt == OPEN_DELEGATE_READ);
	CHECK(do_close(&A, &r) == NFS4_OK);
	pthread_mutex_lock(&A.mu);
	A.deleg = r.deleg;
	A.deleg_fh = r.fh;
	A.refuse = true;
	unsigned bad_before = A.cb_bad;
	pthread_mutex_unlock(&A.mu);
	struct opened b2;
	memset(&b2, 0, sizeof(b2));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(do_open(&B, "data", OPEN4_SHARE_ACCESS_WRITE, false, &b2) == NFS4_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 3); /* not the whole recall wait */
	CHECK(count_of(&A, &A.cb_bad) == bad_before + 1);
	CHECK(do_close(&B, &b2) == NFS4_OK);
	memset(ops, 0, sizeof(ops));
	op_seq(&A, &ops[0]);
	CHECK(compound(&A, ops, 1, &res, NULL) == NFS4_OK);
	done(&res);
	CHECK(A.flags & SEQ4_STATUS_RECALLABLE_STATE_REVOKED);
	CHECK(delegreturn(&A, &r.fh, &r.deleg) == NFS4ERR_BAD_STATEID);
	pthread_mutex_lock(&A.mu);
	A.refuse = false;
	pthread_mutex_unlock(&A.mu);

	busy_once(&A, &B);
	reconnect(&A, &B);
	namespace_ops(&A);

	/* an unknown operation: OP_ILLEGAL, the COMPOUND stops there */
	memset(ops, 0, sizeof(ops));
	op_seq(&A, &ops[0]);
	ops[1].argop = (nfs_opnum4)9999;
	ops[2].argop = OP_PUTROOTFH;
	CHECK(compound(&A, ops, 3, &res, NULL) == NFS4ERR_OP_ILLEGAL);
	CHECK(res.resarray.resarray_len == 2 && R(&res, 1)->resop == OP_ILLEGAL);
	done(&res);
	/* an unknown session */
	memset(ops, 0, sizeof(ops));
	op_seq(&A, &ops[0]);
	ops[0].nfs_argop4_u.opsequence.sa_sessionid[0] =
	    (char)(ops[0].nfs_argop4_u.opsequence.sa_sessionid[0] ^ 0x7f);
	CHECK(compound(&A, ops, 1, &res, NULL) == NFS4ERR_BADSESSION);
	done(&res);

	/* DESTROY_SESSION, DESTROY_CLIENTID of both */
	struct cli *both[2] = {&A, &B};
	for (int i = 0; i < 2; i++) {
		memset(&op, 0, sizeof(op));
		op.argop = OP_DESTROY_SESSION;
		memcpy(op.nfs_argop4_u.opdestroy_session.dsa_sessionid, both[i]->sid,
		       sizeof(sessionid4));
		CHECK(compound(both[i], &op, 1, &res, NULL) == NFS4_OK);
		done(&res);
		memset(&op, 0, sizeof(op));
		op.argop = OP_DESTROY_CLIENTID;
		op.nfs_argop4_u.opdestroy_clientid.dca_clientid = both[i]->clientid;
		CHECK(compound(both[i], &op, 1, &res, NULL) == NFS4_OK);
		done(&res);
		rpcrdma_clnt_destroy(both[i]->cl);
	}
	kill(server_pid, SIGTERM);
	int ws = 0;
	waitpid(server_pid, &ws, 0);
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	char cmd[700];
	if (failures == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
		(void)system(cmd);
	} else {
		snprintf(cmd, sizeof(cmd), "cat %s/server.err", base);
		(void)system(cmd);
	}
	free(data);
	free(back);
	free(host);
	fh_free_all();
	return failures ? 1 : 0;
}
