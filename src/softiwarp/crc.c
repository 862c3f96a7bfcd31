/* SPDX-License-Identifier: MIT */
/*
 * MPA CRC32c (RFC 5044 §4.1: CRC32c, the iSCSI polynomial) through ISA-L's
 * folded/PCLMUL crc32_iscsi. crc32_iscsi(buf, len, seed) continues a raw
 * (non-inverted) register; the finished CRC is its complement. Checked
 * against CRC-32C's standard check value:
 * ~crc32_iscsi("123456789", 9, 0xffffffff) == 0xe3069283. The 32-bit result
 * goes on the wire little-endian (put_le32), which is what Linux siw sends
 * and what Wireshark's iwarp_mpa dissector verifies.
 */
#include <isa-l/crc.h>
#include <limits.h>
#include <time.h>

#include "softiwarp/siw.h"

uint32_t siw_crc_update(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* crc32_iscsi takes an int length */
	while (len > (size_t)INT_MAX) {
		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, INT_MAX, crc);
		p += INT_MAX;
		len -= (size_t)INT_MAX;
	}
	if (len)
		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)len, crc);
	return crc;
}

uint64_t siw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
