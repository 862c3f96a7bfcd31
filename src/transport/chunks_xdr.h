/* SPDX-License-Identifier: MIT */
/*
 * The chunk-list XDR shared by RPC-over-RDMA Version One (RFC 8166 §4.1)
 * and Version Two (the early draft's §4.2, docs/design.md): both
 * versions encode segments, the Read list, the Write list and the Reply
 * chunk identically, so one decoder and one encoder serve both headers.
 *
 *   struct segment    { uint32 handle; uint32 length; uint64 offset; };
 *   struct read_seg   { uint32 position; segment target; };
 *   struct read_list  { read_seg entry; read_list *next; };
 *   struct wchunk     { segment target<>; };
 *   struct write_list { wchunk entry; write_list *next; };
 *   lists:              read_list *reads; write_list *writes; wchunk *reply;
 *
 * An XDR optional-data pointer ("*") is a 32-bit discriminator, 1 then the
 * item or 0 for none; so the Read and Write lists are sequences of entries
 * each preceded by a 1 and ended by a 0.
 *
 * The four fixed words (xid, vers, credit, proc) come first in every
 * version (RFC 8166 §7 keeps them so), and are coded here too.
 *
 * Everything here is static inline: the Version One decode path is hot
 * (one call per received message) and was written as static functions of
 * rpcrdma1_hdr.c; keeping them inline in each codec's translation unit
 * keeps that code generation. Internal to the library.
 *
 * Hostile-input contract (the CVE-2024-53151 lesson): every count is
 * checked against our limit (-E2BIG) and, by division, against the bytes
 * that remain (-EOVERFLOW) before a single segment is read or stored; a
 * discriminator other than 0/1 is -EINVAL; input that ends early is
 * -EBADMSG. The decoders fill caller-provided fixed arrays and never
 * allocate. On failure the cursor is left wherever the failure was found:
 * the header decoders restore it.
 */
#ifndef RPCRDMA_TRANSPORT_CHUNKS_XDR_H
#define RPCRDMA_TRANSPORT_CHUNKS_XDR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/rpcrdma1_hdr.h"
#include "xdr/xdr_internal.h"

/* ---- decoding ---- */

/* Fast path: the next @n bytes lie in the current iovec (the common case:
 * a header in one receive buffer). Steps over them and returns where they
 * are, or NULL with the cursor untouched; the caller then takes the
 * XDR layer's slow path, which handles straddling and truncation. */
static inline uint8_t *chunks_xdr_take(struct rpcrdma_xdr *x, size_t n)
{
	struct iovec *v = &x->iov[x->idx];
	if (v->iov_len - x->off < n)
		return NULL;
	uint8_t *p = (uint8_t *)v->iov_base + x->off;
	x->off += n;
	x->pos += n;
	return p;
}

/* The fixed words. Short or straddling input is read word by word, so a
 * truncated header still yields the words it has (the xid to answer
 * with); -EBADMSG then. */
static inline int chunks_xdr_get_fixed(struct rpcrdma_xdr *x, uint32_t *xid, uint32_t *vers,
				       uint32_t *credit, uint32_t *proc)
{
	const uint8_t *p = chunks_xdr_take(x, RPCRDMA1_FIXED_SIZE);
	if (p) {
		*xid = get_be32(p);
		*vers = get_be32(p + 4);
		*credit = get_be32(p + 8);
		*proc = get_be32(p + 12);
		return 0;
	}
	int rc = xdri_get_u32_inline(x, xid);
	if (!rc)
		rc = xdri_get_u32_inline(x, vers);
	if (!rc)
		rc = xdri_get_u32_inline(x, credit);
	if (!rc)
		rc = xdri_get_u32_inline(x, proc);
	return rc;
}

/* RFC 4506 §4.19: optional-data discriminator, 0 or 1 only. */
static inline int chunks_xdr_get_present(struct rpcrdma_xdr *x, bool *present)
{
	uint32_t v;
	int rc = xdri_get_u32_inline(x, &v);
	if (rc)
		return rc;
	if (v > 1)
		return -EINVAL;
	*present = v;
	return 0;
}

static inline int chunks_xdr_get_segment(struct rpcrdma_xdr *x, struct rpcrdma1_segment *s)
{
	uint8_t tmp[RPCRDMA1_SEGMENT_SIZE];
	const uint8_t *p = chunks_xdr_take(x, RPCRDMA1_SEGMENT_SIZE);
	if (!p) {
		/* Straddles iovecs (or truncated: -EBADMSG, cursor unchanged). */
		int rc = rpcrdma_xdri_get_slow(x, tmp, sizeof(tmp));
		if (rc)
			return rc;
		p = tmp;
	}
	s->handle = get_be32(p);
	s->length = get_be32(p + 4);
	s->offset = get_be64(p + 8);
	return 0;
}

/* A counted array of segments (a Write or Reply chunk): the count is
 * validated against @room (our limit, -E2BIG) and against the bytes left
 * (-EOVERFLOW) before a single segment is read. */
static inline int chunks_xdr_get_segment_array(struct rpcrdma_xdr *x, struct rpcrdma1_segment *dst,
					       uint32_t room, uint32_t *n)
{
	int rc = rpcrdma_xdr_get_count(x, room, RPCRDMA1_SEGMENT_SIZE, n);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < *n; i++) {
		rc = chunks_xdr_get_segment(x, &dst[i]);
		if (rc)
			return rc; /* unreachable: the count fit in what remained */
	}
	return 0;
}

/* One Read segment (RFC 8166 §4.1.2) of the Read list. */
static inline int chunks_xdr_read_item(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c)
{
	if (c->nreads == RPCRDMA1_MAX_READ_SEGS)
		return -E2BIG;
	struct rpcrdma1_read_segment *r = &c->reads[c->nreads];
	int rc = xdri_get_u32_inline(x, &r->position);
	if (rc)
		return rc;
	rc = chunks_xdr_get_segment(x, &r->seg);
	if (rc)
		return rc;
	c->nreads++;
	return 0;
}

/* One Write chunk (RFC 8166 §4.1.3: a counted array of segments); its
 * segments go on after the previous chunk's in c->wsegs. */
static inline int chunks_xdr_write_item(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c)
{
	if (c->nwrites == RPCRDMA1_MAX_WRITE_CHUNKS)
		return -E2BIG;
	uint32_t n;
	int rc = chunks_xdr_get_segment_array(x, &c->wsegs[c->nwsegs],
					      RPCRDMA1_MAX_WRITE_SEGS - c->nwsegs, &n);
	if (rc)
		return rc;
	c->writes[c->nwrites].first = c->nwsegs;
	c->writes[c->nwrites].nsegs = n;
	c->nwrites++;
	c->nwsegs += n;
	return 0;
}

/*
 * The Read list and the Write list are both XDR optional-data lists
 * (RFC 4506 §4.19): each item behind a TRUE, the list ended by a FALSE.
 * @item decodes one item into @c. Forced inline so that, on the hot
 * decode path, @item is a known function and inlined too: no indirect
 * call per item.
 */
static inline __attribute__((always_inline)) int
chunks_xdr_decode_list(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c,
		       int (*item)(struct rpcrdma_xdr *, struct rpcrdma1_chunks *))
{
	for (;;) {
		bool more;
		int rc = chunks_xdr_get_present(x, &more);
		if (rc || !more)
			return rc;
		rc = item(x, c);
		if (rc)
			return rc;
	}
}

static inline int chunks_xdr_decode_read_list(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c)
{
	return chunks_xdr_decode_list(x, c, chunks_xdr_read_item);
}

static inline int chunks_xdr_decode_write_list(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c)
{
	return chunks_xdr_decode_list(x, c, chunks_xdr_write_item);
}

static inline int chunks_xdr_decode_reply_chunk(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c)
{
	bool present;
	int rc = chunks_xdr_get_present(x, &present);
	if (rc || !present)
		return rc;
	rc = chunks_xdr_get_segment_array(x, c->reply, RPCRDMA1_MAX_REPLY_SEGS, &c->nreply);
	if (rc)
		return rc;
	c->reply_present = true;
	return 0;
}

/* RFC 8166 §4.3 (and the v2 draft's rpcrdma2_chunk_lists after its
 * direction word): Read list, then Write list, then Reply chunk. @c must
 * have been through rpcrdma1_chunks_init(). */
static inline int chunks_xdr_decode(struct rpcrdma_xdr *x, struct rpcrdma1_chunks *c)
{
	int rc = chunks_xdr_decode_read_list(x, c);
	if (!rc)
		rc = chunks_xdr_decode_write_list(x, c);
	if (!rc)
		rc = chunks_xdr_decode_reply_chunk(x, c);
	return rc;
}

/* ---- sizes and validity of what we are asked to encode ---- */

static inline bool chunks_xdr_valid(const struct rpcrdma1_chunks *c)
{
	if (c->nreads > RPCRDMA1_MAX_READ_SEGS || c->nwrites > RPCRDMA1_MAX_WRITE_CHUNKS ||
	    c->nwsegs > RPCRDMA1_MAX_WRITE_SEGS || c->nreply > RPCRDMA1_MAX_REPLY_SEGS)
		return false;
	if (!c->reply_present && c->nreply)
		return false;
	for (uint32_t i = 0; i < c->nwrites; i++) {
		const struct rpcrdma1_write_chunk *w = &c->writes[i];
		if (w->first > c->nwsegs || w->nsegs > c->nwsegs - w->first)
			return false;
	}
	return true;
}

/* Encoded size of the three lists; NULL is three empty lists. The caller
 * checked chunks_xdr_valid(): every count is small, no overflow. */
static inline size_t chunks_xdr_size_valid(const struct rpcrdma1_chunks *c)
{
	if (!c)
		return RPCRDMA1_EMPTY_LISTS;
	size_t n = (size_t)c->nreads * RPCRDMA1_READ_ENTRY_SIZE + 4;
	for (uint32_t i = 0; i < c->nwrites; i++)
		n += 8 + (size_t)c->writes[i].nsegs * RPCRDMA1_SEGMENT_SIZE;
	n += 4;
	n += 4;
	if (c->reply_present)
		n += 4 + (size_t)c->nreply * RPCRDMA1_SEGMENT_SIZE;
	return n;
}

/* ---- encoding ---- */

static inline int chunks_xdr_put_fixed(struct rpcrdma_xdr *x, uint32_t xid, uint32_t vers,
				       uint32_t credit, uint32_t proc)
{
	uint8_t *p = chunks_xdr_take(x, RPCRDMA1_FIXED_SIZE);
	if (p) {
		put_be32(p, xid);
		put_be32(p + 4, vers);
		put_be32(p + 8, credit);
		put_be32(p + 12, proc);
		return 0;
	}
	int rc = xdri_put_u32_inline(x, xid);
	if (!rc)
		rc = xdri_put_u32_inline(x, vers);
	if (!rc)
		rc = xdri_put_u32_inline(x, credit);
	if (!rc)
		rc = xdri_put_u32_inline(x, proc);
	return rc;
}

static inline int chunks_xdr_put_segment(struct rpcrdma_xdr *x, const struct rpcrdma1_segment *s)
{
	uint8_t tmp[RPCRDMA1_SEGMENT_SIZE];
	uint8_t *p = chunks_xdr_take(x, RPCRDMA1_SEGMENT_SIZE);
	uint8_t *dst = p ? p : tmp;
	put_be32(dst, s->handle);
	put_be32(dst + 4, s->length);
	put_be64(dst + 8, s->offset);
	return p ? 0 : rpcrdma_xdri_put_slow(x, tmp, sizeof(tmp));
}

static inline int chunks_xdr_put_segment_array(struct rpcrdma_xdr *x,
					       const struct rpcrdma1_segment *s, uint32_t n)
{
	int rc = xdri_put_u32_inline(x, n);
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = chunks_xdr_put_segment(x, &s[i]);
	return rc;
}

/* Writes the three lists (NULL: three empty lists). The caller checked
 * chunks_xdr_valid() and that chunks_xdr_size_valid() bytes fit, so a
 * failure here leaves a partial encoding for the caller to roll back. */
static inline int chunks_xdr_encode(struct rpcrdma_xdr *x, const struct rpcrdma1_chunks *c)
{
	int rc = 0;

	if (!c) {
		rc = xdri_put_u32_inline(x, 0);
		if (!rc)
			rc = xdri_put_u32_inline(x, 0);
		if (!rc)
			rc = xdri_put_u32_inline(x, 0);
		return rc;
	}
	for (uint32_t i = 0; !rc && i < c->nreads; i++) {
		rc = xdri_put_u32_inline(x, 1);
		if (!rc)
			rc = xdri_put_u32_inline(x, c->reads[i].position);
		if (!rc)
			rc = chunks_xdr_put_segment(x, &c->reads[i].seg);
	}
	if (!rc)
		rc = xdri_put_u32_inline(x, 0);
	for (uint32_t i = 0; !rc && i < c->nwrites; i++) {
		rc = xdri_put_u32_inline(x, 1);
		if (!rc)
			rc = chunks_xdr_put_segment_array(x, &c->wsegs[c->writes[i].first],
							  c->writes[i].nsegs);
	}
	if (!rc)
		rc = xdri_put_u32_inline(x, 0);
	if (!rc)
		rc = xdri_put_u32_inline(x, c->reply_present ? 1 : 0);
	if (!rc && c->reply_present)
		rc = chunks_xdr_put_segment_array(x, c->reply, c->nreply);
	return rc;
}

#endif
