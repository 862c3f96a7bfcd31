/* SPDX-License-Identifier: MIT */
/*
 * src/rpc's call, reply and AUTH_SYS decoders against libtirpc's
 * xdr_callmsg, xdr_replymsg and xdr_authunix_parms (issue 37), with the
 * comparison of fuzz/rpc_tirpc.h (the fuzz target fuzz_rpc makes the same
 * one on every input it tries).
 *
 * A fixed corpus: hand-made valid messages (calls with AUTH_NONE, AUTH_SYS
 * up to its bounds, RPCSEC_GSS-sized and unknown flavors; every reply
 * variant; AUTH_SYS parameters) and the messages each of rpc_tirpc.h's
 * rules is about, then systematic mutations of each: every truncation
 * length, every single-bit flip and a byte set to 0x00 / 0xff at every
 * offset, and bounded random mutations (fixed seed; RPCRDMA_TEST_SEED
 * overrides) that set bytes, set words to boundary values, insert or
 * delete words. Every input goes through all three comparisons. Asserts
 * that on every input both decoders take it or both refuse it, with equal
 * fields when they take it, except by the explicit rules; and, so that the
 * test cannot pass vacuously, that each kind was taken by both many times
 * and every rule was met.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../fuzz/rpc_tirpc.h"
#include "util/be.h"
#include "xdr/testutil.h"

#define MAX_MSG 1024

enum kind { K_CALL, K_REPLY, K_SYS };

struct msg {
	enum kind kind;
	const char *name;
	size_t len;
	uint8_t b[MAX_MSG];
};

static struct msg corpus[64];
static unsigned ncorpus;
static unsigned compared, reported;

/* ---- a byte builder, apart from the codec under test ---- */

static void put_word(struct msg *m, uint32_t v)
{
	put_be32(m->b + m->len, v);
	m->len += 4;
}

/* RFC 4506 §4.10: length, bytes, zero padding to a multiple of 4. */
static void put_opaque(struct msg *m, const void *p, uint32_t n)
{
	put_word(m, n);
	memcpy(m->b + m->len, p, n);
	m->len += n;
	while (m->len % 4)
		m->b[m->len++] = 0;
}

static struct msg *add(enum kind k, const char *name)
{
	struct msg *m = &corpus[ncorpus++];
	memset(m, 0, sizeof(*m));
	m->kind = k;
	m->name = name;
	return m;
}

/* authsys_parms (RFC 5531 Appendix A) into @m. */
static void put_sys(struct msg *m, uint32_t stamp, const char *name, size_t namelen, uint32_t uid,
		    uint32_t gid, uint32_t ngids)
{
	put_word(m, stamp);
	put_opaque(m, name, (uint32_t)namelen);
	put_word(m, uid);
	put_word(m, gid);
	put_word(m, ngids);
	for (uint32_t i = 0; i < ngids; i++)
		put_word(m, 100 + i * 7);
}

static void put_call_head(struct msg *m, uint32_t xid, uint32_t rpcvers, uint32_t prog,
			  uint32_t vers, uint32_t proc)
{
	put_word(m, xid);
	put_word(m, 0); /* CALL */
	put_word(m, rpcvers);
	put_word(m, prog);
	put_word(m, vers);
	put_word(m, proc);
}

/* A call with an AUTH_SYS credential made of @sys, AUTH_NONE verifier. */
static void add_sys_call(const char *name, const struct msg *sys)
{
	struct msg *m = add(K_CALL, name);
	put_call_head(m, 0x5a5a0001u + ncorpus, 2, 100003, 3, 1);
	put_word(m, 1); /* AUTH_SYS */
	put_opaque(m, sys->b, (uint32_t)sys->len);
	put_word(m, 0);
	put_word(m, 0);
}

static void build_corpus(void)
{
	static const uint8_t gss[400] = {1, 2, 3};
	char longname[256];
	struct msg *m;

	memset(longname, 'n', sizeof(longname));

	/* AUTH_SYS parameters on their own. */
	struct msg *sys_small = add(K_SYS, "authsys client.example, 3 gids");
	put_sys(sys_small, 0x656e7430u, "client.example", 14, 1000, 1000, 3);
	struct msg *sys_max = add(K_SYS, "authsys 255-byte name, 16 gids");
	put_sys(sys_max, 1, longname, 255, 0, 0, 16);
	struct msg *sys_empty = add(K_SYS, "authsys empty name, no gids");
	put_sys(sys_empty, 0, "", 0, 65534, 65534, 0);
	/* RT_RULE 4: a NUL inside the machine name. */
	struct msg *sys_nul = add(K_SYS, "authsys name with a NUL");
	put_sys(sys_nul, 7, "ab\0cd", 5, 1, 2, 1);
	/* RT_RULE 5 (inside a call): the body holds 8 bytes more. */
	struct msg sys_long = *sys_small;
	put_word(&sys_long, 0xdeadbeefu);
	put_word(&sys_long, 0);

	/* Calls. */
	m = add(K_CALL, "NFSv3 NULL call, AUTH_NONE");
	put_call_head(m, 0x01020304u, 2, 100003, 3, 0);
	put_word(m, 0), put_word(m, 0), put_word(m, 0), put_word(m, 0);
	add_sys_call("AUTH_SYS call", sys_small);
	add_sys_call("AUTH_SYS call at the bounds", sys_max);
	add_sys_call("AUTH_SYS call, empty name", sys_empty);
	add_sys_call("AUTH_SYS call, NUL in the name", sys_nul);
	add_sys_call("AUTH_SYS call, bytes after the parameters", &sys_long);
	m = add(K_CALL, "RPCSEC_GSS-sized call: 400-byte cred, 37-byte verf, args after");
	put_call_head(m, 0xfffffffeu, 2, 100003, 4, 1);
	put_word(m, 6);
	put_opaque(m, gss, 400);
	put_word(m, 6);
	put_opaque(m, gss, 37);
	put_word(m, 0x11111111u); /* the procedure's arguments */
	m = add(K_CALL, "unknown flavor 390004, 5-byte body");
	put_call_head(m, 7, 2, 400000, 1, 9);
	put_word(m, 390004);
	put_opaque(m, "\1\2\3\4\5", 5);
	put_word(m, 0), put_word(m, 0);
	/* RT_RULE 1: a version 3 call (then whatever follows). */
	m = add(K_CALL, "rpcvers 3 call");
	put_call_head(m, 9, 3, 100003, 3, 0);
	put_word(m, 0), put_word(m, 0), put_word(m, 0), put_word(m, 0);

	/* Replies: every arm of reply_body (RFC 5531 §9). */
	static const struct {
		const char *name;
		uint32_t w[8];
		unsigned n;
	} replies[] = {
	    {"SUCCESS", {1, 0, 0, 0, 0, 0, 0x600dd00du}, 7}, /* + a result word */
	    {"PROG_UNAVAIL", {2, 0, 0, 0, 0, 1}, 6},
	    {"PROG_MISMATCH 2-4", {3, 0, 0, 0, 0, 2, 2, 4}, 8},
	    {"PROC_UNAVAIL", {4, 0, 0, 0, 0, 3}, 6},
	    {"GARBAGE_ARGS", {5, 0, 0, 0, 0, 4}, 6},
	    {"SYSTEM_ERR", {6, 0, 0, 0, 0, 5}, 6},
	    {"RPC_MISMATCH 2-2", {7, 1, 1, 0, 2, 2}, 6},
	    {"AUTH_ERROR AUTH_BADCRED", {8, 1, 1, 1, 1}, 5},
	    {"AUTH_ERROR RPCSEC_GSS_CTXPROBLEM", {9, 1, 1, 1, 14}, 5},
	    {"accept_stat 6 (RT_RULE 2)", {10, 1, 0, 0, 0, 6}, 6},
	    {"auth_stat 15 (RT_RULE 3)", {11, 1, 1, 1, 15}, 5},
	};
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		m = add(K_REPLY, replies[i].name);
		for (unsigned k = 0; k < replies[i].n; k++)
			put_word(m, k == 1 ? 1 /* REPLY */ : replies[i].w[k]);
	}
	m = add(K_REPLY, "SUCCESS with a 20-byte RPCSEC_GSS verifier");
	put_word(m, 12), put_word(m, 1), put_word(m, 0);
	put_word(m, 6);
	put_opaque(m, gss, 20);
	put_word(m, 0);
}

/* Every comparison on @b[0, len). */
static void compare(const uint8_t *b, size_t len, const char *what)
{
	const char *(*const fn[3])(const uint8_t *, size_t) = {rt_cmp_call, rt_cmp_reply,
							       rt_cmp_authsys};
	for (int k = 0; k < 3; k++) {
		const char *why = fn[k](b, len);
		compared++;
		if (!why)
			continue;
		failures++;
		if (reported++ >= 20)
			continue;
		fprintf(stderr, "%s: %s (seed %llu)\n  input %zu bytes:", what, why,
			(unsigned long long)tu_seed, len);
		for (size_t i = 0; i < len; i++)
			fprintf(stderr, "%s%02x", i % 4 ? "" : " ", b[i]);
		fprintf(stderr, "\n");
	}
}

/* Values a length, a count or a discriminant is checked against. */
static uint32_t boundary(void)
{
	static const uint32_t v[] = {0,   1,   2,   3,           4,           5,          6,
				     7,   13,  14,  15,          16,          17,         254,
				     255, 256, 399, 400,         401,         404,        408,
				     412, 340, 344, 0x7fffffffu, 0x80000000u, 0xffffffffu};
	uint32_t i = tu_below(sizeof(v) / sizeof(v[0]) + 1);
	return i < sizeof(v) / sizeof(v[0]) ? v[i] : tu_rand32();
}

static void mutate_random(uint8_t *b, size_t *len)
{
	unsigned n = 1 + tu_below(4);
	for (unsigned i = 0; i < n; i++) {
		size_t words = *len / 4;
		switch (tu_below(4)) {
		case 0: /* one byte */
			if (*len)
				b[tu_below((uint32_t)*len)] = (uint8_t)tu_rand32();
			break;
		case 1: /* one word to a boundary value */
			if (words) {
				uint32_t v = boundary();
				uint8_t *p = b + 4 * tu_below((uint32_t)words);
				put_be32(p, v);
			}
			break;
		case 2: /* insert a word */
			if (*len + 4 <= MAX_MSG) {
				size_t at = 4 * tu_below((uint32_t)words + 1);
				uint32_t v = boundary();
				memmove(b + at + 4, b + at, *len - at);
				put_be32(b + at, v);
				*len += 4;
			}
			break;
		default: /* delete a word */
			if (words) {
				size_t at = 4 * tu_below((uint32_t)words);
				memmove(b + at, b + at + 4, *len - at - 4);
				*len -= 4;
			}
			break;
		}
	}
}

static int t_valid(void)
{
	/* The hand-made messages first: each is taken by both decoders of
	 * its kind (or is the subject of a rule, checked in t_rules). */
	struct rt_stats before = rt_stats;
	for (unsigned i = 0; i < ncorpus; i++)
		compare(corpus[i].b, corpus[i].len, corpus[i].name);
	CHECK(rt_stats.both_ok[K_CALL] - before.both_ok[K_CALL] >= 7);
	CHECK(rt_stats.both_ok[K_REPLY] - before.both_ok[K_REPLY] >= 10);
	CHECK(rt_stats.both_ok[K_SYS] - before.both_ok[K_SYS] >= 3);
	CHECK(rt_stats.sys_creds - before.sys_creds >= 5);
	return failures ? 1 : 0;
}

static int t_rules(void)
{
	/* Each rule of rpc_tirpc.h met by its hand-made message. */
	CHECK(rt_stats.rule_rpcvers > 0);
	CHECK(rt_stats.rule_accept_stat > 0);
	CHECK(rt_stats.rule_auth_stat > 0);
	CHECK(rt_stats.rule_nul_name >= 2); /* on its own and inside a call */
	CHECK(rt_stats.rule_trailing > 0);
	return failures ? 1 : 0;
}

static int t_truncations(void)
{
	for (unsigned i = 0; i < ncorpus; i++)
		for (size_t n = 0; n < corpus[i].len; n++)
			compare(corpus[i].b, n, corpus[i].name);
	return failures ? 1 : 0;
}

static int t_byte_flips(void)
{
	static uint8_t b[MAX_MSG];
	for (unsigned i = 0; i < ncorpus; i++) {
		const struct msg *m = &corpus[i];
		for (size_t at = 0; at < m->len; at++) {
			for (int v = 0; v < 10; v++) {
				memcpy(b, m->b, m->len);
				b[at] = (uint8_t)(v < 8    ? b[at] ^ (1u << v)
						  : v == 8 ? 0x00u
							   : 0xffu);
				compare(b, m->len, m->name);
			}
		}
	}
	return failures ? 1 : 0;
}

static int t_random(void)
{
	static uint8_t b[MAX_MSG];
	for (unsigned i = 0; i < ncorpus; i++) {
		for (int r = 0; r < 20000; r++) {
			size_t len = corpus[i].len;
			memcpy(b, corpus[i].b, len);
			mutate_random(b, &len);
			compare(b, len, corpus[i].name);
		}
	}
	return failures ? 1 : 0;
}

int main(void)
{
	tu_seed_init();
	build_corpus();
	RUN(t_valid);
	RUN(t_rules);
	RUN(t_truncations);
	RUN(t_byte_flips);
	RUN(t_random);
	printf("%u messages, %u comparisons: both took call %u reply %u AUTH_SYS %u, both "
	       "refused call %u reply %u AUTH_SYS %u; AUTH_SYS credentials %u; rules met: rpcvers "
	       "%u, accept_stat %u, auth_stat %u, NUL name %u, trailing body %u\n",
	       ncorpus, compared, rt_stats.both_ok[0], rt_stats.both_ok[1], rt_stats.both_ok[2],
	       rt_stats.both_bad[0], rt_stats.both_bad[1], rt_stats.both_bad[2], rt_stats.sys_creds,
	       rt_stats.rule_rpcvers, rt_stats.rule_accept_stat, rt_stats.rule_auth_stat,
	       rt_stats.rule_nul_name, rt_stats.rule_trailing);
	return tu_finish("test_rpc_tirpc");
}
