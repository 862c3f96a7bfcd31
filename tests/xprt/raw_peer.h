/* SPDX-License-Identifier: MIT */
/*
 * A raw RPC-over-RDMA peer for the server's tests: the provider API, no
 * rpcrdma client. It connects without private data (so the server must
 * assume 1024/1024, RFC 8797 §4.1), keeps 8 receives of 1024 bytes
 * posted, and sends hand-made transport headers of up to 4096 bytes. Its
 * IRD is 4 and m.expose is remotely readable (stag rpcrdma_mr_stag(mr)),
 * for Read chunks of its own making.
 */
#ifndef RAW_PEER_H
#define RAW_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "rpcrdma.h"

struct raw {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *mr;
	struct {
		uint8_t rbuf[8][1024]; /* 8 receives */
		uint8_t sbuf[4096];    /* 1 send */
		uint8_t expose[4096];  /* what a Read chunk offers */
	} m;
};

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t raw_ms_now(void);
/* Connect to 127.0.0.1 @port; 0 or -1. */
int raw_open(struct raw *r, uint16_t port);
void raw_close(struct raw *r);
/* Send @n big-endian words (at most 1024) and wait for the Send's
 * completion; 0 or -1. */
int raw_send(struct raw *r, const uint32_t *words, size_t n);
/* Wait up to @ms for one message; returns its length in words (or -1),
 * its first @max words in @out (host order), and reposts the buffer. */
int raw_recv(struct raw *r, uint32_t *out, size_t max, int ms);
/* raw_send, then raw_recv of the answer within 3 s: its length in words
 * or -1. */
int raw_send_recv(struct raw *r, const uint32_t *words, size_t n, uint32_t *out, size_t max);
/* Open a connection to @port, one raw_send_recv, close. */
int raw_exchange(uint16_t port, const uint32_t *words, size_t n, uint32_t *out, size_t max);

#endif
