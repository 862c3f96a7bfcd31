// SPDX-License-Identifier: MIT
/*
 * Error codes of a call (client.h lists them) and RDMA_ERROR replies
 * (RFC 8166 §4.5).
 */
#include <errno.h>

#include "transport/xprt.h"

int xprt_rpc_status(const struct rpcrdma_rpc_reply *r)
{
	if (r->reply_stat == RPCRDMA_RPC_MSG_DENIED)
		return r->reject_stat == RPCRDMA_RPC_AUTH_ERROR ? -EACCES : -EPROTO;
	switch (r->accept_stat) {
	case RPCRDMA_RPC_SUCCESS:
		return 0;
	case RPCRDMA_RPC_PROG_UNAVAIL:
		return -EPFNOSUPPORT;
	case RPCRDMA_RPC_PROG_MISMATCH:
		return -EPROTOTYPE;
	case RPCRDMA_RPC_PROC_UNAVAIL:
		return -EOPNOTSUPP;
	case RPCRDMA_RPC_GARBAGE_ARGS:
		return -EINVAL;
	default:
		return -EIO;
	}
}

int xprt_rdma_err_status(uint32_t err)
{
	/* RFC 8166 §4.5.1: the responder does not support our version;
	 * §4.5.2: it could not parse or use our header / chunks. */
	return err == RPCRDMA1_ERR_VERS ? -EPROTONOSUPPORT : -EREMOTEIO;
}

int xprt_encode_error(void *buf, size_t len, uint32_t xid, uint32_t credit, uint32_t err)
{
	struct rpcrdma_xdr x;
	int rc;

	rpcrdma_xdr_init(&x, buf, len, RPCRDMA_XDR_ENCODE);
	if (err == RPCRDMA1_ERR_VERS)
		/* RFC 8166 §4.5.1: we implement exactly Version One. */
		rc = rpcrdma1_encode_err_vers(&x, xid, credit, RPCRDMA1_VERSION, RPCRDMA1_VERSION);
	else
		rc = rpcrdma1_encode_err_chunk(&x, xid, credit);
	return rc ? rc : (int)rpcrdma_xdr_getpos(&x);
}

const char *rpcrdma_strerror(int status)
{
	switch (status) {
	case 0:
		return "success";
	case -ETIMEDOUT:
		return "timed out";
	case -ECONNRESET:
		return "connection lost";
	case -ENOTCONN:
		return "not connected";
	case -ECANCELED:
		return "cancelled";
	case -EPROTONOSUPPORT:
		return "RDMA_ERROR ERR_VERS";
	case -EREMOTEIO:
		return "RDMA_ERROR ERR_CHUNK";
	case -EPFNOSUPPORT:
		return "PROG_UNAVAIL";
	case -EPROTOTYPE:
		return "PROG_MISMATCH";
	case -EOPNOTSUPP:
		return "PROC_UNAVAIL";
	case -EINVAL:
		return "GARBAGE_ARGS or invalid argument";
	case -EIO:
		return "SYSTEM_ERR";
	case -EPROTO:
		return "RPC_MISMATCH";
	case -EACCES:
		return "AUTH_ERROR";
	case -EBADMSG:
		return "reply did not decode";
	case -EMSGSIZE:
		return "message too large for the transport";
	case -ENOMEM:
		return "out of memory";
	default:
		return "error";
	}
}

uint32_t xprt_error_accept_stat(uint32_t accept_stat)
{
	if (accept_stat == RPCRDMA_RPC_SUCCESS || accept_stat > RPCRDMA_RPC_SYSTEM_ERR ||
	    accept_stat == RPCRDMA_RPC_PROG_MISMATCH)
		return RPCRDMA_RPC_SYSTEM_ERR;
	return accept_stat;
}
