/* SPDX-License-Identifier: MIT */
/*
 * Loads and stores of wire integers at any byte address: the one place the
 * library, its tests and its fuzz targets turn big-endian bytes (XDR, RPC,
 * RPC-over-RDMA, DDP/RDMAP, MPA) into host integers and back (issue 37).
 * Also the two little-endian words of the wire, the MPA CRC-32c trailer
 * (RFC 5044 §4.3 sends it least significant byte first).
 *
 * A fixed-size memcpy is how C reads an unaligned or aliased object
 * without undefined behaviour; the compilers turn memcpy plus byte swap
 * into one load and bswap (or movbe), exactly what the shift-and-or form
 * compiled to. Nothing else in src/, tests/ or fuzz/ writes its own:
 * tests/source/be_helpers.sh fails on a new one.
 */
#ifndef RPCRDMA_UTIL_BE_H
#define RPCRDMA_UTIL_BE_H

#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__) || !defined(__ORDER_BIG_ENDIAN__)
#error "util/be.h needs the compiler's __BYTE_ORDER__ (GCC or Clang)"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BE_SWAP16(v) __builtin_bswap16(v)
#define BE_SWAP32(v) __builtin_bswap32(v)
#define BE_SWAP64(v) __builtin_bswap64(v)
#define LE_SWAP32(v) (v)
#else
#define BE_SWAP16(v) (v)
#define BE_SWAP32(v) (v)
#define BE_SWAP64(v) (v)
#define LE_SWAP32(v) __builtin_bswap32(v)
#endif

static inline uint16_t get_be16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return (uint16_t)BE_SWAP16(v);
}

static inline uint32_t get_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return BE_SWAP32(v);
}

static inline uint64_t get_be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return BE_SWAP64(v);
}

static inline void put_be16(void *p, uint16_t v)
{
	v = (uint16_t)BE_SWAP16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_be32(void *p, uint32_t v)
{
	v = BE_SWAP32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_be64(void *p, uint64_t v)
{
	v = BE_SWAP64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t get_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return LE_SWAP32(v);
}

static inline void put_le32(void *p, uint32_t v)
{
	v = LE_SWAP32(v);
	memcpy(p, &v, sizeof(v));
}

/* The four bytes of @v in wire order, for an initializer list
 * (const uint8_t msg[] = {BE32_BYTES(xid), BE32_BYTES(1), ...}). */
#define BE32_BYTES(v)                                                                              \
	(uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16),                            \
	    (uint8_t)((uint32_t)(v) >> 8), (uint8_t)(v)

#undef BE_SWAP16
#undef BE_SWAP32
#undef BE_SWAP64
#undef LE_SWAP32

#endif
