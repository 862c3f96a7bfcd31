// SPDX-License-Identifier: MIT
/* Shared pieces of the observability tests (obs_test.h). */
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obs/obs_test.h"

int obs_xdr_opaque(void *xdrs, struct obs_opaque *o)
{
	return xdr_bytes((XDR *)xdrs, &o->val, &o->len, 1u << 20);
}

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct obs_opaque o = {0};

	(void)args;
	(void)ctx;
	if (proc == 0) {
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	}
	if (proc == OBS_SLOW) {
		u_int ms = 0;

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &ms) || ms > 2000) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		usleep(ms * 1000u);
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	}
	if (proc == OBS_READ) {
		u_int len = 0;
		rpcrdma_bulk b = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &len) || len > (1u << 20)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		b.base = malloc(len ? len : 1);
		b.len = len;
		if (b.base)
			memset(b.base, 0x5a, len);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
		free(b.base);
		return;
	}
	if (proc != OBS_ECHO) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_svc_getargs(req, (xdrproc_t)obs_xdr_opaque, &o)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	rpcrdma_svc_reply(req, (xdrproc_t)obs_xdr_opaque, &o);
	xdr_free((xdrproc_t)obs_xdr_opaque, (char *)&o);
}

int obs_server(const struct rpcrdma_svc_opts *opts, struct rpcrdma_svc **out)
{
	struct rpcrdma_svc *s;
	int rc = rpcrdma_svc_create_any("127.0.0.1", opts, &s);

	if (rc)
		return rc;
	rc = rpcrdma_svc_register(s, OBS_PROG, OBS_VERS, dispatch, NULL);
	if (!rc)
		rc = rpcrdma_svc_start(s);
	if (rc) {
		rpcrdma_svc_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}
