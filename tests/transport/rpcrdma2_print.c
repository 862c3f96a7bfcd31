// SPDX-License-Identifier: MIT
/* Version Two header printer (see rpcrdma2_print.h). */
#include "rpcrdma2_print.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"

static const char *proc_name(uint32_t proc)
{
	switch (proc) {
	case RPCRDMA2_MSG:
		return "MSG";
	case RPCRDMA2_NOMSG:
		return "NOMSG";
	case RPCRDMA2_ERROR:
		return "ERROR";
	case RPCRDMA2_OPTIONAL:
		return "OPTIONAL";
	default:
		return "unknown";
	}
}

static const char *dir_name(uint32_t d)
{
	return d == RPCRDMA2_CALL ? "CALL" : d == RPCRDMA2_REPLY ? "REPLY" : "invalid";
}

static const char *err_name(uint32_t e)
{
	switch (e) {
	case RPCRDMA2_ERR_VERS:
		return "ERR_VERS";
	case RPCRDMA2_ERR_BAD_HEADER:
		return "ERR_BAD_HEADER";
	case RPCRDMA2_ERR_INVAL_OPTION:
		return "ERR_INVAL_OPTION";
	default:
		return "unknown";
	}
}

static const char *errno_name(int rc)
{
	switch (-rc) {
	case EBADMSG:
		return "EBADMSG";
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case E2BIG:
		return "E2BIG";
	case EOVERFLOW:
		return "EOVERFLOW";
	case EINVAL:
		return "EINVAL";
	default:
		return "other";
	}
}

static void print_seg(FILE *f, const char *what, const struct rpcrdma1_segment *s)
{
	fprintf(f, "%s handle 0x%08" PRIx32 " length %" PRIu32 " offset 0x%016" PRIx64 "\n", what,
		s->handle, s->length, s->offset);
}

static void print_chunks(FILE *f, const struct rpcrdma1_chunks *c)
{
	char what[48];
	for (uint32_t i = 0; i < c->nreads; i++) {
		snprintf(what, sizeof(what), "read %" PRIu32 " position %" PRIu32, i,
			 c->reads[i].position);
		print_seg(f, what, &c->reads[i].seg);
	}
	for (uint32_t i = 0; i < c->nwrites; i++) {
		const struct rpcrdma1_write_chunk *w = &c->writes[i];
		fprintf(f, "write %" PRIu32 " segments %" PRIu32 "\n", i, w->nsegs);
		for (uint32_t k = 0; k < w->nsegs; k++) {
			snprintf(what, sizeof(what), "write %" PRIu32 ".%" PRIu32, i, k);
			print_seg(f, what, &c->wsegs[w->first + k]);
		}
	}
	if (c->reply_present) {
		fprintf(f, "reply segments %" PRIu32 "\n", c->nreply);
		for (uint32_t k = 0; k < c->nreply; k++) {
			snprintf(what, sizeof(what), "reply %" PRIu32, k);
			print_seg(f, what, &c->reply[k]);
		}
	}
}

static void print_props(FILE *f, const uint8_t *info, size_t len)
{
	struct rpcrdma2_props p;
	int rc = rpcrdma2_props_decode(info, len, &p);
	if (rc) {
		fprintf(f, "props error %s\n", errno_name(rc));
		return;
	}
	if (p.present & RPCRDMA2_PROPF_MAX_SEND_SIZE)
		fprintf(f, "prop max_send_size %" PRIu32 "\n", p.max_send_size);
	if (p.present & RPCRDMA2_PROPF_RECV_BUF_SIZE)
		fprintf(f, "prop recv_buf_size %" PRIu32 "\n", p.recv_buf_size);
	if (p.present & RPCRDMA2_PROPF_MAX_SEG_SIZE)
		fprintf(f, "prop max_seg_size %" PRIu32 "\n", p.max_seg_size);
	if (p.present & RPCRDMA2_PROPF_MAX_SEG_COUNT)
		fprintf(f, "prop max_seg_count %" PRIu32 "\n", p.max_seg_count);
	if (p.present & RPCRDMA2_PROPF_REVERSE_DIR)
		fprintf(f, "prop reverse_dir %" PRIu32 "\n", p.reverse_dir);
	if (p.present & RPCRDMA2_PROPF_RESP_READ)
		fprintf(f, "prop resp_read %d\n", p.resp_read);
	if (p.present & RPCRDMA2_PROPF_REMOTE_INV)
		fprintf(f, "prop remote_inv %d\n", p.remote_inv);
	if (p.nunknown)
		fprintf(f, "prop unknown %" PRIu32 "\n", p.nunknown);
}

static void print_optional(FILE *f, const struct rpcrdma2_hdr *h, const uint8_t *buf)
{
	fprintf(f, "optdir %s\n", dir_name(h->optdir));
	fprintf(f, "opttype 0x%08" PRIx32 "\n", h->opttype);
	fprintf(f, "optinfo_len %" PRIu32 "\n", h->optinfo_len);
	const uint8_t *info = buf + h->optinfo_off;
	if (h->opttype == RPCRDMA2_OPTTYPE_PROPS) {
		print_props(f, info, h->optinfo_len);
	} else if (h->opttype == RPCRDMA2_OPTTYPE_PULL_DONE) {
		uint32_t xid;
		if (rpcrdma2_pull_done_decode(info, h->optinfo_len, &xid) == 0)
			fprintf(f, "pull_done xid 0x%08" PRIx32 "\n", xid);
		else
			fprintf(f, "pull_done error\n");
	}
}

int rpcrdma2_hdr_print(FILE *f, const void *buf, size_t len)
{
	struct rpcrdma2_hdr *h = malloc(sizeof(*h)); /* ~3 KiB of chunk arrays */
	if (!h)
		return -ENOMEM;
	int rc = rpcrdma2_decode_buf(buf, len, h);
	if (len >= RPCRDMA2_FIXED_SIZE) {
		fprintf(f, "xid 0x%08" PRIx32 "\n", h->xid);
		fprintf(f, "vers %" PRIu32 "\n", h->vers);
		fprintf(f, "credit %" PRIu32 "\n", h->credit);
		fprintf(f, "proc %s\n", proc_name(h->proc));
	}
	if (rc) {
		fprintf(f, "error %s\n", errno_name(rc));
		free(h);
		return rc;
	}
	switch (h->proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		fprintf(f, "direction %s\n", dir_name(h->direction));
		print_chunks(f, &h->chunks);
		break;
	case RPCRDMA2_ERROR:
		fprintf(f, "err %s\n", err_name(h->err));
		if (h->err == RPCRDMA2_ERR_VERS)
			fprintf(f, "vers_range %" PRIu32 "..%" PRIu32 "\n", h->vers_low,
				h->vers_high);
		break;
	default:
		print_optional(f, h, buf);
		break;
	}
	fprintf(f, "hdr_len %zu\n", h->hdr_len);
	free(h);
	return 0;
}
