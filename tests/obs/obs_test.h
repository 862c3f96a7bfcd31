/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the observability tests (debug log, per-connection
 * counters): an in-process server of one program, and a raw peer on the
 * provider API that sends one hand-made transport header.
 */
#ifndef OBS_TEST_H
#define OBS_TEST_H

#include <stdint.h>
#include <stdio.h>

#include "rpcrdma.h"

#define OBS_PROG 0x20000077u
#define OBS_VERS 1u
#define OBS_ECHO 1u /* opaque<> -> the same opaque<> */
#define OBS_READ 2u /* u_int len -> rpcrdma_bulk of len bytes (0x5a) */
#define OBS_SLOW 3u /* u_int ms: answered (void) after that long */

/* A started server on 127.0.0.1 (kernel-chosen port) serving OBS_PROG:
 * NULL and OBS_ECHO. */
int obs_server(const struct rpcrdma_svc_opts *opts, struct rpcrdma_svc **out);

/* Raw peers: tests/xprt/raw_peer.h. */

/* An opaque<> argument or result of OBS_ECHO. */
struct obs_opaque {
	char *val;
	unsigned int len;
};
int obs_xdr_opaque(void *xdrs, struct obs_opaque *o);

#endif
