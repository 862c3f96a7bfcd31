// SPDX-License-Identifier: MIT
/* The AUTHX program's server side (see authx_test.h). */
#include "xprt_auth/authx_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

void authx_prog_1(struct svc_req *rqstp, SVCXPRT *transp);

void ax_big_fill(void *p, size_t len, uint32_t seed)
{
	tl_fill(p, len, seed);
}

int ax_is_loopback(const whoami_res *w)
{
	static const uint8_t lo[4] = {127, 0, 0, 1};

	return w->family == AF_INET && w->addr.addr_len == 4 &&
	       memcmp(w->addr.addr_val, lo, 4) == 0;
}

/* The caller's address into @w (family and address bytes, no port). */
static void set_addr(whoami_res *w, const struct sockaddr *sa, socklen_t len, char *buf)
{
	w->family = sa ? sa->sa_family : 0;
	w->addr.addr_len = 0;
	w->addr.addr_val = buf;
	if (sa && sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(buf, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		w->addr.addr_len = 4;
	} else if (sa && sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(buf, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		w->addr.addr_len = 16;
	}
}

/* ---- version 1: what an rpcgen user writes ---- */

whoami_res *whoami_1_svc(void *arg, struct svc_req *rq)
{
	static whoami_res w;
	static u_int gids[16];
	static char addr[16];
	const struct authunix_parms *aup = (const struct authunix_parms *)rq->rq_clntcred;
	const struct netbuf *nb = svc_getrpccaller(rq->rq_xprt);

	(void)arg;
	memset(&w, 0, sizeof(w));
	w.flavor = (int)rq->rq_cred.oa_flavor;
	w.cred.cred_len = rq->rq_cred.oa_length;
	w.cred.cred_val = rq->rq_cred.oa_base;
	w.has_sys = aup != NULL;
	w.machine = (char *)(uintptr_t) "";
	if (aup) {
		w.stamp = (u_int)aup->aup_time;
		w.machine = aup->aup_machname;
		w.uid = aup->aup_uid;
		w.gid = aup->aup_gid;
		w.gids.gids_len = aup->aup_len <= 16 ? aup->aup_len : 16;
		for (u_int i = 0; i < w.gids.gids_len; i++)
			gids[i] = aup->aup_gids[i];
		w.gids.gids_val = gids;
	}
	set_addr(&w, nb && nb->len ? (const struct sockaddr *)nb->buf : NULL, nb ? nb->len : 0,
		 addr);
	/* svc_getcaller() (xp_raddr) must agree with svc_getrpccaller(). */
	if (nb && nb->len &&
	    memcmp(svc_getcaller(rq->rq_xprt), nb->buf, sizeof(struct sockaddr_in)))
		w.family = -1;
	return &w;
}

bigdata *big_1_svc(big_args *a, struct svc_req *rq)
{
	static bigdata b;

	(void)rq;
	free(b.bigdata_val);
	b.bigdata_val = malloc(a->len ? a->len : 1);
	b.bigdata_len = b.bigdata_val ? a->len : 0;
	if (b.bigdata_val)
		ax_big_fill(b.bigdata_val, a->len, a->seed);
	return &b;
}

int authx_prog_1_freeresult(SVCXPRT *t, xdrproc_t x, caddr_t r)
{
	(void)t;
	(void)x;
	(void)r;
	return 1;
}

/* ---- version 2: the native API's accessors ---- */

static void native(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	whoami_res w;
	struct rpcrdma_rpc_authsys s;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char addr[16];
	u_int gids[16];
	const struct rpcrdma_rpc_auth *cred = rpcrdma_svc_req_cred(req);

	(void)args;
	(void)ctx;
	if (proc != WHOAMI) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.flavor = (int)cred->flavor;
	w.cred.cred_len = cred->len;
	w.cred.cred_val = (char *)(uintptr_t)cred->body;
	w.machine = (char *)(uintptr_t) "";
	if (rpcrdma_svc_req_authsys(req, &s) == 0) {
		w.has_sys = 1;
		w.stamp = s.stamp;
		w.machine = s.machinename;
		w.uid = s.uid;
		w.gid = s.gid;
		w.gids.gids_len = s.ngids;
		for (u_int i = 0; i < s.ngids; i++)
			gids[i] = s.gids[i];
		w.gids.gids_val = gids;
	}
	if (rpcrdma_svc_req_caller(req, &ss, &len) == 0)
		set_addr(&w, (const struct sockaddr *)&ss, len, addr);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_whoami_res, &w);
}

static void reg(struct rpcrdma_svc *svc)
{
	if (rpcrdma_svc_register_tirpc(svc, AUTHX_PROG, AUTHX_V1, authx_prog_1) ||
	    rpcrdma_svc_register(svc, AUTHX_PROG, AUTHX_V2, native, NULL))
		xt_failures++;
}

int ax_server_start(struct tl_server *srv)
{
	return xt_server_start(srv, NULL, reg);
}
