/* SPDX-License-Identifier: MIT */
/*
 * XDR cursor (RFC 4506) tests: known-answer bytes for every type, every
 * encoder and decoder failing cleanly (exact -errno, cursor unchanged) at
 * every truncation point, limits and overflow checks, cursor positioning,
 * and a random round trip over flat buffers and fragmented iovec lists.
 */
#include <errno.h>
#include <stdint.h>

#include "xdr/testutil.h"

/* ---- one item of each type, and a generic encode/decode for it ---- */

enum item_type {
	IT_U32,
	IT_I32,
	IT_U64,
	IT_I64,
	IT_BOOL,
	IT_ENUM,
	IT_FIXED,  /* opaque[len] */
	IT_OPAQUE, /* opaque<max> */
	IT_STRING, /* string<max> */
	IT_ARRAY,  /* unsigned int<max>: count then elements */
	IT_COUNT
};

#define ITEM_MAX_BYTES 37
#define ARRAY_MAX      8

struct item {
	enum item_type type;
	uint64_t v;
	uint32_t len;
	uint8_t data[ITEM_MAX_BYTES];
	char str[ITEM_MAX_BYTES + 1];
	uint32_t arr[ARRAY_MAX];
};

static int put_item(struct rpcrdma_xdr *x, const struct item *it)
{
	int rc;
	switch (it->type) {
	case IT_U32:
		return rpcrdma_xdr_put_u32(x, (uint32_t)it->v);
	case IT_I32:
		return rpcrdma_xdr_put_i32(x, (int32_t)(uint32_t)it->v);
	case IT_U64:
		return rpcrdma_xdr_put_u64(x, it->v);
	case IT_I64:
		return rpcrdma_xdr_put_i64(x, (int64_t)it->v);
	case IT_BOOL:
		return rpcrdma_xdr_put_bool(x, it->v != 0);
	case IT_ENUM:
		return rpcrdma_xdr_put_enum(x, (int32_t)(uint32_t)it->v);
	case IT_FIXED:
		return rpcrdma_xdr_put_opaque_fixed(x, it->data, it->len);
	case IT_OPAQUE:
		return rpcrdma_xdr_put_opaque(x, it->data, it->len, ITEM_MAX_BYTES);
	case IT_STRING:
		return rpcrdma_xdr_put_string(x, it->str, ITEM_MAX_BYTES);
	case IT_ARRAY: {
		size_t pos = rpcrdma_xdr_getpos(x);
		rc = rpcrdma_xdr_put_count(x, it->len, ARRAY_MAX);
		for (uint32_t i = 0; rc == 0 && i < it->len; i++)
			rc = rpcrdma_xdr_put_u32(x, it->arr[i]);
		if (rc)
			rpcrdma_xdr_setpos(x, pos);
		return rc;
	}
	default:
		return -EINVAL;
	}
}

/* Decode the item of @it's type and compare: returns 0 and sets *same, or
 * the decoder's error. */
static int get_item(struct rpcrdma_xdr *x, const struct item *it, int *same)
{
	int rc;
	uint32_t u;
	int32_t i;
	uint64_t u64;
	int64_t i64;
	bool b;
	uint8_t data[ITEM_MAX_BYTES];
	char str[ITEM_MAX_BYTES + 1];
	uint32_t len;

	*same = 0;
	switch (it->type) {
	case IT_U32:
		rc = rpcrdma_xdr_get_u32(x, &u);
		*same = rc == 0 && u == (uint32_t)it->v;
		return rc;
	case IT_I32:
		rc = rpcrdma_xdr_get_i32(x, &i);
		*same = rc == 0 && i == (int32_t)(uint32_t)it->v;
		return rc;
	case IT_U64:
		rc = rpcrdma_xdr_get_u64(x, &u64);
		*same = rc == 0 && u64 == it->v;
		return rc;
	case IT_I64:
		rc = rpcrdma_xdr_get_i64(x, &i64);
		*same = rc == 0 && i64 == (int64_t)it->v;
		return rc;
	case IT_BOOL:
		rc = rpcrdma_xdr_get_bool(x, &b);
		*same = rc == 0 && b == (it->v != 0);
		return rc;
	case IT_ENUM:
		rc = rpcrdma_xdr_get_enum(x, &i);
		*same = rc == 0 && i == (int32_t)(uint32_t)it->v;
		return rc;
	case IT_FIXED:
		rc = rpcrdma_xdr_get_opaque_fixed(x, data, it->len);
		*same = rc == 0 && memcmp(data, it->data, it->len) == 0;
		return rc;
	case IT_OPAQUE:
		rc = rpcrdma_xdr_get_opaque(x, data, ITEM_MAX_BYTES, &len);
		*same = rc == 0 && len == it->len && memcmp(data, it->data, len) == 0;
		return rc;
	case IT_STRING:
		rc = rpcrdma_xdr_get_string(x, str, sizeof(str));
		*same = rc == 0 && strcmp(str, it->str) == 0;
		return rc;
	case IT_ARRAY: {
		size_t pos = rpcrdma_xdr_getpos(x);
		rc = rpcrdma_xdr_get_count(x, ARRAY_MAX, 4, &len);
		if (rc)
			return rc;
		*same = len == it->len;
		for (uint32_t k = 0; k < len; k++) {
			rc = rpcrdma_xdr_get_u32(x, &u);
			if (rc) { /* unreachable: get_count checked the bytes */
				rpcrdma_xdr_setpos(x, pos);
				return rc;
			}
			*same = *same && u == it->arr[k];
		}
		return 0;
	}
	default:
		return -EINVAL;
	}
}

static size_t item_size(const struct item *it)
{
	switch (it->type) {
	case IT_U64:
	case IT_I64:
		return 8;
	case IT_FIXED:
		return RPCRDMA_XDR_ROUNDUP(it->len);
	case IT_OPAQUE:
		return 4 + RPCRDMA_XDR_ROUNDUP(it->len);
	case IT_STRING:
		return 4 + RPCRDMA_XDR_ROUNDUP(strlen(it->str));
	case IT_ARRAY:
		return 4 + 4 * (size_t)it->len;
	default:
		return 4;
	}
}

static void random_item(struct item *it)
{
	memset(it, 0, sizeof(*it));
	it->type = (enum item_type)tu_below(IT_COUNT);
	it->v = tu_rand64();
	if (it->type == IT_BOOL)
		it->v &= 1;
	it->len = tu_below(ITEM_MAX_BYTES + 1);
	tu_fill(it->data, sizeof(it->data));
	for (uint32_t i = 0; i < it->len; i++)
		it->str[i] = (char)(1 + tu_below(255)); /* no NUL inside */
	it->str[it->len] = '\0';
	if (it->type == IT_ARRAY)
		it->len = tu_below(ARRAY_MAX + 1);
	for (unsigned i = 0; i < ARRAY_MAX; i++)
		it->arr[i] = tu_rand32();
}

/* ---- known answers, RFC 4506 §4 ---- */

struct kat {
	struct item it;
	size_t n;
	uint8_t bytes[48];
};

static const struct kat kats[] = {
    /* §4.1 integer: two's complement, big-endian */
    {{.type = IT_I32, .v = 0xffffffffu}, 4, {0xff, 0xff, 0xff, 0xff}},
    {{.type = IT_I32, .v = 0x80000000u}, 4, {0x80, 0x00, 0x00, 0x00}},
    /* §4.2 unsigned integer */
    {{.type = IT_U32, .v = 0x01020304u}, 4, {0x01, 0x02, 0x03, 0x04}},
    {{.type = IT_U32, .v = 0xfedcba98u}, 4, {0xfe, 0xdc, 0xba, 0x98}},
    /* §4.3 enum: as int */
    {{.type = IT_ENUM, .v = 3}, 4, {0x00, 0x00, 0x00, 0x03}},
    /* §4.4 boolean */
    {{.type = IT_BOOL, .v = 0}, 4, {0x00, 0x00, 0x00, 0x00}},
    {{.type = IT_BOOL, .v = 1}, 4, {0x00, 0x00, 0x00, 0x01}},
    /* §4.5 hyper and unsigned hyper: 8 bytes, most significant first */
    {{.type = IT_I64, .v = UINT64_C(0xfffffffffffffffe)},
     8,
     {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
    {{.type = IT_U64, .v = UINT64_C(0x0123456789abcdef)},
     8,
     {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}},
    /* §4.9 fixed opaque: 5 bytes + 3 zero bytes; 4 bytes no padding */
    {{.type = IT_FIXED, .len = 5, .data = {1, 2, 3, 4, 5}},
     8,
     {0x01, 0x02, 0x03, 0x04, 0x05, 0x00, 0x00, 0x00}},
    {{.type = IT_FIXED, .len = 4, .data = {9, 8, 7, 6}}, 4, {0x09, 0x08, 0x07, 0x06}},
    {{.type = IT_FIXED, .len = 0}, 0, {0}},
    /* §4.10 variable opaque: length, bytes, padding */
    {{.type = IT_OPAQUE, .len = 3, .data = {0xaa, 0xbb, 0xcc}},
     8,
     {0x00, 0x00, 0x00, 0x03, 0xaa, 0xbb, 0xcc, 0x00}},
    {{.type = IT_OPAQUE, .len = 0}, 4, {0x00, 0x00, 0x00, 0x00}},
    {{.type = IT_OPAQUE, .len = 1, .data = {0x7f}},
     8,
     {0x00, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x00}},
    /* §4.11 string: "hello" */
    {{.type = IT_STRING, .str = "hello"},
     12,
     {0x00, 0x00, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o', 0x00, 0x00, 0x00}},
    {{.type = IT_STRING, .str = ""}, 4, {0x00, 0x00, 0x00, 0x00}},
    /* §4.13 variable-length array of 2 unsigned ints */
    {{.type = IT_ARRAY, .len = 2, .arr = {7, 0xdeadbeef}},
     12,
     {0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, 0xde, 0xad, 0xbe, 0xef}},
    {{.type = IT_ARRAY, .len = 0}, 4, {0x00, 0x00, 0x00, 0x00}},
};
#define NKATS (sizeof(kats) / sizeof(kats[0]))

static int test_kat_flat(void)
{
	for (size_t k = 0; k < NKATS; k++) {
		const struct kat *t = &kats[k];
		uint8_t buf[64];
		struct rpcrdma_xdr x;
		int same;

		memset(buf, 0xa5, sizeof(buf));
		rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
		CHECK(put_item(&x, &t->it) == 0);
		CHECK(rpcrdma_xdr_getpos(&x) == t->n);
		CHECK(item_size(&t->it) == t->n);
		CHECK(memcmp(buf, t->bytes, t->n) == 0);
		CHECK(buf[t->n] == 0xa5); /* nothing written past the item */

		rpcrdma_xdr_init(&x, buf, t->n, RPCRDMA_XDR_DECODE);
		CHECK(get_item(&x, &t->it, &same) == 0 && same);
		CHECK(rpcrdma_xdr_remaining(&x) == 0);
	}
	return 0;
}

/* The same answers with the item spread over pieces of 1..7 bytes, at
 * every starting offset inside the first piece. */
static int test_kat_iov(void)
{
	for (size_t k = 0; k < NKATS; k++) {
		const struct kat *t = &kats[k];
		for (size_t piece = 1; piece <= 7; piece++) {
			for (size_t lead = 0; lead < 4; lead++) {
				uint8_t buf[64];
				struct iovec iov[RPCRDMA_XDR_MAX_IOV];
				struct rpcrdma_xdr x;
				int same;
				size_t total = lead + t->n;

				memset(buf, 0xa5, sizeof(buf));
				unsigned n = tu_split_even(iov, buf, total, piece);
				CHECK(rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_ENCODE) == 0);
				CHECK(rpcrdma_xdr_skip(&x, 0) == 0);
				CHECK(rpcrdma_xdr_setpos(&x, lead) == 0);
				CHECK(put_item(&x, &t->it) == 0);
				CHECK(rpcrdma_xdr_remaining(&x) == 0);
				CHECK(memcmp(buf + lead, t->bytes, t->n) == 0);
				CHECK(buf[total] == 0xa5);

				CHECK(rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_DECODE) == 0);
				CHECK(rpcrdma_xdr_setpos(&x, lead) == 0);
				CHECK(get_item(&x, &t->it, &same) == 0 && same);
				CHECK(rpcrdma_xdr_remaining(&x) == 0);
			}
		}
	}
	return 0;
}

/* Every prefix of every encoding: decode fails with -EBADMSG and does not
 * move; encode into a short buffer fails with -EMSGSIZE, does not move, and
 * writes nothing past the buffer. Flat and split into 1-byte iovecs. */
static int test_truncation(void)
{
	for (size_t k = 0; k < NKATS; k++) {
		const struct kat *t = &kats[k];
		for (size_t l = 0; l < t->n; l++) {
			/* exact-size heap copy so ASan sees any overread */
			uint8_t *in = malloc(l ? l : 1);
			CHECK(in);
			memcpy(in, t->bytes, l);
			struct rpcrdma_xdr x;
			int same;
			/* An array whose count is there but whose elements are
			 * not is refused by get_count before any element is
			 * read: -EOVERFLOW (count x size exceeds what is left). */
			int want = t->it.type == IT_ARRAY && l >= 4 ? -EOVERFLOW : -EBADMSG;
			rpcrdma_xdr_init(&x, in, l, RPCRDMA_XDR_DECODE);
			CHECK_FAIL_AT(&x, get_item(&x, &t->it, &same), want);

			struct iovec iov[RPCRDMA_XDR_MAX_IOV];
			unsigned n = tu_split_even(iov, in, l, 1);
			CHECK(rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_DECODE) == 0);
			CHECK_FAIL_AT(&x, get_item(&x, &t->it, &same), want);

			uint8_t out[64];
			memset(out, 0x5a, sizeof(out));
			rpcrdma_xdr_init(&x, out, l, RPCRDMA_XDR_ENCODE);
			CHECK_FAIL_AT(&x, put_item(&x, &t->it), -EMSGSIZE);
			for (size_t i = l; i < sizeof(out); i++)
				CHECK(out[i] == 0x5a);
			n = tu_split_even(iov, out, l, 1);
			CHECK(rpcrdma_xdr_init_iov(&x, iov, n, RPCRDMA_XDR_ENCODE) == 0);
			CHECK_FAIL_AT(&x, put_item(&x, &t->it), -EMSGSIZE);
			for (size_t i = l; i < sizeof(out); i++)
				CHECK(out[i] == 0x5a);
			free(in);
		}
	}
	return 0;
}

/* Also truncate after a successful first item: the failed second item must
 * leave the cursor after the first, not at zero. */
static int test_truncation_mid_stream(void)
{
	static const uint8_t enc[] = {0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x05,
				      'w',  'o',  'r',  'l',  'd',  0x00, 0x00, 0x00};
	for (size_t l = 4; l < sizeof(enc); l++) {
		struct rpcrdma_xdr x;
		uint32_t u;
		char s[16];
		rpcrdma_xdr_init(&x, (void *)(uintptr_t)enc, l, RPCRDMA_XDR_DECODE);
		CHECK(rpcrdma_xdr_get_u32(&x, &u) == 0 && u == 42);
		CHECK_FAIL_AT(&x, rpcrdma_xdr_get_string(&x, s, sizeof(s)), -EBADMSG);
		CHECK(rpcrdma_xdr_getpos(&x) == 4);
	}
	return 0;
}

static int test_limits(void)
{
	struct rpcrdma_xdr x;
	uint8_t buf[64];
	uint8_t data[16] = {0};
	uint32_t len, cnt;
	bool b;
	char s[6];

	/* encode: length over max */
	rpcrdma_xdr_init(&x, buf, sizeof(buf), RPCRDMA_XDR_ENCODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_opaque(&x, data, 9, 8), -E2BIG);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_string(&x, "toolong", 6), -E2BIG);
	CHECK(rpcrdma_xdr_put_string(&x, "sixsix", 6) == 0);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_opaque_fixed(&x, data, SIZE_MAX), -EOVERFLOW);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_opaque(&x, NULL, 4, 8), -EINVAL);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_string(&x, NULL, 8), -EINVAL);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_count(&x, 17, 16), -E2BIG);

	/* decode: opaque<8> announcing 9 bytes (present) */
	static const uint8_t op9[] = {0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0};
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)op9, sizeof(op9), RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_opaque(&x, data, 8, &len), -E2BIG);
	const void *ref;
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_opaque_ref(&x, 8, &ref, &len), -E2BIG);
	/* string into a 6-byte buffer: max 5 */
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_string(&x, s, sizeof(s)), -E2BIG);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_string(&x, s, 0), -EINVAL);
	CHECK(rpcrdma_xdr_get_opaque(&x, data, 9, &len) == 0 && len == 9);
	CHECK(data[8] == 9 && rpcrdma_xdr_remaining(&x) == 0);

	/* a length near UINT32_MAX with little data: -EBADMSG, no overread */
	static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xfd, 1, 2, 3, 4};
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)huge, sizeof(huge), RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_opaque(&x, data, UINT32_MAX, &len), -EBADMSG);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_opaque_ref(&x, UINT32_MAX, &ref, &len), -EBADMSG);

	/* string carrying a NUL */
	static const uint8_t nul[] = {0, 0, 0, 3, 'a', 0, 'b', 0};
	char big[16];
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)nul, sizeof(nul), RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_string(&x, big, sizeof(big)), -EINVAL);

	/* counts: over the caller limit, over the bytes left, and count x
	 * size overflowing size_t */
	static const uint8_t c3[] = {0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2};
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)c3, sizeof(c3), RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_count(&x, 2, 4, &cnt), -E2BIG);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_count(&x, 3, 4, &cnt), -EOVERFLOW);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_count(&x, 10, SIZE_MAX / 2, &cnt), -EOVERFLOW);
	CHECK(rpcrdma_xdr_get_count(&x, 3, 2, &cnt) == 0 && cnt == 3);
	static const uint8_t cmax[] = {0xff, 0xff, 0xff, 0xff};
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)cmax, sizeof(cmax), RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_count(&x, UINT32_MAX, SIZE_MAX / 8, &cnt), -EOVERFLOW);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_count(&x, 1000, 1, &cnt), -E2BIG);
	CHECK(rpcrdma_xdr_get_count(&x, UINT32_MAX, 0, &cnt) == 0 && cnt == UINT32_MAX);

	/* bool: RFC 4506 §4.4 allows only 0 and 1 */
	static const uint8_t bools[] = {0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0};
	for (size_t off = 0; off < sizeof(bools); off += 4) {
		rpcrdma_xdr_init(&x, (void *)(uintptr_t)(bools + off), 4, RPCRDMA_XDR_DECODE);
		CHECK_FAIL_AT(&x, rpcrdma_xdr_get_bool(&x, &b), -EINVAL);
	}

	/* skip: bounds and overflow */
	rpcrdma_xdr_init(&x, buf, 8, RPCRDMA_XDR_DECODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_skip(&x, 9), -EBADMSG);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_skip(&x, SIZE_MAX), -EOVERFLOW);
	CHECK(rpcrdma_xdr_skip(&x, 5) == 0 && rpcrdma_xdr_getpos(&x) == 8);
	rpcrdma_xdr_init(&x, buf, 8, RPCRDMA_XDR_ENCODE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_skip(&x, 9), -EMSGSIZE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_opaque_fixed(&x, buf, SIZE_MAX - 2), -EOVERFLOW);
	return 0;
}

static int test_cursor_api(void)
{
	uint8_t buf[32];
	struct iovec iov[RPCRDMA_XDR_MAX_IOV + 1];
	struct rpcrdma_xdr x;
	void *res;
	const void *ref;
	uint32_t len, u;

	for (unsigned i = 0; i < RPCRDMA_XDR_MAX_IOV + 1; i++) {
		iov[i].iov_base = buf + i;
		iov[i].iov_len = 1;
	}
	CHECK(rpcrdma_xdr_init_iov(&x, iov, RPCRDMA_XDR_MAX_IOV + 1, RPCRDMA_XDR_DECODE) ==
	      -EINVAL);
	CHECK(rpcrdma_xdr_remaining(&x) == 0); /* defined, empty */
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_u32(&x, &u), -EBADMSG);
	CHECK(rpcrdma_xdr_init_iov(&x, NULL, 1, RPCRDMA_XDR_DECODE) == -EINVAL);
	struct iovec bad[2] = {{buf, 4}, {NULL, 4}};
	CHECK(rpcrdma_xdr_init_iov(&x, bad, 2, RPCRDMA_XDR_DECODE) == -EINVAL);
	struct iovec ovf[2] = {{buf, SIZE_MAX}, {buf, 2}};
	CHECK(rpcrdma_xdr_init_iov(&x, ovf, 2, RPCRDMA_XDR_DECODE) == -EINVAL);
	CHECK(rpcrdma_xdr_init_iov(&x, NULL, 0, RPCRDMA_XDR_ENCODE) == 0);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_put_u32(&x, 1), -EMSGSIZE);

	/* [0,3) [3,3) [3,10) [10,32): includes an empty iovec */
	struct iovec v[4] = {{buf, 3}, {buf + 3, 0}, {buf + 3, 7}, {buf + 10, 22}};
	CHECK(rpcrdma_xdr_init_iov(&x, v, 4, RPCRDMA_XDR_ENCODE) == 0);
	CHECK(rpcrdma_xdr_remaining(&x) == 32 && rpcrdma_xdr_getpos(&x) == 0);
	/* reserve across the 3|7 boundary is not contiguous */
	CHECK_FAIL_AT(&x, rpcrdma_xdr_reserve(&x, 4, &res), -EMSGSIZE);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_reserve(&x, 3, &res), -EINVAL);
	CHECK(rpcrdma_xdr_setpos(&x, 3) == 0);
	CHECK(rpcrdma_xdr_reserve(&x, 4, &res) == 0 && res == buf + 3);
	CHECK(rpcrdma_xdr_getpos(&x) == 7);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_reserve(&x, 4, &res), -EMSGSIZE); /* 7..11 spans */
	CHECK_FAIL_AT(&x, rpcrdma_xdr_setpos(&x, 33), -EINVAL);
	CHECK(rpcrdma_xdr_setpos(&x, 32) == 0 && rpcrdma_xdr_remaining(&x) == 0);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_reserve(&x, 4, &res), -EMSGSIZE);
	CHECK(rpcrdma_xdr_setpos(&x, 10) == 0);
	CHECK(rpcrdma_xdr_reserve(&x, 8, &res) == 0 && res == buf + 10);

	/* opaque_ref: contiguous gives a pointer into the buffer, spanning
	 * gives -EAGAIN with the cursor unchanged */
	memset(buf, 0, sizeof(buf));
	buf[3] = 3;
	memcpy(buf + 4, "abc", 3); /* length at [0,4), bytes [4,7) */
	buf[11] = 5;
	memcpy(buf + 12, "defgh", 5); /* length at [8,12), bytes [12,17) */
	struct iovec w[2] = {{buf, 14}, {buf + 14, 18}};
	CHECK(rpcrdma_xdr_init_iov(&x, w, 2, RPCRDMA_XDR_DECODE) == 0);
	CHECK(rpcrdma_xdr_get_opaque_ref(&x, 16, &ref, &len) == 0);
	CHECK(ref == buf + 4 && len == 3 && rpcrdma_xdr_getpos(&x) == 8);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_opaque_ref(&x, 16, &ref, &len), -EAGAIN);
	uint8_t tmp[8];
	CHECK(rpcrdma_xdr_get_opaque(&x, tmp, sizeof(tmp), &len) == 0);
	CHECK(len == 5 && memcmp(tmp, "defgh", 5) == 0 && rpcrdma_xdr_getpos(&x) == 20);

	/* get_inline */
	CHECK(rpcrdma_xdr_setpos(&x, 12) == 0);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_inline(&x, 3, &ref), -EAGAIN);
	CHECK(rpcrdma_xdr_get_inline(&x, 2, &ref) == 0 && ref == buf + 12);
	CHECK(rpcrdma_xdr_setpos(&x, 30) == 0);
	CHECK_FAIL_AT(&x, rpcrdma_xdr_get_inline(&x, 3, &ref), -EBADMSG);
	CHECK(rpcrdma_xdr_get_inline(&x, 2, &ref) == 0 && ref == buf + 30);
	return 0;
}

/* Random item sequences: flat and fragmented encodings are identical and
 * decode back to the same values from any fragmentation. */
static int test_roundtrip_random(void)
{
	enum { ITEMS = 24, ROUNDS = 20000 };
	static struct item items[ITEMS];
	static uint8_t flat[ITEMS * 48], frag[ITEMS * 48];

	for (int r = 0; r < ROUNDS; r++) {
		unsigned n = 1 + tu_below(ITEMS);
		size_t total = 0;
		for (unsigned i = 0; i < n; i++) {
			random_item(&items[i]);
			total += item_size(&items[i]);
		}
		struct rpcrdma_xdr x;
		rpcrdma_xdr_init(&x, flat, total, RPCRDMA_XDR_ENCODE);
		for (unsigned i = 0; i < n; i++)
			CHECK(put_item(&x, &items[i]) == 0);
		CHECK(rpcrdma_xdr_remaining(&x) == 0);
		/* one more (non-empty) item never fits */
		if (item_size(&items[0]))
			CHECK_FAIL_AT(&x, put_item(&x, &items[0]), -EMSGSIZE);

		struct iovec iov[RPCRDMA_XDR_MAX_IOV];
		memset(frag, 0xee, sizeof(frag));
		unsigned cnt = tu_split(iov, 1 + tu_below(RPCRDMA_XDR_MAX_IOV), frag, total);
		CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_ENCODE) == 0);
		for (unsigned i = 0; i < n; i++)
			CHECK(put_item(&x, &items[i]) == 0);
		CHECK(memcmp(flat, frag, total) == 0);

		cnt = tu_split(iov, 1 + tu_below(RPCRDMA_XDR_MAX_IOV), frag, total);
		CHECK(rpcrdma_xdr_init_iov(&x, iov, cnt, RPCRDMA_XDR_DECODE) == 0);
		for (unsigned i = 0; i < n; i++) {
			int same;
			CHECK(get_item(&x, &items[i], &same) == 0);
			CHECK(same);
		}
		CHECK(rpcrdma_xdr_remaining(&x) == 0);

		/* random re-positioning decodes the same item again */
		unsigned k = tu_below(n);
		size_t at = 0;
		for (unsigned i = 0; i < k; i++)
			at += item_size(&items[i]);
		CHECK(rpcrdma_xdr_setpos(&x, at) == 0);
		int same;
		CHECK(get_item(&x, &items[k], &same) == 0 && same);
	}
	return 0;
}

int main(void)
{
	tu_seed_init();
	RUN(test_kat_flat);
	RUN(test_kat_iov);
	RUN(test_truncation);
	RUN(test_truncation_mid_stream);
	RUN(test_limits);
	RUN(test_cursor_api);
	RUN(test_roundtrip_random);
	return tu_finish("test_xdr_cursor");
}
