/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the softiwarp receive path over a real socket: per
 * input a device, its region and an endpoint whose socket is one end of an
 * AF_UNIX socketpair, driven by the progress engine (epoll, kernel short
 * reads, the responder's connection request as a listener would have it).
 * About a hundred times slower than fuzz_iwarp_rx, which runs the same
 * state machines in memory; this one checks the socket and progress glue
 * around them. Input format and checks: fuzz_iwarp.h, two control bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_iwarp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return iwarp_one(data, size, false);
}
