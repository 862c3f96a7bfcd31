// SPDX-License-Identifier: MIT
/*
 * src/util/be.h, the one byte-order header (issue 37): known byte patterns
 * both ways, round trips of random values at every alignment, no byte
 * written outside the word, the initializer form BE32_BYTES. The reference
 * is arithmetic on the bytes (v * 256 + b), not the header's own method.
 */
#include <stdint.h>
#include <string.h>

#include "lib/check.h"
#include "util/be.h"

/* The value of @n bytes at @p, most significant first, by arithmetic. */
static uint64_t ref_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 256u + p[i];
	return v;
}

/* The same, least significant first. */
static uint64_t ref_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v * 256u + p[i];
	return v;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void known_patterns(void)
{
	static const uint8_t b[] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	uint8_t o[8];

	CHECK(get_be16(b) == 0x0123);
	CHECK(get_be32(b) == 0x01234567u);
	CHECK(get_be64(b) == 0x0123456789abcdefull);
	CHECK(get_le32(b) == 0x67452301u);
	CHECK(get_be16(b + 6) == 0xcdef); /* top bit set: no sign extension */
	CHECK(get_be32(b + 4) == 0x89abcdefu);

	memset(o, 0, sizeof(o));
	put_be16(o, 0xfeed);
	CHECK(o[0] == 0xfe && o[1] == 0xed && o[2] == 0);
	put_be32(o, 0xf6ab0e18u); /* the RFC 8797 private data magic */
	CHECK(o[0] == 0xf6 && o[1] == 0xab && o[2] == 0x0e && o[3] == 0x18 && o[4] == 0);
	put_be64(o, 0x0123456789abcdefull);
	CHECK(memcmp(o, b, 8) == 0);
	put_le32(o, 0x67452301u);
	CHECK(memcmp(o, b, 4) == 0);

	/* a Version One NULL call's first words, as the tests write them */
	static const uint8_t hdr[] = {BE32_BYTES(0x01020304u), BE32_BYTES(1), BE32_BYTES(32),
				      BE32_BYTES(0xffffffffu)};
	CHECK(sizeof(hdr) == 16);
	CHECK(hdr[0] == 1 && hdr[1] == 2 && hdr[2] == 3 && hdr[3] == 4);
	CHECK(get_be32(hdr + 4) == 1 && get_be32(hdr + 8) == 32);
	CHECK(get_be32(hdr + 12) == 0xffffffffu);
}

/* Every width at every offset 0..15 of a buffer with guard bytes around
 * it: the load agrees with the reference, the store writes exactly the
 * bytes the reference reads back, and nothing beside them. */
static void round_trips(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint8_t buf[40], before[40];

	for (int iter = 0; iter < 2000; iter++) {
		for (size_t off = 0; off < 16; off++) {
			uint64_t v = xorshift(&seed);
			uint8_t *p = buf + 8 + off;

			for (size_t i = 0; i < sizeof(buf); i++)
				buf[i] = (uint8_t)xorshift(&seed);
			CHECK(get_be16(p) == ref_be(p, 2));
			CHECK(get_be32(p) == ref_be(p, 4));
			CHECK(get_be64(p) == ref_be(p, 8));
			CHECK(get_le32(p) == ref_le(p, 4));

			memcpy(before, buf, sizeof(buf));
			put_be16(p, (uint16_t)v);
			CHECK(ref_be(p, 2) == (uint16_t)v && get_be16(p) == (uint16_t)v);
			CHECK(memcmp(buf, before, 8 + off) == 0);
			CHECK(memcmp(p + 2, before + 8 + off + 2, sizeof(buf) - 8 - off - 2) == 0);

			memcpy(before, buf, sizeof(buf));
			put_be32(p, (uint32_t)v);
			CHECK(ref_be(p, 4) == (uint32_t)v && get_be32(p) == (uint32_t)v);
			CHECK(memcmp(buf, before, 8 + off) == 0);
			CHECK(memcmp(p + 4, before + 8 + off + 4, sizeof(buf) - 8 - off - 4) == 0);

			memcpy(before, buf, sizeof(buf));
			put_be64(p, v);
			CHECK(ref_be(p, 8) == v && get_be64(p) == v);
			CHECK(memcmp(buf, before, 8 + off) == 0);
			CHECK(memcmp(p + 8, before + 8 + off + 8, sizeof(buf) - 8 - off - 8) == 0);

			memcpy(before, buf, sizeof(buf));
			put_le32(p, (uint32_t)v);
			CHECK(ref_le(p, 4) == (uint32_t)v && get_le32(p) == (uint32_t)v);
			CHECK(memcmp(buf, before, 8 + off) == 0);
			CHECK(memcmp(p + 4, before + 8 + off + 4, sizeof(buf) - 8 - off - 4) == 0);
			if (failures)
				return;
		}
	}
}

int main(void)
{
	known_patterns();
	round_trips();
	if (!failures)
		printf("test_be: PASS\n");
	return failures ? 1 : 0;
}
