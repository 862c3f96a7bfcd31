// SPDX-License-Identifier: MIT
/*
 * AUTH_SYS through the TI-RPC adapters (RFC 5531 §9 call header, §10.2
 * AUTH_SYS, Appendix A authsys_parms), end to end over loopback:
 *   - client: the CLIENT of rpcrdma_clnt_tirpc() honours cl_auth as
 *     libtirpc's clnt_vc_call() does. With the default (AUTH_NONE) the
 *     server sees AUTH_NONE; after cl->cl_auth = authunix_create(...) it
 *     sees AUTH_SYS whose body is byte for byte what that AUTH marshals
 *     (its ah_cred); authunix_create_default() gives our effective uid;
 *     an AUTH whose credential the server refuses (AUTH_SYS with 17 gids:
 *     MSG_DENIED / AUTH_BADCRED, §9) gets AUTH_REFRESH() with that
 *     rejection and the call is made again (as clnt_vc_call(): at most two
 *     refreshes), after which a refused call is RPC_AUTHERROR, re_why
 *     AUTH_BADCRED;
 *   - server: the rpcgen dispatcher gets rq_cred (flavor and body as
 *     received), rq_clntcred (struct authunix_parms for AUTH_SYS, NULL
 *     otherwise) and svc_getrpccaller()/svc_getcaller() (127.0.0.1).
 * Before the fix the adapter ignored cl_auth (AUTH_NONE on the wire),
 * rq_clntcred was NULL and svc_getrpccaller() an empty netbuf.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "xprt_auth/authx_test.h"

#define RFC "RFC 5531 §10.2 / Appendix A"

/* An AUTH of our own: its credential is AUTH_SYS with 17 gids (malformed,
 * Appendix A: gids<16>) until ah_refresh fixes it, as a refreshing
 * flavor would; counts marshal/refresh/validate calls. */
static int n_marshal, n_refresh, n_validate, bad = 1;

static int my_marshal(AUTH *a, XDR *x)
{
	int32_t w[2 + 5 + 17 + 2];
	int n = 0;

	(void)a;
	w[n++] = AUTH_SYS;
	w[n++] = 4 * (5 + (bad ? 17 : 0));
	w[n++] = 1;            /* stamp */
	w[n++] = 0;            /* machinename<> empty */
	w[n++] = 55;           /* uid */
	w[n++] = 66;           /* gid */
	w[n++] = bad ? 17 : 0; /* gids */
	for (int i = 0; bad && i < 17; i++)
		w[n++] = i;
	w[n++] = AUTH_NONE; /* verifier */
	w[n++] = 0;
	n_marshal++;
	for (int i = 0; i < n; i++)
		if (!XDR_PUTINT32(x, &w[i]))
			return 0;
	return 1;
}

static int my_validate(AUTH *a, struct opaque_auth *v)
{
	(void)a;
	n_validate++;
	return v->oa_flavor == AUTH_NONE;
}

static int my_refresh(AUTH *a, void *msg)
{
	const struct rpc_msg *m = msg;

	(void)a;
	n_refresh++;
	/* RFC 5531 §9: the denial names the auth_stat. */
	if (m->rm_reply.rp_stat != MSG_DENIED || m->rjcted_rply.rj_stat != AUTH_ERROR ||
	    m->rjcted_rply.rj_why != AUTH_BADCRED)
		return 0;
	bad = 0;
	return 1;
}

static void my_nextverf(AUTH *a)
{
	(void)a;
}

static void my_destroy(AUTH *a)
{
	(void)a;
}

/* A refresh that claims success without fixing anything. */
static int my_refresh_noop(AUTH *a, void *msg)
{
	(void)a;
	(void)msg;
	n_refresh++;
	return 1;
}

static struct auth_ops my_ops = {.ah_nextverf = my_nextverf,
				 .ah_marshal = my_marshal,
				 .ah_validate = my_validate,
				 .ah_refresh = my_refresh,
				 .ah_destroy = my_destroy};

static void check_sys(const whoami_res *w, AUTH *a, const char *host, u_int uid, u_int gid,
		      const gid_t *gids, u_int ngids)
{
	XT_CHECK(w->flavor == AUTH_SYS);
	/* The credential body crossed unchanged: what the AUTH marshalled. */
	XT_CHECK(w->cred.cred_len == a->ah_cred.oa_length &&
		 memcmp(w->cred.cred_val, a->ah_cred.oa_base, a->ah_cred.oa_length) == 0);
	XT_CHECK(w->has_sys == 1);
	XT_CHECK(strcmp(w->machine, host) == 0);
	XT_CHECK(w->uid == uid && w->gid == gid);
	XT_CHECK(w->gids.gids_len == ngids);
	for (u_int i = 0; i < ngids && i < w->gids.gids_len; i++)
		XT_CHECK(w->gids.gids_val[i] == (u_int)gids[i]);
	if (w->flavor != AUTH_SYS || !w->has_sys)
		fprintf(stderr, "  " RFC ": server saw flavor %d has_sys %d, expected AUTH_SYS\n",
			w->flavor, w->has_sys);
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	CLIENT *cl;
	whoami_res *w;
	gid_t gids[3] = {10, 20, 30};
	char host[256];

	signal(SIGPIPE, SIG_IGN);
	if (ax_server_start(&srv))
		return 1;
	if (rpcrdma_clnt_create("127.0.0.1", srv.port, AUTHX_PROG, AUTHX_V1, NULL, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	cl = rpcrdma_clnt_tirpc(c);
	XT_CHECK(cl != NULL && cl->cl_auth != NULL);

	/* Default cl_auth: AUTH_NONE, no rq_clntcred; the caller's address. */
	w = whoami_1(NULL, cl);
	XT_CHECK(w != NULL);
	if (w) {
		XT_CHECK(w->flavor == AUTH_NONE && w->cred.cred_len == 0 && w->has_sys == 0);
		XT_CHECK(ax_is_loopback(w));
		if (!ax_is_loopback(w))
			fprintf(stderr, "  svc_getrpccaller: family %d, %u address bytes\n",
				w->family, w->addr.addr_len);
		clnt_freeres(cl, (xdrproc_t)xdr_whoami_res, (char *)w);
	}

	/* An AUTH_SYS AUTH set by the caller, as with clnttcp_create(). */
	cl->cl_auth = authunix_create((char *)(uintptr_t) "tirpc-host", 4321, 8765, 3, gids);
	XT_CHECK(cl->cl_auth != NULL);
	w = whoami_1(NULL, cl);
	XT_CHECK(w != NULL);
	if (w) {
		check_sys(w, cl->cl_auth, "tirpc-host", 4321, 8765, gids, 3);
		XT_CHECK(ax_is_loopback(w));
		clnt_freeres(cl, (xdrproc_t)xdr_whoami_res, (char *)w);
	}
	auth_destroy(cl->cl_auth);

	/* authunix_create_default(): the process's own identity. */
	cl->cl_auth = authunix_create_default();
	XT_CHECK(cl->cl_auth != NULL);
	w = whoami_1(NULL, cl);
	XT_CHECK(w != NULL);
	if (w) {
		XT_CHECK(w->flavor == AUTH_SYS && w->has_sys == 1);
		XT_CHECK(w->uid == (u_int)geteuid() && w->gid == (u_int)getegid());
		if (gethostname(host, sizeof(host)) == 0) {
			host[sizeof(host) - 1] = '\0';
			XT_CHECK(strcmp(w->machine, host) == 0);
		}
		clnt_freeres(cl, (xdrproc_t)xdr_whoami_res, (char *)w);
	}
	auth_destroy(cl->cl_auth);

	/* AUTH_ERROR (RFC 5531 §9) -> AUTH_REFRESH -> the call again, as
	 * clnt_vc_call() does: our AUTH is refused (AUTH_BADCRED), refreshes
	 * and is accepted; refused again without a working refresh, clnt_call
	 * gives RPC_AUTHERROR with re_why AUTH_BADCRED. */
	{
		AUTH mine;
		struct rpc_err e;

		memset(&mine, 0, sizeof(mine));
		mine.ah_cred.oa_flavor = AUTH_SYS;
		mine.ah_ops = &my_ops;
		cl->cl_auth = &mine;
		w = whoami_1(NULL, cl);
		XT_CHECK(w != NULL && n_refresh == 1 && n_marshal == 2 && n_validate == 1);
		if (w) {
			XT_CHECK(w->flavor == AUTH_SYS && w->uid == 55 && w->gid == 66);
			clnt_freeres(cl, (xdrproc_t)xdr_whoami_res, (char *)w);
		}
		bad = 1;
		n_refresh = n_marshal = 0;
		my_ops.ah_refresh = my_refresh_noop;
		w = whoami_1(NULL, cl);
		clnt_geterr(cl, &e);
		XT_CHECK(w == NULL && e.re_status == RPC_AUTHERROR && e.re_why == AUTH_BADCRED);
		XT_CHECK(n_marshal == 3); /* the call and two refreshed tries */
		if (e.re_status != RPC_AUTHERROR)
			fprintf(stderr,
				"  RFC 5531 §9: malformed credential: clnt_stat %d, expected "
				"RPC_AUTHERROR\n",
				(int)e.re_status);
	}
	cl->cl_auth = NULL; /* as libtirpc: the caller destroyed its AUTH */
	clnt_destroy(cl);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
