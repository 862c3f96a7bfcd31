/* SPDX-License-Identifier: MIT */
/*
 * The client's credential bytes and the server's oversize-auth answer
 * (RFC 5531 §8.2 opaque_auth body<400>, §9 call header and AUTH_ERROR,
 * §10.2 / Appendix A AUTH_SYS):
 *   - rpcrdma_rpc_encode_cred_verf(): known-answer bytes for AUTH_NONE and
 *     AUTH_SYS, a zero stamp becomes the time, an empty name the host
 *     name, bounds (-E2BIG), unknown flavors (-EINVAL), short buffers;
 *   - rpcrdma_rpc_check_cred_verf(): accepts exactly two opaque_auth,
 *     refuses every truncation, trailing bytes, a 401-byte body;
 *   - rpcrdma_rpc_oversize_auth(): AUTH_BADCRED / AUTH_BADVERF for a
 *     401-byte credential / verifier, nothing for other headers.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/rpc.h"
#include "util/be.h"
#include "xdr/testutil.h"

#define W(v) BE32_BYTES(v)

/* AUTH_SYS stamp 0x12345678, "host", uid 1000, gid 100, gids {10, 20}, then
 * an AUTH_NONE verifier. */
static const uint8_t sys_cv[] = {
    W(1), W(32),   W(0x12345678u), W(4), 'h',   'o',   's',
    't',  W(1000), W(100),         W(2), W(10), W(20), /* gids */
    W(0), W(0),                                        /* verifier */
};

static int t_encode(void)
{
	struct rpcrdma_rpc_authsys s = {.stamp = 0x12345678u,
					.machinename = "host",
					.uid = 1000,
					.gid = 100,
					.ngids = 2,
					.gids = {10, 20}};
	uint8_t buf[RPCRDMA_RPC_CRED_VERF_MAX];
	uint8_t none2[16] = {0};
	uint32_t len = 0;

	CHECK(rpcrdma_rpc_encode_cred_verf(buf, sizeof(buf), RPCRDMA_RPC_AUTH_NONE, NULL, &len) ==
	      0);
	CHECK(len == 16 && memcmp(buf, none2, 16) == 0);
	CHECK(rpcrdma_rpc_encode_cred_verf(buf, sizeof(buf), RPCRDMA_RPC_AUTH_SYS, &s, &len) == 0);
	CHECK(len == sizeof(sys_cv) && memcmp(buf, sys_cv, len) == 0);
	CHECK(rpcrdma_rpc_check_cred_verf(buf, len) == 0);
	/* Too small a buffer: every size below the encoding. */
	for (uint32_t cap = 0; cap < sizeof(sys_cv); cap++)
		CHECK(rpcrdma_rpc_encode_cred_verf(buf, cap, RPCRDMA_RPC_AUTH_SYS, &s, &len) ==
		      -EMSGSIZE);
	/* Stamp 0: the time; empty name: the host name. */
	{
		struct rpcrdma_rpc_authsys z = s, got;
		struct rpcrdma_rpc_auth a;
		struct rpcrdma_xdr x;
		char host[256];
		uint32_t now = (uint32_t)time(NULL);

		z.stamp = 0;
		z.machinename[0] = '\0';
		CHECK(rpcrdma_rpc_encode_cred_verf(buf, sizeof(buf), RPCRDMA_RPC_AUTH_SYS, &z,
						   &len) == 0);
		rpcrdma_xdr_init(&x, buf, len, RPCRDMA_XDR_DECODE);
		CHECK(rpcrdma_rpc_decode_auth(&x, &a) == 0 &&
		      rpcrdma_rpc_auth_get_sys(&a, &got) == 0);
		CHECK(got.stamp + 60 >= now && got.stamp <= now + 1);
		CHECK(gethostname(host, sizeof(host)) == 0);
		host[255] = '\0';
		CHECK(strcmp(got.machinename, host) == 0);
	}
	/* Appendix A bounds; flavors other than NONE and SYS. */
	s.ngids = 17;
	CHECK(rpcrdma_rpc_encode_cred_verf(buf, sizeof(buf), RPCRDMA_RPC_AUTH_SYS, &s, &len) ==
	      -E2BIG);
	CHECK(rpcrdma_rpc_encode_cred_verf(buf, sizeof(buf), RPCRDMA_RPC_AUTH_DH, NULL, &len) ==
	      -EINVAL);
	/* NULL: the process's identity. */
	CHECK(rpcrdma_rpc_encode_cred_verf(buf, sizeof(buf), RPCRDMA_RPC_AUTH_SYS, NULL, &len) ==
	      0);
	{
		struct rpcrdma_rpc_authsys d;

		CHECK(rpcrdma_rpc_authsys_default(&d) == 0);
		CHECK(d.uid == (uint32_t)geteuid() && d.gid == (uint32_t)getegid());
		CHECK(d.ngids <= RPCRDMA_RPC_AUTHSYS_MAX_GIDS);
	}
	return 0;
}

static int t_check(void)
{
	uint8_t b[sizeof(sys_cv) + 8];
	static const uint8_t big[] = {W(1), W(401)};

	CHECK(rpcrdma_rpc_check_cred_verf(sys_cv, sizeof(sys_cv)) == 0);
	/* Every truncation is refused. */
	for (size_t n = 0; n < sizeof(sys_cv); n++)
		CHECK(rpcrdma_rpc_check_cred_verf(sys_cv, n) == -EINVAL);
	/* Bytes after the verifier. */
	memcpy(b, sys_cv, sizeof(sys_cv));
	memset(b + sizeof(sys_cv), 0, 8);
	CHECK(rpcrdma_rpc_check_cred_verf(b, sizeof(b)) == -EINVAL);
	CHECK(rpcrdma_rpc_check_cred_verf(big, sizeof(big)) == -EINVAL);
	CHECK(rpcrdma_rpc_check_cred_verf(NULL, 0) == -EINVAL);
	return 0;
}

static int t_oversize(void)
{
	uint8_t m[24 + 8 + 404 + 8 + 404];
	struct rpcrdma_rpc_reply r;
	struct rpcrdma_xdr x;
	static const uint8_t head[] = {W(0xabcd), W(0), W(2), W(100003), W(3), W(0)};
	static const uint8_t w401[] = {W(1), W(401)};
	static const uint8_t w0[] = {W(0), W(0)};

	memset(m, 0, sizeof(m));
	memcpy(m, head, 24);
	/* 401-byte credential */
	memcpy(m + 24, w401, 8);
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_oversize_auth(&x, &r) == 1);
	CHECK(rpcrdma_xdr_getpos(&x) == 0);
	CHECK(r.xid == 0xabcd && r.reply_stat == RPCRDMA_RPC_MSG_DENIED &&
	      r.reject_stat == RPCRDMA_RPC_AUTH_ERROR && r.auth_stat == RPCRDMA_RPC_AUTH_BADCRED);
	/* Header cut inside the call header: no answer. */
	for (size_t n = 0; n < 32; n++) {
		rpcrdma_xdr_init(&x, m, n, RPCRDMA_XDR_DECODE);
		CHECK(rpcrdma_rpc_oversize_auth(&x, &r) == 0);
	}
	/* Empty AUTH_NONE credential, 401-byte verifier. */
	memcpy(m + 24, w0, 8);
	memcpy(m + 32, w401, 8);
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_oversize_auth(&x, &r) == 1 && r.auth_stat == RPCRDMA_RPC_AUTH_BADVERF);
	/* Well-formed sizes: nothing to say. */
	memcpy(m + 32, w0, 8);
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_oversize_auth(&x, &r) == 0);
	/* A REPLY, or rpcvers 3: not for this check. */
	m[7] = 1;
	memcpy(m + 24, w401, 8);
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_oversize_auth(&x, &r) == 0);
	m[7] = 0;
	m[11] = 3;
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_oversize_auth(&x, &r) == 0);
	return 0;
}

int main(void)
{
	tu_seed_init();
	RUN(t_encode);
	RUN(t_check);
	RUN(t_oversize);
	return tu_finish("test_rpc_cred");
}
