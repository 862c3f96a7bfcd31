/* SPDX-License-Identifier: MIT */
/*
 * Internal hooks of the client and server used by the tests in tests/xprt
 * (hidden symbols: tests link the object libraries directly). The test
 * hooks exist only in test builds (RPCRDMA_TEST_HOOKS, src/CMakeLists.txt):
 * librpcrdma.a and .so have none.
 */
#ifndef RPCRDMA_API_INT_H
#define RPCRDMA_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/client.h"
#include "rpcrdma/provider.h"
#include "rpcrdma/server.h"
#include "transport/requester.h"
#include "transport/responder.h"

/* struct clnt_testhook (transport/requester.h): called with the transport
 * header of every call just before it is posted. */
void rpcrdma_clnt_set_testhook(struct rpcrdma_clnt *c, const struct clnt_testhook *h);
/* Drop the connection as if the network failed (the client reconnects). */
int rpcrdma_clnt_test_disconnect(struct rpcrdma_clnt *c);

/* Server: struct svc_testhook is in transport/responder.h. */
void rpcrdma_svc_set_testhook(struct rpcrdma_svc *s, const struct svc_testhook *h);

/* Between server.c and tirpc_svc.c. */
struct rpcrdma_rpc_reply;
int svc_reply_raw(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		  void *res);
/* End a request without any reply (an rpcgen procedure that returned NULL). */
void svc_req_drop(struct rpcrdma_svc_req *r);
void svc_tirpc_dispatch(struct rpcrdma_svc_req *r, rpcrdma_svc_tirpc_dispatch_t fn);

/* Between client.c and tirpc_clnt.c: the Reply chunk size the CLIENT
 * adapter offers (RPCRDMA_CLNT_OPT_TIRPC_REPLY). */
uint32_t clnt_tirpc_reply_size(const struct rpcrdma_clnt *c);

#endif
