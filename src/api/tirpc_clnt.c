// SPDX-License-Identifier: MIT
/*
 * A TI-RPC CLIENT over an rpcrdma client, so rpcgen-generated client stubs
 * (clnt_call() through cl_ops) run unchanged over RPC-over-RDMA.
 */
#include <errno.h>
#include <pthread.h>
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

struct tclnt {
	CLIENT c; /* first */
	struct rpcrdma_clnt *r;
	pthread_mutex_t lock;
	struct rpc_err err;
	struct timeval tout;
	bool tout_set;
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
	default:
		return RPC_FAILED;
	}
}

static enum clnt_stat t_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
			     xdrproc_t xres, void *res, struct timeval tout)
{
	struct tclnt *t = T(cl);
	struct rpcrdma_call_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	pthread_mutex_lock(&t->lock);
	if (t->tout_set)
		tout = t->tout;
	pthread_mutex_unlock(&t->lock);
	if (tout.tv_sec > 0 || tout.tv_usec > 0) {
		o.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT;
		o.timeout_ms = (uint32_t)(tout.tv_sec * 1000 + tout.tv_usec / 1000);
	}
	rc = rpcrdma_clnt_call(t->r, (uint32_t)proc, xargs, args, xres, res, &o);
	pthread_mutex_lock(&t->lock);
	memset(&t->err, 0, sizeof(t->err));
	t->err.re_status = map_status(rc);
	if (rc)
		t->err.re_errno = -rc;
	pthread_mutex_unlock(&t->lock);
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

	if (cl->cl_auth)
		auth_destroy(cl->cl_auth);
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
	t->c.cl_auth = authnone_create();
	return &t->c;
}
