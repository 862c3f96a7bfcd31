// SPDX-License-Identifier: MIT
/*
 * The credential of a server's reverse call (RFC 8167; RFC 5531 §8.2,
 * §10): rpcrdma_svc_client_call() with RPCRDMA_CALL_OPT_AUTH sends the
 * credential and verifier given, a call without it AUTH_NONE, and a call
 * whose credential bytes are not two well-formed opaque_auth fails with
 * -EINVAL before anything is sent. Linux's NFSv4.1 callback service
 * refuses a CB_COMPOUND sent with AUTH_NONE (AUTH_ERROR), so a server must
 * be able to call back with the AUTH_SYS credential CREATE_SESSION gave
 * it (issue 33: rpcrdma-nfs41d's CB_RECALL to the Linux client failed
 * with AUTH_ERROR while the reverse requester ignored the option).
 * Checked on the bytes the client receives (its test hook), in one
 * process over loopback: server thread, client, reverse CB_NULLs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"
#include "lib/check.h"
#include "lib/test_server.h"
#include "rpcrdma.h"
#include "rpcrdma/backchannel.h"
#include "util/be.h"

#define FW_PROG 0x20000a71u
#define CB_PROG 0x40000a71u

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct rpcrdma_svc_client *the_client;

/* Credentials of the reverse calls seen by the client, in order. */
static struct seen {
	uint32_t flavor, len, uid, gid;
	char machine[32];
} seen[8];
static unsigned nseen;

/* Every message the client receives: a reverse CB_PROG call in an
 * RDMA_MSG with empty chunk lists (28 header bytes), then RPC. */
static void on_recv(void *arg, const uint8_t *b, size_t len)
{
	(void)arg;
	if (len < 28 + 40 || get_be32(b + 12) != 0 || get_be32(b + 16) || get_be32(b + 20) ||
	    get_be32(b + 24))
		return;
	const uint8_t *m = b + 28;
	size_t n = len - 28;
	if (get_be32(m + 4) != 0 || get_be32(m + 12) != CB_PROG)
		return;
	pthread_mutex_lock(&mu);
	if (nseen < 8) {
		struct seen *s = &seen[nseen++];
		s->flavor = get_be32(m + 24);
		s->len = get_be32(m + 28);
		/* AUTH_SYS body: stamp, machinename<255>, uid, gid, gids<16> */
		if (s->flavor == 1 && s->len >= 20 && 32 + s->len <= n) {
			uint32_t ml = get_be32(m + 36);
			size_t off = 40 + ((ml + 3) & ~3u);
			if (ml < sizeof(s->machine) && off + 8 <= 32 + s->len) {
				memcpy(s->machine, m + 40, ml);
				s->uid = get_be32(m + off);
				s->gid = get_be32(m + off + 4);
			}
		}
	}
	pthread_mutex_unlock(&mu);
}

/* Forward proc 1: "this connection takes reverse calls" (as NFSv4.1's
 * CREATE_SESSION says it): the server's upper layer opens the gate. */
static void fw_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	struct rpcrdma_svc_client *cl = rpcrdma_svc_req_client(req);
	if (proc == 1 && cl && rpcrdma_svc_client_enable(cl, 0) == 0) {
		pthread_mutex_lock(&mu);
		the_client = cl;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	rpcrdma_svc_reply(req, NULL, NULL);
}

static void cb_dispatch(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)proc;
	(void)args;
	(void)ctx;
	rpcrdma_bc_reply(req, NULL, NULL);
}

int main(void)
{
	struct rpcrdma_svc *svc = NULL;
	struct rpcrdma_clnt *cl = NULL;
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_WORKERS, .workers = 1};

	CHECK(rpcrdma_svc_create_any(tl_addr(), &so, &svc) == 0);
	CHECK(rpcrdma_svc_register(svc, FW_PROG, 1, fw_dispatch, NULL) == 0);
	CHECK(rpcrdma_svc_bc_init(svc, NULL, NULL, NULL) == 0);
	CHECK(rpcrdma_svc_start(svc) == 0);
	if (failures)
		return 1;
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT, .timeout_ms = 10000};
	CHECK(rpcrdma_clnt_create_bc(tl_addr(), rpcrdma_svc_port(svc), FW_PROG, 1, &co, NULL,
				     &cl) == 0);
	if (failures)
		return 1;
	struct clnt_testhook h = {.on_recv = on_recv};
	rpcrdma_clnt_set_testhook(cl, &h);
	CHECK(rpcrdma_clnt_bc_register(cl, CB_PROG, 1, cb_dispatch, NULL) == 0);
	CHECK(rpcrdma_clnt_call(cl, 1, NULL, NULL, NULL, NULL, NULL) == 0);
	pthread_mutex_lock(&mu);
	while (!the_client)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);

	/* 1: AUTH_SYS uid 4242 gid 77 "cbhost"; 2: no credential given */
	struct rpcrdma_rpc_authsys sys = {.stamp = 1, .uid = 4242, .gid = 77};
	snprintf(sys.machinename, sizeof(sys.machinename), "cbhost");
	uint8_t auth[512];
	uint32_t alen = 0;
	CHECK(rpcrdma_rpc_encode_cred_verf(auth, sizeof(auth), RPCRDMA_RPC_AUTH_SYS, &sys, &alen) ==
	      0);
	struct rpcrdma_call_opts o = {
	    .comp_mask = RPCRDMA_CALL_OPT_AUTH, .auth = auth, .auth_len = alen};
	CHECK(rpcrdma_svc_client_call(the_client, CB_PROG, 1, 0, NULL, NULL, NULL, NULL, &o) == 0);
	CHECK(rpcrdma_svc_client_call(the_client, CB_PROG, 1, 0, NULL, NULL, NULL, NULL, NULL) ==
	      0);
	/* 3: not two opaque_auth: refused, nothing sent */
	struct rpcrdma_call_opts bad = {
	    .comp_mask = RPCRDMA_CALL_OPT_AUTH, .auth = auth, .auth_len = 8};
	CHECK(rpcrdma_svc_client_call(the_client, CB_PROG, 1, 0, NULL, NULL, NULL, NULL, &bad) ==
	      -EINVAL);

	pthread_mutex_lock(&mu);
	CHECK(nseen == 2);
	CHECK(seen[0].flavor == 1 && seen[0].uid == 4242 && seen[0].gid == 77 &&
	      strcmp(seen[0].machine, "cbhost") == 0);
	CHECK(seen[1].flavor == 0 && seen[1].len == 0);
	for (unsigned i = 0; i < nseen; i++)
		printf("reverse call %u: flavor %u, %u bytes, uid %u gid %u machine '%s'\n", i,
		       seen[i].flavor, seen[i].len, seen[i].uid, seen[i].gid, seen[i].machine);
	pthread_mutex_unlock(&mu);
	rpcrdma_clnt_destroy(cl);
	rpcrdma_svc_destroy(svc);
	return failures ? 1 : 0;
}
