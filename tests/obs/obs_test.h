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

extern int obs_failures;
#define OBS_CHECK(c)                                                                               \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);      \
			obs_failures++;                                                            \
		}                                                                                  \
	} while (0)

/* A started server on 127.0.0.1 (kernel-chosen port) serving OBS_PROG:
 * NULL and OBS_ECHO. */
int obs_server(const struct rpcrdma_svc_opts *opts, struct rpcrdma_svc **out);

/* A raw peer: the provider API, no rpcrdma client. */
struct obs_raw {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *mr;
	uint8_t buf[2][1024]; /* one receive, one send */
};
/* Connect @r to 127.0.0.1:@port without RFC 8797 private data. 0 or -1. */
int obs_raw_connect(struct obs_raw *r, uint16_t port);
/* Send the transport header @words (@n words, host order) and wait up to
 * 3 s for one answer: its words go to @ans (at most @max). Returns the
 * answer's length in words, or -1. One exchange per connection. */
int obs_raw_send_recv(struct obs_raw *r, const uint32_t *words, size_t n, uint32_t *ans,
		      size_t max);
void obs_raw_close(struct obs_raw *r);
/* The three above in a row. */
int obs_raw_exchange(uint16_t port, const uint32_t *words, size_t n, uint32_t *ans, size_t max);

/* An opaque<> argument or result of OBS_ECHO. */
struct obs_opaque {
	char *val;
	unsigned int len;
};
int obs_xdr_opaque(void *xdrs, struct obs_opaque *o);

#endif
