// SPDX-License-Identifier: MIT
/*
 * AUTH_SYS through the TI-RPC adapters (RFC 5531 §9 call header, §10.2
 * AUTH_SYS, Appendix A authsys_parms), end to end over loopback:
 *   - client: the CLIENT of rpcrdma_clnt_tirpc() honours cl_auth as
 *     libtirpc's clnt_vc_call() does. With the default (AUTH_NONE) the
 *     server sees AUTH_NONE; after cl->cl_auth = authunix_create(...) it
 *     sees AUTH_SYS whose body is byte for byte what that AUTH marshals
 *     (its ah_cred); authunix_create_default() gives our effective uid;
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
	cl->cl_auth = NULL; /* as libtirpc: the caller destroyed its AUTH */
	clnt_destroy(cl);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
