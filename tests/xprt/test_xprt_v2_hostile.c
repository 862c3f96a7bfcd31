// SPDX-License-Identifier: MIT
/*
 * A Version Two capable server against hand-made Version Two messages
 * (the early draft; docs/rpcrdma2.md), two processes over loopback. A
 * raw peer (raw_peer.h: no private data, so the server assumes 1024 each
 * way until Version Two raises it to 4096) sends each message; the
 * server's answer is checked word for word:
 *   RDMA2_MSG NULL call                       RDMA2_MSG reply, direction REPLY
 *   two Version Two calls before any reply    both answered, in Version Two
 *   a 2 KiB first Version Two message         served (4096-byte receives)
 *   rdma_direction REPLY over a CALL          ERR_BAD_HEADER, same xid (§4.2.2)
 *   rdma_direction CALL over a REPLY          ERR_BAD_HEADER
 *   rdma_direction 7                          ERR_BAD_HEADER
 *   RDMA2_NOMSG, its Position-Zero Read chunk
 *   holding a CALL                            the reply, RDMA2_MSG
 *   ... holding a REPLY                       ERR_BAD_HEADER, same xid (§4.2.2)
 *   RDMA2_OPTIONAL of an unknown opttype      ERR_INVAL_OPTION, same xid (§3.1)
 *   our properties, optinfo cut short         ERR_BAD_HEADER
 *   our properties, optinfo past the message  ERR_BAD_HEADER
 *   our properties                            the server's, optdir REPLY, same xid
 *   our properties in the REPLY direction     nothing (no call of ours to answer)
 *   RDMA2_ERROR with an unknown code, and
 *   RDMA2_ERROR ERR_BAD_HEADER                nothing (never answered)
 *   rdma_vers 3                               ERR_VERS 1..2, rdma_vers 3 echoed
 *   a Version One NULL call                   RDMA_MSG reply in Version One
 * and from a Version One only server: rdma_vers 2 gets ERR_VERS 1..1 with
 * rdma_vers 2 echoed (Linux's bytes); from a server with properties off, our properties get
 * ERR_INVAL_OPTION (as from a server that does not know them).
 * After each silent case a NULL call shows the connection still serves.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util/be.h"
#include "xprt/raw_peer.h"
#include "xprt/xprt_test.h"

#define OPT_PROPS 0x52444d01u
#define CREDITS   64u

static struct raw r;

#define SEND(...)                                                                                  \
	do {                                                                                       \
		const uint32_t m_[] = {__VA_ARGS__};                                               \
		XT_CHECK(raw_send(&r, m_, sizeof(m_) / 4) == 0);                                   \
	} while (0)

/* A NULL call's RPC message (RFC 5531 §9, AUTH_NONE). */
#define NULL_CALL(xid) (xid), 0, 2, XTEST_PROG, XTEST_VERS, 0, 0, 0, 0, 0
/* Its accepted SUCCESS reply. */
#define NULL_REPLY(xid) (xid), 1, 0, 0, 0, 0

/* Receive one message and compare it with @want (@n words). */
static void expect(const char *what, const uint32_t *want, size_t n)
{
	uint32_t got[64];
	int m = raw_recv(&r, got, 64, 3000);
	bool ok = m == (int)n;

	for (size_t i = 0; ok && i < n; i++)
		ok = got[i] == want[i];
	if (!ok) {
		fprintf(stderr, "%s: got %d words:", what, m);
		for (int i = 0; i < m && i < 12; i++)
			fprintf(stderr, " %#x", got[i]);
		fprintf(stderr, "\n");
		xt_failures++;
	}
}

#define EXPECT(what, ...)                                                                          \
	do {                                                                                       \
		const uint32_t w_[] = {__VA_ARGS__};                                               \
		expect(what, w_, sizeof(w_) / 4);                                                  \
	} while (0)

/* Nothing arrives for a while. */
static void expect_nothing(const char *what)
{
	uint32_t got[8];
	int m = raw_recv(&r, got, 8, 300);

	if (m >= 0) {
		fprintf(stderr, "%s: expected no answer, got %d words (xid %#x)\n", what, m,
			got[0]);
		xt_failures++;
	}
}

static void null_v2(uint32_t xid)
{
	SEND(xid, 2, CREDITS, 0, 0, 0, 0, 0, NULL_CALL(xid));
	EXPECT("RDMA2_MSG NULL", xid, 2, CREDITS, 0, 1, 0, 0, 0, NULL_REPLY(xid));
}

/* A 2 KiB Version Two call (XT_WRITE with its 2000-byte argument inline). */
static void big_first(void)
{
	static const uint32_t head[] = {0x100, 2,     CREDITS, 0, 0,          0,          0,
					0,     0x100, 0,       2, XTEST_PROG, XTEST_VERS, XT_WRITE,
					0,     0,     0,       0, 9,          2000};
	uint32_t m[600];
	uint8_t data[2000];
	size_t k = 0;
	uint64_t h;

	xt_fill(data, sizeof(data), 5);
	h = xt_hash(data, sizeof(data)) ^ 9u;
	for (size_t i = 0; i < sizeof(head) / 4; i++)
		m[k++] = head[i];
	for (size_t i = 0; i < sizeof(data); i += 4)
		m[k++] = get_be32(data + i);
	XT_CHECK(k * 4 > 2048 && raw_send(&r, m, k) == 0);
	EXPECT("2 KiB first message", 0x100, 2, CREDITS, 0, 1, 0, 0, 0, NULL_REPLY(0x100),
	       sizeof(data), (uint32_t)(h >> 32), (uint32_t)h);
}

/* RDMA2_NOMSG, direction CALL, its payload (@n words) in a Position-Zero
 * Read chunk of the peer's memory. */
static void nomsg(uint32_t xid, const uint32_t *payload, uint32_t n)
{
	uint64_t a = (uint64_t)(uintptr_t)r.m.expose;

	for (uint32_t i = 0; i < n; i++)
		put_be32(r.m.expose + 4 * i, payload[i]);
	SEND(xid, 2, CREDITS, 1, 0, 1, 0, rpcrdma_mr_stag(r.mr), 4 * n, (uint32_t)(a >> 32),
	     (uint32_t)a, 0, 0, 0);
}

static void v2_server(uint16_t port)
{
	memset(&r, 0, sizeof(r));
	XT_CHECK(raw_open(&r, port) == 0);
	big_first();
	null_v2(0x101);
	/* Before any reply came: two calls, both answered. */
	SEND(0x102, 2, CREDITS, 0, 0, 0, 0, 0, NULL_CALL(0x102));
	SEND(0x103, 2, CREDITS, 0, 0, 0, 0, 0, NULL_CALL(0x103));
	EXPECT("first of two", 0x102, 2, CREDITS, 0, 1, 0, 0, 0, NULL_REPLY(0x102));
	EXPECT("second of two", 0x103, 2, CREDITS, 0, 1, 0, 0, 0, NULL_REPLY(0x103));
	/* §4.2.2: the direction must be the payload's msg_type. */
	SEND(0x110, 2, CREDITS, 0, 1, 0, 0, 0, NULL_CALL(0x110));
	EXPECT("direction REPLY over a CALL", 0x110, 2, CREDITS, 4, 2);
	SEND(0x111, 2, CREDITS, 0, 0, 0, 0, 0, NULL_REPLY(0x111));
	EXPECT("direction CALL over a REPLY", 0x111, 2, CREDITS, 4, 2);
	SEND(0x112, 2, CREDITS, 0, 7, 0, 0, 0, NULL_CALL(0x112));
	EXPECT("direction 7", 0x112, 2, CREDITS, 4, 2);
	{
		const uint32_t call[] = {NULL_CALL(0x113)}, reply[] = {NULL_REPLY(0x114)};

		nomsg(0x113, call, 10);
		EXPECT("NOMSG holding a CALL", 0x113, 2, CREDITS, 0, 1, 0, 0, 0, NULL_REPLY(0x113));
		nomsg(0x114, reply, 6);
		EXPECT("NOMSG holding a REPLY", 0x114, 2, CREDITS, 4, 2);
	}
	/* §3.1: an opttype we do not know. */
	SEND(0x120, 2, CREDITS, 5, 0, 0x1234, 4, 0xabcd);
	EXPECT("unknown opttype", 0x120, 2, CREDITS, 4, 3);
	SEND(0x121, 2, CREDITS, 5, 0, 0x1234, 0, NULL_CALL(0x121));
	EXPECT("unknown opttype with a call", 0x121, 2, CREDITS, 4, 3);
	/* Our properties, optinfo cut: one entry announced, its value
	 * length runs past optinfo; and optinfo past the message. */
	SEND(0x130, 2, CREDITS, 5, 0, OPT_PROPS, 12, 1, 1, 8);
	EXPECT("properties cut short", 0x130, 2, CREDITS, 4, 2);
	SEND(0x131, 2, CREDITS, 5, 0, OPT_PROPS, 400, 1, 1, 4, 4096);
	EXPECT("optinfo past the message", 0x131, 2, CREDITS, 4, 2);
	/* Our properties: receive buffer 1024 (what the raw peer posts). */
	SEND(0x132, 2, CREDITS, 5, 0, OPT_PROPS, 16, 1, 2, 4, 1024);
	EXPECT("properties", 0x132, 2, CREDITS, 5, 1, OPT_PROPS, 52, 4, 1, 4, 4096, 2, 4, 4096, 5,
	       4, 0, 0x52444d11, 4, 1);
	SEND(0x133, 2, CREDITS, 5, 1, OPT_PROPS, 4, 0);
	expect_nothing("properties in the REPLY direction");
	null_v2(0x134);
	/* RDMA2_ERROR is never answered, whatever its code. */
	SEND(0x140, 2, CREDITS, 4, 9);
	expect_nothing("ERROR with code 9");
	SEND(0x141, 2, CREDITS, 4, 2);
	expect_nothing("ERROR BAD_HEADER");
	null_v2(0x142);
	/* Another version. */
	SEND(0x150, 3, CREDITS, 0, 0, 0, 0, 0, NULL_CALL(0x150));
	EXPECT("rdma_vers 3", 0x150, 3, CREDITS, 4, 1, 1, 2); /* rdma_vers echoed */
	/* Version One still answered in Version One. */
	SEND(0x160, 1, CREDITS, 0, 0, 0, 0, NULL_CALL(0x160));
	EXPECT("Version One call", 0x160, 1, CREDITS, 0, 0, 0, 0, NULL_REPLY(0x160));
	raw_close(&r);
}

static void v1_server(uint16_t port)
{
	memset(&r, 0, sizeof(r));
	XT_CHECK(raw_open(&r, port) == 0);
	SEND(0x200, 2, CREDITS, 0, 0, 0, 0, 0, NULL_CALL(0x200));
	EXPECT("v1-only: rdma_vers 2", 0x200, 2, CREDITS, 4, 1, 1, 1); /* as Linux */
	raw_close(&r);
}

static void noprops_server(uint16_t port)
{
	memset(&r, 0, sizeof(r));
	XT_CHECK(raw_open(&r, port) == 0);
	SEND(0x300, 2, CREDITS, 5, 0, OPT_PROPS, 12, 1, 2, 4, 1024);
	EXPECT("properties off", 0x300, 2, CREDITS, 4, 3);
	null_v2(0x301);
	raw_close(&r);
}

int main(void)
{
	struct rpcrdma_svc_opts o2 = {.comp_mask = RPCRDMA_SVC_OPT_RDMA_VERSION,
				      .rdma_version = RPCRDMA_VERSION_2,
				      .rdma_props = 1};
	struct rpcrdma_svc_opts onp = o2;
	struct tl_server s2, s1, snp;

	signal(SIGPIPE, SIG_IGN);
	onp.rdma_props = 0;
	if (xt_server_start(&s2, &o2, NULL) || xt_server_start(&s1, NULL, NULL) ||
	    xt_server_start(&snp, &onp, NULL))
		return 1;
	v2_server(s2.port);
	v1_server(s1.port);
	noprops_server(snp.port);
	XT_CHECK(xt_server_stop(&s2) == 0);
	XT_CHECK(xt_server_stop(&s1) == 0);
	XT_CHECK(xt_server_stop(&snp) == 0);
	return xt_result();
}
