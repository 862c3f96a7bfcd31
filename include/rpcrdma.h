/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma: ONC RPC over RDMA in user space. The umbrella header: include
 * this one. Every function that can fail returns 0 or a negative errno.
 */
#ifndef RPCRDMA_H
#define RPCRDMA_H

#include "rpcrdma/backchannel.h"
#include "rpcrdma/client.h"
#include "rpcrdma/common.h"
#include "rpcrdma/provider.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/server.h"
#include "rpcrdma/xdr.h"

RPCRDMA_EXTERN_C_BEGIN

/* The library's version string ("MAJOR.MINOR.PATCH"); never NULL. */
RPCRDMA_API const char *rpcrdma_version(void);

RPCRDMA_EXTERN_C_END

#endif
