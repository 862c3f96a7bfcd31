// SPDX-License-Identifier: MIT
/*
 * The traffic that fires every USDT probe (src/util/probe.h; issue 37),
 * run by test_probe_gdb.py under gdb, which stops at each probe and prints
 * its arguments. A server child (tests/bidi: Version Two capable, reliable
 * replies, backchannel with reverse chunks) and, in this process:
 *   client A (Version One, reliable replies, backchannel without reverse
 *   chunks): a NULL call; a Long Call (RDMA_NOMSG, Position-Zero Read
 *   chunk); a reply in a responder-provided Read chunk (pulled, RDMA_DONE);
 *   a reverse CB_NULL; a reverse call with a Read chunk, which A refuses
 *   with ERR_CHUNK; a dropped connection and a NULL call that reconnects;
 *   client B (Version One), to a second server child without reliable
 *   replies: a reply larger than the Reply chunk offered, answered
 *   ERR_CHUNK;
 *   client C (RPCRDMA_VERSION_AUTO): a NULL call that negotiates Version
 *   Two.
 * Each step prints "STEP name xid=0x... ..." with what the API says, so
 * the checker can match the probes' arguments against it. Exit status 0
 * when every step did what it should.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "bidi/bidi_test.h"

static struct rpcrdma_call_result res;

static struct rpcrdma_call_opts opts(uint32_t mask, uint32_t reply_size)
{
	memset(&res, 0, sizeof(res));
	return (struct rpcrdma_call_opts){
	    .comp_mask = RPCRDMA_CALL_OPT_RESULT | mask, .result = &res, .reply_size = reply_size};
}

static void step(const char *name, int rc)
{
	printf("STEP %s xid=%#x rc=%d call_proc=%u reads=%u reply_proc=%u rdma_err=%u\n", name,
	       res.xid, rc, res.call_proc, res.read_chunks, res.reply_proc, res.rdma_err);
	fflush(stdout);
}

static int null_call(struct rpcrdma_clnt *c, const char *name)
{
	struct rpcrdma_call_opts o = opts(0, 0);
	int rc = rpcrdma_clnt_call(c, BT_NULL, NULL, NULL, NULL, NULL, &o);

	step(name, rc);
	return rc;
}

/* BT_READ of @len bytes; @o's options: 0 when the bytes came back. */
static int read_call(struct rpcrdma_clnt *c, const char *name, uint32_t len, uint32_t mask,
		     uint32_t reply_size)
{
	struct bt_ctl_args a = {0, len, 7, 0};
	struct bt_bulk_res r = {0};
	struct rpcrdma_call_opts o = opts(mask, reply_size);
	int rc = rpcrdma_clnt_call(c, BT_READ, (xdrproc_t)xdr_bt_ctl_args, &a,
				   (xdrproc_t)xdr_bt_bulk_res, &r, &o);

	if (!rc && (r.len != len || r.id != 7))
		rc = -EIO;
	step(name, rc);
	xdr_free((xdrproc_t)xdr_bt_bulk_res, &r);
	return rc;
}

static void client_a(uint16_t port)
{
	struct rpcrdma_bc_opts bo = {
	    .comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS, .credits = 4, .chunks = 0};
	struct rpcrdma_clnt *c = NULL;
	struct bt_ctl_res cr;
	char *buf = malloc(20000);
	int rc;

	bt_client_rr = 1;
	rc = bt_client(port, &bo, 16, &c);
	BT_CHECK(rc == 0 && buf);
	if (rc || !buf)
		goto out;
	BT_CHECK(rpcrdma_clnt_bc_enable(c) == 0);
	BT_CHECK(null_call(c, "null") == 0);

	/* 20000 bytes of opaque: more than the inline threshold, a Long Call */
	struct bt_echo_args ea = {.id = 5, .val = buf, .len = 20000};
	struct bt_echo_res er = {0};
	struct rpcrdma_call_opts o = opts(0, 0);

	bt_fill(buf, ea.len, 5);
	rc = rpcrdma_clnt_call(c, BT_ECHO, (xdrproc_t)xdr_bt_echo_args, &ea,
			       (xdrproc_t)xdr_bt_echo_res, &er, &o);
	step("long_call", rc);
	BT_CHECK(rc == 0 && er.hash == bt_hash(buf, ea.len) && res.call_proc == 1);

	/* no Reply chunk offered: the reply comes in a Read chunk */
	BT_CHECK(read_call(c, "rr", 70000, RPCRDMA_CALL_OPT_UNKNOWN_REPLY, 0) == 0);

	/* reverse CB_NULL (CTL_TRY), then a reverse call whose 6000-byte
	 * argument needs a Read chunk, which A (reverse chunks off) refuses */
	memset(&res, 0, sizeof(res));
	rc = bt_ctl(c, CTL_TRY, 0, 0, 0, &cr);
	step("rev_null", rc);
	BT_CHECK(rc == 0 && cr.rc == 0);
	memset(&res, 0, sizeof(res));
	rc = bt_ctl(c, CTL_REV_BULK, 6000, 0, 0, &cr);
	printf("STEP rev_err rc=%d rev_rc=%d rev_rdma_err=%u\n", rc, cr.rc, cr.v[0]);
	BT_CHECK(rc == 0 && cr.rc == -EREMOTEIO && cr.v[0] == 2);

	/* the connection drops; the next call reconnects */
	BT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	BT_CHECK(null_call(c, "after_reconnect") == 0);
out:
	free(buf);
	if (c)
		rpcrdma_clnt_destroy(c);
	bt_client_rr = 0;
}

static void client_b(uint16_t port)
{
	struct rpcrdma_clnt *c = NULL;
	int rc = bt_client(port, NULL, 16, &c);

	BT_CHECK(rc == 0);
	if (rc)
		return;
	/* a 70000-byte reply, an 8192-byte Reply chunk, no reliable replies */
	rc = read_call(c, "err_chunk", 70000, RPCRDMA_CALL_OPT_REPLY_SIZE, 8192);
	BT_CHECK(rc == -EREMOTEIO && res.rdma_err == 2);
	rpcrdma_clnt_destroy(c);
}

static void client_c(uint16_t port)
{
	struct rpcrdma_clnt *c = NULL;
	int rc = bt_client_vers(port, NULL, 16, RPCRDMA_VERSION_AUTO, &c);
	struct rpcrdma_xprt_stats st;

	BT_CHECK(rc == 0);
	if (rc)
		return;
	BT_CHECK(null_call(c, "v2") == 0);
	BT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.rdma_version == 2);
	rpcrdma_clnt_destroy(c);
}

int main(void)
{
	struct tl_server srv, srv2;
	struct bt_srv_cfg cfg = {.slots = 4, .v2 = 1, .rr = 1}, cfg2 = {.slots = 4};

	if (bt_server_start(&srv, &cfg))
		return 1;
	if (bt_server_start(&srv2, &cfg2)) {
		bt_server_stop(&srv);
		return 1;
	}
	client_a(srv.port);
	client_b(srv2.port);
	client_c(srv.port);
	BT_CHECK(bt_server_stop(&srv) == 0);
	BT_CHECK(bt_server_stop(&srv2) == 0);
	printf("STEP end failures=%d\n", bt_failures);
	return bt_failures ? 1 : 0;
}
