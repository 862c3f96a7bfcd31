/* SPDX-License-Identifier: MIT */
/*
 * Interop: an NFSv4.1 session (RFC 8881) against the Linux kernel's nfsd
 * over RPC-over-RDMA (svcrdma over siw in the QEMU guest), through our
 * client API, with the session's backchannel bound to the same RDMA
 * connection (RFC 8167: the server's callbacks arrive as reverse calls on
 * the connection our client opened, and our client answers them).
 *
 *   - EXCHANGE_ID (SP4_NONE), CREATE_SESSION with
 *     CREATE_SESSION4_FLAG_CONN_BACK_CHAN, backchannel attributes and
 *     callback program NFS41_CB_PROG: the reply keeps CONN_BACK_CHAN (the
 *     server bound this connection for callbacks); RECLAIM_COMPLETE;
 *   - nfsd probes the callback path with CB_NULL over this connection:
 *     it must arrive as a reverse call and be answered, and SEQUENCE must
 *     not report SEQ4_STATUS_CB_PATH_DOWN afterwards;
 *   - SEQUENCE, PUTROOTFH, LOOKUP interop, OPEN read-1m (share READ,
 *     want a read delegation), GETFH; READ by Write chunk (RFC 8267
 *     §5.1.1: READ4resok.data is DDP-eligible), cksum = the guest's
 *     (export.cksum); CLOSE; DELEGRETURN of its delegation;
 *   - a file of our own (nfs41-deleg, 70000 random bytes made by the
 *     guest, cksum from the guest): OPEN must hand out a READ delegation;
 *     READ, cksum; CLOSE (the delegation stays). Sizes are multiples of 4:
 *     Wireshark 4.0 flags an NFSv4 READ reply whose odd-length data came
 *     by Write chunk as malformed (it looks for XDR fill bytes the chunk
 *     rightly lacks, RFC 8166 §3.4.6), which the suite's capture check
 *     counts;
 *   - the guest appends to that file: nfsd recalls the delegation with
 *     CB_COMPOUND { CB_SEQUENCE, CB_RECALL } over RDMA, amid forward
 *     SEQUENCE calls (every 20 ms until it arrives); our handler
 *     checks the session, slot and sequence and answers NFS4_OK to both;
 *     DELEGRETURN succeeds, and only then the guest's write completes;
 *     READ of the file afterwards has the guest's new cksum;
 *   - DESTROY_SESSION, DESTROY_CLIENTID; every reverse call received was
 *     answered (backchannel counters), none dropped.
 *
 * AUTH: the forward calls carry AUTH_SYS root (RPCRDMA_CLNT_OPT_AUTH,
 * iop_clnt_auth_root) against the sec=sys export (guest/nfs-server.sh,
 * no_root_squash), so nfsd runs them as root.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_int.h"
#include "interop_util.h"
#include "nfs41.h"
#include "rpcrdma/backchannel.h"
#include "rpcrdma/client.h"

/* Our callback program number (RFC 8881 §18.36.3: the client chooses it
 * and gives it in csa_cb_program; any value the client owns). */
#define NFS41_CB_PROG 0x40000041u
#define NFS41_CB_VERS 1u
#define MIB           (1u << 20)
#define DELEG_SIZE    70000u
#define DELEG_FILE    "nfs41-deleg"
#define DELEG_WAIT_MS 100000u
#define TRACE_DIR     "/sys/kernel/debug/tracing/instances/nfs41"
#define TRACE_ON                                                                                   \
	"mkdir -p " TRACE_DIR " && for e in nfsd sunrpc rpcrdma; do echo 1 > " TRACE_DIR           \
	"/events/$e/enable; done && echo uptime $(cut -d' ' -f1 /proc/uptime) s, nfsv4gracetime "  \
	"$(cat /proc/fs/nfsd/nfsv4gracetime) s, nlm_grace_period "                                 \
	"$(cat /proc/sys/fs/nfs/nlm_grace_period) s"
/* Saves the trace and answers five counts from it: lines; callback
 * clients set up over the RDMA backchannel; callback RPCs nfsd sent;
 * CB_RECALLs that completed with status 0 on nfsd's side; callback
 * channel FAULT states. */
#define TRACE_OFF                                                                                  \
	"T=/peer/out/nfs41-trace.txt; grep -v '^#' " TRACE_DIR "/trace > $T; rmdir " TRACE_DIR     \
	"; echo $(wc -l < $T) $(grep -c 'nfsd_cb_setup:.*proto=rdma' $T)"                          \
	" $(grep -c 'rpc_request:.*nfs4_cbv1' $T) $(grep -c 'nfsd_cb_recall_done:.*status=0' $T)"  \
	" $(grep -c 'nfsd_cb_state:.*state=FAULT' $T)"

/* ---------------------------------------------------------------- state */

struct nfs41 {
	struct rpcrdma_clnt *cl;
	clientid4 clientid;
	sessionid4 sid;
	uint32_t cs_seq;       /* EXCHANGE_ID's eir_sequenceid: CREATE_SESSION's */
	uint32_t slot_seq;     /* fore channel slot 0: last sa_sequenceid used */
	uint32_t status_flags; /* last SEQUENCE sr_status_flags */

	/* backchannel, written by the dispatch thread */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int cb_null, cb_compound, cb_sequence, cb_recall, cb_other, cb_bad;
	unsigned int cb_replies_ok; /* rpcrdma_bc_reply() returned 0 */
	bool cb_slot_used;
	uint32_t cb_slot_seq; /* back channel slot 0: last csa_sequenceid */
	bool deleg_valid;     /* the delegation a CB_RECALL may name */
	stateid4 deleg;
	stateid4 recalled;
	nfs_fh4 recalled_fh; /* copy (data malloc'ed) */
	bool recall_truncate;
	unsigned int recall_ok; /* CB_RECALLs answered NFS4_OK */
};

static struct nfs41 g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* void arguments / results (xdr_void has no parameters in libtirpc). */
static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static bool stateid_eq(const stateid4 *a, const stateid4 *b)
{
	return memcmp(a->other, b->other, NFS4_OTHER_SIZE) == 0;
}

static void hex(const void *p, size_t n, char *out)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/* ---------------------------------------------------------------- backchannel */

/*
 * One CB_COMPOUND (RFC 8881 §20.2): CB_SEQUENCE first (§20.9: session
 * ours, slot 0 (we offered one slot), sequence id one more than the last
 * or the first on the slot), then CB_RECALL (§20.2) of the delegation we
 * hold. The reply echoes the tag and carries one result per operation
 * processed, stopping at the first error.
 */
static void cb_compound(struct rpcrdma_bc_req *req, struct nfs41 *n)
{
	CB_COMPOUND4args a;
	CB_COMPOUND4res r;
	nfs_cb_resop4 res[8];
	unsigned int nres = 0;
	nfsstat4 st = NFS4_OK;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(res));
	if (rpcrdma_bc_getargs(req, (xdrproc_t)xdr_CB_COMPOUND4args, &a) != 0) {
		pthread_mutex_lock(&n->mu);
		n->cb_bad++;
		pthread_mutex_unlock(&n->mu);
		printf("backchannel: CB_COMPOUND arguments do not decode\n");
		rpcrdma_bc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	pthread_mutex_lock(&n->mu);
	n->cb_compound++;
	if (a.minorversion != 1) {
		st = NFS4ERR_MINOR_VERS_MISMATCH;
		n->cb_bad++;
	}
	for (u_int i = 0; st == NFS4_OK && i < a.argarray.argarray_len; i++) {
		const nfs_cb_argop4 *op = &a.argarray.argarray_val[i];
		nfs_cb_resop4 *o = &res[nres];

		if (nres == sizeof(res) / sizeof(res[0])) {
			st = NFS4ERR_SERVERFAULT;
			break;
		}
		switch (op->argop) {
		case OP_CB_SEQUENCE: {
			const CB_SEQUENCE4args *s = &op->nfs_cb_argop4_u.opcbsequence;
			CB_SEQUENCE4resok *ok =
			    &o->nfs_cb_resop4_u.opcbsequence.CB_SEQUENCE4res_u.csr_resok4;
			uint32_t want = n->cb_slot_seq + 1;

			n->cb_sequence++;
			o->resop = OP_CB_SEQUENCE;
			if (i != 0 || memcmp(s->csa_sessionid, n->sid, NFS4_SESSIONID_SIZE) != 0)
				st = NFS4ERR_BADSESSION;
			else if (s->csa_slotid != 0)
				st = NFS4ERR_BADSLOT; /* beyond the one slot we offered */
			else if (n->cb_slot_used && s->csa_sequenceid != want)
				st = NFS4ERR_SEQ_MISORDERED;
			printf("backchannel: CB_SEQUENCE slot %u seq %u highest %u cachethis %d "
			       "referring lists %u: %d\n",
			       s->csa_slotid, s->csa_sequenceid, s->csa_highest_slotid,
			       s->csa_cachethis,
			       s->csa_referring_call_lists.csa_referring_call_lists_len, st);
			o->nfs_cb_resop4_u.opcbsequence.csr_status = st;
			if (st == NFS4_OK) {
				n->cb_slot_used = true;
				n->cb_slot_seq = s->csa_sequenceid;
				memcpy(ok->csr_sessionid, n->sid, NFS4_SESSIONID_SIZE);
				ok->csr_sequenceid = s->csa_sequenceid;
				ok->csr_slotid = s->csa_slotid;
				ok->csr_highest_slotid = 0;
				ok->csr_target_highest_slotid = 0;
			} else {
				n->cb_bad++;
			}
			break;
		}
		case OP_CB_RECALL: {
			const CB_RECALL4args *c = &op->nfs_cb_argop4_u.opcbrecall;

			n->cb_recall++;
			o->resop = OP_CB_RECALL;
			/* §20.2.3 / §20.9.3: CB_SEQUENCE must come first. */
			if (i == 0)
				st = NFS4ERR_SEQUENCE_POS;
			else if (!n->deleg_valid || !stateid_eq(&c->stateid, &n->deleg))
				st = NFS4ERR_BAD_STATEID;
			o->nfs_cb_resop4_u.opcbrecall = st;
			if (st == NFS4_OK) {
				n->recalled = c->stateid;
				n->recall_truncate = c->truncate;
				free(n->recalled_fh.nfs_fh4_val);
				n->recalled_fh.nfs_fh4_len = 0;
				n->recalled_fh.nfs_fh4_val = malloc(c->fh.nfs_fh4_len + 1u);
				if (n->recalled_fh.nfs_fh4_val) {
					memcpy(n->recalled_fh.nfs_fh4_val, c->fh.nfs_fh4_val,
					       c->fh.nfs_fh4_len);
					n->recalled_fh.nfs_fh4_len = c->fh.nfs_fh4_len;
				}
				n->recall_ok++;
			} else {
				n->cb_bad++;
			}
			printf(
			    "backchannel: CB_RECALL stateid seq %u truncate %d fh %u bytes: %d\n",
			    c->stateid.seqid, c->truncate, c->fh.nfs_fh4_len, st);
			break;
		}
		default:
			n->cb_other++;
			o->resop = OP_CB_ILLEGAL;
			st = NFS4ERR_OP_ILLEGAL;
			o->nfs_cb_resop4_u.opcbillegal = st;
			printf("backchannel: callback operation %d answered NFS4ERR_OP_ILLEGAL\n",
			       op->argop);
			break;
		}
		nres++;
	}
	pthread_mutex_unlock(&n->mu);
	r.status = st;
	r.tag = a.tag; /* §20.2.3: the reply's tag is the call's */
	r.resarray.resarray_len = nres;
	r.resarray.resarray_val = res;
	rc = rpcrdma_bc_reply(req, (xdrproc_t)xdr_CB_COMPOUND4res, &r);
	pthread_mutex_lock(&n->mu);
	if (rc == 0)
		n->cb_replies_ok++;
	else
		printf("backchannel: CB_COMPOUND reply failed: %d (%s)\n", rc,
		       rpcrdma_strerror(rc));
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	xdr_free((xdrproc_t)xdr_CB_COMPOUND4args, (char *)&a);
}

/* Dispatch of the callback program (runs on the client's backchannel
 * thread). */
static void cb_dispatch(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct nfs41 *n = ctx;
	int rc;

	(void)args;
	switch (proc) {
	case CB_NULL:
		/* nfsd's callback probe (after CREATE_SESSION). */
		rc = rpcrdma_bc_reply(req, (xdrproc_t)xdr_nothing, NULL);
		pthread_mutex_lock(&n->mu);
		n->cb_null++;
		if (rc == 0)
			n->cb_replies_ok++;
		pthread_cond_broadcast(&n->cv);
		pthread_mutex_unlock(&n->mu);
		printf("backchannel: CB_NULL (xid 0x%08x) answered: %d\n", rpcrdma_bc_req_xid(req),
		       rc);
		break;
	case CB_COMPOUND:
		cb_compound(req, n);
		break;
	default:
		pthread_mutex_lock(&n->mu);
		n->cb_bad++;
		pthread_mutex_unlock(&n->mu);
		rpcrdma_bc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		break;
	}
}

/* ---------------------------------------------------------------- forward */

static const char *op_name(nfs_opnum4 op)
{
	switch (op) {
	case OP_CLOSE:
		return "CLOSE";
	case OP_DELEGRETURN:
		return "DELEGRETURN";
	case OP_GETFH:
		return "GETFH";
	case OP_LOOKUP:
		return "LOOKUP";
	case OP_OPEN:
		return "OPEN";
	case OP_PUTFH:
		return "PUTFH";
	case OP_PUTROOTFH:
		return "PUTROOTFH";
	case OP_READ:
		return "READ";
	case OP_WRITE:
		return "WRITE";
	case OP_EXCHANGE_ID:
		return "EXCHANGE_ID";
	case OP_CREATE_SESSION:
		return "CREATE_SESSION";
	case OP_DESTROY_SESSION:
		return "DESTROY_SESSION";
	case OP_SEQUENCE:
		return "SEQUENCE";
	case OP_DESTROY_CLIENTID:
		return "DESTROY_CLIENTID";
	case OP_RECLAIM_COMPLETE:
		return "RECLAIM_COMPLETE";
	case OP_ILLEGAL:
		return "ILLEGAL";
	default: /* nfs41.x declares what rpcrdma-nfs41d serves too */
		break;
	}
	return "?";
}

/* The status of one operation's result (every result starts with it). */
static nfsstat4 op_status(const nfs_resop4 *r)
{
	switch (r->resop) {
	case OP_CLOSE:
		return r->nfs_resop4_u.opclose.status;
	case OP_DELEGRETURN:
		return r->nfs_resop4_u.opdelegreturn;
	case OP_GETFH:
		return r->nfs_resop4_u.opgetfh.status;
	case OP_LOOKUP:
		return r->nfs_resop4_u.oplookup;
	case OP_OPEN:
		return r->nfs_resop4_u.opopen.status;
	case OP_PUTFH:
		return r->nfs_resop4_u.opputfh;
	case OP_PUTROOTFH:
		return r->nfs_resop4_u.opputrootfh;
	case OP_READ:
		return r->nfs_resop4_u.opread.status;
	case OP_WRITE:
		return r->nfs_resop4_u.opwrite.status;
	case OP_EXCHANGE_ID:
		return r->nfs_resop4_u.opexchange_id.eir_status;
	case OP_CREATE_SESSION:
		return r->nfs_resop4_u.opcreate_session.csr_status;
	case OP_DESTROY_SESSION:
		return r->nfs_resop4_u.opdestroy_session;
	case OP_SEQUENCE:
		return r->nfs_resop4_u.opsequence.sr_status;
	case OP_DESTROY_CLIENTID:
		return r->nfs_resop4_u.opdestroy_clientid;
	case OP_RECLAIM_COMPLETE:
		return r->nfs_resop4_u.opreclaim_complete;
	case OP_ILLEGAL:
		return r->nfs_resop4_u.opillegal;
	default:
		/* every result begins with its status (nfs41.x) */
		return r->nfs_resop4_u.opnotsupp;
	}
}

/* SEQUENCE on fore channel slot 0 (RFC 8881 §18.46.3: one more than the
 * slot's last sequence id; the first on a new session's slot is 1). */
static void op_sequence(nfs_argop4 *op)
{
	SEQUENCE4args *s = &op->nfs_argop4_u.opsequence;

	op->argop = OP_SEQUENCE;
	memcpy(s->sa_sessionid, g.sid, NFS4_SESSIONID_SIZE);
	s->sa_sequenceid = ++g.slot_seq;
	s->sa_slotid = 0;
	s->sa_highest_slotid = 0;
	s->sa_cachethis = FALSE;
}

/*
 * Send one COMPOUND of @nops operations; @res receives the results (the
 * caller frees them with xdr_free). Returns the call's status (0: a reply
 * decoded) and prints every operation's status. When the compound starts
 * with SEQUENCE, its result is checked (same session, slot, sequence id)
 * and its status flags kept.
 */
static int compound(const char *what, nfs_argop4 *ops, unsigned int nops, COMPOUND4res *res,
		    const struct rpcrdma_call_opts *o)
{
	COMPOUND4args a = {.tag = {.utf8string_len = 5, .utf8string_val = (char *)"iop41"},
			   .minorversion = 1,
			   .argarray = {.argarray_len = nops, .argarray_val = ops}};
	int rc;

	memset(res, 0, sizeof(*res));
	rc = rpcrdma_clnt_call(g.cl, NFSPROC4_COMPOUND, (xdrproc_t)xdr_COMPOUND4args, &a,
			       (xdrproc_t)xdr_COMPOUND4res, res, o);
	if (rc) {
		printf("%s: call failed: %d (%s)\n", what, rc, rpcrdma_strerror(rc));
		return rc;
	}
	printf("%s: status %d:", what, res->status);
	for (u_int i = 0; i < res->resarray.resarray_len; i++)
		printf(" %s %d", op_name(res->resarray.resarray_val[i].resop),
		       op_status(&res->resarray.resarray_val[i]));
	printf("\n");
	if (nops && ops[0].argop == OP_SEQUENCE && res->resarray.resarray_len &&
	    res->resarray.resarray_val[0].resop == OP_SEQUENCE &&
	    res->resarray.resarray_val[0].nfs_resop4_u.opsequence.sr_status == NFS4_OK) {
		const SEQUENCE4resok *s =
		    &res->resarray.resarray_val[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4;

		IOP_EXPECT(memcmp(s->sr_sessionid, g.sid, NFS4_SESSIONID_SIZE) == 0);
		IOP_EXPECT(s->sr_sequenceid == ops[0].nfs_argop4_u.opsequence.sa_sequenceid);
		IOP_EXPECT(s->sr_slotid == 0);
		g.status_flags = s->sr_status_flags;
		if (s->sr_status_flags)
			printf("  SEQUENCE status flags 0x%x\n", s->sr_status_flags);
	}
	return 0;
}

/* Result @i of @res if it is operation @op, else NULL. */
static nfs_resop4 *res_op(COMPOUND4res *res, unsigned int i, nfs_opnum4 op)
{
	if (i >= res->resarray.resarray_len || res->resarray.resarray_val[i].resop != op)
		return NULL;
	return &res->resarray.resarray_val[i];
}

static void free_res(COMPOUND4res *res)
{
	xdr_free((xdrproc_t)xdr_COMPOUND4res, (char *)res);
}

/* SEQUENCE alone (a lease renewal; shows the status flags). */
static int sequence_only(void)
{
	nfs_argop4 op[1];
	COMPOUND4res res;
	int rc;

	memset(op, 0, sizeof(op));
	op_sequence(&op[0]);
	rc = compound("SEQUENCE", op, 1, &res, NULL);
	if (rc == 0 && res.status != NFS4_OK)
		rc = -EPROTO;
	free_res(&res);
	return rc;
}

/* An opened file. */
struct ofile {
	stateid4 open;
	nfs_fh4 fh; /* malloc'ed */
	open_delegation_type4 deleg_type;
	stateid4 deleg;
	uint32_t why_none; /* OPEN_DELEGATE_NONE_EXT's reason */
};

/*
 * SEQUENCE, PUTROOTFH, LOOKUP interop, OPEN @name (CLAIM_NULL, share READ,
 * want a read delegation, deny none), GETFH. nfsd answers NFS4ERR_GRACE
 * while its grace period after startup lasts (90 s unless the guest set
 * nfsv4gracetime): then wait and try again. Returns the OPEN status, or a
 * negative errno when the call failed.
 */
static int open_file(const char *name, struct ofile *f, int grace_wait_ms)
{
	static const char owner[] = "iop41-open-owner";
	uint64_t end = iop_now_ms() + (uint64_t)grace_wait_ms;
	unsigned int graces = 0;

	for (;;) {
		nfs_argop4 op[5];
		COMPOUND4res res;
		nfs_resop4 *ro, *rf;
		int rc;

		memset(op, 0, sizeof(op));
		memset(f, 0, sizeof(*f));
		op_sequence(&op[0]);
		op[1].argop = OP_PUTROOTFH;
		op[2].argop = OP_LOOKUP;
		op[2].nfs_argop4_u.oplookup.objname.utf8string_val = (char *)"interop";
		op[2].nfs_argop4_u.oplookup.objname.utf8string_len = 7;
		op[3].argop = OP_OPEN;
		{
			OPEN4args *o = &op[3].nfs_argop4_u.opopen;

			o->seqid = 0; /* §18.16.3: ignored in 4.1 */
			o->share_access =
			    OPEN4_SHARE_ACCESS_READ | OPEN4_SHARE_ACCESS_WANT_READ_DELEG;
			o->share_deny = OPEN4_SHARE_DENY_NONE;
			o->owner.clientid = g.clientid;
			o->owner.owner.owner_len = (u_int)strlen(owner);
			o->owner.owner.owner_val = (char *)(uintptr_t)owner;
			o->openhow.opentype = OPEN4_NOCREATE;
			o->claim.claim = CLAIM_NULL;
			o->claim.open_claim4_u.file.utf8string_val = (char *)(uintptr_t)name;
			o->claim.open_claim4_u.file.utf8string_len = (u_int)strlen(name);
		}
		op[4].argop = OP_GETFH;
		rc = compound("OPEN", op, 5, &res, NULL);
		if (rc)
			return rc;
		ro = res_op(&res, 3, OP_OPEN);
		rf = res_op(&res, 4, OP_GETFH);
		if (ro && ro->nfs_resop4_u.opopen.status == NFS4ERR_GRACE && iop_now_ms() < end) {
			if (graces++ == 0)
				printf("OPEN %s: NFS4ERR_GRACE (nfsd's grace period after its "
				       "start): trying again every second\n",
				       name);
			free_res(&res);
			sleep(1);
			continue;
		}
		if (graces)
			printf("OPEN %s: grace period over after %u tries\n", name, graces);
		if (!ro || !rf || res.status != NFS4_OK) {
			rc = ro ? (int)ro->nfs_resop4_u.opopen.status : (int)res.status;
			free_res(&res);
			return rc ? rc : (int)NFS4ERR_SERVERFAULT;
		}
		{
			const OPEN4resok *ok = &ro->nfs_resop4_u.opopen.OPEN4res_u.resok4;
			const open_delegation4 *d = &ok->delegation;
			const nfs_fh4 *fh = &rf->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
			char other[2 * NFS4_OTHER_SIZE + 1];

			f->open = ok->stateid;
			f->deleg_type = d->delegation_type;
			if (d->delegation_type == OPEN_DELEGATE_READ)
				f->deleg = d->open_delegation4_u.read.stateid;
			if (d->delegation_type == OPEN_DELEGATE_NONE_EXT)
				f->why_none = d->open_delegation4_u.od_whynone.ond_why;
			f->fh.nfs_fh4_val = malloc(fh->nfs_fh4_len + 1u);
			if (f->fh.nfs_fh4_val) {
				memcpy(f->fh.nfs_fh4_val, fh->nfs_fh4_val, fh->nfs_fh4_len);
				f->fh.nfs_fh4_len = fh->nfs_fh4_len;
			}
			hex(f->open.other, NFS4_OTHER_SIZE, other);
			printf("OPEN %s: open stateid %u/%s rflags 0x%x, delegation %d%s (why none "
			       "%u), fh %u bytes\n",
			       name, f->open.seqid, other, ok->rflags, d->delegation_type,
			       d->delegation_type == OPEN_DELEGATE_READ ? " (READ)" : "",
			       f->why_none, fh->nfs_fh4_len);
			if (d->delegation_type == OPEN_DELEGATE_READ)
				printf("  read delegation: stateid seq %u recall %d\n",
				       f->deleg.seqid, d->open_delegation4_u.read.recall);
		}
		free_res(&res);
		return f->fh.nfs_fh4_val ? 0 : -ENOMEM;
	}
}

/*
 * READ the whole file (at most @cap bytes) into @buf, pieces of at most
 * 1 MiB, each placed by its own Write chunk (the result's data is a bulk
 * item with a receive buffer). *@got: bytes read until eof.
 */
static int read_file(const struct ofile *f, const stateid4 *sid, uint8_t *buf, uint32_t cap,
		     uint32_t *got, unsigned int *chunks)
{
	uint32_t off = 0;
	bool eof = false;

	*chunks = 0;
	while (!eof) {
		nfs_argop4 op[3];
		COMPOUND4res res;
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RECV_BULK |
							   RPCRDMA_CALL_OPT_RESULT};
		struct rpcrdma_call_result cr;
		nfs_resop4 *rr;
		uint32_t want = cap - off < MIB ? cap - off : MIB;
		int rc;

		memset(op, 0, sizeof(op));
		memset(&cr, 0, sizeof(cr));
		op_sequence(&op[0]);
		op[1].argop = OP_PUTFH;
		op[1].nfs_argop4_u.opputfh.object = f->fh;
		op[2].argop = OP_READ;
		op[2].nfs_argop4_u.opread.stateid = *sid;
		op[2].nfs_argop4_u.opread.offset = off;
		op[2].nfs_argop4_u.opread.count = want ? want : 1;
		o.recv_bulk[0].base = buf + off;
		o.recv_bulk[0].len = want;
		o.nrecv_bulk = 1;
		o.result = &cr;
		if (want == 0) {
			/* At the capacity: one byte more must say eof. */
			o.comp_mask &= ~(uint32_t)RPCRDMA_CALL_OPT_RECV_BULK;
			o.nrecv_bulk = 0;
		}
		rc = compound("READ", op, 3, &res, &o);
		if (rc)
			return rc;
		rr = res_op(&res, 2, OP_READ);
		if (!rr || rr->nfs_resop4_u.opread.status != NFS4_OK) {
			rc = rr ? (int)rr->nfs_resop4_u.opread.status : (int)res.status;
			free_res(&res);
			return rc ? rc : (int)NFS4ERR_SERVERFAULT;
		}
		{
			const READ4resok *ok = &rr->nfs_resop4_u.opread.READ4res_u.resok4;

			printf("  READ at %u: %u bytes eof %d; %u Write chunk(s) offered, %u bytes "
			       "placed, reply %s, remotely invalidated %u\n",
			       off, ok->data.len, ok->eof, cr.write_chunks, cr.recv_bulk_len[0],
			       cr.reply_proc ? "RDMA_NOMSG" : "RDMA_MSG", cr.remote_invalidated);
			if (want == 0 && ok->data.len) {
				free_res(&res);
				return -EFBIG;
			}
			if (ok->data.len > want || (ok->data.len && ok->data.base != buf + off)) {
				free_res(&res);
				return -EBADMSG;
			}
			*chunks += cr.write_chunks;
			off += ok->data.len;
			eof = ok->eof;
			if (!ok->eof && ok->data.len == 0) {
				free_res(&res);
				return -EIO;
			}
		}
		free_res(&res);
	}
	*got = off;
	return 0;
}

/* SEQUENCE, PUTFH, CLOSE. */
static int close_file(const struct ofile *f)
{
	nfs_argop4 op[3];
	COMPOUND4res res;
	nfs_resop4 *rc_;
	int rc;

	memset(op, 0, sizeof(op));
	op_sequence(&op[0]);
	op[1].argop = OP_PUTFH;
	op[1].nfs_argop4_u.opputfh.object = f->fh;
	op[2].argop = OP_CLOSE;
	op[2].nfs_argop4_u.opclose.seqid = 0;
	op[2].nfs_argop4_u.opclose.open_stateid = f->open;
	rc = compound("CLOSE", op, 3, &res, NULL);
	if (rc)
		return rc;
	rc_ = res_op(&res, 2, OP_CLOSE);
	rc = rc_ ? (int)rc_->nfs_resop4_u.opclose.status : (int)res.status;
	free_res(&res);
	return rc;
}

/* SEQUENCE, PUTFH, DELEGRETURN. */
static int delegreturn(const nfs_fh4 *fh, const stateid4 *d)
{
	nfs_argop4 op[3];
	COMPOUND4res res;
	nfs_resop4 *rd;
	int rc;

	memset(op, 0, sizeof(op));
	op_sequence(&op[0]);
	op[1].argop = OP_PUTFH;
	op[1].nfs_argop4_u.opputfh.object = *fh;
	op[2].argop = OP_DELEGRETURN;
	op[2].nfs_argop4_u.opdelegreturn.deleg_stateid = *d;
	rc = compound("DELEGRETURN", op, 3, &res, NULL);
	if (rc)
		return rc;
	rd = res_op(&res, 2, OP_DELEGRETURN);
	rc = rd ? (int)rd->nfs_resop4_u.opdelegreturn : (int)res.status;
	free_res(&res);
	return rc;
}

/* ---------------------------------------------------------------- session */

static int exchange_id(void)
{
	char owner[128];
	nfs_argop4 op[1];
	COMPOUND4res res;
	nfs_resop4 *r;
	uint64_t now = (uint64_t)time(NULL);
	int rc;

	/* A client owner of its own per run (§2.4: a new owner is a new
	 * client; no state of an earlier run is taken over). */
	snprintf(owner, sizeof(owner), "rpcrdma-iop41-%d-%llu", (int)getpid(),
		 (unsigned long long)iop_now_ms());
	memset(op, 0, sizeof(op));
	op[0].argop = OP_EXCHANGE_ID;
	{
		EXCHANGE_ID4args *a = &op[0].nfs_argop4_u.opexchange_id;

		memcpy(a->eia_clientowner.co_verifier, &now, sizeof(now));
		a->eia_clientowner.co_ownerid.co_ownerid_len = (u_int)strlen(owner);
		a->eia_clientowner.co_ownerid.co_ownerid_val = owner;
		a->eia_flags = 0;
		a->eia_state_protect.spa_how = SP4_NONE;
		a->eia_client_impl_id.eia_client_impl_id_len = 0;
	}
	rc = compound("EXCHANGE_ID", op, 1, &res, NULL);
	if (rc)
		return rc;
	r = res_op(&res, 0, OP_EXCHANGE_ID);
	if (!r || r->nfs_resop4_u.opexchange_id.eir_status != NFS4_OK) {
		rc = r ? (int)r->nfs_resop4_u.opexchange_id.eir_status : (int)res.status;
		free_res(&res);
		return rc ? rc : (int)NFS4ERR_SERVERFAULT;
	}
	{
		const EXCHANGE_ID4resok *ok =
		    &r->nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4;
		const server_owner4 *so = &ok->eir_server_owner;

		g.clientid = ok->eir_clientid;
		printf(
		    "EXCHANGE_ID: clientid 0x%016llx sequenceid %u flags 0x%08x state protect %d, "
		    "server owner %.*s/%llu, %u impl id(s)\n",
		    (unsigned long long)ok->eir_clientid, ok->eir_sequenceid, ok->eir_flags,
		    ok->eir_state_protect.spr_how, (int)so->so_major_id.so_major_id_len,
		    so->so_major_id.so_major_id_val, (unsigned long long)so->so_minor_id,
		    ok->eir_server_impl_id.eir_server_impl_id_len);
		/* §18.35.4: a new client is not confirmed; SP4_NONE back. */
		IOP_EXPECT((ok->eir_flags & EXCHGID4_FLAG_CONFIRMED_R) == 0);
		IOP_EXPECT(ok->eir_state_protect.spr_how == SP4_NONE);
		g.cs_seq = ok->eir_sequenceid; /* §18.36.3: csa_sequence */
	}
	free_res(&res);
	return 0;
}

static int create_session(void)
{
	nfs_argop4 op[1];
	COMPOUND4res res;
	nfs_resop4 *r;
	callback_sec_parms4 sec[2];
	int rc;

	memset(op, 0, sizeof(op));
	memset(sec, 0, sizeof(sec));
	/* Callback credentials (§18.36.3): AUTH_SYS as root first, then
	 * AUTH_NONE; nfsd takes the first it supports. */
	sec[0].cb_secflavor = CB_AUTH_SYS;
	sec[0].callback_sec_parms4_u.cbsp_sys_cred.machinename = (char *)"rpcrdma-iop41";
	sec[1].cb_secflavor = CB_AUTH_NONE;
	op[0].argop = OP_CREATE_SESSION;
	{
		CREATE_SESSION4args *a = &op[0].nfs_argop4_u.opcreate_session;

		a->csa_clientid = g.clientid;
		a->csa_sequence = g.cs_seq;
		a->csa_flags = CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
		/* Fore channel: replies up to 1 MiB of READ data plus the
		 * compound around it (nfsd clamps to its own maximum). */
		a->csa_fore_chan_attrs.ca_maxrequestsize = 64u << 10;
		a->csa_fore_chan_attrs.ca_maxresponsesize = MIB + (64u << 10);
		a->csa_fore_chan_attrs.ca_maxresponsesize_cached = 2048;
		a->csa_fore_chan_attrs.ca_maxoperations = 16;
		a->csa_fore_chan_attrs.ca_maxrequests = 4;
		/* Back channel: one slot; calls and replies travel inline
		 * within the connection's 4 KiB thresholds (RFC 8167 §4.2:
		 * the forward thresholds hold in both directions). */
		a->csa_back_chan_attrs.ca_maxrequestsize = 4096;
		a->csa_back_chan_attrs.ca_maxresponsesize = 4096;
		a->csa_back_chan_attrs.ca_maxresponsesize_cached = 0;
		a->csa_back_chan_attrs.ca_maxoperations = 4;
		a->csa_back_chan_attrs.ca_maxrequests = 1;
		a->csa_cb_program = NFS41_CB_PROG;
		a->csa_sec_parms.csa_sec_parms_len = 2;
		a->csa_sec_parms.csa_sec_parms_val = sec;
	}
	rc = compound("CREATE_SESSION", op, 1, &res, NULL);
	if (rc)
		return rc;
	r = res_op(&res, 0, OP_CREATE_SESSION);
	if (!r || r->nfs_resop4_u.opcreate_session.csr_status != NFS4_OK) {
		rc = r ? (int)r->nfs_resop4_u.opcreate_session.csr_status : (int)res.status;
		free_res(&res);
		return rc ? rc : (int)NFS4ERR_SERVERFAULT;
	}
	{
		const CREATE_SESSION4resok *ok =
		    &r->nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u.csr_resok4;
		const channel_attrs4 *fc = &ok->csr_fore_chan_attrs, *bc = &ok->csr_back_chan_attrs;
		char sid[2 * NFS4_SESSIONID_SIZE + 1];

		pthread_mutex_lock(&g.mu);
		memcpy(g.sid, ok->csr_sessionid, NFS4_SESSIONID_SIZE);
		pthread_mutex_unlock(&g.mu);
		g.slot_seq = 0;
		hex(g.sid, NFS4_SESSIONID_SIZE, sid);
		printf("CREATE_SESSION: session %s sequence %u flags 0x%x\n", sid, ok->csr_sequence,
		       ok->csr_flags);
		printf("  fore: req %u resp %u cached %u ops %u reqs %u; back: req %u resp %u "
		       "cached %u ops %u reqs %u\n",
		       fc->ca_maxrequestsize, fc->ca_maxresponsesize, fc->ca_maxresponsesize_cached,
		       fc->ca_maxoperations, fc->ca_maxrequests, bc->ca_maxrequestsize,
		       bc->ca_maxresponsesize, bc->ca_maxresponsesize_cached, bc->ca_maxoperations,
		       bc->ca_maxrequests);
		/* §18.36.4: CONN_BACK_CHAN set in the reply = this connection
		 * is bound for the backchannel too. */
		IOP_EXPECT(ok->csr_flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN);
		IOP_EXPECT(ok->csr_sequence == op[0].nfs_argop4_u.opcreate_session.csa_sequence);
		IOP_EXPECT(fc->ca_maxrequests >= 1 && bc->ca_maxrequests >= 1);
	}
	free_res(&res);
	return 0;
}

static int simple(const char *what, nfs_argop4 *op, unsigned int nops, nfs_opnum4 last)
{
	COMPOUND4res res;
	nfs_resop4 *r;
	int rc = compound(what, op, nops, &res, NULL);

	if (rc)
		return rc;
	r = res_op(&res, nops - 1, last);
	rc = r ? (int)op_status(r) : (int)(res.status ? res.status : NFS4ERR_SERVERFAULT);
	free_res(&res);
	return rc;
}

/* ---------------------------------------------------------------- main */

/* Conditions on the backchannel state the main thread waits for. */
static bool saw_cb_null(void)
{
	return g.cb_null >= 1;
}

static bool saw_recall(void)
{
	return g.cb_recall >= 1;
}

static bool all_answered(void)
{
	return g.cb_replies_ok >= g.cb_null + g.cb_compound;
}

/* Wait until @cond (evaluated under g.mu) holds or @ms pass. */
static bool wait_for(bool (*cond)(void), uint64_t ms)
{
	uint64_t end = iop_now_ms() + ms;
	struct timespec ts;
	bool ok;

	pthread_mutex_lock(&g.mu);
	while (!(ok = cond()) && iop_now_ms() < end) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&g.cv, &g.mu, &ts);
	}
	pthread_mutex_unlock(&g.mu);
	return ok;
}

static void print_bc_stats(const char *when)
{
	struct rpcrdma_bc_stats b;

	if (rpcrdma_clnt_bc_stats(g.cl, &b) != 0)
		return;
	printf("backchannel counters (%s): %llu reverse calls received, %llu replies sent, %llu "
	       "dropped, %llu short, %llu long calls, server reverse credit request %u; handler: "
	       "CB_NULL %u CB_COMPOUND %u (CB_SEQUENCE %u CB_RECALL %u other %u), %u answered, %u "
	       "refused\n",
	       when, (unsigned long long)b.calls_received, (unsigned long long)b.replies_sent,
	       (unsigned long long)b.dropped, (unsigned long long)b.short_msgs,
	       (unsigned long long)b.long_calls, b.peer_credits, g.cb_null, g.cb_compound,
	       g.cb_sequence, g.cb_recall, g.cb_other, g.cb_replies_ok, g.cb_bad);
}

/* ---- chunk shapes against nfsd (issue 13) ---- */

/* SEQUENCE, PUTROOTFH, LOOKUP interop, LOOKUP @name, GETFH: @fh (malloc'ed). */
static int lookup_fh(const char *name, nfs_fh4 *fh)
{
	nfs_argop4 op[5];
	COMPOUND4res res;
	nfs_resop4 *rf;
	int rc;

	memset(op, 0, sizeof(op));
	op_sequence(&op[0]);
	op[1].argop = OP_PUTROOTFH;
	op[2].argop = OP_LOOKUP;
	op[2].nfs_argop4_u.oplookup.objname.utf8string_val = (char *)"interop";
	op[2].nfs_argop4_u.oplookup.objname.utf8string_len = 7;
	op[3].argop = OP_LOOKUP;
	op[3].nfs_argop4_u.oplookup.objname.utf8string_val = (char *)(uintptr_t)name;
	op[3].nfs_argop4_u.oplookup.objname.utf8string_len = (u_int)strlen(name);
	op[4].argop = OP_GETFH;
	rc = compound("LOOKUP", op, 5, &res, NULL);
	if (rc)
		return rc;
	rf = res_op(&res, 4, OP_GETFH);
	if (res.status != NFS4_OK || !rf) {
		rc = res.status ? (int)res.status : (int)NFS4ERR_SERVERFAULT;
		free_res(&res);
		return rc;
	}
	{
		const nfs_fh4 *r = &rf->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;

		fh->nfs_fh4_val = malloc(r->nfs_fh4_len + 1u);
		if (fh->nfs_fh4_val) {
			memcpy(fh->nfs_fh4_val, r->nfs_fh4_val, r->nfs_fh4_len);
			fh->nfs_fh4_len = r->nfs_fh4_len;
		}
	}
	free_res(&res);
	return fh->nfs_fh4_val ? 0 : -ENOMEM;
}

#define W1_FILE "nfs41-w1"
#define W2_FILE "nfs41-w2"
#define W1_END  (4u * 4096u + 4u) /* where the first chunk's data ends: see two_writes() */
#define W2_SIZE 20004u            /* sizes are multiples of 4: see the top of this file */

/* Position of the first Read chunk of the last call sent (the client's
 * test hook, api_int.h). */
static uint32_t probe_pos;

static void probe_send(void *arg, const uint8_t *hdr, size_t len, size_t mlen)
{
	static struct rpcrdma1_hdr h;

	(void)arg;
	(void)mlen;
	if (rpcrdma1_decode_buf(hdr, len, &h) == 0 && h.chunks.nreads)
		probe_pos = h.chunks.reads[0].position;
}

/* The capture check lets Wireshark's misreading of this call's frames go
 * (it reassembles a call with two Read chunks wrongly): STATE/multichunk-xids. */
static void note_multichunk_xid(const struct iop_env *e, uint32_t xid)
{
	char path[600];
	FILE *f;

	if (!e->state[0])
		return;
	snprintf(path, sizeof(path), "%s/multichunk-xids", e->state);
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%08x\n", xid);
		fclose(f);
	}
}

/* SEQUENCE, PUTFH @fh1, WRITE @d1 (@l1 bytes), and when @fh2: PUTFH @fh2,
 * WRITE @d2 (@l2 bytes); anonymous stateid, FILE_SYNC4, offset 0.
 * Returns the number of operations. */
static unsigned int write_ops(nfs_argop4 *op, const nfs_fh4 *fh1, uint8_t *d1, uint32_t l1,
			      const nfs_fh4 *fh2, uint8_t *d2, uint32_t l2)
{
	memset(op, 0, 5 * sizeof(*op));
	op_sequence(&op[0]);
	op[1].argop = OP_PUTFH;
	op[1].nfs_argop4_u.opputfh.object = *fh1;
	op[2].argop = OP_WRITE;
	op[2].nfs_argop4_u.opwrite.stable = FILE_SYNC4;
	op[2].nfs_argop4_u.opwrite.data.base = d1;
	op[2].nfs_argop4_u.opwrite.data.len = l1;
	if (!fh2)
		return 3;
	op[3].argop = OP_PUTFH;
	op[3].nfs_argop4_u.opputfh.object = *fh2;
	op[4].argop = OP_WRITE;
	op[4].nfs_argop4_u.opwrite.stable = FILE_SYNC4;
	op[4].nfs_argop4_u.opwrite.data.base = d2;
	op[4].nfs_argop4_u.opwrite.data.len = l2;
	return 5;
}

/*
 * Defect 1 of issue 13, RFC 8166 §3.4.5: one COMPOUND { SEQUENCE, PUTFH
 * w1, WRITE, PUTFH w2, WRITE } whose two WRITE4args.data items go by two
 * Read chunks. The second chunk's rdma_position is its offset in the
 * complete XDR stream (the first WRITE's data counted in); nfsd splices
 * the call by that rule (svc_rdma_read_multiple_chunks: inline bytes up to
 * the next position minus the bytes gathered so far), so with a position
 * in the reduced stream the second WRITE would be garbage. Both files'
 * contents are then cksummed in the guest.
 *
 * Linux 6.1 has a bug of its own there: svc_rdma_copy_inline_range()
 * copies an inline piece to page[pageno] + pageno instead of + pageoff, so
 * the inline bytes between two chunks land in the right place only when
 * the stream so far ends at pageoff == pageno (a first WRITE of 30000
 * bytes gave ILLEGAL for the second PUTFH). The first chunk is sized so
 * that it ends at 4 * 4096 + 4: a probe WRITE (one Read chunk, same
 * prefix) gives its position through the client's test hook. WRITE uses
 * the anonymous stateid (RFC 8881 §8.2.3); nfsd answers NFS4ERR_GRACE to
 * it while a grace period holds: then again, every second.
 */
static void two_writes(const struct iop_env *env)
{
	uint8_t *d1 = malloc(W1_END), *d2 = malloc(W2_SIZE);
	nfs_fh4 fh1 = {0, NULL}, fh2 = {0, NULL};
	struct clnt_testhook hook = {.on_send = probe_send}, nohook = {0};
	char cmd[256], out[512];
	uint32_t c1 = 0, c2 = 0, l1 = 0;
	unsigned long long s1 = 0, s2 = 0;
	int rc, grc = -1;

	IOP_EXPECT(d1 && d2);
	snprintf(cmd, sizeof(cmd),
		 "cd /export/interop && rm -f %s %s && : > %s && : > %s && chmod 0666 %s %s",
		 W1_FILE, W2_FILE, W1_FILE, W2_FILE, W1_FILE, W2_FILE);
	IOP_EXPECT(iop_guest_sh(env, "nfs41-wmk", cmd, 30000, &grc, out, sizeof(out)) == 0 &&
		   grc == 0);
	IOP_EXPECT(lookup_fh(W1_FILE, &fh1) == 0 && lookup_fh(W2_FILE, &fh2) == 0);
	if (!d1 || !d2 || !fh1.nfs_fh4_val || !fh2.nfs_fh4_val)
		goto done;
	for (uint32_t i = 0; i < W1_END; i++)
		d1[i] = (uint8_t)((i * 2654435761u) >> 13);
	for (uint32_t i = 0; i < W2_SIZE; i++)
		d2[i] = (uint8_t)((i * 40503u + 7u) >> 5);
	for (unsigned int tries = 0;; tries++) {
		nfs_argop4 op[5];
		COMPOUND4res res;
		struct rpcrdma_call_result cr;
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &cr};
		nfs_resop4 *r1, *r2;
		unsigned int n;

		if (!l1) {
			/* The probe: SEQUENCE, PUTFH w1, WRITE 4096 bytes. */
			probe_pos = 0;
			rpcrdma_clnt_set_testhook(g.cl, &hook);
			n = write_ops(op, &fh1, d1, 4096, NULL, NULL, 0);
		} else {
			n = write_ops(op, &fh1, d1, l1, &fh2, d2, W2_SIZE);
		}
		memset(&cr, 0, sizeof(cr));
		rc = compound(l1 ? "WRITE x2" : "WRITE (probe)", op, n, &res, &o);
		rpcrdma_clnt_set_testhook(g.cl, &nohook);
		IOP_EXPECT(rc == 0);
		if (rc)
			break;
		r1 = res_op(&res, 2, OP_WRITE);
		if (r1 && r1->nfs_resop4_u.opwrite.status == NFS4ERR_GRACE && tries < 120) {
			free_res(&res);
			sleep(1);
			continue;
		}
		if (!l1) {
			free_res(&res);
			IOP_EXPECT(probe_pos && probe_pos < 4096 && !(probe_pos & 3));
			if (!probe_pos || probe_pos >= 4096 || (probe_pos & 3))
				break;
			l1 = W1_END - probe_pos;
			printf("WRITE (probe): data at position %u: the first chunk is %u bytes\n",
			       probe_pos, l1);
			continue;
		}
		r2 = res_op(&res, 4, OP_WRITE);
		note_multichunk_xid(env, cr.xid);
		printf("WRITE x2: %u Read chunks, call %s, reply %s\n", cr.read_chunks,
		       cr.call_proc ? "RDMA_NOMSG" : "RDMA_MSG",
		       cr.reply_proc ? "RDMA_NOMSG" : "RDMA_MSG");
		IOP_EXPECT(cr.read_chunks == 2);
		IOP_EXPECT(res.status == NFS4_OK && r1 && r2);
		if (res.status != NFS4_OK)
			printf("RFC 8166 §3.4.5: COMPOUND with two WRITEs by two Read chunks "
			       "failed: %d\n",
			       res.status);
		if (r1 && r2 && res.status == NFS4_OK) {
			IOP_EXPECT(r1->nfs_resop4_u.opwrite.WRITE4res_u.resok4.count == l1);
			IOP_EXPECT(r2->nfs_resop4_u.opwrite.WRITE4res_u.resok4.count == W2_SIZE);
		}
		free_res(&res);
		break;
	}
	snprintf(cmd, sizeof(cmd), "cd /export/interop && echo $(cksum < %s) $(cksum < %s)",
		 W1_FILE, W2_FILE);
	grc = -1;
	IOP_EXPECT(iop_guest_sh(env, "nfs41-wck", cmd, 30000, &grc, out, sizeof(out)) == 0 &&
		   grc == 0);
	IOP_EXPECT(sscanf(out, "%u %llu %u %llu", &c1, &s1, &c2, &s2) == 4);
	printf("guest: %s %u %llu (ours %u)\n", W1_FILE, c1, s1, iop_cksum(d1, l1));
	if (c1 != iop_cksum(d1, l1))
		printf("RFC 8166 §3.4.5: the guest's %s differs from what the first Read chunk "
		       "carried\n",
		       W1_FILE);
	IOP_EXPECT(l1 && s1 == l1 && c1 == iop_cksum(d1, l1));
	/* The second file: its size is right, but Linux 6.1 nfsd writes the
	 * bytes of the page that holds the start of the payload from the
	 * page's beginning (svc_fill_write_vector() ignores the payload's
	 * page_base; seen: the file starts with the last 4 bytes of the
	 * first chunk and the PUTFH that follows it). What it stores is
	 * therefore the complete stream as we sent it, from W1_END - 4 on:
	 * the first chunk's last 4 bytes, PUTFH w2, WRITE's arguments with
	 * the data. Equal cksums show every byte of the call was where RFC
	 * 8166 §3.4.5 says (with a reduced-stream position nfsd cannot even
	 * decode the second WRITE). */
	{
		uint8_t *want = malloc(4 + 128 + W2_SIZE + 64);
		nfs_argop4 op[5];
		XDR x;
		uint32_t n = 0;

		IOP_EXPECT(want != NULL);
		if (want && l1) {
			uint32_t keep = g.slot_seq; /* nothing is sent here */

			write_ops(op, &fh1, d1, l1, &fh2, d2, W2_SIZE);
			g.slot_seq = keep;
			memcpy(want, d1 + l1 - 4, 4);
			xdrmem_create(&x, (char *)want + 4, 128 + W2_SIZE + 60, XDR_ENCODE);
			IOP_EXPECT(xdr_nfs_argop4(&x, &op[3]) && xdr_nfs_argop4(&x, &op[4]));
			n = 4 + xdr_getpos(&x);
			xdr_destroy(&x);
		}
		printf("guest: %s cksum %u size %llu; the complete stream from %u on: %u (%u "
		       "bytes of it; the data alone: %u)\n",
		       W2_FILE, c2, s2, W1_END - 4,
		       want && n >= W2_SIZE ? iop_cksum(want, W2_SIZE) : 0, n,
		       iop_cksum(d2, W2_SIZE));
		IOP_EXPECT(s2 == W2_SIZE && n >= W2_SIZE &&
			   (c2 == iop_cksum(want, W2_SIZE) || c2 == iop_cksum(d2, W2_SIZE)));
		if (c2 == iop_cksum(d2, W2_SIZE))
			printf(
			    "  (the data itself: this kernel's write vector honours page_base)\n");
		free(want);
	}
done:
	free(fh1.nfs_fh4_val);
	free(fh2.nfs_fh4_val);
	free(d1);
	free(d2);
}

/*
 * Defect 2 of issue 13, RFC 8166 §3.4.6 + §3.5.3.2: READ of read-1m
 * offering a Write chunk for the data and a Reply chunk. Linux
 * svc_rdma_sendto then answers RDMA_NOMSG with the Write list filled and
 * the rest of the reply in the Reply chunk; the data must land in our
 * buffer with the guest's cksum. Linux 6.1 counts the Write chunk's
 * payload in the length of what it put in the Reply chunk (it returns the
 * whole reply's length from svc_rdma_send_reply_chunk) and fails the
 * reply with -E2BIG, dropping the connection, when that exceeds the Reply
 * chunk (seen with 16 KiB: svcrdma_send_err status=-7): so the Reply
 * chunk offered is as large as the session's largest reply, 1 MiB +
 * 64 KiB, and the echoed Reply chunk length is that sum, not the bytes
 * written there (the reply decodes from its first ~150 bytes).
 */
static void read_wlist_reply(const char *ckfile, uint8_t *buf)
{
	struct ofile f;
	uint32_t want = 0;
	uint64_t size = 0;
	nfs_argop4 op[3];
	COMPOUND4res res;
	struct rpcrdma_call_result cr;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RECV_BULK |
						   RPCRDMA_CALL_OPT_REPLY_SIZE |
						   RPCRDMA_CALL_OPT_RESULT,
				      .nrecv_bulk = 1,
				      .reply_size = MIB + (64u << 10),
				      .result = &cr};
	nfs_resop4 *rr;
	int rc;

	IOP_EXPECT(iop_cksum_lookup(ckfile, "read-1m", &want, &size) == 0 && size == MIB);
	rc = open_file("read-1m", &f, 20000);
	IOP_EXPECT(rc == 0);
	if (rc)
		return;
	memset(op, 0, sizeof(op));
	memset(&cr, 0, sizeof(cr));
	memset(buf, 0, MIB);
	op_sequence(&op[0]);
	op[1].argop = OP_PUTFH;
	op[1].nfs_argop4_u.opputfh.object = f.fh;
	op[2].argop = OP_READ;
	op[2].nfs_argop4_u.opread.stateid = f.open;
	op[2].nfs_argop4_u.opread.count = MIB;
	o.recv_bulk[0].base = buf;
	o.recv_bulk[0].len = MIB;
	rc = compound("READ + Reply chunk", op, 3, &res, &o);
	if (rc)
		printf("RFC 8166 §3.5.3.2: READ with a Write chunk and a Reply chunk failed: %d "
		       "(%s)\n",
		       rc, rpcrdma_strerror(rc));
	IOP_EXPECT(rc == 0);
	if (!rc) {
		rr = res_op(&res, 2, OP_READ);
		printf("READ + Reply chunk: reply %s, %u bytes placed, Reply chunk offered %u, "
		       "cksum %u (guest %u)\n",
		       cr.reply_proc == 1 ? "RDMA_NOMSG" : "RDMA_MSG", cr.recv_bulk_len[0],
		       cr.reply_chunk, iop_cksum(buf, MIB), want);
		IOP_EXPECT(cr.reply_proc == 1 && cr.reply_chunk == 1 && cr.write_chunks == 1);
		IOP_EXPECT(rr && rr->nfs_resop4_u.opread.status == NFS4_OK);
		if (rr && rr->nfs_resop4_u.opread.status == NFS4_OK) {
			const READ4resok *ok = &rr->nfs_resop4_u.opread.READ4res_u.resok4;

			IOP_EXPECT(ok->data.len == MIB && ok->data.base == buf &&
				   cr.recv_bulk_len[0] == MIB);
			IOP_EXPECT(iop_cksum(buf, MIB) == want);
		}
		free_res(&res);
	}
	IOP_EXPECT(close_file(&f) == 0);
	if (f.deleg_type == OPEN_DELEGATE_READ)
		IOP_EXPECT(delegreturn(&f.fh, &f.deleg) == 0);
	free(f.fh.nfs_fh4_val);
}

int main(void)
{
	struct iop_env env;
	struct rpcrdma_clnt_opts co = {0};
	struct rpcrdma_bc_opts bo = {0};
	struct rpcrdma_bc_stats bst = {0};
	struct ofile f1, f2;
	uint8_t *buf = NULL;
	char ck[600], out[512];
	uint32_t want_crc = 0, got = 0, crc2 = 0;
	uint64_t size = 0, size2 = 0, t0;
	unsigned int chunks = 0;
	bool session = false, have_client = false, traced = false, seen = false;
	int rc = iop_env_get(&env), grc = -1;

	if (rc != IOP_PASS)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&f1, 0, sizeof(f1));
	memset(&f2, 0, sizeof(f2));
	buf = aligned_alloc(4096, 2 * MIB);
	if (!buf)
		return IOP_FAIL;

	/* Our own file for the delegation (so the files other tests read stay
	 * as they are), with its cksum as the guest computes it. */
	snprintf(out, sizeof(out),
		 "head -c %u /dev/urandom > /export/interop/%s && chmod 0666 /export/interop/%s && "
		 "cksum < /export/interop/%s",
		 DELEG_SIZE, DELEG_FILE, DELEG_FILE, DELEG_FILE);
	if (iop_guest_sh_start(&env, "nfs41-mk", out) != 0 ||
	    iop_guest_sh_wait(&env, "nfs41-mk", 30000, &grc, out, sizeof(out)) != 0 || grc != 0 ||
	    sscanf(out, "%u %llu", &want_crc, (unsigned long long *)&size) != 2 ||
	    size != DELEG_SIZE) {
		printf("FAIL: creating %s in the guest: rc=%d '%s'\n", DELEG_FILE, grc, out);
		free(buf);
		return IOP_FAIL;
	}
	printf("guest: %s made, cksum %u size %llu\n", DELEG_FILE, want_crc,
	       (unsigned long long)size);
	/* The kernel's view of the callbacks (nfsd, sunrpc and rpcrdma trace
	 * events in a trace instance of our own, so the suite's svcrdma
	 * trace stays as it is): out/nfs41-trace.txt at the end. */
	grc = -1;
	if (iop_guest_sh_start(&env, "nfs41-trace-on", TRACE_ON) != 0 ||
	    iop_guest_sh_wait(&env, "nfs41-trace-on", 30000, &grc, out, sizeof(out)) != 0 ||
	    grc != 0) {
		printf("note: no kernel trace of this run (rc=%d '%s')\n", grc, out);
	} else {
		printf("guest: %s\n", out);
		traced = true;
	}

	co.comp_mask = RPCRDMA_CLNT_OPT_PROVIDER | RPCRDMA_CLNT_OPT_INLINE |
		       RPCRDMA_CLNT_OPT_MPA_CRC | RPCRDMA_CLNT_OPT_TIMEOUT |
		       RPCRDMA_CLNT_OPT_REMOTE_INV;
	co.provider = "softiwarp";
	co.inline_send = 4096;
	co.inline_recv = 4096;
	co.mpa_crc = 1;
	co.timeout_ms = 20000;
	co.remote_invalidate = 1;
	iop_clnt_auth_root(&co); /* the export is sec=sys */
	/* Reverse direction: chunks off (nfsd sends its callbacks inline,
	 * svc_rdma_backchannel.c; anything else would be refused with
	 * ERR_CHUNK and show). */
	bo.comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS;
	bo.credits = 2;
	bo.chunks = 0;
	t0 = iop_now_ms();
	rc = rpcrdma_clnt_create_bc("127.0.0.1", env.rdma_port, NFS4_PROGRAM, NFS_V4, &co, &bo,
				    &g.cl);
	if (rc) {
		printf("FAIL: rpcrdma_clnt_create_bc: %d (%s)\n", rc, rpcrdma_strerror(rc));
		free(buf);
		return IOP_FAIL;
	}
	printf("rpcrdma_clnt_create_bc: %llu ms\n", (unsigned long long)(iop_now_ms() - t0));
	IOP_EXPECT(rpcrdma_clnt_bc_register(g.cl, NFS41_CB_PROG, NFS41_CB_VERS, cb_dispatch, &g) ==
		   0);
	/*
	 * Linux 6.1 siw may leave the first Send after its MPA reply unread
	 * (tests/interop/README.md); the client API neither resends nor has
	 * a second credit yet, so wait as test_interop_clnt does. The gate of
	 * RFC 8167 §6 is not rpcrdma_clnt_bc_enable() here: nfsd opens it
	 * itself when CREATE_SESSION binds the connection.
	 * RPCRDMA_INTEROP_NO_DELAY=1 leaves the wait out (to see whether the
	 * provider's first-frame nudge makes it unneeded).
	 */
	if (!getenv("RPCRDMA_INTEROP_NO_DELAY"))
		usleep(500 * 1000);
	{
		int r0 = rpcrdma_clnt_call(g.cl, NFSPROC4_NULL, (xdrproc_t)xdr_nothing, NULL,
					   (xdrproc_t)xdr_nothing, NULL, NULL);

		printf("NFSv4 NULL: %d (%s)\n", r0, rpcrdma_strerror(r0));
		IOP_EXPECT(r0 == 0);
		if (r0)
			goto out;
	}

	rc = exchange_id();
	IOP_EXPECT(rc == 0);
	if (rc) {
		printf("EXCHANGE_ID failed: %d\n", rc);
		goto out;
	}
	have_client = true;
	rc = create_session();
	IOP_EXPECT(rc == 0);
	if (rc) {
		printf("CREATE_SESSION failed: %d\n", rc);
		goto out;
	}
	session = true;

	/* nfsd "probes" the callback path after CREATE_SESSION, but Linux
	 * 6.1 sends no CB_NULL for a 4.1 session: it marks the channel up
	 * without a call (kernel trace: nfsd_cb_probe, nfsd_cb_setup
	 * proto=rdma, nfsd_cb_state UP, no RPC task). A CB_NULL that does
	 * come is answered and counted; what is asserted is that SEQUENCE
	 * does not report the callback path down. */
	(void)wait_for(saw_cb_null, 300);
	{
		nfs_argop4 op[2];

		memset(op, 0, sizeof(op));
		op_sequence(&op[0]);
		op[1].argop = OP_RECLAIM_COMPLETE;
		op[1].nfs_argop4_u.opreclaim_complete.rca_one_fs = FALSE;
		rc = simple("RECLAIM_COMPLETE", op, 2, OP_RECLAIM_COMPLETE);
		/* §18.51.3: NFS4ERR_COMPLETE_ALREADY (10054) is no failure. */
		IOP_EXPECT(rc == 0 || rc == NFS4ERR_COMPLETE_ALREADY);
	}
	IOP_EXPECT(sequence_only() == 0);
	IOP_EXPECT((g.status_flags & (SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION |
				      SEQ4_STATUS_BACKCHANNEL_FAULT)) == 0);
	print_bc_stats("after CREATE_SESSION");

	/* ---- read-1m: OPEN, READ by Write chunk, cksum, CLOSE ---- */
	rc = open_file("read-1m", &f1, 120000);
	IOP_EXPECT(rc == 0);
	if (rc) {
		printf("OPEN read-1m: %d\n", rc);
		goto out;
	}
	{
		uint32_t want1 = 0;
		uint64_t size1 = 0;

		snprintf(ck, sizeof(ck), "%s/export.cksum", env.guest_out);
		IOP_EXPECT(iop_cksum_lookup(ck, "read-1m", &want1, &size1) == 0 && size1 == MIB);
		memset(buf, 0, 2 * MIB);
		rc = read_file(&f1, &f1.open, buf, 2 * MIB, &got, &chunks);
		printf("READ read-1m: %d, %u bytes, %u Write chunk(s), cksum %u (guest %u)\n", rc,
		       got, chunks, iop_cksum(buf, got), want1);
		IOP_EXPECT(rc == 0 && got == MIB && chunks >= 1);
		IOP_EXPECT(iop_cksum(buf, got) == want1);
	}
	IOP_EXPECT(close_file(&f1) == 0);
	if (f1.deleg_type == OPEN_DELEGATE_READ)
		IOP_EXPECT(delegreturn(&f1.fh, &f1.deleg) == 0);

	/* ---- nfs41-deleg: a read delegation, then its recall ----
	 * Seen: the NFSv4 grace period ends at our RECLAIM_COMPLETE (trace:
	 * nfsd_clid_reclaim_complete, nfsd_grace_complete; no client to
	 * reclaim), yet nfsd answers OPEN with OPEN_DELEGATE_NONE_EXT /
	 * WND4_RESOURCE until about 55 s after rpc.nfsd started, most
	 * likely because lockd's grace period (5 x nlm_timeout = 50 s with
	 * nlm_grace_period 0) still holds: nfsd gives no delegation while
	 * any lock manager is in grace. So: CLOSE, wait, OPEN again. */
	t0 = iop_now_ms();
	for (unsigned int tries = 1;; tries++) {
		rc = open_file(DELEG_FILE, &f2, 20000);
		IOP_EXPECT(rc == 0);
		if (rc) {
			printf("OPEN %s: %d\n", DELEG_FILE, rc);
			goto out;
		}
		if (f2.deleg_type == OPEN_DELEGATE_READ || iop_now_ms() - t0 > DELEG_WAIT_MS) {
			if (tries > 1)
				printf("OPEN %s: delegation after %u tries, %llu ms\n", DELEG_FILE,
				       tries, (unsigned long long)(iop_now_ms() - t0));
			break;
		}
		if (tries == 1)
			printf("OPEN %s: no delegation yet (why %u): CLOSE and OPEN again every "
			       "2 s, up to %u s\n",
			       DELEG_FILE, f2.why_none, DELEG_WAIT_MS / 1000);
		IOP_EXPECT(close_file(&f2) == 0);
		free(f2.fh.nfs_fh4_val);
		memset(&f2, 0, sizeof(f2));
		sleep(2);
	}
	IOP_EXPECT(f2.deleg_type == OPEN_DELEGATE_READ);
	if (f2.deleg_type != OPEN_DELEGATE_READ) {
		printf("no read delegation for %s (type %d, why %u): no recall to provoke\n",
		       DELEG_FILE, f2.deleg_type, f2.why_none);
		IOP_EXPECT(close_file(&f2) == 0);
		goto out;
	}
	pthread_mutex_lock(&g.mu);
	g.deleg = f2.deleg;
	g.deleg_valid = true;
	pthread_mutex_unlock(&g.mu);
	memset(buf, 0, 2 * MIB);
	/* READ under the delegation's stateid (§9.1.3: a delegation stateid
	 * is good for READ). */
	rc = read_file(&f2, &f2.deleg, buf, 2 * MIB, &got, &chunks);
	printf("READ %s: %d, %u bytes, %u Write chunk(s), cksum %u (guest %u)\n", DELEG_FILE, rc,
	       got, chunks, iop_cksum(buf, got), want_crc);
	IOP_EXPECT(rc == 0 && got == DELEG_SIZE && chunks >= 1);
	IOP_EXPECT(iop_cksum(buf, got) == want_crc);
	IOP_EXPECT(close_file(&f2) == 0);

	/* The guest writes the file: its lease break makes nfsd recall our
	 * delegation; the writer waits until we return it. */
	snprintf(out, sizeof(out),
		 "printf moremore >> /export/interop/%s && cksum < /export/interop/%s", DELEG_FILE,
		 DELEG_FILE);
	IOP_EXPECT(iop_guest_sh_start(&env, "nfs41-recall", out) == 0);
	t0 = iop_now_ms();
	/* Forward traffic goes on while the recall is on its way (SEQUENCE
	 * every 20 ms): the reverse call lands between forward replies on
	 * the same connection and receive queue. */
	{
		unsigned int seqs = 0;

		while (!(seen = wait_for(saw_recall, 20)) && iop_now_ms() - t0 < 30000) {
			IOP_EXPECT(sequence_only() == 0);
			seqs++;
		}
		printf("%u SEQUENCE calls while waiting for the recall\n", seqs);
		if (!seen) {
			printf("no CB_RECALL within 30 s of the guest's write\n");
			iop_failures++;
		}
	}
	if (seen) {
		printf("CB_RECALL %llu ms after the guest's write started\n",
		       (unsigned long long)(iop_now_ms() - t0));
		/* Our reply was posted: the counters say so. */
		IOP_EXPECT(wait_for(all_answered, 5000));
		IOP_EXPECT(g.recall_ok == 1 && stateid_eq(&g.recalled, &f2.deleg));
		IOP_EXPECT(
		    g.recalled_fh.nfs_fh4_len == f2.fh.nfs_fh4_len &&
		    memcmp(g.recalled_fh.nfs_fh4_val, f2.fh.nfs_fh4_val, f2.fh.nfs_fh4_len) == 0);
		IOP_EXPECT(!g.recall_truncate);
	}
	/* The guest's write must still be waiting for the delegation. */
	{
		char p[700];

		snprintf(p, sizeof(p), "%s/sh-nfs41-recall.done", env.guest_out);
		if (access(p, F_OK) == 0)
			printf("note: the guest's write finished before DELEGRETURN\n");
	}
	rc = delegreturn(&f2.fh, &f2.deleg);
	printf("DELEGRETURN %s after the recall: %d\n", DELEG_FILE, rc);
	IOP_EXPECT(rc == 0);
	pthread_mutex_lock(&g.mu);
	g.deleg_valid = false;
	pthread_mutex_unlock(&g.mu);
	grc = -1;
	if (iop_guest_sh_wait(&env, "nfs41-recall", 60000, &grc, out, sizeof(out)) != 0 ||
	    grc != 0 || sscanf(out, "%u %llu", &crc2, (unsigned long long *)&size2) != 2) {
		printf("guest write: rc=%d '%s'\n", grc, out);
		iop_failures++;
	} else {
		printf("guest write done %llu ms after it started: cksum %u size %llu\n",
		       (unsigned long long)(iop_now_ms() - t0), crc2, (unsigned long long)size2);
		IOP_EXPECT(size2 == DELEG_SIZE + 8);
	}

	/* The change is visible through a new OPEN (no delegation expected:
	 * nfsd blocks delegations of a file it just recalled). */
	if (size2) {
		struct ofile f3;

		memset(&f3, 0, sizeof(f3));
		if (open_file(DELEG_FILE, &f3, 20000) == 0) {
			memset(buf, 0, 2 * MIB);
			rc = read_file(&f3, &f3.open, buf, 2 * MIB, &got, &chunks);
			printf("READ %s after the write: %d, %u bytes, cksum %u (guest %u)\n",
			       DELEG_FILE, rc, got, iop_cksum(buf, got), crc2);
			IOP_EXPECT(rc == 0 && got == size2 && iop_cksum(buf, got) == crc2);
			IOP_EXPECT(close_file(&f3) == 0);
			if (f3.deleg_type == OPEN_DELEGATE_READ)
				IOP_EXPECT(delegreturn(&f3.fh, &f3.deleg) == 0);
		} else {
			iop_failures++;
		}
		free(f3.fh.nfs_fh4_val);
	}
	IOP_EXPECT(sequence_only() == 0);

	/* ---- chunk shapes: two Read chunks, Write list + Reply chunk ---- */
	two_writes(&env);
	snprintf(ck, sizeof(ck), "%s/export.cksum", env.guest_out);
	read_wlist_reply(ck, buf);
	IOP_EXPECT(sequence_only() == 0);

out:
	if (session) {
		nfs_argop4 op[1];

		memset(op, 0, sizeof(op));
		op[0].argop = OP_DESTROY_SESSION;
		memcpy(op[0].nfs_argop4_u.opdestroy_session.dsa_sessionid, g.sid,
		       NFS4_SESSIONID_SIZE);
		IOP_EXPECT(simple("DESTROY_SESSION", op, 1, OP_DESTROY_SESSION) == 0);
	}
	if (have_client) {
		nfs_argop4 op[1];

		/* §18.50.3: alone, without SEQUENCE (the session is gone). */
		memset(op, 0, sizeof(op));
		op[0].argop = OP_DESTROY_CLIENTID;
		op[0].nfs_argop4_u.opdestroy_clientid.dca_clientid = g.clientid;
		IOP_EXPECT(simple("DESTROY_CLIENTID", op, 1, OP_DESTROY_CLIENTID) == 0);
	}
	if (g.cl) {
		struct rpcrdma_xprt_stats xs;

		if (rpcrdma_clnt_stats(g.cl, &xs) == 0) {
			/* RFC 8167 §4.1: the reverse call's credit value (the
			 * server's reverse request, 2) is not a forward grant:
			 * the forward grant stays nfsd's 64. */
			IOP_EXPECT(xs.credits == 64);
			IOP_EXPECT(xs.calls == xs.replies && xs.unmatched_replies == 0 &&
				   xs.bad_headers == 0 && xs.conn_errors == 0);
			printf(
			    "client counters: %llu calls %llu replies, %llu write chunks, %llu "
			    "remote invalidations, %llu unmatched replies, %llu bad headers, "
			    "%llu dropped, %llu conn errors, %llu reconnects\n",
			    (unsigned long long)xs.calls, (unsigned long long)xs.replies,
			    (unsigned long long)xs.write_chunks,
			    (unsigned long long)xs.remote_invalidations,
			    (unsigned long long)xs.unmatched_replies,
			    (unsigned long long)xs.bad_headers, (unsigned long long)xs.dropped_msgs,
			    (unsigned long long)xs.conn_errors, (unsigned long long)xs.reconnects);
			printf("forward credit grant at the end: %u\n", xs.credits);
		}
		print_bc_stats("at the end");
		if (rpcrdma_clnt_bc_stats(g.cl, &bst) == 0) {
			/* Every reverse call that arrived was answered; none
			 * dropped; our handler saw each one. */
			IOP_EXPECT(bst.calls_received >= 1);
			IOP_EXPECT(bst.replies_sent == bst.calls_received);
			IOP_EXPECT(bst.dropped == 0);
			IOP_EXPECT(bst.calls_received == (uint64_t)g.cb_null + g.cb_compound);
			/* nfsd's callbacks are inline RDMA_MSG (no chunks). */
			IOP_EXPECT(bst.short_msgs == bst.calls_received);
		}
		IOP_EXPECT(g.cb_bad == 0);
		/* exactly one recall: CB_COMPOUND { CB_SEQUENCE, CB_RECALL } */
		IOP_EXPECT(g.cb_compound == 1 && g.cb_sequence == 1 && g.cb_recall == 1 &&
			   g.cb_other == 0);
		rpcrdma_clnt_destroy(g.cl);
	}
	if (iop_guest_sh_start(&env, "nfs41-trace-off", TRACE_OFF) != 0 ||
	    iop_guest_sh_wait(&env, "nfs41-trace-off", 30000, &grc, out, sizeof(out)) != 0) {
		printf("note: kernel trace not saved ('%s')\n", out);
	} else if (traced) {
		unsigned int lines = 0, setups = 0, cbs = 0, recalls_ok = 0, faults = 0;

		printf("kernel trace: %s/nfs41-trace.txt: '%s' (lines, RDMA backchannel setups, "
		       "callback RPCs sent, CB_RECALLs done with status 0, FAULT states)\n",
		       env.guest_out, out);
		/* The kernel's side of the same story: its callback client ran
		 * over the RDMA backchannel, it sent exactly the callbacks we
		 * received, and it took our CB_RECALL answer as a success. */
		IOP_EXPECT(sscanf(out, "%u %u %u %u %u", &lines, &setups, &cbs, &recalls_ok,
				  &faults) == 5);
		IOP_EXPECT(setups >= 1);
		IOP_EXPECT(cbs == bst.calls_received);
		IOP_EXPECT(recalls_ok == g.recall_ok);
		IOP_EXPECT(faults == 0);
	}
	free(f1.fh.nfs_fh4_val);
	free(f2.fh.nfs_fh4_val);
	free(g.recalled_fh.nfs_fh4_val);
	free(buf);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
