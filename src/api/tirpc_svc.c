// SPDX-License-Identifier: MIT
/*
 * rpcgen-generated server dispatchers over RPC-over-RDMA: each call gets an
 * SVCXPRT whose operations reach the request, so the generated
 * svc_getargs / svc_sendreply / svcerr_* / svc_freeargs calls work
 * unchanged.
 *
 * What libtirpc's svc_getreq_common() gives a dispatcher, it gets here:
 * rq_cred is the call's credential as received (flavor, body); for
 * AUTH_SYS, rq_clntcred points at a struct authunix_parms decoded from it
 * (as _svcauth_unix() fills it; NULL for other flavors);
 * svc_getrpccaller(xprt) is the client's address (xp_rtaddr, a netbuf
 * over a sockaddr_in/_in6), and svc_getcaller(xprt) the same in xp_raddr.
 * The server already refused malformed credentials (server.h).
 */
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "rpcrdma/rpc.h"

struct tsvc {
	SVCXPRT x; /* first: the dispatcher only sees this */
	struct rpcrdma_svc_req *r;
	bool replied;
	/* what rq_clntcred and xp_rtaddr point at */
	struct rpcrdma_rpc_authsys sys;
	struct authunix_parms aup;
	gid_t gids[RPCRDMA_RPC_AUTHSYS_MAX_GIDS];
	struct sockaddr_storage caller;
};

/* rq_clntcred for AUTH_SYS (RFC 5531 Appendix A), as libtirpc's
 * _svcauth_unix() decodes it; NULL for other flavors. */
static void *clntcred(struct tsvc *t)
{
	if (rpcrdma_svc_req_authsys(t->r, &t->sys) != 0)
		return NULL;
	t->aup.aup_time = t->sys.stamp;
	t->aup.aup_machname = t->sys.machinename;
	t->aup.aup_uid = (uid_t)t->sys.uid;
	t->aup.aup_gid = (gid_t)t->sys.gid;
	t->aup.aup_len = t->sys.ngids;
	for (uint32_t i = 0; i < t->sys.ngids; i++)
		t->gids[i] = (gid_t)t->sys.gids[i];
	t->aup.aup_gids = t->gids;
	return &t->aup;
}

/* svc_getrpccaller() / svc_getcaller(): the connection's peer. */
static void caller(struct tsvc *t)
{
	socklen_t len = 0;

	if (rpcrdma_svc_req_caller(t->r, &t->caller, &len) != 0)
		return;
	t->x.xp_rtaddr.buf = &t->caller;
	t->x.xp_rtaddr.len = len;
	t->x.xp_rtaddr.maxlen = sizeof(t->caller);
	t->x.xp_addrlen = (int)len;
	memcpy(&t->x.xp_raddr, &t->caller,
	       len < sizeof(t->x.xp_raddr) ? len : sizeof(t->x.xp_raddr));
}

static struct tsvc *T(SVCXPRT *x)
{
	return (struct tsvc *)(void *)x;
}

static bool_t t_recv(SVCXPRT *x, struct rpc_msg *m)
{
	(void)x;
	(void)m;
	return FALSE;
}

static enum xprt_stat t_stat(SVCXPRT *x)
{
	(void)x;
	return XPRT_IDLE;
}

static bool_t t_getargs(SVCXPRT *x, xdrproc_t p, void *a)
{
	return rpcrdma_svc_getargs(T(x)->r, p, a) == 0;
}

static bool_t t_reply(SVCXPRT *x, struct rpc_msg *m)
{
	struct tsvc *t = T(x);
	struct rpcrdma_rpc_reply rep;
	xdrproc_t xres = NULL;
	void *res = NULL;

	if (t->replied)
		return FALSE;
	memset(&rep, 0, sizeof(rep));
	rep.xid = rpcrdma_svc_req_xid(t->r);
	rpcrdma_rpc_auth_none(&rep.verf);
	if (m->rm_reply.rp_stat == MSG_ACCEPTED) {
		rep.reply_stat = RPCRDMA_RPC_MSG_ACCEPTED;
		rep.accept_stat = (uint32_t)m->acpted_rply.ar_stat;
		if (m->acpted_rply.ar_stat == SUCCESS) {
			xres = m->acpted_rply.ar_results.proc;
			res = m->acpted_rply.ar_results.where;
		} else if (m->acpted_rply.ar_stat == PROG_MISMATCH) {
			rep.mismatch_low = (uint32_t)m->acpted_rply.ar_vers.low;
			rep.mismatch_high = (uint32_t)m->acpted_rply.ar_vers.high;
		}
	} else {
		rep.reply_stat = RPCRDMA_RPC_MSG_DENIED;
		rep.reject_stat = (uint32_t)m->rjcted_rply.rj_stat;
		if (m->rjcted_rply.rj_stat == RPC_MISMATCH) {
			rep.mismatch_low = (uint32_t)m->rjcted_rply.rj_vers.low;
			rep.mismatch_high = (uint32_t)m->rjcted_rply.rj_vers.high;
		} else {
			rep.auth_stat = (uint32_t)m->rjcted_rply.rj_why;
		}
	}
	t->replied = true;
	return svc_reply_raw(t->r, &rep, xres, res) == 0;
}

static bool_t t_freeargs(SVCXPRT *x, xdrproc_t p, void *a)
{
	(void)x;
	xdr_free(p, a);
	return TRUE;
}

static void t_destroy(SVCXPRT *x)
{
	(void)x;
}

static bool_t t_control(SVCXPRT *x, const u_int rq, void *in)
{
	(void)x;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops t_ops = {
    .xp_recv = t_recv,
    .xp_stat = t_stat,
    .xp_getargs = t_getargs,
    .xp_reply = t_reply,
    .xp_freeargs = t_freeargs,
    .xp_destroy = t_destroy,
};

static const struct xp_ops2 t_ops2 = {
    .xp_control = t_control,
};

void svc_tirpc_dispatch(struct rpcrdma_svc_req *r, rpcrdma_svc_tirpc_dispatch_t fn)
{
	struct tsvc t;
	struct svc_req rq;
	const struct rpcrdma_rpc_auth *cred = rpcrdma_svc_req_cred(r);

	memset(&t, 0, sizeof(t));
	memset(&rq, 0, sizeof(rq));
	t.r = r;
	t.x.xp_ops = (struct xp_ops *)(uintptr_t)&t_ops;
	t.x.xp_ops2 = (struct xp_ops2 *)(uintptr_t)&t_ops2;
	t.x.xp_verf.oa_flavor = AUTH_NONE;
	rq.rq_prog = rpcrdma_svc_req_prog(r);
	rq.rq_vers = rpcrdma_svc_req_vers(r);
	rq.rq_proc = rpcrdma_svc_req_proc(r);
	rq.rq_cred.oa_flavor = (enum_t)cred->flavor;
	rq.rq_cred.oa_base = (caddr_t)(uintptr_t)cred->body;
	rq.rq_cred.oa_length = cred->len;
	rq.rq_clntcred = clntcred(&t);
	caller(&t);
	rq.rq_xprt = &t.x;
	fn(&rq, &t.x);
	/* A procedure may legitimately send no reply. */
	if (!t.replied)
		svc_req_drop(r);
}
