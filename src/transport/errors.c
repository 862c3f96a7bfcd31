// SPDX-License-Identifier: MIT
/*
 * Error codes of a call (client.h lists them) and RDMA_ERROR replies
 * (RFC 8166 §4.5).
 */
#include <errno.h>
#include <string.h>

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
		rc = rpcrdma1_encode_err_vers(&x, xid, RPCRDMA1_VERSION, credit, RPCRDMA1_VERSION,
					      RPCRDMA1_VERSION);
	else
		rc = rpcrdma1_encode_err_chunk(&x, xid, credit);
	return rc ? rc : (int)rpcrdma_xdr_getpos(&x);
}

int xprt_encode_err_vers(void *buf, size_t len, uint32_t xid, uint32_t vers, uint32_t credit,
			 uint32_t high)
{
	struct rpcrdma_xdr x;
	int rc;

	rpcrdma_xdr_init(&x, buf, len, RPCRDMA_XDR_ENCODE);
	rc = rpcrdma1_encode_err_vers(&x, xid, vers, credit, RPCRDMA1_VERSION, high);
	return rc ? rc : (int)rpcrdma_xdr_getpos(&x);
}

/* One line per code any public function returns. Where a code means one
 * thing from a call's reply and another from the rest of the API, the text
 * names both (the RPC names first, as client.h lists them). */
const char *rpcrdma_strerror(int status)
{
	switch (status) {
	case 0:
		return "success";
	/* a call's outcome (client.h) */
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
		return "PROC_UNAVAIL or operation not supported";
	case -EINVAL:
		return "GARBAGE_ARGS or invalid argument";
	case -EIO:
		return "SYSTEM_ERR";
	case -EPROTO:
		/* a connect: the MPA exchange failed; a call: RPC_MISMATCH */
		return "peer is not an RPC-over-RDMA server (MPA handshake failed), or "
		       "RPC_MISMATCH";
	case -EACCES:
		return "AUTH_ERROR or permission denied";
	case -EBADMSG:
		return "reply did not decode";
	case -EMSGSIZE:
		return "message too large for the transport";
	case -ENOMEM:
		return "out of memory";
	/* connecting and listening (common.h for the two RPCRDMA_EPEER_*) */
	case -RPCRDMA_EPEER_HTTP:
		return "peer is an HTTP server, not an RPC-over-RDMA server (MPA handshake failed)";
	case -RPCRDMA_EPEER_ONCRPC:
		return "peer is an ONC RPC server over TCP, not RPC-over-RDMA (MPA handshake "
		       "failed)";
	case -ENOENT:
		return "not found (unknown host, unknown RDMA provider name, or no such entry)";
	case -ECONNREFUSED:
		return "connection refused (no RPC-over-RDMA server on that port, or it rejected "
		       "us)";
	case -ECONNABORTED:
		return "connection aborted";
	case -EHOSTUNREACH:
		return "no route to host";
	case -ENETUNREACH:
		return "network unreachable";
	case -EADDRINUSE:
		return "address already in use";
	case -EADDRNOTAVAIL:
		return "address not available on this host";
	case -EAFNOSUPPORT:
		return "address family not supported";
	case -EISCONN:
		return "already connected";
	case -EPIPE:
		return "connection closed by the peer";
	case -ENODEV:
		return "RDMA provider has no usable device";
	case -ENOPROTOOPT:
		return "the peer did not enable this (e.g. no backchannel)";
	/* resources and arguments */
	case -EEXIST:
		return "already registered";
	case -EBUSY:
		return "busy (still in use)";
	case -EAGAIN:
		return "try again (nothing ready yet)";
	case -EINTR:
		return "interrupted";
	case -ENOSPC:
		return "no space left (queue or table full)";
	case -ENOBUFS:
		return "no buffer space";
	case -E2BIG:
		return "too large for its XDR limit";
	case -EOVERFLOW:
		return "length overflow";
	case -EMFILE:
	case -ENFILE:
		return "too many open files";
	case -EPERM:
		return "operation not permitted";
	default:
		break;
	}
	if (status < 0) {
		const char *d = strerrordesc_np(-status);

		if (d)
			return d;
	}
	return "unknown error";
}

uint32_t xprt_error_accept_stat(uint32_t accept_stat)
{
	if (accept_stat == RPCRDMA_RPC_SUCCESS || accept_stat > RPCRDMA_RPC_SYSTEM_ERR ||
	    accept_stat == RPCRDMA_RPC_PROG_MISMATCH)
		return RPCRDMA_RPC_SYSTEM_ERR;
	return accept_stat;
}
