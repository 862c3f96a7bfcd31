/* SPDX-License-Identifier: MIT */
/*
 * An input cut into heap pieces of a chosen size, as a scattered message
 * reaches the XDR cursor (fuzz_rpc.c, fuzz_xdr.c): each piece its own
 * allocation, so that reading past one is a heap overflow the sanitizers
 * see. Header only, static: each target includes it once.
 */
#ifndef RPCRDMA_FUZZ_PIECES_H
#define RPCRDMA_FUZZ_PIECES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"

struct pieces {
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	unsigned n;
};

/* @size bytes of @data (NULL: zeros) into @p, pieces of @piece bytes (0:
 * one piece; the last takes the rest, at most RPCRDMA_XDR_MAX_IOV in all).
 * 0, or -1 when an allocation fails (free_pieces() what was made). */
static int make_pieces(struct pieces *p, const uint8_t *data, size_t size, size_t piece)
{
	size_t off = 0;
	p->n = 0;
	if (piece == 0)
		piece = size ? size : 1;
	do {
		size_t len = size - off;
		if (p->n < RPCRDMA_XDR_MAX_IOV - 1 && len > piece)
			len = piece;
		void *b = malloc(len ? len : 1);
		if (!b)
			return -1;
		if (data && len)
			memcpy(b, data + off, len);
		else
			memset(b, 0, len ? len : 1);
		p->iov[p->n].iov_base = b;
		p->iov[p->n].iov_len = len;
		p->n++;
		off += len;
	} while (off < size);
	return 0;
}

static void free_pieces(struct pieces *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->iov[i].iov_base);
}

#endif
