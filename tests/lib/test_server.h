/* SPDX-License-Identifier: MIT */
/*
 * Shared by the end-to-end tests of tests/xprt and tests/bidi (static
 * library rpcrdma_test_lib): the test data (hash, fill) and a server child
 * process. The child reports its port over one pipe and serves until the
 * parent closes the other (the control pipe); its exit status is 0 when it
 * saw no failure.
 */
#ifndef RPCRDMA_TEST_SERVER_H
#define RPCRDMA_TEST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rpcrdma.h"

/* FNV-1a 64 of @n bytes: what the two sides compare after data crossed. */
uint64_t tl_hash(const void *p, size_t n);
/* @n pseudo-random bytes (xorshift) from @seed: the same on both sides. */
void tl_fill(void *p, size_t n, uint32_t seed);
/* CLOCK_MONOTONIC in microseconds / milliseconds. */
uint64_t tl_now_us(void);
static inline uint64_t tl_now_ms(void)
{
	return tl_now_us() / 1000u;
}

/* The address the e2e servers listen on and their clients connect to:
 * $RPCRDMA_TEST_ADDR, else 127.0.0.1. rdma_cm (the verbs provider) routes
 * no loopback address to siw or rxe: in the interop guest the tests are
 * given the address of the device's netdev (eth0). */
const char *tl_addr(void);
/* Whether the provider the programs use (RPCRDMA_PROVIDER, default
 * softiwarp) lets a peer's Send With Invalidate invalidate its
 * registrations (RPCRDMA_DEV_CAP_REMOTE_INV): the client offers remote
 * invalidation, and a server uses it, only then. false if none opens. */
bool tl_remote_inv(void);

struct tl_server {
	pid_t pid;
	int ctl; /* write end of the control pipe: closing it stops the child */
	uint16_t port;
};

/* What the child runs; every callback is called in the child. */
struct tl_child {
	/* Create, set up and start the service: 0 or -errno. */
	int (*start)(void *arg, struct rpcrdma_svc **svc);
	/* After the control pipe closed, before the service stops (may be
	 * NULL): last checks of the child. */
	void (*closing)(void *arg);
	const int *failures; /* the child's failure counter: exit status 1 when not 0 */
	void *arg;
};

/* Fork the child; on success srv->port is the port it serves. Exit status
 * of a child that could not start: 2, or 3 when it could not report. */
int tl_server_fork(struct tl_server *srv, const struct tl_child *ch);
/* Close the control pipe and wait up to @wait_ms for the child: its exit
 * status, 99 when it did not exit normally, 98 when it had to be killed. */
int tl_server_stop(struct tl_server *srv, int wait_ms);

#endif
