/* SPDX-License-Identifier: MIT */
/*
 * NFSv4.1 state: client IDs (EXCHANGE_ID, §18.35), sessions and their slots
 * (CREATE_SESSION, SEQUENCE, §2.10), open and delegation stateids (§8.2),
 * and the callbacks, sent as RFC 8167 reverse calls on the connection the
 * client bound to the session's back channel:
 *   - CB_NULL right after CREATE_SESSION / BIND_CONN_TO_SESSION (the
 *     probe); its outcome is what SEQUENCE reports (§18.46.3:
 *     SEQ4_STATUS_CB_PATH_DOWN while the back channel is not known good);
 *   - CB_COMPOUND { CB_SEQUENCE, CB_RECALL } when another client's OPEN
 *     for writing (or a change of the file) conflicts with a read
 *     delegation; that OPEN waits for the DELEGRETURN.
 * All of it is in memory, under one lock: a restarted server knows no
 * client, and the clients find out by NFS4ERR_BADSESSION and
 * NFS4ERR_STALE_CLIENTID and start again (their reclaiming OPENs are taken
 * as ordinary ones, ops_fs.c). Leases never expire here.
 */
#define _GNU_SOURCE
#include "nfs41d.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NFS4_CALLBACK_VERS 1u
#define RECALL_WAIT_MS     3000

enum cb_state { CB_UNKNOWN, CB_UP, CB_DOWN };
enum st_type { ST_OPEN = 1, ST_DELEG = 2 };

struct n41_client {
	struct n41_client *next;
	uint64_t id;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	uint32_t ownerlen;
	bool confirmed;
	uint32_t cs_seq; /* the CREATE_SESSION sequence id expected next */
	bool revoked;    /* a delegation was revoked: say so in SEQUENCE */
};

struct n41_session {
	struct n41_session *next;
	uint8_t id[NFS4_SESSIONID_SIZE];
	struct n41_client *cl;
	uint32_t nslots;
	uint32_t seq[NFS41D_SLOTS];
	/* back channel */
	bool back;
	uint32_t cb_prog;
	struct rpcrdma_svc_client *bc;
	enum cb_state cb;
	uint32_t cb_seq;      /* CB_SEQUENCE's sequence id of slot 0 */
	bool cb_busy;         /* slot 0 holds a callback */
	uint8_t cb_auth[512]; /* credential + verifier of callbacks */
	uint32_t cb_auth_len;
};

struct n41_state {
	struct n41_state *next;
	uint8_t other[NFS4_OTHER_SIZE];
	uint32_t seqid;
	enum st_type type;
	struct n41_client *cl;
	dev_t dev;
	ino_t ino;
	uint32_t access, deny;
	bool recalling;
	struct nfs3d_fh fh;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct n41_client *clients;
static struct n41_session *sessions;
static struct n41_state *states;
static uint32_t boot;        /* this instance's start, in every ID */
static uint64_t next_id = 1; /* client IDs, session IDs, stateids */
static struct n41_counters cnt;

void n41_counters(struct n41_counters *out)
{
	pthread_mutex_lock(&lock);
	*out = cnt;
	pthread_mutex_unlock(&lock);
}

void n41_state_init(struct rpcrdma_svc *svc)
{
	(void)svc;
	boot = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static struct n41_client *client_by_id(uint64_t id)
{
	for (struct n41_client *c = clients; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static struct n41_session *session_by_id(const void *id)
{
	for (struct n41_session *s = sessions; s; s = s->next)
		if (memcmp(s->id, id, NFS4_SESSIONID_SIZE) == 0)
			return s;
	return NULL;
}

/* The session of @cl whose back channel works, if any. */
static struct n41_session *back_of(struct n41_client *cl)
{
	struct n41_session *best = NULL;
	for (struct n41_session *s = sessions; s; s = s->next)
		if (s->cl == cl && s->back && s->bc && (!best || s->cb == CB_UP))
			best = s;
	return best;
}

static void free_session(struct n41_session *s)
{
	for (struct n41_session **pp = &sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			free(s);
			return;
		}
}

static void free_client_state(struct n41_client *cl)
{
	for (struct n41_state **pp = &states; *pp;) {
		struct n41_state *st = *pp;
		if (st->cl == cl) {
			*pp = st->next;
			free(st);
		} else
			pp = &st->next;
	}
	for (struct n41_session **pp = &sessions; *pp;) {
		struct n41_session *s = *pp;
		if (s->cl == cl) {
			*pp = s->next;
			free(s);
		} else
			pp = &s->next;
	}
	pthread_cond_broadcast(&changed);
}

/* ---- EXCHANGE_ID (§18.35.4, the cases of a client owner) ---- */

void n41_exchange_id(struct n41_compound *c, EXCHANGE_ID4args *a, EXCHANGE_ID4res *r)
{
	client_owner4 *co = &a->eia_clientowner;
	struct n41_client *cl = NULL;
	(void)c;
	if (a->eia_state_protect.spa_how != SP4_NONE) {
		r->eir_status = NFS4ERR_NOTSUPP;
		return;
	}
	pthread_mutex_lock(&lock);
	for (struct n41_client *p = clients; p; p = p->next)
		if (p->ownerlen == co->co_ownerid.co_ownerid_len &&
		    memcmp(p->owner, co->co_ownerid.co_ownerid_val, p->ownerlen) == 0) {
			cl = p;
			break;
		}
	if (cl && memcmp(cl->verf, co->co_verifier, sizeof(cl->verf)) != 0) {
		/* a rebooted client: its old state goes (§18.35.4 case 5) */
		free_client_state(cl);
		for (struct n41_client **pp = &clients; *pp; pp = &(*pp)->next)
			if (*pp == cl) {
				*pp = cl->next;
				break;
			}
		free(cl);
		cl = NULL;
	}
	if (!cl) {
		cl = calloc(1, sizeof(*cl));
		if (!cl) {
			pthread_mutex_unlock(&lock);
			r->eir_status = NFS4ERR_SERVERFAULT;
			return;
		}
		cl->id = (uint64_t)boot << 32 | (uint32_t)next_id++;
		memcpy(cl->verf, co->co_verifier, sizeof(cl->verf));
		cl->ownerlen = co->co_ownerid.co_ownerid_len;
		memcpy(cl->owner, co->co_ownerid.co_ownerid_val, cl->ownerlen);
		cl->cs_seq = 1;
		cl->next = clients;
		clients = cl;
	}
	EXCHANGE_ID4resok *ok = &r->EXCHANGE_ID4res_u.eir_resok4;
	r->eir_status = NFS4_OK;
	ok->eir_clientid = cl->id;
	ok->eir_sequenceid = cl->cs_seq;
	ok->eir_flags =
	    EXCHGID4_FLAG_USE_NON_PNFS | (cl->confirmed ? EXCHGID4_FLAG_CONFIRMED_R : 0);
	ok->eir_state_protect.spr_how = SP4_NONE;
	pthread_mutex_unlock(&lock);
	static char major[] = "rpcrdma-nfs41d", scope[] = "rpcrdma-nfs41d";
	ok->eir_server_owner.so_minor_id = 0;
	ok->eir_server_owner.so_major_id.so_major_id_len = sizeof(major) - 1;
	ok->eir_server_owner.so_major_id.so_major_id_val = major;
	ok->eir_server_scope.eir_server_scope_len = sizeof(scope) - 1;
	ok->eir_server_scope.eir_server_scope_val = scope;
	ok->eir_server_impl_id.eir_server_impl_id_len = 0;
}

/* ---- CREATE_SESSION (§18.36) ---- */

/* The callback credential: the first AUTH_SYS of @a's, else AUTH_NONE. */
static void cb_cred(struct n41_session *s, const CREATE_SESSION4args *a)
{
	struct rpcrdma_rpc_authsys sys;
	uint32_t len = 0;
	memset(&sys, 0, sizeof(sys));
	for (u_int i = 0; i < a->csa_sec_parms.csa_sec_parms_len; i++) {
		const callback_sec_parms4 *p = &a->csa_sec_parms.csa_sec_parms_val[i];
		if (p->cb_secflavor != CB_AUTH_SYS)
			continue;
		const cb_authsys_parms4 *ap = &p->callback_sec_parms4_u.cbsp_sys_cred;
		sys.stamp = ap->stamp;
		snprintf(sys.machinename, sizeof(sys.machinename), "%s",
			 ap->machinename ? ap->machinename : "");
		sys.uid = ap->uid;
		sys.gid = ap->gid;
		sys.ngids = ap->gids.gids_len <= 16 ? ap->gids.gids_len : 16;
		if (sys.ngids) /* (no groups: gids_val may be NULL) */
			memcpy(sys.gids, ap->gids.gids_val, sys.ngids * sizeof(sys.gids[0]));
		if (rpcrdma_rpc_encode_cred_verf(s->cb_auth, sizeof(s->cb_auth),
						 RPCRDMA_RPC_AUTH_SYS, &sys, &len) == 0) {
			s->cb_auth_len = len;
			return;
		}
	}
	if (rpcrdma_rpc_encode_cred_verf(s->cb_auth, sizeof(s->cb_auth), RPCRDMA_RPC_AUTH_NONE,
					 NULL, &len) == 0)
		s->cb_auth_len = len;
}

static void chan_attrs(const channel_attrs4 *in, channel_attrs4 *out, uint32_t max_slots)
{
	*out = *in;
	out->ca_headerpadsize = 0;
	if (out->ca_maxrequestsize > NFS41D_MAXIO + 4096)
		out->ca_maxrequestsize = NFS41D_MAXIO + 4096;
	if (out->ca_maxresponsesize > NFS41D_MAXIO + 4096)
		out->ca_maxresponsesize = NFS41D_MAXIO + 4096;
	if (out->ca_maxoperations > NFS41D_MAXOPS)
		out->ca_maxoperations = NFS41D_MAXOPS;
	if (out->ca_maxrequests > max_slots)
		out->ca_maxrequests = max_slots;
	if (out->ca_maxrequests == 0)
		out->ca_maxrequests = 1;
	out->ca_rdma_ird.ca_rdma_ird_len = 0;
}

void n41_create_session(struct n41_compound *c, CREATE_SESSION4args *a, CREATE_SESSION4res *r)
{
	CREATE_SESSION4resok *ok = &r->CREATE_SESSION4res_u.csr_resok4;
	pthread_mutex_lock(&lock);
	struct n41_client *cl = client_by_id(a->csa_clientid);
	if (!cl) {
		pthread_mutex_unlock(&lock);
		r->csr_status = NFS4ERR_STALE_CLIENTID;
		return;
	}
	/* §18.36.4: the client's CREATE_SESSION sequence (a replay of the
	 * last one is answered again by a new session: harmless here) */
	if (a->csa_sequence != cl->cs_seq && a->csa_sequence + 1 != cl->cs_seq) {
		pthread_mutex_unlock(&lock);
		r->csr_status = NFS4ERR_SEQ_MISORDERED;
		return;
	}
	struct n41_session *s = calloc(1, sizeof(*s));
	if (!s) {
		pthread_mutex_unlock(&lock);
		r->csr_status = NFS4ERR_SERVERFAULT;
		return;
	}
	if (a->csa_sequence == cl->cs_seq)
		cl->cs_seq++;
	cl->confirmed = true;
	s->cl = cl;
	put32(s->id, boot);
	put32(s->id + 4, (uint32_t)(cl->id));
	put32(s->id + 8, (uint32_t)next_id++);
	put32(s->id + 12, (uint32_t)fnv(&s, sizeof(s)));
	r->csr_status = NFS4_OK;
	memcpy(ok->csr_sessionid, s->id, sizeof(s->id));
	ok->csr_sequence = a->csa_sequence;
	chan_attrs(&a->csa_fore_chan_attrs, &ok->csr_fore_chan_attrs, NFS41D_SLOTS);
	chan_attrs(&a->csa_back_chan_attrs, &ok->csr_back_chan_attrs, 1);
	s->nslots = ok->csr_fore_chan_attrs.ca_maxrequests;
	s->cb_prog = a->csa_cb_program;
	s->cb_seq = 1;
	cb_cred(s, a);
	ok->csr_flags = 0;
	if (a->csa_flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN) {
		/* §18.36.3: this connection is the back channel too; the
		 * gate opens now (RFC 8167 §6), the probe follows the reply */
		s->back = true;
		struct rpcrdma_svc_client *bc = rpcrdma_svc_req_client(c->req);
		ok->csr_flags = CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
		/* named by the client ID: BIND_CONN_TO_SESSION on a new
		 * connection gets the same handle back, with its callbacks */
		if (bc && rpcrdma_svc_client_enable_id(bc, cl->id, 0, &s->bc) == 0)
			c->probe = s;
		else
			s->cb = CB_DOWN;
	}
	s->next = sessions;
	sessions = s;
	cnt.sessions++;
	pthread_mutex_unlock(&lock);
}

nfsstat4 n41_destroy_session(struct n41_compound *c, DESTROY_SESSION4args *a)
{
	pthread_mutex_lock(&lock);
	struct n41_session *s = session_by_id(a->dsa_sessionid);
	nfsstat4 st = NFS4ERR_BADSESSION;
	if (s && s->cb_busy)
		st = NFS4ERR_DELAY;
	else if (s) {
		if (c->sess == s)
			c->sess = NULL;
		if (c->probe == s)
			c->probe = NULL;
		free_session(s);
		st = NFS4_OK;
	}
	pthread_mutex_unlock(&lock);
	return st;
}

nfsstat4 n41_destroy_clientid(struct n41_compound *c, DESTROY_CLIENTID4args *a)
{
	(void)c;
	pthread_mutex_lock(&lock);
	struct n41_client *cl = client_by_id(a->dca_clientid);
	nfsstat4 st = NFS4ERR_STALE_CLIENTID;
	if (cl) {
		st = NFS4_OK;
		/* §18.50.3: not while it has sessions or state */
		for (struct n41_session *s = sessions; s; s = s->next)
			if (s->cl == cl)
				st = NFS4ERR_CLIENTID_BUSY;
		for (struct n41_state *x = states; x; x = x->next)
			if (x->cl == cl)
				st = NFS4ERR_CLIENTID_BUSY;
	}
	if (st == NFS4_OK) {
		for (struct n41_client **pp = &clients; *pp; pp = &(*pp)->next)
			if (*pp == cl) {
				*pp = cl->next;
				break;
			}
		free(cl);
	}
	pthread_mutex_unlock(&lock);
	return st;
}

void n41_bind_conn(struct n41_compound *c, BIND_CONN_TO_SESSION4args *a,
		   BIND_CONN_TO_SESSION4res *r)
{
	BIND_CONN_TO_SESSION4resok *ok = &r->BIND_CONN_TO_SESSION4res_u.bctsr_resok4;
	pthread_mutex_lock(&lock);
	struct n41_session *s = session_by_id(a->bctsa_sessid);
	if (!s) {
		pthread_mutex_unlock(&lock);
		r->bctsr_status = NFS4ERR_BADSESSION;
		return;
	}
	r->bctsr_status = NFS4_OK;
	memcpy(ok->bctsr_sessid, s->id, sizeof(s->id));
	ok->bctsr_use_conn_in_rdma_mode = FALSE;
	ok->bctsr_dir = CDFS4_FORE;
	if (a->bctsa_dir != CDFC4_FORE && s->back) {
		/* §18.34.3: the back channel moves to this connection */
		/* the client's handle takes over this connection: callbacks
		 * sent on the lost one go again, same XIDs (RFC 8167 §5.4) */
		struct rpcrdma_svc_client *bc = rpcrdma_svc_req_client(c->req), *got = NULL;
		if (bc && rpcrdma_svc_client_enable_id(bc, s->cl->id, 0, &got) == 0) {
			s->bc = got;
			s->cb = CB_UNKNOWN;
			c->probe = s;
			cnt.binds++;
			ok->bctsr_dir = a->bctsa_dir == CDFC4_BACK ? CDFS4_BACK : CDFS4_BOTH;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* ---- SEQUENCE (§18.46) ---- */

void n41_sequence(struct n41_compound *c, SEQUENCE4args *a, SEQUENCE4res *r)
{
	SEQUENCE4resok *ok = &r->SEQUENCE4res_u.sr_resok4;
	pthread_mutex_lock(&lock);
	struct n41_session *s = session_by_id(a->sa_sessionid);
	if (!s) {
		pthread_mutex_unlock(&lock);
		r->sr_status = NFS4ERR_BADSESSION;
		return;
	}
	if (a->sa_slotid >= s->nslots) {
		pthread_mutex_unlock(&lock);
		r->sr_status = NFS4ERR_BADSLOT;
		return;
	}
	uint32_t *seq = &s->seq[a->sa_slotid];
	if (a->sa_sequenceid == *seq && *seq != 0) {
		/* §2.10.6.1.3: a retry of the slot's last request; no reply
		 * is cached here */
		pthread_mutex_unlock(&lock);
		r->sr_status = NFS4ERR_RETRY_UNCACHED_REP;
		return;
	}
	if (a->sa_sequenceid != *seq + 1) {
		pthread_mutex_unlock(&lock);
		r->sr_status = NFS4ERR_SEQ_MISORDERED;
		return;
	}
	*seq = a->sa_sequenceid;
	c->sess = s;
	c->slot = a->sa_slotid;
	r->sr_status = NFS4_OK;
	memcpy(ok->sr_sessionid, s->id, sizeof(s->id));
	ok->sr_sequenceid = a->sa_sequenceid;
	ok->sr_slotid = a->sa_slotid;
	ok->sr_highest_slotid = s->nslots - 1;
	ok->sr_target_highest_slotid = s->nslots - 1;
	ok->sr_status_flags = 0;
	/* §18.46.3: the back channel is not known good */
	if (!s->back || s->cb == CB_DOWN || !s->bc)
		ok->sr_status_flags |= SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION;
	if (s->cl->revoked) {
		ok->sr_status_flags |= SEQ4_STATUS_RECALLABLE_STATE_REVOKED;
		s->cl->revoked = false;
	}
	pthread_mutex_unlock(&lock);
}

uint64_t n41_clientid(const struct n41_compound *c)
{
	return c->sess ? c->sess->cl->id : 0;
}

/* ---- callbacks ---- */

static void probe_done(struct rpcrdma_svc_client *bc, int status, void *res, void *arg)
{
	(void)res;
	(void)arg;
	pthread_mutex_lock(&lock);
	for (struct n41_session *s = sessions; s; s = s->next)
		if (s->bc == bc)
			s->cb = status == 0 ? CB_UP : CB_DOWN;
	if (status == 0)
		cnt.cb_null_ok++;
	else
		cnt.cb_null_fail++;
	pthread_mutex_unlock(&lock);
	if (status != 0)
		fprintf(stderr, "rpcrdma-nfs41d: CB_NULL: %s\n", rpcrdma_strerror(status));
}

static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

void n41_compound_done(struct n41_compound *c)
{
	struct rpcrdma_call_opts o;
	pthread_mutex_lock(&lock);
	struct n41_session *s = c->probe;
	struct rpcrdma_svc_client *bc = s ? s->bc : NULL;
	uint32_t prog = s ? s->cb_prog : 0;
	pthread_mutex_unlock(&lock);
	if (!bc)
		return;
	memset(&o, 0, sizeof(o));
	/* CB_NULL is answered whatever the credential (AUTH_NONE) */
	int rc = rpcrdma_svc_client_call_async(bc, prog, NFS4_CALLBACK_VERS, CB_NULL,
					       (xdrproc_t)xdr_nothing, NULL, (xdrproc_t)xdr_nothing,
					       NULL, &o, probe_done, NULL);
	if (rc != 0)
		probe_done(bc, rc, NULL, NULL);
}

void n41_bc_event(struct rpcrdma_svc_client *cl, enum rpcrdma_bc_event ev, void *ctx)
{
	struct rpcrdma_bc_stats st;
	(void)ctx;
	/* (an event of a connection the handle has already left is old) */
	if (ev != RPCRDMA_BC_EV_DOWN ||
	    (rpcrdma_svc_client_stats(cl, &st) == 0 && st.connected && st.enabled))
		return;
	/* The connection went: until the client binds one again (§2.10.5,
	 * BIND_CONN_TO_SESSION) its SEQUENCEs say CB_PATH_DOWN. */
	pthread_mutex_lock(&lock);
	for (struct n41_session *s = sessions; s; s = s->next)
		if (s->bc == cl)
			s->cb = CB_DOWN;
	pthread_mutex_unlock(&lock);
}

/* One CB_COMPOUND { CB_SEQUENCE, CB_RECALL } on its way. */
struct recall {
	CB_COMPOUND4args args;
	nfs_cb_argop4 ops[2];
	CB_COMPOUND4res res;
	struct n41_session *s;
	uint8_t other[NFS4_OTHER_SIZE];
	uint8_t auth[512];
};

static void state_free(struct n41_state *x);

/* A delegation whose recall failed (RFC 8881 §10.4.6 lets the server
 * revoke it): gone, and its client told once by
 * SEQ4_STATUS_RECALLABLE_STATE_REVOKED (it then tests its stateids). */
static void deleg_revoke(struct n41_state *d)
{
	d->cl->revoked = true;
	state_free(d);
}

/* A recall answered NFS4ERR_DELAY goes again 100 ms later (or with the
 * next conflicting operation): its delegation is no longer "recalling". */
static void *recall_again(void *arg)
{
	uint8_t *other = arg;
	usleep(100 * 1000);
	pthread_mutex_lock(&lock);
	for (struct n41_state *x = states; x; x = x->next)
		if (x->type == ST_DELEG && memcmp(x->other, other, NFS4_OTHER_SIZE) == 0)
			x->recalling = false;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	free(other);
	return NULL;
}

static void recall_done(struct rpcrdma_svc_client *bc, int status, void *res, void *arg)
{
	struct recall *rc = arg;
	(void)bc;
	(void)res;
	/* NFS4ERR_DELAY (§15.1.1.3): the client cannot take it now (Linux,
	 * while it binds its back channel to a new connection): not a failure */
	bool delay = status == 0 && rc->res.status == NFS4ERR_DELAY;
	bool seq_ok =
	    status == 0 && rc->res.resarray.resarray_len > 0 &&
	    rc->res.resarray.resarray_val[0].nfs_cb_resop4_u.opcbsequence.csr_status == NFS4_OK;
	pthread_mutex_lock(&lock);
	for (struct n41_session *s = sessions; s; s = s->next)
		if (s == rc->s) {
			s->cb_busy = false;
			if (status != 0)
				s->cb = CB_DOWN;
			if (delay && !seq_ok) /* the slot did not move (§20.9.3) */
				s->cb_seq = rc->ops[0].nfs_cb_argop4_u.opcbsequence.csa_sequenceid;
		}
	uint8_t *again = delay ? malloc(NFS4_OTHER_SIZE) : NULL;
	pthread_t t;
	if (again) {
		memcpy(again, rc->other, NFS4_OTHER_SIZE);
		if (pthread_create(&t, NULL, recall_again, again) == 0)
			pthread_detach(t);
		else
			free(again), again = NULL;
	}
	if (again)
		cnt.recall_delays++;
	else if (status == 0 && rc->res.status == NFS4_OK)
		cnt.recalls_ok++;
	else
		cnt.recalls_fail++;
	if (!again && (status != 0 || rc->res.status != NFS4_OK)) {
		/* the recall did not get through: revoked */
		for (struct n41_state *x = states; x; x = x->next)
			if (memcmp(x->other, rc->other, sizeof(x->other)) == 0) {
				deleg_revoke(x);
				break;
			}
		fprintf(stderr, "rpcrdma-nfs41d: CB_RECALL: %s, status %d\n",
			rpcrdma_strerror(status), (int)rc->res.status);
	}
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	xdr_free((xdrproc_t)xdr_CB_COMPOUND4res, (char *)&rc->res);
	free(rc->ops[1].nfs_cb_argop4_u.opcbrecall.fh.nfs_fh4_val);
	free(rc);
}

/* Send the recall of delegation @d (lock held; it is dropped while the
 * call starts). False when it could not start. */
static bool recall_send(struct n41_state *d)
{
	struct n41_session *s = back_of(d->cl);
	if (!s || s->cb == CB_DOWN)
		return false;
	while (s->cb_busy) /* §20.9: slot 0 of the back channel, one at a time */
		pthread_cond_wait(&changed, &lock);
	struct recall *rc = calloc(1, sizeof(*rc));
	if (!rc)
		return false;
	s->cb_busy = true;
	rc->s = s;
	memcpy(rc->other, d->other, sizeof(rc->other));
	rc->args.minorversion = 1;
	rc->args.argarray.argarray_len = 2;
	rc->args.argarray.argarray_val = rc->ops;
	rc->ops[0].argop = OP_CB_SEQUENCE;
	CB_SEQUENCE4args *sq = &rc->ops[0].nfs_cb_argop4_u.opcbsequence;
	memcpy(sq->csa_sessionid, s->id, sizeof(s->id));
	sq->csa_sequenceid = s->cb_seq++;
	rc->ops[1].argop = OP_CB_RECALL;
	CB_RECALL4args *ra = &rc->ops[1].nfs_cb_argop4_u.opcbrecall;
	ra->stateid.seqid = d->seqid;
	memcpy(ra->stateid.other, d->other, sizeof(d->other));
	ra->fh.nfs_fh4_len = d->fh.len;
	/* a copy: the delegation may be gone before the call is marshalled */
	uint8_t *fh = malloc(d->fh.len ? d->fh.len : 1);
	if (!fh) {
		s->cb_busy = false;
		free(rc);
		return false;
	}
	memcpy(fh, d->fh.data, d->fh.len);
	ra->fh.nfs_fh4_val = (char *)fh;
	memcpy(rc->auth, s->cb_auth, s->cb_auth_len);
	struct rpcrdma_call_opts o;
	memset(&o, 0, sizeof(o));
	/* Linux's callback service takes CB_COMPOUND with AUTH_SYS only */
	o.comp_mask = RPCRDMA_CALL_OPT_AUTH;
	o.auth = rc->auth;
	o.auth_len = s->cb_auth_len;
	struct rpcrdma_svc_client *bc = s->bc;
	uint32_t prog = s->cb_prog;
	d->recalling = true;
	cnt.recalls++;
	pthread_mutex_unlock(&lock);
	/* the arguments are encoded when the call is marshalled (and again
	 * after a reconnect): @rc and the handle copy live until recall_done */
	int err = rpcrdma_svc_client_call_async(
	    bc, prog, NFS4_CALLBACK_VERS, CB_COMPOUND, (xdrproc_t)xdr_CB_COMPOUND4args, &rc->args,
	    (xdrproc_t)xdr_CB_COMPOUND4res, &rc->res, &o, recall_done, rc);
	pthread_mutex_lock(&lock);
	if (err != 0) {
		fprintf(stderr, "rpcrdma-nfs41d: CB_RECALL not sent: %s\n", rpcrdma_strerror(err));
		s->cb_busy = false;
		d->recalling = false;
		free(fh);
		free(rc);
		pthread_cond_broadcast(&changed);
		return false;
	}
	return true;
}

/* Recall every delegation of @st held by a client other than @me (lock
 * held) and wait for them to be returned: NFS4_OK, or NFS4ERR_DELAY. */
static nfsstat4 break_locked(uint64_t me, const struct stat *st)
{
	struct timespec dl, now;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += RECALL_WAIT_MS / 1000;
	for (;;) {
		bool any = false;
		struct n41_state *d;
	again:
		for (d = states; d; d = d->next) {
			if (d->type != ST_DELEG || d->dev != st->st_dev || d->ino != st->st_ino ||
			    d->cl->id == me)
				continue;
			if (!d->recalling) {
				/* drops the lock: start over */
				if (!recall_send(d))
					deleg_revoke(d); /* no back channel to recall it by */
				goto again;
			}
			any = true;
		}
		if (!any)
			return NFS4_OK;
		clock_gettime(CLOCK_REALTIME, &now);
		if (now.tv_sec > dl.tv_sec ||
		    (now.tv_sec == dl.tv_sec && now.tv_nsec >= dl.tv_nsec) ||
		    pthread_cond_timedwait(&changed, &lock, &dl) == ETIMEDOUT) {
			cnt.open_delay++;
			return NFS4ERR_DELAY;
		}
	}
}

nfsstat4 n41_break_deleg(struct n41_compound *c, const struct stat *st)
{
	pthread_mutex_lock(&lock);
	nfsstat4 r = break_locked(n41_clientid(c), st);
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- stateids ---- */

static struct n41_state *state_find(const stateid4 *sid)
{
	for (struct n41_state *x = states; x; x = x->next)
		if (memcmp(x->other, sid->other, NFS4_OTHER_SIZE) == 0)
			return x;
	return NULL;
}

static struct n41_state *state_new(struct n41_client *cl, enum st_type t, const struct stat *st)
{
	struct n41_state *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	put32(x->other, boot);
	uint64_t n = next_id++;
	put32(x->other + 4, (uint32_t)(n >> 32));
	put32(x->other + 8, (uint32_t)n);
	x->seqid = 1;
	x->type = t;
	x->cl = cl;
	x->dev = st->st_dev;
	x->ino = st->st_ino;
	x->next = states;
	states = x;
	return x;
}

static void state_out(const struct n41_state *x, stateid4 *sid)
{
	sid->seqid = x->seqid;
	memcpy(sid->other, x->other, NFS4_OTHER_SIZE);
}

static void state_free(struct n41_state *x)
{
	for (struct n41_state **pp = &states; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			free(x);
			break;
		}
	pthread_cond_broadcast(&changed);
}

nfsstat4 n41_open_state(struct n41_compound *c, const struct stat *st, uint32_t access,
			uint32_t deny, stateid4 *sid, open_delegation4 *deleg)
{
	deleg->delegation_type = OPEN_DELEGATE_NONE;
	if (!c->sess)
		return NFS4ERR_OP_NOT_IN_SESSION;
	pthread_mutex_lock(&lock);
	struct n41_client *cl = c->sess->cl;
	access &= OPEN4_SHARE_ACCESS_BOTH;
	deny &= 3;
	/* §9.7: share reservations of other owners */
	for (struct n41_state *x = states; x; x = x->next)
		if (x->type == ST_OPEN && x->dev == st->st_dev && x->ino == st->st_ino &&
		    x->cl != cl && ((x->deny & access) || (x->access & deny))) {
			pthread_mutex_unlock(&lock);
			return NFS4ERR_SHARE_DENIED;
		}
	if (access & OPEN4_SHARE_ACCESS_WRITE) {
		nfsstat4 r = break_locked(cl->id, st);
		if (r != NFS4_OK) {
			pthread_mutex_unlock(&lock);
			return r;
		}
	}
	/* one open stateid per client and file (§9.1.4: upgraded) */
	struct n41_state *o = NULL;
	for (struct n41_state *x = states; x; x = x->next)
		if (x->type == ST_OPEN && x->cl == cl && x->dev == st->st_dev &&
		    x->ino == st->st_ino)
			o = x;
	if (!o)
		o = state_new(cl, ST_OPEN, st);
	else
		o->seqid++;
	if (!o) {
		pthread_mutex_unlock(&lock);
		return NFS4ERR_SERVERFAULT;
	}
	o->access |= access;
	o->deny |= deny;
	state_out(o, sid);
	/* §10.4: a read delegation when nobody else writes the file and the
	 * back channel answers */
	bool grant = S_ISREG(st->st_mode) && access == OPEN4_SHARE_ACCESS_READ;
	struct n41_session *bs = back_of(cl);
	grant = grant && bs && bs->cb == CB_UP;
	for (struct n41_state *x = states; grant && x; x = x->next)
		if (x->dev == st->st_dev && x->ino == st->st_ino &&
		    ((x->type == ST_OPEN && x->cl != cl &&
		      (x->access & OPEN4_SHARE_ACCESS_WRITE)) ||
		     (x->type == ST_DELEG && x->cl == cl)))
			grant = false;
	if (grant) {
		struct n41_state *d = state_new(cl, ST_DELEG, st);
		if (d) {
			d->fh = c->cur.fh;
			cnt.delegations++;
			deleg->delegation_type = OPEN_DELEGATE_READ;
			open_read_delegation4 *rd = &deleg->open_delegation4_u.read;
			state_out(d, &rd->stateid);
			rd->recall = FALSE;
			/* permissions: no ACE (type ALLOWED, empty mask) */
			rd->permissions.type = 0;
			rd->permissions.flag = 0;
			rd->permissions.access_mask = 0;
			rd->permissions.who.utf8string_len = 0;
			rd->permissions.who.utf8string_val = (char *)"";
		}
	}
	pthread_mutex_unlock(&lock);
	return NFS4_OK;
}

/* Special stateids (§8.2.3): anonymous (all 0), bypass (all 1), current
 * (seqid 1, other 0). */
static bool special(const stateid4 *sid)
{
	static const uint8_t zero[NFS4_OTHER_SIZE],
	    ones[NFS4_OTHER_SIZE] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	return memcmp(sid->other, zero, NFS4_OTHER_SIZE) == 0 ||
	       memcmp(sid->other, ones, NFS4_OTHER_SIZE) == 0;
}

nfsstat4 n41_close_state(struct n41_compound *c, const stateid4 *sid)
{
	(void)c;
	pthread_mutex_lock(&lock);
	struct n41_state *x = state_find(sid);
	nfsstat4 r = NFS4ERR_BAD_STATEID;
	if (x && x->type == ST_OPEN) {
		state_free(x);
		r = NFS4_OK;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

nfsstat4 n41_downgrade_state(struct n41_compound *c, const stateid4 *sid, uint32_t access,
			     uint32_t deny, stateid4 *out)
{
	(void)c;
	pthread_mutex_lock(&lock);
	struct n41_state *x = state_find(sid);
	nfsstat4 r = NFS4ERR_BAD_STATEID;
	if (x && x->type == ST_OPEN) {
		x->access = access & OPEN4_SHARE_ACCESS_BOTH;
		x->deny = deny & 3;
		x->seqid++;
		state_out(x, out);
		r = NFS4_OK;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

nfsstat4 n41_delegreturn(struct n41_compound *c, const stateid4 *sid)
{
	(void)c;
	pthread_mutex_lock(&lock);
	struct n41_state *x = state_find(sid);
	nfsstat4 r = NFS4ERR_BAD_STATEID;
	if (x && x->type == ST_DELEG) {
		state_free(x);
		cnt.delegreturns++;
		r = NFS4_OK;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

nfsstat4 n41_free_stateid(struct n41_compound *c, const stateid4 *sid)
{
	(void)c;
	pthread_mutex_lock(&lock);
	struct n41_state *x = state_find(sid);
	/* §18.38.3: only a stateid with nothing left to it; ours are freed
	 * by CLOSE and DELEGRETURN */
	nfsstat4 r = x ? NFS4ERR_LOCKS_HELD : NFS4ERR_BAD_STATEID;
	pthread_mutex_unlock(&lock);
	return r;
}

nfsstat4 n41_test_stateid(struct n41_compound *c, const stateid4 *sid)
{
	(void)c;
	if (special(sid))
		return NFS4ERR_BAD_STATEID;
	pthread_mutex_lock(&lock);
	struct n41_state *x = state_find(sid);
	nfsstat4 r = !x                                          ? NFS4ERR_BAD_STATEID
		     : x->seqid != sid->seqid && sid->seqid != 0 ? NFS4ERR_OLD_STATEID
								 : NFS4_OK;
	pthread_mutex_unlock(&lock);
	return r;
}
