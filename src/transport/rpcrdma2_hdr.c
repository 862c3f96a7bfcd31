// SPDX-License-Identifier: MIT
/*
 * RPC-over-RDMA Version Two transport header codec. The XDR it implements
 * (the 003_ draft §4.2, transcribed in docs/design.md):
 *
 *   struct rpcrdma2_chunk_lists { msg_type rdma_direction;
 *                                 <Version One's three chunk lists> };
 *   union rpcrdma2_error switch (rpcrdma2_errcode rdma_err) {
 *           case ERR_VERS: uint32 rdma_vers_low; uint32 rdma_vers_high;
 *           case ERR_BAD_HEADER: void; case ERR_INVAL_OPTION: void; };
 *   struct rpcrdma2_optional { msg_type rdma_optdir; uint32 rdma_opttype;
 *                              opaque rdma_optinfo<>; };
 *   union rpcrdma2_body switch (rpcrdma2_proc rdma_proc) {
 *           case MSG, NOMSG: rpcrdma2_chunk_lists;
 *           case ERROR: rpcrdma2_error; case OPTIONAL: rpcrdma2_optional; };
 *   struct rpcrdma2_xprt_hdr { uint32 xid, vers, credit; rpcrdma2_body; };
 *
 * The fixed words and the chunk lists are Version One's, coded by
 * chunks_xdr.h. Every received header is hostile: counts and the optinfo
 * length are checked against the bytes that remain before anything is
 * read or stored (the CVE-2024-53151 lesson).
 */
#include "transport/rpcrdma2_hdr.h"

#include <errno.h>
#include <string.h>

#include "transport/chunks_xdr.h"
#include "xdr/xdr_internal.h"

/* RFC 5531 §9 msg_type as an XDR enum: CALL or REPLY only. */
static inline bool is_msg_type(uint32_t v)
{
	return v == RPCRDMA2_CALL || v == RPCRDMA2_REPLY;
}

static inline uint32_t xdr_pad(uint32_t len)
{
	return (4u - (len & 3u)) & 3u;
}

/* ---- decoding ---- */

/*
 * rdma_optinfo<>: the length is checked against the bytes that remain
 * before the cursor moves; the bytes themselves are skipped (the caller
 * reads them at h->optinfo_off). RFC 4506 §4.10: the padding is zero; we
 * refuse other padding so that every header we accept re-encodes to the
 * same bytes.
 */
static int decode_optinfo(struct rpcrdma_xdr *x, struct rpcrdma2_hdr *h, size_t start_pos)
{
	uint32_t len;
	int rc = xdri_get_u32_inline(x, &len);
	if (rc)
		return rc;
	size_t left = x->len - x->pos;
	if (len > left || xdr_pad(len) > left - len)
		return -EOVERFLOW;
	h->optinfo_len = len;
	h->optinfo_off = x->pos - start_pos;
	rc = rpcrdma_xdr_setpos(x, x->pos + (len & ~3u));
	if (rc)
		return rc;
	if (len & 3u) {
		uint32_t last;
		rc = xdri_get_u32_inline(x, &last);
		if (rc)
			return rc;
		/* The low-order (last on the wire) pad bytes of the final word. */
		uint32_t padmask = (1u << (8u * xdr_pad(len))) - 1u;
		if (last & padmask)
			return -EINVAL;
	}
	return 0;
}

/* RFC 8166 §4.5.1, kept by the draft (§4.2.3): an ERR_VERS from a peer of
 * another version is readable whatever its rdma_vers. */
static int decode_other_version(struct rpcrdma_xdr *x, struct rpcrdma2_hdr *h)
{
	uint32_t err, low, high;

	if (h->proc != RPCRDMA2_ERROR)
		return -EPROTONOSUPPORT;
	if (xdri_get_u32_inline(x, &err) || err != RPCRDMA2_ERR_VERS ||
	    xdri_get_u32_inline(x, &low) || xdri_get_u32_inline(x, &high))
		return -EPROTONOSUPPORT; /* the caller restores the cursor */
	h->err = err;
	h->vers_low = low;
	h->vers_high = high;
	return 0;
}

static int decode_error(struct rpcrdma_xdr *x, struct rpcrdma2_hdr *h)
{
	int rc = xdri_get_u32_inline(x, &h->err);
	if (rc)
		return rc;
	switch (h->err) {
	case RPCRDMA2_ERR_VERS:
		rc = xdri_get_u32_inline(x, &h->vers_low);
		if (!rc)
			rc = xdri_get_u32_inline(x, &h->vers_high);
		return rc;
	case RPCRDMA2_ERR_BAD_HEADER:
	case RPCRDMA2_ERR_INVAL_OPTION:
		return 0;
	default:
		/* A union discriminant with no arm (RFC 4506 §4.15). */
		return -EINVAL;
	}
}

static int decode_body(struct rpcrdma_xdr *x, struct rpcrdma2_hdr *h, size_t start_pos)
{
	int rc = chunks_xdr_get_fixed(x, &h->xid, &h->vers, &h->credit, &h->proc);
	if (rc)
		return rc;
	if (h->vers != RPCRDMA2_VERSION)
		return decode_other_version(x, h);

	switch (h->proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		rc = xdri_get_u32_inline(x, &h->direction);
		if (rc)
			return rc;
		if (!is_msg_type(h->direction))
			return -EINVAL;
		return chunks_xdr_decode(x, &h->chunks);
	case RPCRDMA2_ERROR:
		return decode_error(x, h);
	case RPCRDMA2_OPTIONAL:
		rc = xdri_get_u32_inline(x, &h->optdir);
		if (rc)
			return rc;
		if (!is_msg_type(h->optdir))
			return -EINVAL;
		rc = xdri_get_u32_inline(x, &h->opttype);
		if (rc)
			return rc;
		return decode_optinfo(x, h, start_pos);
	default:
		return -EOPNOTSUPP;
	}
}

int rpcrdma2_decode(struct rpcrdma_xdr *x, struct rpcrdma2_hdr *h)
{
	struct xdri_mark start = xdri_mark(x);

	/* Only the counts of the chunk arrays: they are filled up to them. */
	h->xid = h->vers = h->credit = h->proc = 0;
	h->direction = h->err = h->vers_low = h->vers_high = 0;
	h->optdir = h->opttype = h->optinfo_len = 0;
	h->optinfo_off = 0;
	h->hdr_len = 0;
	rpcrdma1_chunks_init(&h->chunks);

	int rc = decode_body(x, h, start.pos);
	if (rc) {
		xdri_restore(x, start);
		return rc;
	}
	h->hdr_len = x->pos - start.pos;
	return 0;
}

int rpcrdma2_decode_buf(const void *buf, size_t len, struct rpcrdma2_hdr *h)
{
	struct rpcrdma_xdr x;
	/* A decode cursor only reads; the cast drops const for the shared
	 * cursor type. Decoding is not per-call hot in Version Two yet, so
	 * the ordinary initialiser is fine. */
	rpcrdma_xdr_init(&x, (void *)buf, buf ? len : 0, RPCRDMA_XDR_DECODE);
	return rpcrdma2_decode(&x, h);
}

uint32_t rpcrdma2_error_reply(int rc)
{
	if (rc == 0)
		return 0;
	if (rc == -EPROTONOSUPPORT)
		return RPCRDMA2_ERR_VERS;
	/* Every other header we cannot parse or use, and a direction
	 * mismatch (§4.2.2): the draft has no finer code than BAD_HEADER. */
	return RPCRDMA2_ERR_BAD_HEADER;
}

int rpcrdma2_check_direction(const struct rpcrdma2_hdr *h, uint32_t rpc_msg_type)
{
	uint32_t dir;

	switch (h->proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		dir = h->direction;
		break;
	case RPCRDMA2_OPTIONAL:
		dir = h->optdir;
		break;
	default:
		return -EINVAL;
	}
	return dir == rpc_msg_type ? 0 : -EPROTO;
}

int rpcrdma2_payload_msg_type(const void *payload, size_t len, uint32_t *msg_type)
{
	if (!payload || len < 8)
		return -EBADMSG;
	uint32_t v = get_be32((const uint8_t *)payload + 4);
	if (!is_msg_type(v))
		return -EINVAL;
	*msg_type = v;
	return 0;
}

/* ---- sizes ---- */

/* Everything of a header but its chunk lists and optinfo bytes, so the
 * per-procedure helpers need not build a whole struct rpcrdma2_hdr. */
struct hdr_words {
	uint32_t xid, vers, credit, proc, direction, err, vers_low, vers_high;
	uint32_t optdir, opttype, optinfo_len;
};

/* Bytes the header takes, or 0 if it is not encodable (@have_optinfo:
 * the optinfo bytes were given, needed when optinfo_len is not 0). */
static size_t words_size(const struct hdr_words *w, const struct rpcrdma1_chunks *c,
			 bool have_optinfo)
{
	switch (w->proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		if (!is_msg_type(w->direction) || (c && !chunks_xdr_valid(c)))
			return 0;
		return RPCRDMA2_FIXED_SIZE + 4 + chunks_xdr_size_valid(c);
	case RPCRDMA2_ERROR:
		if (w->err == RPCRDMA2_ERR_VERS)
			return RPCRDMA2_ERR_VERS_SIZE;
		if (w->err == RPCRDMA2_ERR_BAD_HEADER || w->err == RPCRDMA2_ERR_INVAL_OPTION)
			return RPCRDMA2_ERR_SIZE;
		return 0;
	case RPCRDMA2_OPTIONAL:
		if (!is_msg_type(w->optdir) || (w->optinfo_len && !have_optinfo))
			return 0;
		return RPCRDMA2_MIN_OPT_SIZE + (size_t)w->optinfo_len + xdr_pad(w->optinfo_len);
	default:
		return 0;
	}
}

size_t rpcrdma2_hdr_size(const struct rpcrdma2_hdr *h)
{
	const struct hdr_words w = {.proc = h->proc,
				    .direction = h->direction,
				    .err = h->err,
				    .optdir = h->optdir,
				    .optinfo_len = h->optinfo_len};
	/* The size depends on the optinfo length only, not its bytes. */
	return words_size(&w, &h->chunks, true);
}

/* ---- encoding ---- */

static int put_optinfo(struct rpcrdma_xdr *x, const void *optinfo, uint32_t len)
{
	static const uint8_t zero[4];
	int rc = xdri_put_u32_inline(x, len);
	if (!rc && len) {
		uint8_t *p = chunks_xdr_take(x, len);
		if (p)
			memcpy(p, optinfo, len);
		else
			rc = rpcrdma_xdri_put_slow(x, optinfo, len);
	}
	if (!rc && xdr_pad(len))
		rc = rpcrdma_xdri_put_slow(x, zero, xdr_pad(len));
	return rc;
}

/* Checks the size first, so a header that does not fit writes nothing. */
static int encode_words(struct rpcrdma_xdr *x, const struct hdr_words *w,
			const struct rpcrdma1_chunks *c, const void *optinfo)
{
	size_t need = words_size(w, c, optinfo != NULL);
	if (need == 0)
		return -EINVAL;
	if (need > x->len - x->pos)
		return -EMSGSIZE;

	struct xdri_mark start = xdri_mark(x);
	int rc = chunks_xdr_put_fixed(x, w->xid, w->vers, w->credit, w->proc);
	switch (w->proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		if (!rc)
			rc = xdri_put_u32_inline(x, w->direction);
		if (!rc)
			rc = chunks_xdr_encode(x, c);
		break;
	case RPCRDMA2_ERROR:
		if (!rc)
			rc = xdri_put_u32_inline(x, w->err);
		if (!rc && w->err == RPCRDMA2_ERR_VERS) {
			rc = xdri_put_u32_inline(x, w->vers_low);
			if (!rc)
				rc = xdri_put_u32_inline(x, w->vers_high);
		}
		break;
	default: /* RPCRDMA2_OPTIONAL: words_size() refused the rest */
		if (!rc)
			rc = xdri_put_u32_inline(x, w->optdir);
		if (!rc)
			rc = xdri_put_u32_inline(x, w->opttype);
		if (!rc)
			rc = put_optinfo(x, optinfo, w->optinfo_len);
		break;
	}
	if (rc)
		xdri_restore(x, start); /* not reached after the size check */
	return rc;
}

int rpcrdma2_encode(struct rpcrdma_xdr *x, const struct rpcrdma2_hdr *h, const void *optinfo)
{
	const struct hdr_words w = {h->xid,       h->vers,    h->credit,     h->proc,
				    h->direction, h->err,     h->vers_low,   h->vers_high,
				    h->optdir,    h->opttype, h->optinfo_len};
	return encode_words(x, &w, &h->chunks, optinfo);
}

int rpcrdma2_encode_msg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t direction,
			const struct rpcrdma1_chunks *c)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA2_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA2_MSG,
				    .direction = direction};
	return encode_words(x, &w, c, NULL);
}

int rpcrdma2_encode_nomsg(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t direction,
			  const struct rpcrdma1_chunks *c)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA2_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA2_NOMSG,
				    .direction = direction};
	return encode_words(x, &w, c, NULL);
}

int rpcrdma2_encode_err_vers(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t low,
			     uint32_t high)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA2_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA2_ERROR,
				    .err = RPCRDMA2_ERR_VERS,
				    .vers_low = low,
				    .vers_high = high};
	return encode_words(x, &w, NULL, NULL);
}

int rpcrdma2_encode_error(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t err)
{
	if (err != RPCRDMA2_ERR_BAD_HEADER && err != RPCRDMA2_ERR_INVAL_OPTION)
		return -EINVAL;
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA2_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA2_ERROR,
				    .err = err};
	return encode_words(x, &w, NULL, NULL);
}

int rpcrdma2_encode_optional(struct rpcrdma_xdr *x, uint32_t xid, uint32_t credit, uint32_t optdir,
			     uint32_t opttype, const void *optinfo, uint32_t optinfo_len)
{
	const struct hdr_words w = {.xid = xid,
				    .vers = RPCRDMA2_VERSION,
				    .credit = credit,
				    .proc = RPCRDMA2_OPTIONAL,
				    .optdir = optdir,
				    .opttype = opttype,
				    .optinfo_len = optinfo_len};
	return encode_words(x, &w, NULL, optinfo);
}
