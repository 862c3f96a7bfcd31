/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the tests/xprt end-to-end tests: the test program
 * (XTEST), its XDR routines, a server child process and checks.
 */
#ifndef XPRT_TEST_H
#define XPRT_TEST_H

#include <rpc/rpc.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/test_server.h"
#include "rpcrdma.h"

#define XTEST_PROG 0x20000099u
#define XTEST_VERS 1u

enum {
	XT_NULL = 0,
	XT_ECHO = 1,     /* opaque<> -> the same opaque<> (plain xdr_bytes) */
	XT_WRITE = 2,    /* {u_int seed; bulk data} -> {u_int len; u_hyper hash} */
	XT_READ = 3,     /* {u_int len; u_int seed} -> {bulk data} */
	XT_MULTI = 4,    /* {bulk a; u_int x; bulk b} -> {hyper ha; u_int x; hyper hb} */
	XT_ECHOBULK = 5, /* {bulk} -> {bulk} */
	XT_SLOW = 6,     /* u_int ms -> u_int calls in progress when it arrived */
	XT_MAXINFL = 7,  /* void -> u_int most calls in progress at once so far */
	XT_BULK8 = 8,    /* 8 x bulk -> {u_hyper hash of their bytes in order; u_int total} */
	XT_READN = 9,    /* {u_int n, len, seed, tail} -> {u_int n; n x bulk; opaque tail<>} */
};

struct xt_write_args {
	uint32_t seed;
	rpcrdma_bulk data;
};
struct xt_write_res {
	uint32_t len;
	uint64_t hash;
};
struct xt_read_args {
	uint32_t len;
	uint32_t seed;
};
struct xt_multi_args {
	rpcrdma_bulk a;
	uint32_t x;
	rpcrdma_bulk b;
};
struct xt_multi_res {
	uint64_t ha;
	uint32_t x;
	uint64_t hb;
};
struct xt_opaque {
	char *val;
	u_int len;
};

bool_t xdr_xt_write_args(XDR *x, struct xt_write_args *a);
bool_t xdr_xt_write_res(XDR *x, struct xt_write_res *r);
bool_t xdr_xt_read_args(XDR *x, struct xt_read_args *a);
bool_t xdr_xt_multi_args(XDR *x, struct xt_multi_args *a);
bool_t xdr_xt_multi_res(XDR *x, struct xt_multi_res *r);
struct xt_bulk8_res {
	uint64_t hash;
	u_int total;
};
bool_t xdr_xt_bulk8_res(XDR *x, struct xt_bulk8_res *r);
bool_t xdr_xt_opaque(XDR *x, struct xt_opaque *o);

/* XT_READN: n (at most XT_READN_MAX) result bulk items of len bytes, item
 * i filled with xt_fill(seed + i), then an opaque<> of tail bytes filled
 * with xt_fill(seed ^ 0x5a5a): result data by Write chunks, the rest
 * inline or in the Reply chunk. */
#define XT_READN_MAX 16u
struct xt_readn_args {
	uint32_t n, len, seed, tail;
};
struct xt_readn_res {
	uint32_t n;
	rpcrdma_bulk b[XT_READN_MAX];
	struct xt_opaque tail;
};
bool_t xdr_xt_readn_args(XDR *x, struct xt_readn_args *a);
bool_t xdr_xt_readn_res(XDR *x, struct xt_readn_res *r);

static inline uint64_t xt_hash(const void *p, size_t n)
{
	return tl_hash(p, n);
}
static inline void xt_fill(void *p, size_t n, uint32_t seed)
{
	tl_fill(p, n, seed);
}

/* Fork a server child (tests/lib/test_server.h) serving XTEST (and @extra,
 * may be NULL, called in the child after the svc exists) with @opts.
 * srv->port is its port. The child exits when its control pipe closes
 * (xt_server_stop). */
/* A forked server's counters, as a client sees them: pass
 * xt_stats_register as (or call it from) xt_server_start's @extra hook;
 * xt_server_stats() asks over a connection of its own (which counts in
 * .connections while the call runs). */
#define XT_STATS_PROG 0x2000009eu
struct xt_srv_stats {
	uint64_t conn_errors, connections, pull_timeouts, pull_bytes;
};
void xt_stats_register(struct rpcrdma_svc *svc);
int xt_server_stats(uint16_t port, struct xt_srv_stats *st);

int xt_server_start(struct tl_server *srv, const struct rpcrdma_svc_opts *opts,
		    void (*extra)(struct rpcrdma_svc *svc));
/* The same on port @port (0: any). */
int xt_server_start_port(struct tl_server *srv, uint16_t port, const struct rpcrdma_svc_opts *opts,
			 void (*extra)(struct rpcrdma_svc *svc));
/* Stop the child; returns its exit status (0 = it saw no failure). */
int xt_server_stop(struct tl_server *srv);
/* A test's exit status: 1 after failed checks (counted on stderr), else
 * 0 and "ok". */
int xt_result(void);

extern int xt_failures;
#define XT_CHECK(c)                                                                                \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "[%d] %s:%d: CHECK failed: %s\n", (int)getpid(), __FILE__, \
				__LINE__, #c);                                                     \
			xt_failures++;                                                             \
		}                                                                                  \
	} while (0)

#endif
