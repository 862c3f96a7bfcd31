/* SPDX-License-Identifier: MIT */
/* Shared definitions for every public rpcrdma header. */
#ifndef RPCRDMA_COMMON_H
#define RPCRDMA_COMMON_H

#ifdef __cplusplus
#define RPCRDMA_EXTERN_C_BEGIN extern "C" {
#define RPCRDMA_EXTERN_C_END   }
#else
#define RPCRDMA_EXTERN_C_BEGIN
#define RPCRDMA_EXTERN_C_END
#endif

/* Symbols are hidden by default (-fvisibility=hidden); RPCRDMA_API marks the
 * public ones, and src/librpcrdma.map versions them. */
#define RPCRDMA_API __attribute__((visibility("default")))

#endif
