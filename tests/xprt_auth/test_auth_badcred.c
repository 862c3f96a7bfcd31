// SPDX-License-Identifier: MIT
/*
 * Malformed credentials are refused with AUTH_ERROR (RFC 5531 §9:
 * MSG_DENIED / AUTH_ERROR / auth_stat; §8.2 opaque_auth body<400>;
 * Appendix A authsys_parms: machinename<255>, gids<16>), never dispatched
 * and never dropped. A raw peer (provider API, no rpcrdma client) sends
 * RDMA_MSG calls of the XTEST NULL procedure with hand-made credentials;
 * each reply is checked word by word: RDMA_MSG with empty lists and the
 * call's xid, then xid, REPLY, MSG_DENIED, AUTH_ERROR, auth_stat.
 *   AUTH_SYS body 4 bytes longer than its parameters     AUTH_BADCRED
 *   AUTH_SYS body shorter than its parameters            AUTH_BADCRED
 *   machine name of 256 bytes                            AUTH_BADCRED
 *   machine name length 0xfffffff0                       AUTH_BADCRED
 *   17 gids                                              AUTH_BADCRED
 *   credential body length 401 (all 404 bytes present)   AUTH_BADCRED
 *   AUTH_NONE credential with a 4-byte body              AUTH_BADCRED
 *   unknown flavor 7                                     AUTH_BADCRED
 *   verifier body length 401                             AUTH_BADVERF
 *   AUTH_SYS verifier on an AUTH_SYS call                AUTH_BADVERF
 * and a well-formed AUTH_SYS call (16 gids, 255-byte name) right after
 * is accepted: MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS. Before the fix
 * the two 401-byte cases got no reply at all (the server dropped the
 * call as undecodable).
 */
#include <signal.h>
#include <string.h>

#include "xprt/raw_peer.h"
#include "xprt_auth/authx_test.h"

#define RFC "RFC 5531 §9 (AUTH_ERROR)"

/* A call message: RDMA_MSG header, RPC call header of XTEST NULL, then the
 * credential and verifier words @auth (@n words). */
static size_t build(uint32_t *m, uint32_t xid, const uint32_t *auth, size_t n)
{
	const uint32_t hdr[] = {xid, 1, 32, 0, 0, 0, 0, xid, 0, 2, XTEST_PROG, XTEST_VERS, 0};

	memcpy(m, hdr, sizeof(hdr));
	memcpy(m + 13, auth, 4 * n);
	return 13 + n;
}

static void expect_denied(struct raw *r, uint32_t xid, const uint32_t *auth, size_t n,
			  uint32_t stat, const char *what)
{
	uint32_t m[256], rep[64];
	size_t len = build(m, xid, auth, n);
	int k = raw_send_recv(r, m, len, rep, 64);
	/* RFC 8166 §4.2 header (RDMA_MSG, three empty lists), then RFC 5531 §9
	 * rejected_reply: xid REPLY MSG_DENIED AUTH_ERROR auth_stat. */
	int ok = k == 12 && rep[0] == xid && rep[1] == 1 && rep[3] == 0 && rep[4] == 0 &&
		 rep[5] == 0 && rep[6] == 0 && rep[7] == xid && rep[8] == 1 && rep[9] == 1 &&
		 rep[10] == 1 && rep[11] == stat;

	XT_CHECK(ok);
	if (!ok)
		fprintf(stderr, "  " RFC ": %s: %d words back (auth_stat word %u), expected %s\n",
			what, k, k >= 12 ? rep[11] : 0,
			stat == 1 ? "AUTH_BADCRED" : "AUTH_BADVERF");
}

/* AUTH_SYS words: flavor, body length, stamp, name, uid, gid, gids. */
static size_t authsys(uint32_t *w, uint32_t namelen, uint32_t ngids, int32_t body_delta)
{
	size_t n = 0;
	uint32_t body = 4 + 4 + (uint32_t)RPCRDMA_XDR_ROUNDUP(namelen) + 4 + 4 + 4 + 4 * ngids;

	w[n++] = 1;
	w[n++] = (uint32_t)((int32_t)body + body_delta);
	w[n++] = 0x5eed;
	w[n++] = namelen;
	for (uint32_t i = 0; i < RPCRDMA_XDR_ROUNDUP(namelen) / 4; i++)
		w[n++] = 0x61616161; /* "aaaa" */
	w[n++] = 0;
	w[n++] = 0;
	w[n++] = ngids;
	for (uint32_t i = 0; i < ngids; i++)
		w[n++] = i;
	for (int32_t i = 0; i < body_delta; i += 4)
		w[n++] = 0; /* the extra body bytes */
	return n;
}

int main(void)
{
	struct tl_server srv;
	struct raw r;
	uint32_t a[200];
	size_t n;
	uint32_t xid = 0x7a000000;

	signal(SIGPIPE, SIG_IGN);
	memset(&r, 0, sizeof(r));
	if (ax_server_start(&srv))
		return 1;
	XT_CHECK(raw_open(&r, srv.port) == 0);

	n = authsys(a, 8, 2, 4);
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "AUTH_SYS body longer than its parameters");

	/* body says 16 bytes; the parameters need 8 more */
	n = authsys(a, 4, 0, 0);
	a[1] = 16;
	n = 2 + 4;
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "AUTH_SYS body shorter than its parameters");

	n = authsys(a, 256, 0, 0);
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "machine name of 256 bytes");

	n = authsys(a, 4, 0, 0);
	a[3] = 0xfffffff0u;
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "machine name length 0xfffffff0");

	n = authsys(a, 4, 17, 0);
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "17 gids");

	/* opaque_auth body<400>: 401 bytes, all present (404 with padding) */
	n = 0;
	a[n++] = 1;
	a[n++] = 401;
	for (int i = 0; i < 101; i++)
		a[n++] = 0;
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "credential body of 401 bytes");

	n = 0;
	a[n++] = 0, a[n++] = 4, a[n++] = 0;
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "AUTH_NONE credential with a body");

	n = 0;
	a[n++] = 7, a[n++] = 0;
	a[n++] = 0, a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 1, "unknown flavor 7");

	n = authsys(a, 4, 0, 0);
	a[n++] = 0, a[n++] = 401;
	for (int i = 0; i < 101; i++)
		a[n++] = 0;
	expect_denied(&r, ++xid, a, n, 3, "verifier body of 401 bytes");

	n = authsys(a, 4, 0, 0);
	{
		size_t k = authsys(a + n, 4, 0, 0);

		n += k;
	}
	expect_denied(&r, ++xid, a, n, 3, "AUTH_SYS verifier");

	/* The largest well-formed AUTH_SYS: accepted. */
	{
		uint32_t m[256], rep[64];
		size_t len;
		int k;

		n = authsys(a, 255, 16, 0);
		a[n++] = 0, a[n++] = 0;
		len = build(m, ++xid, a, n);
		k = raw_send_recv(&r, m, len, rep, 64);
		XT_CHECK(k == 13 && rep[7] == xid && rep[8] == 1 && rep[9] == 0 && rep[10] == 0 &&
			 rep[11] == 0 && rep[12] == 0);
		if (k != 13)
			fprintf(stderr,
				"  RFC 5531 Appendix A: a well-formed AUTH_SYS call got %d "
				"words back\n",
				k);
	}
	raw_close(&r);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
