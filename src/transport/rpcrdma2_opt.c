// SPDX-License-Identifier: MIT
/*
 * Our Version Two optional messages' rdma_optinfo (docs/rpcrdma2-extensions.md).
 * The XDR (draft-ietf-nfsv4-rpcrdma-version-two-07 §5.1 for the property
 * list, ours for the pull completion):
 *
 *   struct rpcrdma2_propval { uint32 rdma_which; opaque rdma_data<>; };
 *   typedef rpcrdma2_propval rpcrdma2_propset<>;     (opttype PROPS)
 *   typedef uint32 rpcrdma2_pull_done_xid;           (opttype PULL_DONE)
 *
 * Each known property's rdma_data holds one uint32 (an XDR bool for ours)
 * or nothing (its default). The input is hostile: the entry count is
 * bounded and checked by division against the bytes left, every value
 * length against the bytes left, before anything is read.
 */
#include "transport/rpcrdma2_opt.h"

#include <errno.h>
#include <string.h>

#include "rpcrdma/xdr.h"
#include "xdr/xdr_internal.h"

/* The properties we know, in the order we encode them. */
static const struct prop_desc {
	uint32_t id;
	uint32_t flag;
	uint32_t def;
	bool is_bool;
} known[] = {
    {RPCRDMA2_PROP_MAX_SEND_SIZE, RPCRDMA2_PROPF_MAX_SEND_SIZE, RPCRDMA2_PROP_DEFAULT_SEND_SIZE,
     false},
    {RPCRDMA2_PROP_RECV_BUF_SIZE, RPCRDMA2_PROPF_RECV_BUF_SIZE, RPCRDMA2_PROP_DEFAULT_RECV_SIZE,
     false},
    {RPCRDMA2_PROP_MAX_SEG_SIZE, RPCRDMA2_PROPF_MAX_SEG_SIZE, RPCRDMA2_PROP_DEFAULT_SEG_SIZE,
     false},
    {RPCRDMA2_PROP_MAX_SEG_COUNT, RPCRDMA2_PROPF_MAX_SEG_COUNT, RPCRDMA2_PROP_DEFAULT_SEG_COUNT,
     false},
    {RPCRDMA2_PROP_REVERSE_DIR, RPCRDMA2_PROPF_REVERSE_DIR, RPCRDMA2_RVRSDIR_NONE, false},
    {RPCRDMA2_PROP_RESP_READ, RPCRDMA2_PROPF_RESP_READ, 0, true},
    {RPCRDMA2_PROP_REMOTE_INV, RPCRDMA2_PROPF_REMOTE_INV, 0, true},
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

/* id, length word, one uint32 */
#define PROPVAL_SIZE 12u
/* id, length word (an empty value): the smallest entry */
#define PROPVAL_MIN_SIZE 8u

static void set_value(struct rpcrdma2_props *p, size_t k, uint32_t v)
{
	switch (known[k].flag) {
	case RPCRDMA2_PROPF_MAX_SEND_SIZE:
		p->max_send_size = v;
		break;
	case RPCRDMA2_PROPF_RECV_BUF_SIZE:
		p->recv_buf_size = v;
		break;
	case RPCRDMA2_PROPF_MAX_SEG_SIZE:
		p->max_seg_size = v;
		break;
	case RPCRDMA2_PROPF_MAX_SEG_COUNT:
		p->max_seg_count = v;
		break;
	case RPCRDMA2_PROPF_REVERSE_DIR:
		p->reverse_dir = v;
		break;
	case RPCRDMA2_PROPF_RESP_READ:
		p->resp_read = v != 0;
		break;
	default: /* RPCRDMA2_PROPF_REMOTE_INV */
		p->remote_inv = v != 0;
		break;
	}
}

static uint32_t get_value(const struct rpcrdma2_props *p, size_t k)
{
	switch (known[k].flag) {
	case RPCRDMA2_PROPF_MAX_SEND_SIZE:
		return p->max_send_size;
	case RPCRDMA2_PROPF_RECV_BUF_SIZE:
		return p->recv_buf_size;
	case RPCRDMA2_PROPF_MAX_SEG_SIZE:
		return p->max_seg_size;
	case RPCRDMA2_PROPF_MAX_SEG_COUNT:
		return p->max_seg_count;
	case RPCRDMA2_PROPF_REVERSE_DIR:
		return p->reverse_dir;
	case RPCRDMA2_PROPF_RESP_READ:
		return p->resp_read;
	default: /* RPCRDMA2_PROPF_REMOTE_INV */
		return p->remote_inv;
	}
}

void rpcrdma2_props_init(struct rpcrdma2_props *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t k = 0; k < NKNOWN; k++)
		set_value(p, k, known[k].def);
}

static size_t find_known(uint32_t id)
{
	for (size_t k = 0; k < NKNOWN; k++)
		if (known[k].id == id)
			return k;
	return NKNOWN;
}

static inline uint32_t xdr_pad(uint32_t len)
{
	return (4u - (len & 3u)) & 3u;
}

/* One rpcrdma2_propval at the cursor, over the flat buffer @base. */
static int decode_propval(struct rpcrdma_xdr *x, const uint8_t *base, struct rpcrdma2_props *p)
{
	uint32_t id, vlen;
	int rc = xdri_get_u32_inline(x, &id);
	if (!rc)
		rc = xdri_get_u32_inline(x, &vlen);
	if (rc)
		return rc;
	size_t left = x->len - x->pos;
	if (vlen > left || xdr_pad(vlen) > left - vlen)
		return -EOVERFLOW;
	const uint8_t *v = base + x->pos;
	/* RFC 4506 §4.10: the padding is zero. */
	for (uint32_t i = 0; i < xdr_pad(vlen); i++)
		if (v[vlen + i])
			return -EINVAL;

	size_t k = find_known(id);
	if (k == NKNOWN) {
		p->nunknown++; /* version-two-07 §5.1: not processed, no error */
	} else {
		if (p->present & known[k].flag)
			return -EINVAL;      /* the same property twice: which one holds? */
		uint32_t val = known[k].def; /* empty: the default (§5.1) */
		if (vlen != 0 && vlen != 4)
			return -EINVAL;
		if (vlen == 4)
			val = get_be32(v);
		if (known[k].is_bool && val > 1)
			return -EINVAL; /* RFC 4506 §4.4 */
		set_value(p, k, val);
		p->present |= known[k].flag;
	}
	return rpcrdma_xdr_setpos(x, x->pos + vlen + xdr_pad(vlen));
}

int rpcrdma2_props_decode(const void *optinfo, size_t len, struct rpcrdma2_props *out)
{
	struct rpcrdma2_props p;
	struct rpcrdma_xdr x;
	uint32_t n;

	if (!optinfo)
		len = 0;
	rpcrdma2_props_init(&p);
	rpcrdma_xdr_init(&x, (void *)optinfo, len, RPCRDMA_XDR_DECODE);
	int rc = rpcrdma_xdr_get_count(&x, RPCRDMA2_PROPS_MAX, PROPVAL_MIN_SIZE, &n);
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = decode_propval(&x, optinfo, &p);
	if (rc)
		return rc;
	if (rpcrdma_xdr_getpos(&x) != len)
		return -EINVAL; /* optinfo is exactly one rpcrdma2_propset */
	*out = p;
	return 0;
}

size_t rpcrdma2_props_size(const struct rpcrdma2_props *p)
{
	size_t n = 4;
	for (size_t k = 0; k < NKNOWN; k++)
		if (p->present & known[k].flag)
			n += PROPVAL_SIZE;
	return n;
}

int rpcrdma2_props_encode(void *buf, size_t room, const struct rpcrdma2_props *p, uint32_t *len)
{
	if (p->present & ~RPCRDMA2_PROPF_ALL)
		return -EINVAL;
	size_t need = rpcrdma2_props_size(p);
	if (!buf || need > room)
		return -EMSGSIZE;
	uint8_t *o = buf;
	put_be32(o, (uint32_t)((need - 4) / PROPVAL_SIZE));
	o += 4;
	for (size_t k = 0; k < NKNOWN; k++) {
		if (!(p->present & known[k].flag))
			continue;
		put_be32(o, known[k].id);
		put_be32(o + 4, 4);
		put_be32(o + 8, get_value(p, k));
		o += PROPVAL_SIZE;
	}
	*len = (uint32_t)need;
	return 0;
}

int rpcrdma2_pull_done_decode(const void *optinfo, size_t len, uint32_t *xid)
{
	if (!optinfo || len < RPCRDMA2_PULL_DONE_SIZE)
		return -EBADMSG;
	if (len > RPCRDMA2_PULL_DONE_SIZE)
		return -EINVAL;
	*xid = get_be32(optinfo);
	return 0;
}

int rpcrdma2_pull_done_encode(void *buf, size_t room, uint32_t xid, uint32_t *len)
{
	if (!buf || room < RPCRDMA2_PULL_DONE_SIZE)
		return -EMSGSIZE;
	put_be32(buf, xid);
	*len = RPCRDMA2_PULL_DONE_SIZE;
	return 0;
}

bool rpcrdma2_opttype_known(uint32_t opttype)
{
	return opttype == RPCRDMA2_OPTTYPE_PROPS || opttype == RPCRDMA2_OPTTYPE_PULL_DONE;
}
