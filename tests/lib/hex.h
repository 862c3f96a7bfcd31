/* SPDX-License-Identifier: MIT */
/*
 * Hex text (as tshark and tcpdump print bytes) into bytes, for the wire
 * tests' decoders.
 */
#ifndef RPCRDMA_TESTS_LIB_HEX_H
#define RPCRDMA_TESTS_LIB_HEX_H

#include <stddef.h>
#include <stdint.h>

static inline int tl_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The hex digits of @s up to its end or a newline, ':' separators skipped,
 * into @out: the byte count, or -1 for a bad digit, an odd count or more
 * than @cap bytes. */
static inline long tl_unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (*s && *s != '\n') {
		int hi, lo;

		if (*s == ':') {
			s++;
			continue;
		}
		hi = tl_hexval(s[0]);
		lo = hi < 0 ? -1 : tl_hexval(s[1]);
		if (lo < 0 || n == cap)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (long)n;
}

#endif
