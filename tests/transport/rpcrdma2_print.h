/* SPDX-License-Identifier: MIT */
/*
 * A Version Two header printer for tests and the wire test: decodes the
 * header at the start of @buf with rpcrdma2_decode_buf() and prints one
 * line per field ("name value"), then, for our optional messages, one
 * line per property or the pulled xid. Wireshark 4.0 does not decode
 * Version Two, so captured frames are checked with this.
 *
 * Returns the decode result (0 or the rpcrdma2_decode() errno); on a
 * failure it prints what was read and a last line "error <errno name>".
 */
#ifndef RPCRDMA_TESTS_RPCRDMA2_PRINT_H
#define RPCRDMA_TESTS_RPCRDMA2_PRINT_H

#include <stddef.h>
#include <stdio.h>

int rpcrdma2_hdr_print(FILE *f, const void *buf, size_t len);

#endif
