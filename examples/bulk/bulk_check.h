/* SPDX-License-Identifier: MIT */
#ifndef BULK_CHECK_H
#define BULK_CHECK_H

#include <rpc/rpc.h>
#include <stdint.h>

/* PUT and GET @len bytes through @cl: 0 when both checksums match. */
int bulk_check(CLIENT *cl, uint32_t len);

#endif
