/* SPDX-License-Identifier: MIT */
/*
 * Interop: what the Linux kernel does to a connection when its NFS server
 * goes away and comes back (a server-side disconnect: the groundwork for
 * the client's reconnect and retransmission against the kernel). Runs last:
 * it stops and restarts nfsd in the guest.
 *   - a connection is up and answers NULL;
 *   - `rpc.nfsd 0` in the guest: our endpoint gets DISCONNECTED within
 *     30 s (a Terminate may come first), every posted receive is flushed
 *     (WR_FLUSH_ERR), and no Terminate says we did something wrong;
 *   - while nfsd is down, a new connection does not establish;
 *   - `rpc.nfsd 8`: a new connection is accepted and answers NULL.
 */
#include <stdio.h>
#include <string.h>

#include "interop_util.h"

int main(void)
{
	struct iop_env env;
	struct iop_conn c, d;
	struct rpcrdma_event ev;
	struct rpcrdma_wc wc;
	static struct iop_msg m;
	char ans[256] = "";
	uint64_t t0;
	unsigned int flushed = 0, late = 0, other = 0;
	bool terminated = false, disconnected = false;
	int rc = iop_env_get(&env);

	if (rc != IOP_PASS)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!env.guest_out[0]) {
		printf("SKIP: the guest's share is unknown (no GUEST_OUT)\n");
		return IOP_SKIP;
	}
	if (iop_connect(&c, env.rdma_port, 2, false, iop_linux_client_pdata,
			sizeof(iop_linux_client_pdata)) != 0 ||
	    iop_nfs_null(&c, true) != 0) {
		printf("FAIL: no working connection to start with\n");
		iop_close(&c);
		return IOP_FAIL;
	}
	/* Reap a late duplicate reply (after a first-Send retransmission), so
	 * every receive is posted when the server goes away. */
	while (iop_recv(&c, &m, 300) == 0)
		late++;
	printf("connected, NULL answered (%u late duplicate replies reaped)\n", late);

	t0 = iop_now_ms();
	if (iop_guest_cmd(&env, "nfsd-stop", 90000, ans, sizeof(ans)) != 0 ||
	    strncmp(ans, "TIMEOUT", 7) == 0) {
		/* Seen once: rpc.nfsd 0 blocked in the kernel for minutes. */
		printf("FAIL: stopping nfsd: %s (guest dmesg-after.txt has the stacks)\n",
		       ans[0] ? ans : "no answer");
		iop_close(&c);
		return IOP_FAIL;
	}
	printf("guest: %s (%llu ms)\n", ans, (unsigned long long)(iop_now_ms() - t0));
	while (!disconnected && iop_now_ms() - t0 < 30000) {
		if (iop_wait_event(&c, &ev, 1000) != 0)
			continue;
		printf("event %d status %d", ev.type, ev.status);
		if (ev.type == RPCRDMA_EV_TERMINATE) {
			terminated = true;
			printf(" (Terminate %s: layer %u etype %u code %u)",
			       ev.term_local ? "sent" : "received", ev.term_layer, ev.term_etype,
			       ev.term_code);
		}
		printf(" after %llu ms\n", (unsigned long long)(iop_now_ms() - t0));
		if (ev.type == RPCRDMA_EV_DISCONNECTED)
			disconnected = true;
	}
	IOP_EXPECT(disconnected);
	IOP_EXPECT(!terminated || !ev.term_local);
	while (rpcrdma_cq_poll(c.cq, &wc, 1) == 1) {
		if (wc.opcode == RPCRDMA_WC_RECV && wc.status == RPCRDMA_WC_WR_FLUSH_ERR)
			flushed++;
		else
			other++;
	}
	printf("after the disconnect: %u receives flushed, %u other completions\n", flushed, other);
	IOP_EXPECT(flushed == IOP_NRECV && other == 0);
	IOP_EXPECT(late <= c.stalls);
	c.est.type = RPCRDMA_EV_DISCONNECTED; /* nothing left to disconnect */
	iop_close(&c);

	rc = iop_connect(&d, env.rdma_port, 2, false, iop_linux_client_pdata,
			 sizeof(iop_linux_client_pdata));
	printf("connect while nfsd is down: %d (event %d)\n", rc, d.est.type);
	IOP_EXPECT(rc != 0);
	iop_close(&d);

	t0 = iop_now_ms();
	IOP_EXPECT(iop_guest_cmd(&env, "nfsd-start", 90000, ans, sizeof(ans)) == 0 &&
		   strncmp(ans, "TIMEOUT", 7) != 0);
	printf("guest: nfsd started, portlist %s (%llu ms)\n", ans,
	       (unsigned long long)(iop_now_ms() - t0));
	rc = iop_connect(&d, env.rdma_port, 2, false, iop_linux_client_pdata,
			 sizeof(iop_linux_client_pdata));
	IOP_EXPECT(rc == 0);
	if (rc == 0) {
		IOP_EXPECT(iop_nfs_null(&d, true) == 0);
		printf("reconnected, NULL answered (%u first-Send retransmissions)\n", d.stalls);
	}
	iop_close(&d);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
