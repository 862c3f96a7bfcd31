// SPDX-License-Identifier: MIT
/*
 * The client's credential option (RPCRDMA_CLNT_OPT_AUTH) and the native
 * server accessors, end to end over loopback (RFC 5531 §9 call header,
 * §10.2 AUTH_SYS, Appendix A authsys_parms):
 *   - AUTH_SYS {stamp 0x01020304, "native-host", uid 1001, gid 1002, gids
 *     7 8}: the credential body the server received is exactly the XDR
 *     of those parameters (checked word by word), and
 *     rpcrdma_svc_req_authsys() / rpcrdma_svc_req_caller() give them and
 *     127.0.0.1 (version 2, native dispatcher); the rpcgen dispatcher
 *     (version 1) sees the same through rq_clntcred;
 *   - the CLIENT adapter with its default (AUTH_NONE) cl_auth keeps the
 *     client's AUTH_SYS; RPCRDMA_CALL_OPT_AUTH replaces it per call and
 *     refuses bytes that are not two opaque_auth (-EINVAL);
 *   - auth_sys NULL: our effective uid/gid and gethostname(); stamp 0
 *     becomes a time stamp;
 *   - AUTH_NONE stays the default (empty AUTH_NONE credential);
 *   - a broken option (17 gids, unknown flavor) fails create with -EINVAL.
 * Before the fix there was no credential option: every call carried
 * AUTH_NONE (this test did not build).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/be.h"
#include "xprt_auth/authx_test.h"

#define RFC "RFC 5531 Appendix A"

static int whoami(struct rpcrdma_clnt *c, const struct rpcrdma_call_opts *o, whoami_res *w)
{
	memset(w, 0, sizeof(*w));
	return rpcrdma_clnt_call(c, WHOAMI, NULL, NULL, (xdrproc_t)xdr_whoami_res, w, o);
}

static struct rpcrdma_clnt *mk(uint16_t port, uint32_t vers, uint32_t flavor,
			       const struct rpcrdma_rpc_authsys *sys)
{
	struct rpcrdma_clnt_opts o = {
	    .comp_mask = RPCRDMA_CLNT_OPT_AUTH, .auth_flavor = flavor, .auth_sys = sys};
	struct rpcrdma_clnt *c = NULL;

	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", port, AUTHX_PROG, vers, &o, &c) == 0);
	return c;
}

/* The body the server received, word by word, against the parameters. */
static void check_body(const whoami_res *w)
{
	static const uint32_t want[] = {0x01020304, 11,   0x6e617469, 0x76652d68, 0x6f737400,
					1001,       1002, 2,          7,          8};
	const uint8_t *got = (const uint8_t *)w->cred.cred_val;

	XT_CHECK(w->flavor == RPCRDMA_RPC_AUTH_SYS && w->cred.cred_len == sizeof(want));
	if (w->cred.cred_len != sizeof(want)) {
		fprintf(stderr, "  " RFC ": credential body of %u bytes, expected %zu\n",
			w->cred.cred_len, sizeof(want));
		return;
	}
	for (size_t i = 0; i < sizeof(want) / 4; i++) {
		XT_CHECK(get_be32(got + 4 * i) == want[i]);
		if (get_be32(got + 4 * i) != want[i])
			fprintf(stderr, "  " RFC ": body word %zu is %#x, expected %#x\n", i,
				get_be32(got + 4 * i), want[i]);
	}
}

static void check_fields(const whoami_res *w)
{
	XT_CHECK(w->has_sys == 1 && w->stamp == 0x01020304);
	XT_CHECK(strcmp(w->machine, "native-host") == 0);
	XT_CHECK(w->uid == 1001 && w->gid == 1002 && w->gids.gids_len == 2 &&
		 w->gids.gids_val[0] == 7 && w->gids.gids_val[1] == 8);
	XT_CHECK(ax_is_loopback(w));
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_rpc_authsys sys = {.stamp = 0x01020304,
					  .machinename = "native-host",
					  .uid = 1001,
					  .gid = 1002,
					  .ngids = 2,
					  .gids = {7, 8}};
	struct rpcrdma_clnt *c;
	whoami_res w;

	signal(SIGPIPE, SIG_IGN);
	if (ax_server_start(&srv))
		return 1;

	/* Native dispatcher (version 2): bytes and accessors. */
	c = mk(srv.port, AUTHX_V2, RPCRDMA_RPC_AUTH_SYS, &sys);
	if (c) {
		XT_CHECK(whoami(c, NULL, &w) == 0);
		check_body(&w);
		check_fields(&w);
		xdr_free((xdrproc_t)xdr_whoami_res, (char *)&w);
		/* A per-call credential replaces the client's: AUTH_NONE. */
		{
			static const uint8_t none2[16] = {0};
			static const uint8_t bad[12] = {0, 0, 0, 1, 0, 0, 1, 0x91, 0, 0, 0, 0};
			struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_AUTH,
						      .auth = none2,
						      .auth_len = sizeof(none2)};

			XT_CHECK(whoami(c, &o, &w) == 0);
			XT_CHECK(w.flavor == RPCRDMA_RPC_AUTH_NONE && w.cred.cred_len == 0 &&
				 w.has_sys == 0);
			xdr_free((xdrproc_t)xdr_whoami_res, (char *)&w);
			o.auth = bad; /* body length 401 */
			o.auth_len = sizeof(bad);
			XT_CHECK(whoami(c, &o, &w) == -EINVAL);
			o.auth = none2;
			o.auth_len = 12; /* not two opaque_auth */
			XT_CHECK(whoami(c, &o, &w) == -EINVAL);
		}
		rpcrdma_clnt_destroy(c);
	}

	/* rpcgen dispatcher (version 1) through the CLIENT adapter, whose
	 * default AUTH_NONE cl_auth leaves the client's AUTH_SYS in place. */
	c = mk(srv.port, AUTHX_V1, RPCRDMA_RPC_AUTH_SYS, &sys);
	if (c) {
		CLIENT *cl = rpcrdma_clnt_tirpc(c);
		whoami_res *r = cl ? whoami_1(NULL, cl) : NULL;

		XT_CHECK(r != NULL);
		if (r) {
			check_body(r);
			check_fields(r);
			clnt_freeres(cl, (xdrproc_t)xdr_whoami_res, (char *)r);
		}
		if (cl)
			clnt_destroy(cl);
		rpcrdma_clnt_destroy(c);
	}

	/* auth_sys NULL: this process's identity, a time stamp. */
	c = mk(srv.port, AUTHX_V2, RPCRDMA_RPC_AUTH_SYS, NULL);
	if (c) {
		char host[256];
		uint32_t now = (uint32_t)time(NULL);

		XT_CHECK(whoami(c, NULL, &w) == 0);
		XT_CHECK(w.has_sys == 1 && w.uid == (u_int)geteuid() && w.gid == (u_int)getegid());
		XT_CHECK(w.stamp + 600 >= now && w.stamp <= now + 1);
		if (gethostname(host, sizeof(host)) == 0) {
			host[sizeof(host) - 1] = '\0';
			XT_CHECK(strcmp(w.machine, host) == 0);
		}
		xdr_free((xdrproc_t)xdr_whoami_res, (char *)&w);
		rpcrdma_clnt_destroy(c);
	}

	/* Default: AUTH_NONE, empty body. */
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, AUTHX_PROG, AUTHX_V2, NULL, &c) == 0);
	if (c) {
		XT_CHECK(whoami(c, NULL, &w) == 0);
		XT_CHECK(w.flavor == RPCRDMA_RPC_AUTH_NONE && w.cred.cred_len == 0 && !w.has_sys);
		XT_CHECK(ax_is_loopback(&w));
		xdr_free((xdrproc_t)xdr_whoami_res, (char *)&w);
		rpcrdma_clnt_destroy(c);
	}

	/* Options that break Appendix A's bounds, or unknown flavors. */
	{
		struct rpcrdma_rpc_authsys bad = sys;
		struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_AUTH,
					      .auth_flavor = RPCRDMA_RPC_AUTH_SYS,
					      .auth_sys = &bad};

		bad.ngids = 17;
		c = NULL;
		XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, AUTHX_PROG, AUTHX_V2, &o, &c) ==
			 -EINVAL);
		o.auth_flavor = RPCRDMA_RPC_RPCSEC_GSS;
		XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, AUTHX_PROG, AUTHX_V2, &o, &c) ==
			 -EINVAL);
		XT_CHECK(c == NULL);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
