/* SPDX-License-Identifier: MIT */
/*
 * What the Version One and Version Two header fuzz targets share: the
 * abort-on-failure check, the errnos a header decoder may return, chunk
 * list equality, and the input cut into iovecs of 1, 2, 3, ... bytes.
 */
#ifndef RPCRDMA_FUZZ_HDR_H
#define RPCRDMA_FUZZ_HDR_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

/* The errnos both header decoders document. */
static inline int known_error(int rc)
{
	return rc == -EBADMSG || rc == -EPROTONOSUPPORT || rc == -EOPNOTSUPP || rc == -E2BIG ||
	       rc == -EOVERFLOW || rc == -EINVAL;
}

static inline int seg_same(const struct rpcrdma1_segment *a, const struct rpcrdma1_segment *b)
{
	return a->handle == b->handle && a->length == b->length && a->offset == b->offset;
}

/* Every count, position, Write chunk boundary and segment the same. */
static inline int chunks_same(const struct rpcrdma1_chunks *p, const struct rpcrdma1_chunks *q)
{
	if (p->nreads != q->nreads || p->nwrites != q->nwrites || p->nwsegs != q->nwsegs ||
	    p->nreply != q->nreply || p->reply_present != q->reply_present)
		return 0;
	for (uint32_t i = 0; i < p->nreads; i++)
		if (p->reads[i].position != q->reads[i].position ||
		    !seg_same(&p->reads[i].seg, &q->reads[i].seg))
			return 0;
	for (uint32_t i = 0; i < p->nwrites; i++)
		if (p->writes[i].first != q->writes[i].first ||
		    p->writes[i].nsegs != q->writes[i].nsegs)
			return 0;
	for (uint32_t i = 0; i < p->nwsegs; i++)
		if (!seg_same(&p->wsegs[i], &q->wsegs[i]))
			return 0;
	for (uint32_t i = 0; i < p->nreply; i++)
		if (!seg_same(&p->reply[i], &q->reply[i]))
			return 0;
	return 1;
}

/* Points @iov at @data[0..size) in pieces of 1, 2, 3, ... bytes, the last
 * iovec taking the rest; returns how many it used. */
static inline unsigned int cut_pieces(struct iovec *iov, const uint8_t *data, size_t size)
{
	unsigned int n = 0;
	size_t off = 0;
	while (n < RPCRDMA_XDR_MAX_IOV && off < size) {
		size_t piece = n + 1 == RPCRDMA_XDR_MAX_IOV ? size - off : n + 1;
		if (piece > size - off)
			piece = size - off;
		iov[n].iov_base = (void *)(data + off);
		iov[n].iov_len = piece;
		off += piece;
		n++;
	}
	return n;
}

#endif
