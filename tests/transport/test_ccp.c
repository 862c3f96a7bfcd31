// SPDX-License-Identifier: MIT
/*
 * The Connection Configuration Protocol's codec (src/transport/ccp_xdr.c)
 * against the routines rpcgen generates from xdr/ccp.x (the reference,
 * RFC 5666 §6.2): the same twelve bytes both ways for edge and
 * pseudo-random values, through plain buffers and through an XDR stream;
 * every length below twelve refused by both; the stream adapters refuse a
 * cut argument and leave what follows the twelfth byte unread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rpc/rpc.h>

#include "ccp.h" /* rpcgen's, from xdr/ccp.x */
#include "lib/check.h"
#include "transport/ccp.h"

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void one(uint32_t a, uint32_t b, uint32_t c)
{
	struct ccp_req q = {a, b, c}, q2;
	struct ccp_reply r = {a, b, c}, r2;
	config_rdma_req gq = {a, b, c}, gq2;
	config_rdma_reply gr = {a, b, c}, gr2;
	uint8_t ours[16], theirs[16];
	XDR x;

	/* requests: our bytes are rpcgen's bytes, and decode both ways */
	CHECK(ccp_req_encode(ours, sizeof(ours), &q) == 0);
	xdrmem_create(&x, (char *)theirs, sizeof(theirs), XDR_ENCODE);
	CHECK(xdr_config_rdma_req(&x, &gq) && xdr_getpos(&x) == RPCRDMA_CCP_SIZE);
	CHECK(memcmp(ours, theirs, RPCRDMA_CCP_SIZE) == 0);
	CHECK(ccp_req_decode(theirs, RPCRDMA_CCP_SIZE, &q2) == 0);
	CHECK(q2.maxcall_sendsize == a && q2.maxreply_sendsize == b && q2.maxrdmaread == c);
	xdrmem_create(&x, (char *)ours, RPCRDMA_CCP_SIZE, XDR_DECODE);
	CHECK(xdr_config_rdma_req(&x, &gq2));
	CHECK(gq2.maxcall_sendsize == a && gq2.maxreply_sendsize == b && gq2.maxrdmaread == c);
	/* replies, through our stream adapter */
	xdrmem_create(&x, (char *)ours, sizeof(ours), XDR_ENCODE);
	CHECK(xdr_ccp_reply(&x, &r) && xdr_getpos(&x) == RPCRDMA_CCP_SIZE);
	xdrmem_create(&x, (char *)theirs, sizeof(theirs), XDR_ENCODE);
	CHECK(xdr_config_rdma_reply(&x, &gr));
	CHECK(memcmp(ours, theirs, RPCRDMA_CCP_SIZE) == 0);
	xdrmem_create(&x, (char *)theirs, RPCRDMA_CCP_SIZE, XDR_DECODE);
	memset(&r2, 0, sizeof(r2));
	CHECK(xdr_ccp_reply(&x, &r2));
	CHECK(r2.maxcall_sendsize == a && r2.align == b && r2.maxrdmaread == c);
	xdrmem_create(&x, (char *)ours, RPCRDMA_CCP_SIZE, XDR_DECODE);
	CHECK(xdr_config_rdma_reply(&x, &gr2) && gr2.align == b);
}

int main(void)
{
	static const uint32_t edge[] = {0,    1,           1023,        1024,
					4096, 0x7fffffffu, 0x80000000u, UINT32_MAX};
	uint8_t buf[16] = {0};
	struct ccp_req q;
	struct ccp_reply r;
	config_rdma_req gq;
	uint32_t s = 0x12345678u;
	XDR x;

	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		one(edge[i], edge[(i + 3) % 8], edge[(i + 5) % 8]);
	for (int i = 0; i < 10000; i++)
		one(rnd(&s), rnd(&s), rnd(&s));
	/* truncated: refused by both, before anything is read */
	for (size_t len = 0; len < RPCRDMA_CCP_SIZE; len++) {
		CHECK(ccp_req_decode(buf, len, &q) == -EBADMSG);
		CHECK(ccp_reply_decode(buf, len, &r) == -EBADMSG);
		CHECK(ccp_req_encode(buf, len, &q) == -EMSGSIZE);
		xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
		CHECK(!xdr_ccp_req(&x, &q));
		xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
		CHECK(!xdr_config_rdma_req(&x, &gq));
	}
	CHECK(ccp_req_decode(NULL, 12, &q) == -EBADMSG);
	/* longer: twelve bytes read, the rest left to the caller */
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_DECODE);
	CHECK(xdr_ccp_req(&x, &q) && xdr_getpos(&x) == RPCRDMA_CCP_SIZE);
	/* XDR_FREE frees nothing and succeeds */
	x.x_op = XDR_FREE;
	CHECK(xdr_ccp_req(&x, &q) && xdr_ccp_reply(&x, &r));
	if (failures) {
		printf("FAIL: %d check(s) failed\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
