/* SPDX-License-Identifier: MIT */
/*
 * ONC RPC v2 header tests (RFC 5531 §9, §10, Appendix A): known-answer
 * bytes for calls (AUTH_NONE, AUTH_SYS, unknown flavor) and every reply
 * variant, truncation at every byte, bad discriminants, auth bounds, the
 * server admission check, and random round trips over fragmented iovecs.
 */
#include <errno.h>
#include <stdint.h>

#include "rpcrdma/rpc.h"
#include "util/be.h"
#include "xdr/testutil.h"

#define W(v) BE32_BYTES(v)

/* NFSv3 NULL call, xid 0x01020304, AUTH_NONE cred and verf. */
static const uint8_t null_call[] = {
    W(0x01020304u),       /* xid */
    W(0),                 /* msg_type CALL */
    W(2),                 /* rpcvers */
    W(100003),            /* prog NFS */
    W(3),                 /* vers */
    W(0),                 /* proc NULL */
    W(0),           W(0), /* cred AUTH_NONE, body<0> */
    W(0),           W(0), /* verf AUTH_NONE, body<0> */
};

/* AUTH_SYS call: stamp 0x12345678, "host", uid 1000, gid 100, gids {10,20}. */
static const uint8_t sys_call[] = {
    W(0xcafef00du), W(0),  W(2),  W(100003), W(3), W(1), /* GETATTR */
    W(1),                                                /* cred flavor AUTH_SYS */
    W(32),                                               /* body length */
    W(0x12345678u),                                      /* stamp */
    W(4),           'h',   'o',   's',       't',        /* machinename */
    W(1000),                                             /* uid */
    W(100),                                              /* gid */
    W(2),           W(10), W(20),                        /* gids<16> */
    W(0),           W(0),                                /* verf AUTH_NONE */
};

/* Unknown flavor 390004 (not ours to parse), body of 5 bytes + padding. */
static const uint8_t odd_call[] = {
    W(7), W(0), W(2), W(400000), W(1), W(9), W(390004), W(5), 1, 2, 3, 4, 5, 0, 0, 0, W(0), W(0),
};

static void authsys_example(struct rpcrdma_rpc_authsys *s)
{
	memset(s, 0, sizeof(*s));
	s->stamp = 0x12345678u;
	strcpy(s->machinename, "host");
	s->uid = 1000;
	s->gid = 100;
	s->ngids = 2;
	s->gids[0] = 10;
	s->gids[1] = 20;
}

static void call_init(struct rpcrdma_rpc_call *c, uint32_t xid, uint32_t prog, uint32_t vers,
		      uint32_t proc)
{
	memset(c, 0, sizeof(*c));
	c->xid = xid;
	c->rpcvers = 2;
	c->prog = prog;
	c->vers = vers;
	c->proc = proc;
	rpcrdma_rpc_auth_none(&c->cred);
	rpcrdma_rpc_auth_none(&c->verf);
}

/* Encode @c: bytes must be @want, flat and in 1-byte iovecs; decode of
 * @want must give back @c exactly. */
static int check_call_kat(const struct rpcrdma_rpc_call *c, const uint8_t *want, size_t n)
{
	uint8_t buf[512];
	struct rpcrdma_xdr x;
	struct rpcrdma_rpc_call d;

	rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
	CHECK(rpcrdma_rpc_encode_call(&x, c) == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == n && memcmp(buf, want, n) == 0);

	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	memset(buf, 0, sizeof(buf));
	unsigned cnt = tu_split_even(iov, buf, n, 3);
	CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_ENCODE) == 0);
	CHECK(rpcrdma_rpc_encode_call(&x, c) == 0);
	CHECK(rpcrdma_xdr_remaining(&x) == 0 && memcmp(buf, want, n) == 0);

	rpcrdma_xdr_init(&x, (void *)(uintptr_t)want, n, RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_decode_call(&x, &d) == 0);
	CHECK(rpcrdma_xdr_remaining(&x) == 0);
	CHECK(memcmp(&d, c, sizeof(d)) == 0);

	/* truncation at every byte: -EBADMSG, cursor unchanged (flat and
	 * 1-byte iovecs), encode short: -EMSGSIZE */
	for (size_t l = 0; l < n; l++) {
		uint8_t *in = malloc(l ? l : 1);
		CHECK(in);
		memcpy(in, want, l);
		rpcrdma_xdr_init(&x, in, l, RPCRDMA_XDR_DECODE);
		CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_call(&x, &d), -EBADMSG);
		cnt = tu_split_even(iov, in, l, 1);
		CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_DECODE) == 0);
		CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_call(&x, &d), -EBADMSG);
		rpcrdma_xdr_init(&x, buf, l, RPCRDMA_XDR_ENCODE);
		CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_call(&x, c), -EMSGSIZE);
		free(in);
	}
	return 0;
}

static int test_call_kats(void)
{
	struct rpcrdma_rpc_call c;
	struct rpcrdma_rpc_authsys s, t;

	call_init(&c, 0x01020304u, 100003, 3, 0);
	CHECK(check_call_kat(&c, null_call, sizeof(null_call)) == 0);

	call_init(&c, 0xcafef00du, 100003, 3, 1);
	authsys_example(&s);
	CHECK(rpcrdma_rpc_auth_sys(&c.cred, &s) == 0);
	CHECK(c.cred.flavor == RPCRDMA_RPC_AUTH_SYS && c.cred.len == 32);
	CHECK(check_call_kat(&c, sys_call, sizeof(sys_call)) == 0);
	CHECK(rpcrdma_rpc_auth_get_sys(&c.cred, &t) == 0);
	CHECK(memcmp(&s, &t, sizeof(s)) == 0);

	call_init(&c, 7, 400000, 1, 9);
	c.cred.flavor = 390004;
	c.cred.len = 5;
	memcpy(c.cred.body, "\1\2\3\4\5", 5);
	CHECK(check_call_kat(&c, odd_call, sizeof(odd_call)) == 0);
	return 0;
}

struct reply_kat {
	const char *name;
	void (*build)(struct rpcrdma_rpc_reply *r, uint32_t arg);
	uint32_t arg;
	size_t n;
	uint8_t bytes[40];
};

static void b_accepted(struct rpcrdma_rpc_reply *r, uint32_t s)
{
	rpcrdma_rpc_reply_accepted(r, 0x01020304u, s);
}
static void b_prog_mismatch(struct rpcrdma_rpc_reply *r, uint32_t s)
{
	(void)s;
	rpcrdma_rpc_reply_prog_mismatch(r, 0x01020304u, 2, 4);
}
static void b_rpc_mismatch(struct rpcrdma_rpc_reply *r, uint32_t s)
{
	(void)s;
	rpcrdma_rpc_reply_rpc_mismatch(r, 0x01020304u, 2, 2);
}
static void b_auth_error(struct rpcrdma_rpc_reply *r, uint32_t s)
{
	rpcrdma_rpc_reply_auth_error(r, 0x01020304u, s);
}

// clang-format off
static const struct reply_kat reply_kats[] = {
	/* MSG_ACCEPTED: xid, REPLY, MSG_ACCEPTED, verf AUTH_NONE <0>, accept_stat */
	{ "SUCCESS", b_accepted, 0, 24, { W(0x01020304u), W(1), W(0), W(0), W(0), W(0) } },
	{ "PROG_UNAVAIL", b_accepted, 1, 24, { W(0x01020304u), W(1), W(0), W(0), W(0), W(1) } },
	/* PROG_MISMATCH: then mismatch_info low 2, high 4 */
	{ "PROG_MISMATCH", b_prog_mismatch, 0, 32, { W(0x01020304u), W(1), W(0), W(0), W(0), W(2), W(2), W(4) } },
	{ "PROC_UNAVAIL", b_accepted, 3, 24, { W(0x01020304u), W(1), W(0), W(0), W(0), W(3) } },
	{ "GARBAGE_ARGS", b_accepted, 4, 24, { W(0x01020304u), W(1), W(0), W(0), W(0), W(4) } },
	{ "SYSTEM_ERR", b_accepted, 5, 24, { W(0x01020304u), W(1), W(0), W(0), W(0), W(5) } },
	/* MSG_DENIED RPC_MISMATCH: xid, REPLY, MSG_DENIED, RPC_MISMATCH, low, high */
	{ "RPC_MISMATCH", b_rpc_mismatch, 0, 24, { W(0x01020304u), W(1), W(1), W(0), W(2), W(2) } },
	/* MSG_DENIED AUTH_ERROR: xid, REPLY, MSG_DENIED, AUTH_ERROR, auth_stat;
	 * every auth_stat of RFC 5531 §9 */
	{ "AUTH_OK", b_auth_error, 0, 20, { W(0x01020304u), W(1), W(1), W(1), W(0) } },
	{ "AUTH_BADCRED", b_auth_error, 1, 20, { W(0x01020304u), W(1), W(1), W(1), W(1) } },
	{ "AUTH_REJECTEDCRED", b_auth_error, 2, 20, { W(0x01020304u), W(1), W(1), W(1), W(2) } },
	{ "AUTH_BADVERF", b_auth_error, 3, 20, { W(0x01020304u), W(1), W(1), W(1), W(3) } },
	{ "AUTH_REJECTEDVERF", b_auth_error, 4, 20, { W(0x01020304u), W(1), W(1), W(1), W(4) } },
	{ "AUTH_TOOWEAK", b_auth_error, 5, 20, { W(0x01020304u), W(1), W(1), W(1), W(5) } },
	{ "AUTH_INVALIDRESP", b_auth_error, 6, 20, { W(0x01020304u), W(1), W(1), W(1), W(6) } },
	{ "AUTH_FAILED", b_auth_error, 7, 20, { W(0x01020304u), W(1), W(1), W(1), W(7) } },
	{ "AUTH_KERB_GENERIC", b_auth_error, 8, 20, { W(0x01020304u), W(1), W(1), W(1), W(8) } },
	{ "AUTH_TIMEEXPIRE", b_auth_error, 9, 20, { W(0x01020304u), W(1), W(1), W(1), W(9) } },
	{ "AUTH_TKT_FILE", b_auth_error, 10, 20, { W(0x01020304u), W(1), W(1), W(1), W(10) } },
	{ "AUTH_DECODE", b_auth_error, 11, 20, { W(0x01020304u), W(1), W(1), W(1), W(11) } },
	{ "AUTH_NET_ADDR", b_auth_error, 12, 20, { W(0x01020304u), W(1), W(1), W(1), W(12) } },
	{ "RPCSEC_GSS_CREDPROBLEM", b_auth_error, 13, 20, { W(0x01020304u), W(1), W(1), W(1), W(13) } },
	{ "RPCSEC_GSS_CTXPROBLEM", b_auth_error, 14, 20, { W(0x01020304u), W(1), W(1), W(1), W(14) } },
};
// clang-format on

static int test_reply_kats(void)
{
	for (size_t k = 0; k < sizeof(reply_kats) / sizeof(reply_kats[0]); k++) {
		const struct reply_kat *t = &reply_kats[k];
		struct rpcrdma_rpc_reply r, d;
		uint8_t buf[64];
		struct rpcrdma_xdr x;
		struct iovec iov[RPCRDMA_XDR_MAX_IOV];

		t->build(&r, t->arg);
		rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
		CHECK(rpcrdma_rpc_encode_reply(&x, &r) == 0);
		if (rpcrdma_xdr_getpos(&x) != t->n || memcmp(buf, t->bytes, t->n) != 0) {
			fprintf(stderr, "%s: got\n", t->name);
			tu_hexdump(stderr, buf, rpcrdma_xdr_getpos(&x));
			CHECK(0);
		}
		rpcrdma_xdr_init(&x, (void *)(uintptr_t)t->bytes, t->n, RPCRDMA_XDR_DECODE);
		CHECK(rpcrdma_rpc_decode_reply(&x, &d) == 0 && rpcrdma_xdr_remaining(&x) == 0);
		CHECK(memcmp(&d, &r, sizeof(d)) == 0);
		/* a call decoder refuses a reply */
		rpcrdma_xdr_init(&x, (void *)(uintptr_t)t->bytes, t->n, RPCRDMA_XDR_DECODE);
		struct rpcrdma_rpc_call c;
		CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_call(&x, &c), -EINVAL);

		for (size_t l = 0; l < t->n; l++) {
			uint8_t *in = malloc(l ? l : 1);
			CHECK(in);
			memcpy(in, t->bytes, l);
			rpcrdma_xdr_init(&x, in, l, RPCRDMA_XDR_DECODE);
			CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_reply(&x, &d), -EBADMSG);
			unsigned cnt = tu_split_even(iov, in, l, 1);
			CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_DECODE) == 0);
			CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_reply(&x, &d), -EBADMSG);
			rpcrdma_xdr_init(&x, buf, l, RPCRDMA_XDR_ENCODE);
			CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_reply(&x, &r), -EMSGSIZE);
			free(in);
		}
	}
	return 0;
}

/* Replace word @i of @src (n bytes) with @v and expect @err from @dec. */
static int bad_word(const uint8_t *src, size_t n, size_t i, uint32_t v, int call, int err)
{
	uint8_t buf[128];
	struct rpcrdma_xdr x;
	struct rpcrdma_rpc_call c;
	struct rpcrdma_rpc_reply r;
	uint8_t w[] = {W(v)};

	memcpy(buf, src, n);
	memcpy(buf + 4 * i, w, 4);
	rpcrdma_xdr_init(&x, buf, n, RPCRDMA_XDR_DECODE);
	if (call)
		CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_call(&x, &c), err);
	else
		CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_reply(&x, &r), err);
	return 0;
}

static int test_bad_discriminants(void)
{
	const uint8_t *acc = reply_kats[0].bytes; /* SUCCESS */
	const uint8_t *pm = reply_kats[2].bytes;  /* PROG_MISMATCH */
	const uint8_t *den = reply_kats[8].bytes; /* AUTH_ERROR BADCRED */
	const uint8_t *rm = reply_kats[6].bytes;  /* RPC_MISMATCH */
	/* values just past each enum, and far outside it */
	static const uint32_t far[] = {0x7fffffffu, 0x80000000u, 0xffffffffu};

	for (size_t k = 0; k < 5; k++) {
		uint32_t v = k < 2 ? (uint32_t)k : far[k - 2];
		/* msg_type: 2.. undefined */
		CHECK(bad_word(null_call, sizeof(null_call), 1, v + (k < 2 ? 2 : 0), 1, -EINVAL) ==
		      0);
		CHECK(bad_word(acc, 24, 1, v + (k < 2 ? 2 : 0), 0, -EINVAL) == 0);
		/* reply_stat: 2.. undefined */
		CHECK(bad_word(acc, 24, 2, v + (k < 2 ? 2 : 0), 0, -EINVAL) == 0);
		/* accept_stat: 6.. undefined */
		CHECK(bad_word(acc, 24, 5, v + (k < 2 ? 6 : 0), 0, -EINVAL) == 0);
		CHECK(bad_word(pm, 32, 5, v + (k < 2 ? 6 : 0), 0, -EINVAL) == 0);
		/* reject_stat: 2.. undefined */
		CHECK(bad_word(den, 20, 3, v + (k < 2 ? 2 : 0), 0, -EINVAL) == 0);
		CHECK(bad_word(rm, 24, 3, v + (k < 2 ? 2 : 0), 0, -EINVAL) == 0);
		/* auth_stat: 15.. undefined */
		CHECK(bad_word(den, 20, 4, v + (k < 2 ? 15 : 0), 0, -EINVAL) == 0);
	}
	/* a reply decoder refuses a call */
	CHECK(bad_word(null_call, sizeof(null_call), 0, 1, 0, -EINVAL) == 0);
	/* opaque_auth body over 400 bytes (length word 401) */
	CHECK(bad_word(null_call, sizeof(null_call), 7, 401, 1, -E2BIG) == 0);
	CHECK(bad_word(null_call, sizeof(null_call), 9, 0xffffffffu, 1, -E2BIG) == 0);
	CHECK(bad_word(acc, 24, 4, 401, 0, -E2BIG) == 0);
	/* verifier length 400 with no bytes behind it: truncated */
	CHECK(bad_word(acc, 24, 4, 400, 0, -EBADMSG) == 0);

	/* encoders refuse values outside the enums */
	struct rpcrdma_rpc_reply r;
	uint8_t buf[64];
	struct rpcrdma_xdr x;
	rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
	rpcrdma_rpc_reply_accepted(&r, 1, 6);
	CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_reply(&x, &r), -EINVAL);
	rpcrdma_rpc_reply_auth_error(&r, 1, 15);
	CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_reply(&x, &r), -EINVAL);
	rpcrdma_rpc_reply_auth_error(&r, 1, 1);
	r.reject_stat = 2;
	CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_reply(&x, &r), -EINVAL);
	r.reply_stat = 2;
	CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_reply(&x, &r), -EINVAL);
	rpcrdma_rpc_reply_accepted(&r, 1, 0);
	r.verf.len = 401;
	CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_reply(&x, &r), -E2BIG);
	struct rpcrdma_rpc_call c;
	call_init(&c, 1, 2, 3, 4);
	c.cred.len = 401;
	CHECK_FAIL_AT(&x, rpcrdma_rpc_encode_call(&x, &c), -E2BIG);
	return 0;
}

static int test_rpcvers_and_peek(void)
{
	/* rpcvers 3: decodes xid and rpcvers only, stops after them */
	uint8_t buf[sizeof(null_call)];
	memcpy(buf, null_call, sizeof(buf));
	buf[11] = 3;
	struct rpcrdma_xdr x;
	struct rpcrdma_rpc_call c;
	struct rpcrdma_rpc_reply r;
	rpcrdma_xdr_init(&x, buf, 12, RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_decode_call(&x, &c) == 0);
	CHECK(c.xid == 0x01020304u && c.rpcvers == 3 && c.prog == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == 12);
	/* ... and the admission check answers RPC_MISMATCH (2, 2) */
	CHECK(rpcrdma_rpc_check_call(&c, RPCRDMA_RPC_FLAVORS_DEFAULT, &r) == 1);
	uint8_t out[64];
	rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	CHECK(rpcrdma_rpc_encode_reply(&x, &r) == 0);
	static const uint8_t want[] = {W(0x01020304u), W(1), W(1), W(0), W(2), W(2)};
	CHECK(rpcrdma_xdr_getpos(&x) == sizeof(want) && memcmp(out, want, sizeof(want)) == 0);

	uint32_t xid, type;
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)null_call, sizeof(null_call), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_peek(&x, &xid, &type) == 0 && xid == 0x01020304u && type == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == 0);
	rpcrdma_xdr_init(&x, out, sizeof(want), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_peek(&x, &xid, &type) == 0 && type == 1);
	rpcrdma_xdr_init(&x, out, 7, RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_peek(&x, &xid, &type) == -EBADMSG);
	out[7] = 2;
	rpcrdma_xdr_init(&x, out, 8, RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_peek(&x, &xid, &type) == -EINVAL);
	return 0;
}

static int test_authsys_bounds(void)
{
	struct rpcrdma_rpc_authsys s, t;
	struct rpcrdma_rpc_auth a;
	struct rpcrdma_xdr x;

	/* the largest legal credential: 255-byte name, 16 gids */
	memset(&s, 0, sizeof(s));
	memset(s.machinename, 'm', 255);
	s.ngids = 16;
	for (unsigned i = 0; i < 16; i++)
		s.gids[i] = i * 1000u;
	CHECK(rpcrdma_rpc_auth_sys(&a, &s) == 0);
	CHECK(a.len == 4 + 4 + 256 + 4 + 4 + 4 + 64);
	CHECK(rpcrdma_rpc_auth_get_sys(&a, &t) == 0 && memcmp(&s, &t, sizeof(s)) == 0);

	/* 17 gids, unterminated name: refused by the encoder */
	s.ngids = 17;
	CHECK(rpcrdma_rpc_auth_sys(&a, &s) == -E2BIG);
	s.ngids = 16;
	memset(s.machinename, 'm', sizeof(s.machinename));
	CHECK(rpcrdma_rpc_auth_sys(&a, &s) == -E2BIG);

	/* on the wire: a 256-byte name, 17 gids, trailing bytes */
	uint8_t body[400];
	memset(body, 0, sizeof(body));
	uint8_t n256[] = {W(0), W(256)};
	memcpy(body, n256, 8);
	memset(body + 8, 'x', 256);
	rpcrdma_xdr_init(&x, body, 8 + 256 + 12, RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_authsys(&x, &t), -E2BIG);

	static const uint8_t g17[] = {W(1), W(1), 'a', 0, 0, 0, W(0), W(0), W(17)};
	memset(body, 0, sizeof(body));
	memcpy(body, g17, sizeof(g17));
	rpcrdma_xdr_init(&x, body, sizeof(g17) + 17 * 4, RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_authsys(&x, &t), -E2BIG);
	/* gid count larger than the bytes left */
	body[sizeof(g17) - 1] = 3;
	rpcrdma_xdr_init(&x, body, sizeof(g17) + 8, RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_rpc_decode_authsys(&x, &t), -EOVERFLOW);

	authsys_example(&s);
	CHECK(rpcrdma_rpc_auth_sys(&a, &s) == 0);
	a.len += 4; /* a trailing word the parameters do not account for */
	CHECK(rpcrdma_rpc_auth_get_sys(&a, &t) == -EINVAL);
	a.len -= 8; /* cut short: the gid count promises more than is left */
	CHECK(rpcrdma_rpc_auth_get_sys(&a, &t) == -EOVERFLOW);
	a.len -= 16; /* cut inside uid */
	CHECK(rpcrdma_rpc_auth_get_sys(&a, &t) == -EBADMSG);
	a.len += 16;
	a.len += 4;
	a.flavor = RPCRDMA_RPC_AUTH_NONE;
	CHECK(rpcrdma_rpc_auth_get_sys(&a, &t) == -EINVAL);
	return 0;
}

static int expect_verdict(const struct rpcrdma_rpc_call *c, uint32_t flavors, int want,
			  uint32_t reject, uint32_t stat)
{
	struct rpcrdma_rpc_reply r;
	memset(&r, 0x77, sizeof(r));
	int rc = rpcrdma_rpc_check_call(c, flavors, &r);
	CHECK(rc == want);
	if (want == 0)
		return 0;
	CHECK(r.xid == c->xid && r.reply_stat == RPCRDMA_RPC_MSG_DENIED);
	CHECK(r.reject_stat == reject && r.auth_stat == stat);
	/* encodes as xid, REPLY, MSG_DENIED, AUTH_ERROR, stat */
	if (reject == RPCRDMA_RPC_AUTH_ERROR) {
		uint8_t out[32];
		struct rpcrdma_xdr x;
		rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
		CHECK(rpcrdma_rpc_encode_reply(&x, &r) == 0);
		const uint8_t want_b[] = {W(c->xid), W(1), W(1), W(1), W(stat)};
		CHECK(rpcrdma_xdr_getpos(&x) == 20 && memcmp(out, want_b, 20) == 0);
	}
	return 0;
}

static int test_check_call(void)
{
	struct rpcrdma_rpc_call c;
	struct rpcrdma_rpc_authsys s;
	const uint32_t def = RPCRDMA_RPC_FLAVORS_DEFAULT;
	const uint32_t ae = RPCRDMA_RPC_AUTH_ERROR;

	call_init(&c, 42, 100003, 3, 0);
	CHECK(expect_verdict(&c, def, 0, 0, 0) == 0);
	authsys_example(&s);
	CHECK(rpcrdma_rpc_auth_sys(&c.cred, &s) == 0);
	CHECK(expect_verdict(&c, def, 0, 0, 0) == 0);
	/* AUTH_SYS not offered by this server */
	CHECK(expect_verdict(&c, RPCRDMA_RPC_FLAVOR_BIT(0), 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	/* malformed AUTH_SYS body */
	c.cred.len -= 4;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	c.cred.len += 8;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	c.cred.len -= 4;
	/* verifier must be an empty AUTH_NONE */
	c.verf.len = 4;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADVERF) == 0);
	c.verf.len = 0;
	c.verf.flavor = RPCRDMA_RPC_AUTH_SYS;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADVERF) == 0);
	/* RPCSEC_GSS and unknown flavors: AUTH_BADCRED by default */
	call_init(&c, 43, 100003, 3, 0);
	c.cred.flavor = RPCRDMA_RPC_RPCSEC_GSS;
	c.cred.len = 12;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	/* ... unless the caller takes them on */
	CHECK(expect_verdict(&c, def | RPCRDMA_RPC_FLAVOR_BIT(6), 0, 0, 0) == 0);
	c.cred.flavor = 390004;
	CHECK(expect_verdict(&c, 0xffffffffu, 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	c.cred.flavor = RPCRDMA_RPC_AUTH_SHORT;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	/* AUTH_NONE with a body */
	c.cred.flavor = RPCRDMA_RPC_AUTH_NONE;
	c.cred.len = 4;
	CHECK(expect_verdict(&c, def, 1, ae, RPCRDMA_RPC_AUTH_BADCRED) == 0);
	/* rpcvers first: a bad version with a bad cred is RPC_MISMATCH */
	c.rpcvers = 1;
	CHECK(expect_verdict(&c, def, 1, RPCRDMA_RPC_RPC_MISMATCH, 0) == 0);
	return 0;
}

static void random_auth(struct rpcrdma_rpc_auth *a)
{
	memset(a, 0, sizeof(*a));
	switch (tu_below(4)) {
	case 0:
		rpcrdma_rpc_auth_none(a);
		break;
	case 1: {
		struct rpcrdma_rpc_authsys s;
		memset(&s, 0, sizeof(s));
		s.stamp = tu_rand32();
		unsigned n = tu_below(256);
		for (unsigned i = 0; i < n; i++)
			s.machinename[i] = (char)(1 + tu_below(255));
		s.uid = tu_rand32();
		s.gid = tu_rand32();
		s.ngids = tu_below(17);
		for (unsigned i = 0; i < s.ngids; i++)
			s.gids[i] = tu_rand32();
		(void)rpcrdma_rpc_auth_sys(a, &s);
		break;
	}
	default:
		a->flavor = tu_rand32();
		a->len = tu_below(RPCRDMA_RPC_AUTH_BODY_MAX + 1);
		tu_fill(a->body, a->len);
		break;
	}
}

static void random_reply(struct rpcrdma_rpc_reply *r)
{
	uint32_t xid = tu_rand32();
	switch (tu_below(4)) {
	case 0:
		rpcrdma_rpc_reply_accepted(r, xid, tu_below(6));
		if (r->accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
			r->mismatch_low = tu_rand32();
			r->mismatch_high = tu_rand32();
		}
		random_auth(&r->verf);
		break;
	case 1:
		rpcrdma_rpc_reply_prog_mismatch(r, xid, tu_rand32(), tu_rand32());
		break;
	case 2:
		rpcrdma_rpc_reply_rpc_mismatch(r, xid, tu_rand32(), tu_rand32());
		break;
	default:
		rpcrdma_rpc_reply_auth_error(r, xid, tu_below(15));
		break;
	}
}

static int test_roundtrip_random(void)
{
	static uint8_t flat[2048], frag[2048];
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];

	for (int round = 0; round < 3000; round++) {
		struct rpcrdma_rpc_call c, dc;
		struct rpcrdma_rpc_reply r, dr;
		struct rpcrdma_xdr x;

		memset(&c, 0, sizeof(c));
		c.xid = tu_rand32();
		c.rpcvers = 2;
		c.prog = tu_rand32();
		c.vers = tu_rand32();
		c.proc = tu_rand32();
		random_auth(&c.cred);
		random_auth(&c.verf);
		random_reply(&r);

		/* call then reply back to back in one stream */
		rpcrdma_xdr_init(&x, flat, sizeof(flat), RPCRDMA_XDR_ENCODE);
		CHECK(rpcrdma_rpc_encode_call(&x, &c) == 0);
		CHECK(rpcrdma_rpc_encode_reply(&x, &r) == 0);
		size_t n = rpcrdma_xdr_getpos(&x);

		memset(frag, 0, sizeof(frag));
		unsigned cnt = tu_split(iov, 1 + tu_below(RPCRDMA_XDR_MAX_IOV), frag, n);
		CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_ENCODE) == 0);
		CHECK(rpcrdma_rpc_encode_call(&x, &c) == 0);
		CHECK(rpcrdma_rpc_encode_reply(&x, &r) == 0);
		CHECK(rpcrdma_xdr_remaining(&x) == 0 && memcmp(flat, frag, n) == 0);

		cnt = tu_split(iov, 1 + tu_below(RPCRDMA_XDR_MAX_IOV), frag, n);
		CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_DECODE) == 0);
		CHECK(rpcrdma_rpc_decode_call(&x, &dc) == 0);
		CHECK(rpcrdma_rpc_decode_reply(&x, &dr) == 0);
		CHECK(rpcrdma_xdr_remaining(&x) == 0);
		CHECK(memcmp(&c, &dc, sizeof(c)) == 0);
		CHECK(memcmp(&r, &dr, sizeof(r)) == 0);
	}
	return 0;
}

static int test_names(void)
{
	CHECK(strcmp(rpcrdma_rpc_accept_stat_name(2), "PROG_MISMATCH") == 0);
	CHECK(strcmp(rpcrdma_rpc_accept_stat_name(6), "?") == 0);
	CHECK(strcmp(rpcrdma_rpc_auth_stat_name(14), "RPCSEC_GSS_CTXPROBLEM") == 0);
	CHECK(strcmp(rpcrdma_rpc_auth_stat_name(15), "?") == 0);
	return 0;
}

int main(void)
{
	tu_seed_init();
	RUN(test_call_kats);
	RUN(test_reply_kats);
	RUN(test_bad_discriminants);
	RUN(test_rpcvers_and_peek);
	RUN(test_authsys_bounds);
	RUN(test_check_call);
	RUN(test_roundtrip_random);
	RUN(test_names);
	return tu_finish("test_rpc_msg");
}
