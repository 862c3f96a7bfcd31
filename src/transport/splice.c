// SPDX-License-Identifier: MIT
/*
 * The call stream of a call with Read chunks (RFC 8166 §3.4.5): where
 * each chunk goes, checked against the Read list, and the copies that put
 * the inline bytes around the pulled chunks.
 *
 * The staging buffer (pull.c) is the call stream exactly as the decoder
 * reads it: the inline pieces (or the Position-Zero chunk's pieces) with
 * each chunk's data at its XDR position, followed by its XDR roundup as
 * zeros (RFC 8166 §3.4.5: the requester leaves the roundup out). A
 * position is an offset in that complete stream, so chunk i's data
 * starts ioff = position - (data + roundup of chunks 0..i-1) bytes into
 * the message sent inline; a chunk that carries its roundup (a length
 * that is a multiple of 4) is accepted as well and lands the same way. So the
 * arguments decode from one flat buffer, bulk items point into it without
 * a copy, and the number of chunks is not limited by an iovec count. When a
 * Long Call (Position-Zero) also has other Read chunks, the Position-Zero
 * chunk is pulled behind the stream and its pieces are copied into place
 * once every Read has completed.

 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "transport/respond.h"
#include "transport/responder.h"

int xprt_read_plan(const struct rpcrdma1_hdr *h, uint32_t max_chunks, struct xprt_rchunk *rc,
		   uint32_t *nrc, uint32_t *p0len, uint32_t *nchunks, uint64_t *total)
{
	const struct rpcrdma1_chunks *ch = &h->chunks;
	uint64_t moved = 0; /* stream bytes of the DDP chunks so far */
	uint32_t start = 0, n = 0, prev_ioff = 0;

	*nrc = *p0len = *nchunks = 0;
	*total = 0;
	while (start < ch->nreads) {
		uint32_t pos, nsegs;
		uint64_t clen;

		if (rpcrdma1_read_chunk(ch, start, &pos, &nsegs, &clen) || clen > UINT32_MAX)
			return -1;
		if (pos == 0 && *nchunks == 0 && h->proc == RPCRDMA1_NOMSG) {
			*p0len = (uint32_t)clen;
		} else {
			if (n >= max_chunks || pos == 0 || pos < moved || pos - moved < prev_ioff)
				return -1;
			rc[n].pos = pos;
			rc[n].len = (uint32_t)clen;
			rc[n].ioff = (uint32_t)(pos - moved);
			rc[n].data = NULL;
			prev_ioff = rc[n].ioff;
			*nrc = ++n;
			moved += RPCRDMA_XDR_ROUNDUP(clen);
		}
		*total += clen;
		(*nchunks)++;
		start += nsegs;
	}
	return 0;
}

/* The server's Read list: the shared plan with at most
 * RPCRDMA_SVC_MAX_READ_CHUNKS DDP chunks, each at a 4-aligned position
 * (its flat stream puts the data there). */
int svc_splice_plan(struct rpcrdma_svc_req *r, uint32_t *nchunks, uint64_t *total)
{
	if (xprt_read_plan(&r->h, RPCRDMA_SVC_MAX_READ_CHUNKS, r->rc, &r->nrc, &r->p0len, nchunks,
			   total))
		return -1;
	for (uint32_t i = 0; i < r->nrc; i++)
		if (r->rc[i].pos & 3)
			return -1;
	return 0;
}

/* Stream = message + each chunk rounded up; plus the Position-Zero chunk
 * pulled behind it when there are other chunks. The chunks' total is at
 * most max_chunk (<= 2^64 / 4), so none of this overflows. */
void svc_splice_size(struct rpcrdma_svc_req *r)
{
	r->stage_len = r->msg_len;
	for (uint32_t i = 0; i < r->nrc; i++)
		r->stage_len += RPCRDMA_XDR_ROUNDUP((size_t)r->rc[i].len);
	r->pull_need = r->stage_len + (r->nrc ? r->p0len : 0);
	if (!r->pull_need)
		r->pull_need = 4; /* zero-length chunks: still a valid buffer */
}

/* Before the Reads: the inline pieces (RDMA_MSG) go around the places of
 * the chunks, each chunk's roundup is zeroed, rc[].data set. */
void svc_splice_inline(struct svc_conn *c, struct rpcrdma_svc_req *r)
{
	uint8_t *st = r->stage;
	const uint8_t *inl = NULL;
	size_t off = 0;
	uint32_t prev = 0;

	if (r->h.proc == RPCRDMA1_MSG)
		inl = xprt_pool_buf(c->rpool, r->rbuf) + r->h.hdr_len;
	for (uint32_t i = 0; i < r->nrc; i++) {
		uint32_t gap = r->rc[i].ioff - prev, len = r->rc[i].len;
		size_t pad = RPCRDMA_XDR_ROUNDUP((size_t)len) - len;

		if (inl)
			memcpy(st + off, inl + prev, gap);
		off += gap;
		r->rc[i].data = st + off;
		off += len;
		memset(st + off, 0, pad);
		off += pad;
		prev = r->rc[i].ioff;
	}
	if (inl)
		memcpy(st + off, inl + prev, r->msg_len - prev);
}

/* Every Read of @r completed: copy the Position-Zero pieces into place. */
void svc_splice_finish(struct rpcrdma_svc_req *r)
{
	uint8_t *st = r->stage;
	const uint8_t *p0 = st + svc_p0_target(r);
	size_t off = 0;
	uint32_t prev = 0;

	if (!r->p0len || !r->nrc)
		return;
	for (uint32_t i = 0; i < r->nrc; i++) {
		uint32_t gap = r->rc[i].ioff - prev;

		memcpy(st + off, p0 + prev, gap);
		off += gap + RPCRDMA_XDR_ROUNDUP((size_t)r->rc[i].len);
		prev = r->rc[i].ioff;
	}
	memcpy(st + off, p0 + prev, r->p0len - prev);
}

/* The reverse responder's stream (respond.h): no copy, the pieces in an
 * iovec. */
int xprt_bc_splice(struct rpcrdma_xdr *x, const uint8_t *base, uint32_t blen,
		   const struct xprt_rchunk *rc, uint32_t nrc)
{
	static const uint8_t zero[4];
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	uint32_t cur = 0;
	unsigned int n = 0;

	/* At most 3 iovecs per chunk + 1 (RPCRDMA_MAX_BULK 4 -> 13 <= 16). */
	uint64_t moved = 0;

	for (uint32_t i = 0; i < nrc; i++) {
		uint32_t pad = (uint32_t)(RPCRDMA_XDR_ROUNDUP(rc[i].len) - rc[i].len);
		uint32_t pos;

		/* RFC 8166 §3.4.5: rc[i].pos counts the earlier chunks. */
		if (rc[i].pos < moved)
			return -EINVAL;
		pos = (uint32_t)(rc[i].pos - moved);
		moved += RPCRDMA_XDR_ROUNDUP(rc[i].len);
		if (pos > blen || pos < cur || (pos & 3))
			return -EINVAL;
		if (pos > cur) {
			iov[n].iov_base = (void *)(uintptr_t)(base + cur);
			iov[n++].iov_len = pos - cur;
		}
		if (rc[i].len) {
			iov[n].iov_base = rc[i].data;
			iov[n++].iov_len = rc[i].len;
		}
		if (pad) {
			iov[n].iov_base = (void *)(uintptr_t)zero;
			iov[n++].iov_len = pad;
		}
		cur = pos;
	}
	if (blen > cur) {
		iov[n].iov_base = (void *)(uintptr_t)(base + cur);
		iov[n++].iov_len = blen - cur;
	}
	if (n == 0) {
		iov[n].iov_base = (void *)(uintptr_t)zero;
		iov[n++].iov_len = 0;
	}
	return rpcrdma_xdr_init_iov(x, iov, n, RPCRDMA_XDR_DECODE);
}
