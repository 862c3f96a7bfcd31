// SPDX-License-Identifier: MIT
/*
 * A TI-RPC CLIENT over an rpcrdma client, so rpcgen-generated client stubs
 * (clnt_call() through cl_ops) run unchanged over RPC-over-RDMA.
 *
 * Credentials as libtirpc's clnt_vc_call() handles them: cl_auth's
 * AUTH_MARSHALL() writes the credential and verifier of every call (into
 * a small xdrmem buffer handed to the call as RPCRDMA_CALL_OPT_AUTH),
 * AUTH_VALIDATE() sees the reply, and an AUTH_ERROR reply gets
 * AUTH_REFRESH() and up to two more tries. An AUTH_NONE cl_auth (the
 * default) leaves the client's own credential (RPCRDMA_CLNT_OPT_AUTH) in
 * place.
 *
 * Every call offers a Reply chunk of the client's tirpc_reply_size
 * (RPCRDMA_CLNT_OPT_TIRPC_REPLY), since a stub cannot say how large its
 * reply will be (RFC 8166 §3.5.3.2, Long Reply).
 */
#include <errno.h>
#include <pthread.h>
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "rpcrdma/rpc.h"

struct tclnt {
	CLIENT c; /* first */
	struct rpcrdma_clnt *r;
	pthread_mutex_t lock;
	struct rpc_err err;
	struct timeval tout;
	bool tout_set;
	AUTH *own_auth; /* the AUTH_NONE handle we created (destroyed with us) */
};

static struct tclnt *T(CLIENT *c)
{
	return (struct tclnt *)(void *)c;
}

static enum clnt_stat map_status(int rc)
{
	switch (rc) {
	case 0:
		return RPC_SUCCESS;
	case -ETIMEDOUT:
		return RPC_TIMEDOUT;
	case -EPFNOSUPPORT:
		return RPC_PROGUNAVAIL;
	case -EPROTOTYPE:
		return RPC_PROGVERSMISMATCH;
	case -EOPNOTSUPP:
		return RPC_PROCUNAVAIL;
	case -EINVAL:
		return RPC_CANTDECODEARGS;
	case -EIO:
		return RPC_SYSTEMERROR;
	case -EPROTO:
		return RPC_VERSMISMATCH;
	case -EACCES:
		return RPC_AUTHERROR;
	case -EBADMSG:
		return RPC_CANTDECODERES;
	case -ECONNRESET:
	case -ENOTCONN:
		return RPC_CANTRECV;
	case -EMSGSIZE:
		return RPC_CANTENCODEARGS;
	case -EREMOTEIO:
		/* RDMA_ERROR ERR_CHUNK (RFC 8166 §4.5.2): e.g. the reply did not
		 * fit the Reply chunk offered. */
		return RPC_CANTRECV;
	default:
		return RPC_FAILED;
	}
}

/* cl_auth's credential and verifier as the call header carries them:
 * 0 (in @buf, *@len bytes), 1 when cl_auth is AUTH_NONE (the client's own
 * credential applies), -1 when AUTH_MARSHALL failed. */
static int marshal_auth(AUTH *auth, uint8_t *buf, uint32_t cap, uint32_t *len)
{
	XDR x;
	int rc = 0;

	if (!auth || (auth->ah_cred.oa_flavor == AUTH_NONE && auth->ah_cred.oa_length == 0 &&
		      auth->ah_verf.oa_flavor == AUTH_NONE && auth->ah_verf.oa_length == 0))
		return 1;
	xdrmem_create(&x, (char *)buf, cap, XDR_ENCODE);
	if (!AUTH_MARSHALL(auth, &x))
		rc = -1;
	else
		*len = xdr_getpos(&x);
	xdr_destroy(&x);
	return rc;
}

static void set_err(struct tclnt *t, int rc, const struct rpcrdma_call_result *r)
{
	pthread_mutex_lock(&t->lock);
	memset(&t->err, 0, sizeof(t->err));
	t->err.re_status = map_status(rc);
	if (t->err.re_status == RPC_AUTHERROR) {
		t->err.re_why = (enum auth_stat)r->auth_stat;
	} else if (t->err.re_status == RPC_PROGVERSMISMATCH ||
		   t->err.re_status == RPC_VERSMISMATCH) {
		t->err.re_vers.low = r->mismatch_low;
		t->err.re_vers.high = r->mismatch_high;
	} else if (rc) {
		t->err.re_errno = -rc;
	}
	pthread_mutex_unlock(&t->lock);
}

static enum clnt_stat t_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
			     xdrproc_t xres, void *res, struct timeval tout)
{
	struct tclnt *t = T(cl);
	struct rpcrdma_call_opts o;
	struct rpcrdma_call_result r;
	uint8_t auth[RPCRDMA_RPC_CRED_VERF_MAX];
	int refreshes = 2, rc;

	memset(&o, 0, sizeof(o));
	pthread_mutex_lock(&t->lock);
	if (t->tout_set)
		tout = t->tout;
	pthread_mutex_unlock(&t->lock);
	o.comp_mask = RPCRDMA_CALL_OPT_RESULT;
	o.result = &r;
	if (tout.tv_sec > 0 || tout.tv_usec > 0) {
		o.comp_mask |= RPCRDMA_CALL_OPT_TIMEOUT;
		o.timeout_ms = (uint32_t)(tout.tv_sec * 1000 + tout.tv_usec / 1000);
	}
	o.reply_size = clnt_tirpc_reply_size(t->r);
	if (o.reply_size)
		o.comp_mask |= RPCRDMA_CALL_OPT_REPLY_SIZE;
again:
	memset(&r, 0, sizeof(r));
	o.comp_mask &= ~(uint32_t)RPCRDMA_CALL_OPT_AUTH;
	rc = marshal_auth(cl->cl_auth, auth, sizeof(auth), &o.auth_len);
	if (rc < 0) {
		set_err(t, -EMSGSIZE, &r);
		return RPC_CANTENCODEARGS;
	}
	if (rc == 0) {
		o.comp_mask |= RPCRDMA_CALL_OPT_AUTH;
		o.auth = auth;
	}
	rc = rpcrdma_clnt_call(t->r, (uint32_t)proc, xargs, args, xres, res, &o);
	if (rc == 0 && cl->cl_auth) {
		/* The reply's verifier is not passed up: what Linux and our
		 * server send for AUTH_NONE and AUTH_SYS, an empty AUTH_NONE. */
		struct opaque_auth v = {AUTH_NONE, NULL, 0};

		if (!AUTH_VALIDATE(cl->cl_auth, &v)) {
			r.auth_stat = AUTH_INVALIDRESP;
			rc = -EACCES;
		}
	} else if (rc == -EACCES && cl->cl_auth && refreshes-- > 0) {
		/* RFC 5531 §9 MSG_DENIED / AUTH_ERROR: let the AUTH refresh
		 * its credential and try again, as clnt_vc_call() does. */
		struct rpc_msg m;

		memset(&m, 0, sizeof(m));
		m.rm_xid = r.xid;
		m.rm_direction = REPLY;
		m.rm_reply.rp_stat = MSG_DENIED;
		m.rjcted_rply.rj_stat = AUTH_ERROR;
		m.rjcted_rply.rj_why = (enum auth_stat)r.auth_stat;
		if (AUTH_REFRESH(cl->cl_auth, &m))
			goto again;
	}
	set_err(t, rc, &r);
	return map_status(rc);
}

static void t_abort(CLIENT *cl)
{
	(void)cl;
}

static void t_geterr(CLIENT *cl, struct rpc_err *e)
{
	struct tclnt *t = T(cl);

	pthread_mutex_lock(&t->lock);
	*e = t->err;
	pthread_mutex_unlock(&t->lock);
}

static bool_t t_freeres(CLIENT *cl, xdrproc_t xres, void *res)
{
	(void)cl;
	xdr_free(xres, res);
	return TRUE;
}

static void t_destroy(CLIENT *cl)
{
	struct tclnt *t = T(cl);

	/* As with libtirpc's clients, an AUTH the caller put in cl_auth is
	 * the caller's to auth_destroy(); only our own default goes here. */
	if (t->own_auth)
		auth_destroy(t->own_auth);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static bool_t t_control(CLIENT *cl, u_int rq, void *in)
{
	struct tclnt *t = T(cl);

	if (rq == CLSET_TIMEOUT && in) {
		pthread_mutex_lock(&t->lock);
		t->tout = *(struct timeval *)in;
		t->tout_set = true;
		pthread_mutex_unlock(&t->lock);
		return TRUE;
	}
	if (rq == CLGET_TIMEOUT && in) {
		pthread_mutex_lock(&t->lock);
		*(struct timeval *)in = t->tout;
		pthread_mutex_unlock(&t->lock);
		return TRUE;
	}
	return FALSE;
}

static const struct clnt_ops t_ops = {
    .cl_call = t_call,
    .cl_abort = t_abort,
    .cl_geterr = t_geterr,
    .cl_freeres = t_freeres,
    .cl_destroy = t_destroy,
    .cl_control = t_control,
};

struct __rpc_client *rpcrdma_clnt_tirpc(struct rpcrdma_clnt *clnt)
{
	struct tclnt *t;

	if (!clnt)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->r = clnt;
	t->c.cl_ops = (struct clnt_ops *)(uintptr_t)&t_ops;
	t->own_auth = authnone_create();
	t->c.cl_auth = t->own_auth;
	return &t->c;
}
