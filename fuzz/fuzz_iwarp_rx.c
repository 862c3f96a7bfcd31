/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the softiwarp receive path, in memory: one endpoint
 * per input on resources made once, its socket's byte stream in memory, its
 * receive and transmit steps called directly (siw_fuzz.h, in_memory). The
 * input format and the checks are fuzz_iwarp.h's, with three control
 * bytes. fuzz_iwarp_conn runs the same inputs (two control bytes) over a
 * socketpair and the progress engine.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_iwarp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return iwarp_one(data, size, true);
}
