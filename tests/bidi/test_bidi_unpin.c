// SPDX-License-Identifier: MIT
/*
 * Issue 16, the client's reverse responder (RFC 8167): it kept the
 * registration of each reverse reply's RDMA Write source (the Long Reply
 * it wrote into the server's Reply chunk) until that request slot was
 * used again. On a kernel device a registration pins its pages, and Linux
 * siw charges the pins to RLIMIT_MEMLOCK, root or not.
 *
 * The server child makes many reverse calls, each with a bulk argument by
 * Read chunk and a result larger than the backchannel's inline threshold
 * (a Long Reply in the server's Reply chunk), and checks every payload
 * both ways. Then no request slot of the client's reverse responder may
 * still hold a valid registration (its own state, read under its lock).
 */
#include <stdlib.h>

#include "bidi/bidi_test.h"
#include "transport/backchannel_hooks.h"
#include "transport/bc_responder.h"

#define UN_CALLS 40u
#define UN_ARG   (24u << 10)
#define UN_REPLY (20u << 10) /* over the 4 KiB inline threshold */

/* Request slots of @c's reverse responder whose Read sink or Long Reply
 * source registration is still valid. */
static uint32_t held_regs(struct rpcrdma_clnt *c)
{
	struct bc_clnt *b = clnt_bc(c);
	uint32_t n = 0;

	futex_mutex_lock(b->lock);
	for (uint32_t i = 0; i < b->nreq; i++) {
		const struct rpcrdma_bc_req *r = &b->reqs[i];

		n += r->rdmr && rpcrdma_mr_valid(r->rdmr);
		n += r->lmr && rpcrdma_mr_valid(r->lmr);
	}
	futex_mutex_unlock(b->lock);
	return n;
}

int main(void)
{
	struct tl_server srv;
	struct bt_srv_cfg cfg = {.slots = 4};
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_bc_stats bst;
	struct bt_ctl_res res;
	uint32_t ok = 0, held = ~0u;
	int rc;

	rc = bt_setup(&srv, &cfg, NULL, 16, &c);
	if (rc < 0)
		return 1;
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	for (uint32_t i = 0; i < UN_CALLS; i++) {
		BT_CHECK(bt_ctl(c, CTL_REV_BULK, UN_ARG + i * 4u, UN_REPLY + i * 64u, 0, &res) ==
			 0);
		/* the argument's and the result's checksums matched */
		ok +=
		    res.rc == 0 && res.v[5] == 1 && res.v[1] == 1 && res.v[2] == 1 && res.v[3] == 1;
	}
	printf("reverse calls with a Read chunk and a Long Reply, checked: %u of %u\n", ok,
	       UN_CALLS);
	BT_CHECK(ok == UN_CALLS);
	BT_CHECK(rpcrdma_clnt_bc_stats(c, &bst) == 0);
	BT_CHECK(bst.long_replies == UN_CALLS && bst.reply_chunks == UN_CALLS);
	BT_CHECK(bst.read_chunks == UN_CALLS);
	/* The server has the last reply; the client sees its Send complete
	 * a little later. */
	for (int i = 0; i < 200 && held; i++) {
		held = held_regs(c);
		if (held)
			usleep(10000);
	}
	printf("reverse request slots still registered: %u\n", held);
	BT_CHECK(held == 0);
	/* and the next one registers anew */
	BT_CHECK(bt_ctl(c, CTL_REV_BULK, UN_ARG, UN_REPLY, 0, &res) == 0);
	BT_CHECK(res.rc == 0 && res.v[5] == 1 && res.v[2] == 1);
out:
	if (c)
		rpcrdma_clnt_destroy(c);
	BT_CHECK(bt_server_stop(&srv) == 0);
	if (bt_failures)
		fprintf(stderr, "FAIL: %d checks failed\n", bt_failures);
	else
		printf("PASS\n");
	return bt_failures ? 1 : 0;
}
