// SPDX-License-Identifier: MIT
/*
 * RPC-over-RDMA Version One transport header codec. The XDR it implements
 * (RFC 8166 §4.1, RFC 5666 §4.3):
 *
 *   struct xdr_rdma_segment { uint32 handle; uint32 length; uint64 offset; };
 *   struct xdr_read_chunk   { uint32 position; xdr_rdma_segment target; };
 *   struct xdr_read_list    { xdr_read_chunk entry; xdr_read_list *next; };
 *   struct xdr_write_chunk  { xdr_rdma_segment target<>; };
 *   struct xdr_write_list   { xdr_write_chunk entry; xdr_write_list *next; };
 *   struct rpc_rdma_header  { xdr_read_list *rdma_reads;
 *                             xdr_write_list *rdma_writes;
 *                             xdr_write_chunk *rdma_reply; };
 *   rpc_rdma_header_padded = uint32 rdma_align; uint32 rdma_thresh; + the above
 *   union rpc_rdma_error switch (rpc_rdma_errcode err) {
 *           case ERR_VERS: uint32 rdma_vers_low; uint32 rdma_vers_high;
 *           case ERR_CHUNK: void; };
 *
 * The chunk lists (segments, Read list, Write list, Reply chunk) are
 * coded by chunks_xdr.h, which Version Two shares.
 *
 * Every received header is hostile: every count is checked against our
 * limit and, by division, against the bytes that remain before any
 * segment is read or stored (the CVE-2024-53151 lesson).
 */
#include "transport/rpcrdma1_hdr.h"

#include <errno.h>
#include <string.h>

#include "transport/chunks_xdr.h"
#include "xdr/xdr_internal.h"

/* ---- decoding ---- */

static inline int get_u32(struct rpcrdma_xdr *x, uint32_t *v)
{
	return xdri_get_u32_inline(x, v);
}

static inline int decode_fixed(struct rpcrdma_xdr *x, struct rpcrdma1_hdr *h)
{
	return chunks_xdr_get_fixed(x, &h->xid, &h->vers, &h->credit, &h->proc);
}

/*
 * A header whose rdma_vers is not 1. RFC 8166 §7 (Protocol Extensibility)
 * keeps rdma_proc, the value of RDMA_ERROR and the wire form of the
 * RDMA_ERROR body (err, then ERR_VERS's low and high) the same in every
 * version, so that a version mismatch can be reported in a way any
 * version decodes. Linux's svcrdma echoes the call's rdma_vers (e.g. 2) in
 * the fixed words of its ERR_VERS reply (docs/linux-peer.md), so a
 * requester must read ERR_VERS whatever rdma_vers says, or it never
 * learns the range the server supports (RFC 8166 §4.5.1). Only that one
 * message is decoded; anything else, including ERR_CHUNK and a truncated
 * ERR_VERS, stays -EPROTONOSUPPORT with nothing parsed past the fixed
 * words.
 */
static int decode_other_version(struct rpcrdma_xdr *x, struct rpcrdma1_hdr *h)
{
	uint32_t err, low, high;

	if (h->proc != RPCRDMA1_ERROR)
		return -EPROTONOSUPPORT;
	if (get_u32(x, &err) || err != RPCRDMA1_ERR_VERS || get_u32(x, &low) || get_u32(x, &high))
		return -EPROTONOSUPPORT; /* the caller restores the cursor */
	h->err = err;
	h->vers_low = low;
	h->vers_high = high;
	return 0;
}

static int decode_body(struct rpcrdma_xdr *x, struct rpcrdma1_hdr *h)
{
	int rc = decode_fixed(x, h);
	if (rc)
		return rc;
	/* RFC 8166 §4.5.1: only the four fixed words are common to every
	 * version; a responder must not parse further. */
	if (h->vers != RPCRDMA1_VERSION)
		return decode_other_version(x, h);

	switch (h->proc) {
	case RPCRDMA1_MSG:
	case RPCRDMA1_NOMSG:
		return chunks_xdr_decode(x, &h->chunks);
	case RPCRDMA1_MSGP:
		/* RFC 5666 §4.3 rpc_rdma_header_padded. */
		rc = get_u32(x, &h->align);
		if (!rc)
			rc = get_u32(x, &h->thresh);
		if (!rc)
			rc = chunks_xdr_decode(x, &h->chunks);
		return rc;
	case RPCRDMA1_DONE:
		return 0;
	case RPCRDMA1_ERROR:
		rc = get_u32(x, &h->err);
		if (rc)
			return rc;
		switch (h->err) {
		case RPCRDMA1_ERR_VERS:
			rc = get_u32(x, &h->vers_low);
			if (!rc)
				rc = get_u32(x, &h->vers_high);
			return rc;
		case RPCRDMA1_ERR_CHUNK:
			return 0;
		default:
			/* A union discriminant with no arm (RFC 4506 §4.15). */
			return -EINVAL;
		}
	default:
		return -EOPNOTSUPP;
	}
}

int rpcrdma1_decode(struct rpcrdma_xdr *x, struct rpcrdma1_hdr *h)
{
	struct xdri_mark start = xdri_mark(x);

	/* Only the counts: the arrays are filled up to them. */
	h->xid = h->vers = h->credit = h->proc = 0;
	h->align = h->thresh = h->err = h->vers_low = h->vers_high = 0;
	h->hdr_len = 0;
	rpcrdma1_chunks_init(&h->chunks);

	int rc = decode_body(x, h);
	if (rc) {
		xdri_restore(x, start);
		return rc;
	}
	h->hdr_len = x->pos - start.pos;
	return 0;
}

/* rpcrdma1_decode_buf() sets up a cursor by hand; if struct rpcrdma_xdr
 * gains a member, this fails to compile rather than leave it unset. */
struct xdr_cursor_layout {
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	unsigned int iovcnt, idx;
	size_t off, pos, len;
	enum rpcrdma_xdr_op op;
};
_Static_assert(sizeof(struct rpcrdma_xdr) == sizeof(struct xdr_cursor_layout),
	       "struct rpcrdma_xdr changed: update rpcrdma1_decode_buf()");

int rpcrdma1_decode_buf(const void *buf, size_t len, struct rpcrdma1_hdr *h)
{
	struct rpcrdma_xdr x;
	/* A one-iovec decode cursor, set up field by field: this runs once per
	 * received message and rpcrdma_xdr_init() would clear all
	 * RPCRDMA_XDR_MAX_IOV iovecs. A decode cursor only reads; the cast
	 * drops const for the shared cursor type. */
	x.iov[0].iov_base = (void *)buf;
	x.iov[0].iov_len = buf ? len : 0;
	x.iovcnt = 1;
	x.idx = 0;
	x.off = 0;
	x.pos = 0;
	x.len = x.iov[0].iov_len;
	x.op = RPCRDMA_XDR_DECODE;
	return rpcrdma1_decode(&x, h);
}

uint32_t rpcrdma1_error_reply(int rc)
{
	if (rc == 0)
		return 0;
	/* RFC 8166 §4.5.1 */
	if (rc == -EPROTONOSUPPORT)
		return RPCRDMA1_ERR_VERS;
	/* RFC 8166 §4.5.2: any other header the responder cannot parse or
	 * whose chunks it cannot use. */
	return RPCRDMA1_ERR_CHUNK;
}

/* ---- sizes and validity of what we are asked to encode ---- */

size_t rpcrdma1_chunks_size(const struct rpcrdma1_chunks *c)
{
	if (c && !chunks_xdr_valid(c))
		return 0;
	return chunks_xdr_size_valid(c);
}

size_t rpcrdma1_hdr_size(const struct rpcrdma1_hdr *h)
{
	switch (h->proc) {
	case RPCRDMA1_MSG:
	case RPCRDMA1_NOMSG:
		return chunks_xdr_valid(&h->chunks)
			   ? RPCRDMA1_FIXED_SIZE + chunks_xdr_size_valid(&h->chunks)
			   : 0;
	case RPCRDMA1_MSGP:
		return chunks_xdr_valid(&h->chunks)
			   ? RPCRDMA1_FIXED_SIZE + 8 + chunks_xdr_size_valid(&h->chunks)
			   : 0;
	case RPCRDMA1_DONE:
		return RPCRDMA1_FIXED_SIZE;
	case RPCRDMA1_ERROR:
		if (h->err == RPCRDMA1_ERR_VERS)
			return RPCRDMA1_ERR_VERS_SIZE;
		if (h->err == RPCRDMA1_ERR_CHUNK)
			return RPCRDMA1_ERR_CHUNK_SIZE;
		return 0;
	default:
		return 0;
	}
}

/* ---- encoding ---- */

static inline int put_u32(struct rpcrdma_xdr *x, uint32_t v)
{
	return xdri_put_u32_inline(x, v);
}

static inline int put_fixed(struct rpcrdma_xdr *x, uint32_t xid, uint32_t vers, uint32_t credit,
			    uint32_t proc)
{
	return chunks_xdr_put_fixed(x, xid, vers, credit, proc);
}

/* Everything of a header but its chunk lists, so the per-procedure
 * helpers need not build (or zero) a whole struct rpcrdma1_hdr. */
struct hdr_words {
	uint32_t xid, vers, credit, proc, align, thresh, err, vers_low, vers_high;
};

/* Checks the size first, so a header that does not fit writes nothing. */
static int encode_words(struct rpcrdma_xdr *x, const struct hdr_words *w,
			const struct rpcrdma1_chunks *c)
{
	size_t need;

	switch (w->proc) {
	case RPCRDMA1_MSG:
	case RPCRDMA1_NOMSG:
	case RPCRDMA1_MSGP:
		if (c && !chunks_xdr_valid(c))
			return -EINVAL;
		need = RPCRDMA1_FIXED_SIZE + chunks_xdr_size_valid(c) +
		       (w->proc == RPCRDMA1_MSGP ? 8 : 0);
		break;
	case RPCRDMA1_DONE:
		need = RPCRDMA1_FIXED_SIZE;
		break;
	case RPCRDMA1_ERROR:
		if (w->err == RPCRDMA1_ERR_VERS)
			need = RPCRDMA1_ERR_VERS_SIZE;
		else if (w->err == RPCRDMA1_ERR_CHUNK)
			need = RPCRDMA1_ERR_CHUNK_SIZE;
		else
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (need > x->len - x->pos)
		return -EMSGSIZE;

	struct xdri_mark start = xdri_mark(x);
	int rc = put_fixed(x, w->xid, w->vers, w->credit, w->proc);
	if (!rc && w->proc == RPCRDMA1_MSGP) {
		/* RFC 5666 §4.3: align and thresh precede the lists. */
		rc = put_u32(x, w->align);
		if (!rc)
			rc = put_u32(x, w->thresh);
	}
	switch (w->proc) {
	case RPCRDMA1_MSGP:
	case RPCRDMA1_MSG:
	case RPCRDMA1_NOMSG:
		if (!rc)
			rc = chunks_xdr_encode(x, c);
		break;
	case RPCRDMA1_ERROR:
		if (!rc)
			rc = put_u32(x, w->err);
		if (!rc && w->err == RPCRDMA1_ERR_VERS) {
			rc = put_u32(x, w->vers_low);
			if (!rc)
				rc = put_u32(x, w->vers_high);
		}
		break;
	default:
		break;
	}
	if (rc)
		xdri_restore(x, start); /* not reached after the size check */
	return rc;
}

int rpcrdma1_encode(struct rpcrdma_xdr *x, const struct rpcrdma1_hdr *h)
{
	const struct hdr_words w = {h->xid,    h->vers, h->credit,   h->proc,     h->align,
				    h->thresh, h->err,  h->vers_low, h->vers_high};
	return encode_words(x, &w, &h->chunks);
}

int rpcrdma1_encode_msg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit,
			const struct rpcrdma1_chunks *c)
{
	const struct hdr_words w = {
	    .xid = xid, .vers = RPCRDMA1_VERSION, .credit = credit, .proc = RPCRDMA1_MSG};
	return encode_words(x, &w, c);
}

int rpcrdma1_encode_nomsg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit,
			  const struct rpcrdma1_chunks *c)
{
	const struct hdr_words w = {
	    .xid = xid, .vers = RPCRDMA1_VERSION, .credit = credit, .proc = RPCRDMA1_NOMSG};
	return encode_words(x, &w, c);
}

int rpcrdma1_encode_msgp(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t align,
			 uint32_t thresh, const struct rpcrdma1_chunks *c)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA1_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA1_MSGP,
				    .align = align,
				    .thresh = thresh};
	return encode_words(x, &w, c);
}

int rpcrdma1_encode_done(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit)
{
	const struct hdr_words w = {
	    .xid = xid, .vers = RPCRDMA1_VERSION, .credit = credit, .proc = RPCRDMA1_DONE};
	return encode_words(x, &w, NULL);
}

int rpcrdma1_encode_err_vers(struct rpcrdma_xdr *x, uint32_t xid, uint32_t vers, uint32_t credit,
			     uint32_t low, uint32_t high)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = vers,
				    .credit = credit,
				    .proc = RPCRDMA1_ERROR,
				    .err = RPCRDMA1_ERR_VERS,
				    .vers_low = low,
				    .vers_high = high};
	return encode_words(x, &w, NULL);
}

int rpcrdma1_encode_err_chunk(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA1_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA1_ERROR,
				    .err = RPCRDMA1_ERR_CHUNK};
	return encode_words(x, &w, NULL);
}

/* ---- building chunk lists ---- */

void rpcrdma1_chunks_init(struct rpcrdma1_chunks *c)
{
	c->nreads = 0;
	c->nwrites = 0;
	c->nwsegs = 0;
	c->nreply = 0;
	c->reply_present = false;
}

int rpcrdma1_chunks_add_read(struct rpcrdma1_chunks *c, uint32_t position,
			     const struct rpcrdma1_segment *seg)
{
	if (c->nreads >= RPCRDMA1_MAX_READ_SEGS)
		return -E2BIG;
	c->reads[c->nreads].position = position;
	c->reads[c->nreads].seg = *seg;
	c->nreads++;
	return 0;
}

int rpcrdma1_chunks_add_write_chunk(struct rpcrdma1_chunks *c)
{
	if (c->nwrites >= RPCRDMA1_MAX_WRITE_CHUNKS)
		return -E2BIG;
	c->writes[c->nwrites].first = c->nwsegs;
	c->writes[c->nwrites].nsegs = 0;
	c->nwrites++;
	return 0;
}

int rpcrdma1_chunks_add_write_seg(struct rpcrdma1_chunks *c, const struct rpcrdma1_segment *seg)
{
	if (c->nwrites == 0)
		return -EINVAL;
	struct rpcrdma1_write_chunk *w = &c->writes[c->nwrites - 1];
	/* Only the last chunk grows, so its segments stay adjacent. */
	if (w->first + w->nsegs != c->nwsegs)
		return -EINVAL;
	if (c->nwsegs >= RPCRDMA1_MAX_WRITE_SEGS)
		return -E2BIG;
	c->wsegs[c->nwsegs++] = *seg;
	w->nsegs++;
	return 0;
}

int rpcrdma1_chunks_add_reply_seg(struct rpcrdma1_chunks *c, const struct rpcrdma1_segment *seg)
{
	if (c->nreply >= RPCRDMA1_MAX_REPLY_SEGS)
		return -E2BIG;
	c->reply[c->nreply++] = *seg;
	c->reply_present = true;
	return 0;
}

/* ---- checks a responder runs before acting on chunks ---- */

int rpcrdma1_read_chunk(const struct rpcrdma1_chunks *c, uint32_t start, uint32_t *position,
			uint32_t *nsegs, uint64_t *length)
{
	if (start >= c->nreads || c->nreads > RPCRDMA1_MAX_READ_SEGS)
		return -ENOENT;
	uint32_t pos = c->reads[start].position;
	uint32_t i = start;
	uint64_t len = 0;
	/* RFC 8166 §3.4.5: the segments of one Read chunk share a position. */
	while (i < c->nreads && c->reads[i].position == pos) {
		len += c->reads[i].seg.length; /* <= 64 x 2^32: no overflow */
		i++;
	}
	*position = pos;
	*nsegs = i - start;
	*length = len;
	return 0;
}

int rpcrdma1_check_read_list(const struct rpcrdma1_chunks *c, uint32_t *nchunks)
{
	uint32_t chunks = 0;

	if (c->nreads > RPCRDMA1_MAX_READ_SEGS)
		return -EINVAL;
	for (uint32_t i = 0; i < c->nreads; i++) {
		uint32_t pos = c->reads[i].position;
		/* XDR alignment (RFC 4506 §3, RFC 8166 §3.4.5, §3.4.7). */
		if (pos & 3u)
			return -EINVAL;
		if (i > 0 && pos == c->reads[i - 1].position)
			continue; /* same chunk, adjacent */
		/* A new chunk starts here: its position must not belong to an
		 * earlier chunk (segments of a chunk are adjacent, §4.3.1). */
		for (uint32_t j = 0; j < i; j++)
			if (c->reads[j].position == pos)
				return -EINVAL;
		chunks++;
	}
	if (nchunks)
		*nchunks = chunks;
	return 0;
}

int rpcrdma1_check_call(const struct rpcrdma1_hdr *h)
{
	const struct rpcrdma1_chunks *c = &h->chunks;
	int rc = rpcrdma1_check_read_list(c, NULL);
	if (rc)
		return rc;

	switch (h->proc) {
	case RPCRDMA1_NOMSG:
		/* RFC 8166 §3.5.3.1 Long Call: the whole RPC call is the
		 * Position Zero Read chunk, first in the Read list. */
		if (c->nreads == 0 || c->reads[0].position != 0)
			return -EINVAL;
		return 0;
	case RPCRDMA1_MSG:
	case RPCRDMA1_MSGP:
		/* The call is inline; position 0 would replace it. */
		for (uint32_t i = 0; i < c->nreads; i++)
			if (c->reads[i].position == 0)
				return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

int rpcrdma1_check_reply(const struct rpcrdma1_hdr *h)
{
	const struct rpcrdma1_chunks *c = &h->chunks;
	uint64_t written, reply;

	if (h->proc == RPCRDMA1_ERROR)
		return 0;
	if (h->proc != RPCRDMA1_MSG && h->proc != RPCRDMA1_NOMSG)
		return -EINVAL;
	if (c->nreads)
		return -EINVAL;
	int rc = rpcrdma1_write_list_length(c, &written);
	if (!rc)
		rc = rpcrdma1_reply_chunk_length(c, &reply);
	if (rc)
		return -EINVAL;
	(void)written; /* Write chunks may carry data with either form */
	if (h->proc == RPCRDMA1_MSG)
		return reply == 0 ? 0 : -EINVAL;
	/* RFC 8166 §3.5.3.2 Long Reply: the rest of the reply (what the
	 * Write chunks do not carry, §3.4.6) is in the Reply chunk. Linux
	 * svc_rdma_sendto fills the Write list and answers RDMA_NOMSG
	 * whenever a Reply chunk was offered. */
	return reply != 0 ? 0 : -EINVAL;
}

int rpcrdma1_write_chunk_length(const struct rpcrdma1_chunks *c, uint32_t i, uint64_t *length)
{
	if (i >= c->nwrites || c->nwrites > RPCRDMA1_MAX_WRITE_CHUNKS)
		return -ENOENT;
	const struct rpcrdma1_write_chunk *w = &c->writes[i];
	if (c->nwsegs > RPCRDMA1_MAX_WRITE_SEGS || w->first > c->nwsegs ||
	    w->nsegs > c->nwsegs - w->first)
		return -EINVAL;
	uint64_t len = 0;
	for (uint32_t k = 0; k < w->nsegs; k++)
		len += c->wsegs[w->first + k].length;
	*length = len;
	return 0;
}

int rpcrdma1_write_list_length(const struct rpcrdma1_chunks *c, uint64_t *length)
{
	uint64_t total = 0;
	for (uint32_t i = 0; i < c->nwrites; i++) {
		uint64_t len;
		int rc = rpcrdma1_write_chunk_length(c, i, &len);
		if (rc)
			return rc;
		total += len;
	}
	*length = total;
	return 0;
}

int rpcrdma1_reply_chunk_length(const struct rpcrdma1_chunks *c, uint64_t *length)
{
	if (c->nreply > RPCRDMA1_MAX_REPLY_SEGS || (!c->reply_present && c->nreply))
		return -EINVAL;
	uint64_t len = 0;
	for (uint32_t k = 0; k < c->nreply; k++)
		len += c->reply[k].length;
	*length = len;
	return 0;
}

/* Rewrites @segs' lengths to describe @bytes written into them in order. */
static int set_written(struct rpcrdma1_segment *segs, uint32_t nsegs, uint64_t bytes)
{
	uint64_t offered = 0;
	for (uint32_t k = 0; k < nsegs; k++)
		offered += segs[k].length;
	if (bytes > offered)
		return -EMSGSIZE;
	for (uint32_t k = 0; k < nsegs; k++) {
		uint32_t n = bytes < segs[k].length ? (uint32_t)bytes : segs[k].length;
		segs[k].length = n;
		bytes -= n;
	}
	return 0;
}

int rpcrdma1_write_chunk_set_written(struct rpcrdma1_chunks *c, uint32_t i, uint64_t bytes)
{
	uint64_t unused;
	int rc = rpcrdma1_write_chunk_length(c, i, &unused);
	if (rc)
		return rc;
	return set_written(&c->wsegs[c->writes[i].first], c->writes[i].nsegs, bytes);
}

int rpcrdma1_reply_chunk_set_written(struct rpcrdma1_chunks *c, uint64_t bytes)
{
	uint64_t unused;
	int rc = rpcrdma1_reply_chunk_length(c, &unused);
	if (rc)
		return rc;
	return set_written(c->reply, c->nreply, bytes);
}
