/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets with oracles share: the libFuzzer entry point's
 * prototype, and ASSERT, an oracle that stops the run where it fails (a
 * crash that libFuzzer and the replay test report) in every build, with
 * NDEBUG or without.
 */
#ifndef RPCRDMA_FUZZ_ASSERT_H
#define RPCRDMA_FUZZ_ASSERT_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                  \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

#endif
