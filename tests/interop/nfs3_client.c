/* SPDX-License-Identifier: MIT */
/* Minimal NFSv3 client over hand-built RPC-over-RDMA: see nfs3_client.h. */
#include "nfs3_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One call at a time: the reply and the chunk lists live here. */
static struct iop_reply rep;
static struct rpcrdma1_chunks chunks;
static uint8_t callbuf[IOP_INLINE];

int iop_dbuf_alloc(struct iop_conn *c, struct iop_dbuf *b, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->p = aligned_alloc(4096, (cap + 4095) & ~(size_t)4095);
	IOP_CHECK(b->p);
	b->cap = cap;
	IOP_CHECK(rpcrdma_mr_reg(c->pd, b->p, cap, RPCRDMA_ACCESS_LOCAL_WRITE, &b->mr) == 0);
	return 0;
}

void iop_dbuf_free(struct iop_dbuf *b)
{
	if (b->mr)
		rpcrdma_mr_dereg(b->mr);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static nfs_fh3 fh3(const struct iop_fh *fh)
{
	nfs_fh3 f;

	f.data.data_len = fh->len;
	f.data.data_val = (char *)(uintptr_t)fh->data;
	return f;
}

static const char *proc_name(uint32_t proc)
{
	switch (proc) {
	case NFSPROC3_GETATTR:
		return "GETATTR";
	case NFSPROC3_LOOKUP:
		return "LOOKUP";
	case NFSPROC3_READ:
		return "READ";
	case NFSPROC3_WRITE:
		return "WRITE";
	case NFSPROC3_CREATE:
		return "CREATE";
	case NFSPROC3_REMOVE:
		return "REMOVE";
	case NFSPROC3_FSINFO:
		return "FSINFO";
	case NFSPROC3_READDIRPLUS:
		return "READDIRPLUS";
	case NFSPROC3_COMMIT:
		return "COMMIT";
	}
	return "?";
}

/*
 * Send the call in callbuf (@len bytes, xid @xid) and check the transport
 * and RPC layers of the reply; then decode the nfsstat3. Returns the
 * status (>= 0) with rep.xdrs at the rest of the results, or -1.
 */
static int exchange(struct iop_conn *c, uint32_t proc, uint32_t xid, int len)
{
	nfsstat3 st;

	IOP_CHECK(len > 0);
	if (iop_call(c, callbuf, (uint32_t)len, xid, false, &rep) != 0) {
		fprintf(stderr, "NFSv3 %s: no usable reply\n", proc_name(proc));
		iop_failures++;
		return -1;
	}
	if (rep.hdr.proc == RPCRDMA1_ERROR) {
		fprintf(stderr, "NFSv3 %s: RDMA_ERROR err %u (vers %u..%u)\n", proc_name(proc),
			rep.hdr.err, rep.hdr.vers_low, rep.hdr.vers_high);
		iop_failures++;
		return -1;
	}
	/* RFC 8166 §3.3.1: Linux's server grants a fixed 64. */
	IOP_EXPECT(rep.hdr.credit == 64);
	IOP_CHECK(rep.hdr.proc == RPCRDMA1_MSG);
	/* No Read chunks, no Reply chunk bytes in an RDMA_MSG reply (RFC 8166
	 * §3.4.5, §3.5.3.2). */
	IOP_CHECK(rpcrdma1_check_reply(&rep.hdr) == 0);
	IOP_CHECK(rep.rpc.reply_stat == RPCRDMA_RPC_MSG_ACCEPTED);
	IOP_CHECK(rep.rpc.accept_stat == RPCRDMA_RPC_SUCCESS);
	IOP_CHECK(xdr_nfsstat3(&rep.xdrs, &st));
	return (int)st;
}

/* A call without chunks: the reply must be a plain Send (RFC 8797 §4 lets
 * the server invalidate only an STag the call named). */
static int simple_call(struct iop_conn *c, uint32_t proc, xdrproc_t xargs, void *args)
{
	size_t off;
	uint32_t xid = c->xid++;
	int len = iop_encode_call(c, callbuf, sizeof(callbuf), xid, NULL, NFS_PROGRAM, NFS_V3, proc,
				  xargs, args, &off);
	int st = exchange(c, proc, xid, len);

	if (st >= 0) {
		IOP_EXPECT((rep.msg.wc_flags & RPCRDMA_WC_F_WITH_INV) == 0);
		IOP_EXPECT(rep.hdr.chunks.nwrites == 0 && !rep.hdr.chunks.reply_present);
	}
	return st;
}

int iop_nfs3_getattr(struct iop_conn *c, const struct iop_fh *fh, fattr3 *attr)
{
	GETATTR3args a = {.object = fh3(fh)};
	int st = simple_call(c, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &a);

	if (st == NFS3_OK) {
		IOP_CHECK(xdr_fattr3(&rep.xdrs, attr));
		IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	}
	return st;
}

int iop_nfs3_lookup(struct iop_conn *c, const struct iop_fh *dir, const char *name,
		    struct iop_fh *out, fattr3 *attr)
{
	LOOKUP3args a = {.what = {.dir = fh3(dir), .name = (char *)(uintptr_t)name}};
	LOOKUP3resok ok;
	post_op_attr dattr;
	int st = simple_call(c, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a);

	if (st == NFS3_OK) {
		memset(&ok, 0, sizeof(ok));
		IOP_CHECK(xdr_LOOKUP3resok(&rep.xdrs, &ok));
		if (ok.object.data.data_len > NFS3_FHSIZE) {
			xdr_free((xdrproc_t)xdr_LOOKUP3resok, (char *)&ok);
			IOP_CHECK(0);
		}
		out->len = ok.object.data.data_len;
		memcpy(out->data, ok.object.data.data_val, out->len);
		IOP_EXPECT(ok.obj_attributes.attributes_follow);
		if (attr && ok.obj_attributes.attributes_follow)
			*attr = ok.obj_attributes.post_op_attr_u.attributes;
		xdr_free((xdrproc_t)xdr_LOOKUP3resok, (char *)&ok);
		IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	} else if (st > 0) {
		IOP_CHECK(xdr_post_op_attr(&rep.xdrs, &dattr));
	}
	return st;
}

int iop_nfs3_fsinfo(struct iop_conn *c, const struct iop_fh *root, FSINFO3resok *info)
{
	FSINFO3args a = {.fsroot = fh3(root)};
	int st = simple_call(c, NFSPROC3_FSINFO, (xdrproc_t)xdr_FSINFO3args, &a);

	if (st == NFS3_OK) {
		IOP_CHECK(xdr_FSINFO3resok(&rep.xdrs, info));
		IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	}
	return st;
}

int iop_nfs3_create(struct iop_conn *c, const struct iop_fh *dir, const char *name, createmode3 how,
		    uint32_t mode, struct iop_fh *out, fattr3 *attr)
{
	CREATE3args a;
	CREATE3resok ok;
	wcc_data wcc;
	int st;

	IOP_CHECK(how == UNCHECKED || how == GUARDED);
	memset(&a, 0, sizeof(a));
	a.where.dir = fh3(dir);
	a.where.name = (char *)(uintptr_t)name;
	a.how.mode = how;
	/* RFC 1813 §2.6 sattr3: set the mode only; the owner comes from the
	 * credential, times from the server. */
	a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = mode;
	a.how.createhow3_u.obj_attributes.atime.set_it = DONT_CHANGE;
	a.how.createhow3_u.obj_attributes.mtime.set_it = DONT_CHANGE;
	st = simple_call(c, NFSPROC3_CREATE, (xdrproc_t)xdr_CREATE3args, &a);
	if (st == NFS3_OK) {
		memset(&ok, 0, sizeof(ok));
		IOP_CHECK(xdr_CREATE3resok(&rep.xdrs, &ok));
		IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
		/* post_op_fh3 may be absent by the RFC; Linux always sends it,
		 * and the test needs it. */
		if (!ok.obj.handle_follows || ok.obj.post_op_fh3_u.handle.data.data_len == 0 ||
		    ok.obj.post_op_fh3_u.handle.data.data_len > NFS3_FHSIZE) {
			xdr_free((xdrproc_t)xdr_CREATE3resok, (char *)&ok);
			fprintf(stderr, "CREATE %s: no usable handle in the reply\n", name);
			IOP_CHECK(0);
		}
		out->len = ok.obj.post_op_fh3_u.handle.data.data_len;
		memcpy(out->data, ok.obj.post_op_fh3_u.handle.data.data_val, out->len);
		IOP_EXPECT(ok.obj_attributes.attributes_follow);
		if (attr && ok.obj_attributes.attributes_follow)
			*attr = ok.obj_attributes.post_op_attr_u.attributes;
		xdr_free((xdrproc_t)xdr_CREATE3resok, (char *)&ok);
	} else if (st > 0) {
		IOP_CHECK(xdr_wcc_data(&rep.xdrs, &wcc));
		IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	}
	return st;
}

int iop_nfs3_remove(struct iop_conn *c, const struct iop_fh *dir, const char *name)
{
	REMOVE3args a = {.object = {.dir = fh3(dir), .name = (char *)(uintptr_t)name}};
	wcc_data wcc;
	int st = simple_call(c, NFSPROC3_REMOVE, (xdrproc_t)xdr_REMOVE3args, &a);

	/* REMOVE3resok and REMOVE3resfail are both just the directory's
	 * wcc_data. */
	if (st >= 0) {
		IOP_CHECK(xdr_wcc_data(&rep.xdrs, &wcc));
		IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	}
	return st;
}

/* After a reply to a call that carried chunks: RFC 8797 §4 and
 * docs/linux-peer.md: when our private data offered remote invalidation,
 * Linux replies with Send with Invalidate naming the chunk's STag, and our
 * provider must have invalidated it on receipt (RFC 5040 §6.2). When it
 * did not (a device without RPCRDMA_DEV_CAP_REMOTE_INV), the reply must be
 * a plain Send and the STag still ours to invalidate. */
static void expect_remote_inv(const struct iop_conn *c, const struct iop_dbuf *b, uint32_t stag,
			      const char *what)
{
	if (!c->inv_offered) {
		if (rep.msg.wc_flags & RPCRDMA_WC_F_WITH_INV) {
			fprintf(stderr,
				"%s: Send with Invalidate (STag 0x%08x) although our private "
				"data did not offer remote invalidation\n",
				what, rep.msg.inv_stag);
			iop_failures++;
		}
		IOP_EXPECT(rpcrdma_mr_valid(b->mr));
		return;
	}
	if (!(rep.msg.wc_flags & RPCRDMA_WC_F_WITH_INV)) {
		fprintf(stderr, "%s: reply was a plain Send, expected Send with Invalidate\n",
			what);
		iop_failures++;
		return;
	}
	if (rep.msg.inv_stag != stag) {
		fprintf(stderr, "%s: Send with Invalidate named STag 0x%08x, ours was 0x%08x\n",
			what, rep.msg.inv_stag, stag);
		iop_failures++;
		return;
	}
	IOP_EXPECT(!rpcrdma_mr_valid(b->mr));
}

int iop_nfs3_read(struct iop_conn *c, const struct iop_fh *fh, uint64_t offset, uint32_t count,
		  struct iop_dbuf *b, size_t boff, uint32_t *got, bool *eof)
{
	READ3args a = {.file = fh3(fh), .offset = offset, .count = count};
	struct rpcrdma1_segment seg;
	post_op_attr attr;
	count3 cnt;
	bool_t e;
	uint32_t dlen, xid = c->xid++;
	size_t off;
	int st, len;

	IOP_CHECK(boff <= b->cap && count <= b->cap - boff);
	/* The sink: writable by the peer, and only [boff, boff + count). */
	IOP_CHECK(rpcrdma_mr_rereg(b->mr, b->p + boff, count,
				   RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE) == 0);
	seg.handle = rpcrdma_mr_stag(b->mr);
	seg.length = count;
	seg.offset = rpcrdma_mr_offset(b->mr);
	rpcrdma1_chunks_init(&chunks);
	IOP_CHECK(rpcrdma1_chunks_add_write_chunk(&chunks) == 0);
	IOP_CHECK(rpcrdma1_chunks_add_write_seg(&chunks, &seg) == 0);
	len = iop_encode_call(c, callbuf, sizeof(callbuf), xid, &chunks, NFS_PROGRAM, NFS_V3,
			      NFSPROC3_READ, (xdrproc_t)xdr_READ3args, &a, &off);
	st = exchange(c, NFSPROC3_READ, xid, len);
	if (st < 0)
		return st;
	expect_remote_inv(c, b, seg.handle, "READ");
	if (st != NFS3_OK) {
		IOP_CHECK(xdr_post_op_attr(&rep.xdrs, &attr));
		return st;
	}
	IOP_CHECK(xdr_post_op_attr(&rep.xdrs, &attr));
	IOP_CHECK(xdr_count3(&rep.xdrs, &cnt));
	IOP_CHECK(xdr_bool(&rep.xdrs, &e));
	/* RFC 8267 §4.2 / RFC 8166 §3.4.6: the data went by Write chunk; the
	 * inline reply keeps its length word and nothing after it. */
	IOP_CHECK(rpcrdma_xdr_get_u32(&rep.x, &dlen) == 0);
	IOP_EXPECT(dlen == cnt);
	IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	IOP_CHECK(cnt <= count);
	/* The Write list comes back with our one chunk, its segment length
	 * rewritten to the bytes written (RFC 8166 §3.4.6). */
	IOP_EXPECT(rep.hdr.chunks.nwrites == 1 && rep.hdr.chunks.nwsegs == 1);
	if (rep.hdr.chunks.nwsegs == 1) {
		const struct rpcrdma1_segment *w = &rep.hdr.chunks.wsegs[0];

		IOP_EXPECT(w->handle == seg.handle && w->offset == seg.offset);
		if (w->length != cnt) {
			fprintf(stderr, "READ: Write chunk echoed with length %u, count %u\n",
				w->length, cnt);
			iop_failures++;
		}
	}
	*got = cnt;
	*eof = e;
	return st;
}

/* WRITE3args up to and including the length word of data: the inline part
 * of a WRITE whose data travels in a Read chunk (RFC 8267 §4.2). */
static bool_t xdr_write3args_head(XDR *x, WRITE3args *a)
{
	u_int dlen = a->data.len;

	return xdr_nfs_fh3(x, &a->file) && xdr_offset3(x, &a->offset) && xdr_count3(x, &a->count) &&
	       xdr_stable_how(x, &a->stable) && xdr_u_int(x, &dlen);
}

uint32_t iop_nfs3_write_segs = 1;

int iop_nfs3_write(struct iop_conn *c, const struct iop_fh *fh, uint64_t offset, uint32_t count,
		   stable_how stable, struct iop_dbuf *b, size_t boff, uint32_t *written,
		   stable_how *committed, uint8_t *verf)
{
	WRITE3args a = {.file = fh3(fh), .offset = offset, .count = count, .stable = stable};
	struct rpcrdma1_segment seg, part;
	uint32_t nseg = iop_nfs3_write_segs ? iop_nfs3_write_segs : 1, pos = 0;
	WRITE3resok ok;
	wcc_data wcc;
	uint32_t xid = c->xid++;
	size_t off;
	int st, len;

	IOP_CHECK(boff <= b->cap && count <= b->cap - boff);
	a.data.len = count;
	/* The source: readable by the peer, and only [boff, boff + count). */
	IOP_CHECK(rpcrdma_mr_rereg(b->mr, b->p + boff, count, RPCRDMA_ACCESS_REMOTE_READ) == 0);
	seg.handle = rpcrdma_mr_stag(b->mr);
	seg.length = count; /* RFC 8166 §3.4.5: no XDR padding in the chunk */
	seg.offset = rpcrdma_mr_offset(b->mr);
	/* The Read chunk's position is where the data would start in the RPC
	 * message: right after the inline part. Its value does not change the
	 * header's size, so encode once to learn it, then for real. */
	rpcrdma1_chunks_init(&chunks);
	IOP_CHECK(rpcrdma1_chunks_add_read(&chunks, 0, &seg) == 0);
	len = iop_encode_call(c, callbuf, sizeof(callbuf), xid, &chunks, NFS_PROGRAM, NFS_V3,
			      NFSPROC3_WRITE, (xdrproc_t)xdr_write3args_head, &a, &off);
	IOP_CHECK(len > 0);
	rpcrdma1_chunks_init(&chunks);
	pos = (uint32_t)((size_t)len - off);
	/* iop_nfs3_write_segs segments, in order, the last one the longest */
	for (uint32_t i = 0; i < nseg; i++) {
		part = seg;
		part.length = count / nseg + (i == nseg - 1 ? count % nseg : 0);
		part.offset = seg.offset + (uint64_t)(count / nseg) * i;
		IOP_CHECK(rpcrdma1_chunks_add_read(&chunks, pos, &part) == 0);
	}
	len = iop_encode_call(c, callbuf, sizeof(callbuf), xid, &chunks, NFS_PROGRAM, NFS_V3,
			      NFSPROC3_WRITE, (xdrproc_t)xdr_write3args_head, &a, &off);
	st = exchange(c, NFSPROC3_WRITE, xid, len);
	if (st < 0)
		return st;
	expect_remote_inv(c, b, seg.handle, "WRITE");
	IOP_EXPECT(rep.hdr.chunks.nwrites == 0 && !rep.hdr.chunks.reply_present);
	if (st != NFS3_OK) {
		IOP_CHECK(xdr_wcc_data(&rep.xdrs, &wcc));
		return st;
	}
	IOP_CHECK(xdr_WRITE3resok(&rep.xdrs, &ok));
	IOP_EXPECT(rpcrdma_xdr_remaining(&rep.x) == 0);
	*written = ok.count;
	*committed = ok.committed;
	if (verf)
		memcpy(verf, ok.verf, NFS3_WRITEVERFSIZE);
	return st;
}

int iop_nfs3_commit(struct iop_conn *c, const struct iop_fh *fh, uint8_t *verf)
{
	COMMIT3args a = {.file = fh3(fh), .offset = 0, .count = 0};
	COMMIT3resok ok;
	int st = simple_call(c, NFSPROC3_COMMIT, (xdrproc_t)xdr_COMMIT3args, &a);

	if (st == NFS3_OK) {
		IOP_CHECK(xdr_COMMIT3resok(&rep.xdrs, &ok));
		memcpy(verf, ok.verf, NFS3_WRITEVERFSIZE);
	}
	return st;
}

int iop_nfs3_readdirplus(struct iop_conn *c, const struct iop_fh *dir, uint64_t cookie,
			 const uint8_t *verf, uint32_t maxcount, struct iop_dbuf *b,
			 READDIRPLUS3res *res, bool *long_reply)
{
	READDIRPLUS3args a = {
	    .dir = fh3(dir), .cookie = cookie, .dircount = maxcount, .maxcount = maxcount};
	struct rpcrdma1_segment seg;
	struct rpcrdma_xdr x;
	XDR xdrs;
	uint32_t xid = c->xid++;
	size_t off;
	int len;

	memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
	IOP_CHECK(b->cap <= UINT32_MAX);
	IOP_CHECK(rpcrdma_mr_rereg(b->mr, b->p, b->cap,
				   RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE) == 0);
	seg.handle = rpcrdma_mr_stag(b->mr);
	seg.length = (uint32_t)b->cap;
	seg.offset = rpcrdma_mr_offset(b->mr);
	rpcrdma1_chunks_init(&chunks);
	IOP_CHECK(rpcrdma1_chunks_add_reply_seg(&chunks, &seg) == 0);
	len = iop_encode_call(c, callbuf, sizeof(callbuf), xid, &chunks, NFS_PROGRAM, NFS_V3,
			      NFSPROC3_READDIRPLUS, (xdrproc_t)xdr_READDIRPLUS3args, &a, &off);
	IOP_CHECK(len > 0);
	if (iop_call(c, callbuf, (uint32_t)len, xid, false, &rep) != 0) {
		fprintf(stderr, "NFSv3 READDIRPLUS: no usable reply\n");
		iop_failures++;
		return -1;
	}
	IOP_EXPECT(rep.hdr.credit == 64);
	IOP_CHECK(rep.hdr.proc == RPCRDMA1_MSG || rep.hdr.proc == RPCRDMA1_NOMSG);
	IOP_CHECK(rpcrdma1_check_reply(&rep.hdr) == 0);
	expect_remote_inv(c, b, seg.handle, "READDIRPLUS");
	IOP_EXPECT(rep.hdr.chunks.nwrites == 0);
	*long_reply = rep.hdr.proc == RPCRDMA1_NOMSG;
	if (*long_reply) {
		/* RFC 8166 §3.5.3.2: the whole RPC reply is in the Reply chunk,
		 * whose echoed segment says how many bytes were written; nothing
		 * follows the transport header inline. */
		IOP_CHECK(rep.hdr.chunks.reply_present && rep.hdr.chunks.nreply == 1);
		IOP_CHECK(rep.hdr.chunks.reply[0].handle == seg.handle &&
			  rep.hdr.chunks.reply[0].offset == seg.offset);
		IOP_CHECK(rep.hdr.chunks.reply[0].length <= b->cap);
		IOP_EXPECT(rep.hdr.hdr_len == rep.msg.len);
		rpcrdma_xdr_init(&x, b->p, rep.hdr.chunks.reply[0].length, RPCRDMA_XDR_DECODE);
		IOP_CHECK(rpcrdma_rpc_decode_reply(&x, &rep.rpc) == 0);
		IOP_CHECK(rep.rpc.xid == xid);
	} else {
		/* A short reply may come inline, with the Reply chunk echoed
		 * empty or not at all. */
		x = rep.x;
		if (rep.hdr.chunks.reply_present)
			IOP_EXPECT(rep.hdr.chunks.nreply == 0 ||
				   rep.hdr.chunks.reply[0].length == 0);
	}
	IOP_CHECK(rep.rpc.reply_stat == RPCRDMA_RPC_MSG_ACCEPTED &&
		  rep.rpc.accept_stat == RPCRDMA_RPC_SUCCESS);
	rpcrdma_tirpc_xdr_create(&xdrs, &x);
	memset(res, 0, sizeof(*res));
	IOP_CHECK(xdr_READDIRPLUS3res(&xdrs, res));
	IOP_EXPECT(rpcrdma_xdr_remaining(&x) == 0);
	return (int)res->status;
}

int iop_nfs3_setup(struct iop_env *env, struct iop_conn *c, struct iop_fh *root, bool crc)
{
	int rc;
	uint64_t t0;

	memset(c, 0, sizeof(*c)); /* iop_close() is safe whatever happens */
	rc = iop_env_get(env);
	if (rc != IOP_PASS)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = iop_now_ms();
	if (iop_mount(env->mount_port, "/export", root->data, &root->len) != 0) {
		printf("FAIL: MOUNT /export over TCP (%s:%u)\n", iop_addr(), env->mount_port);
		return IOP_FAIL;
	}
	printf("MOUNT /export (TCP, libtirpc): %u-byte root handle (%llu ms)\n", root->len,
	       (unsigned long long)(iop_now_ms() - t0));
	t0 = iop_now_ms();
	if (iop_connect(c, env->rdma_port, 2, crc, iop_linux_client_pdata,
			sizeof(iop_linux_client_pdata)) != 0) {
		printf("FAIL: no RDMA connection to %s:%u\n", iop_addr(), env->rdma_port);
		return IOP_FAIL;
	}
	if (iop_nfs_null(c, true) != 0) {
		printf("FAIL: NFSv3 NULL\n");
		return IOP_FAIL;
	}
	printf("connected (MPA CRC %s) and NULL answered in %llu ms (%u first-Send "
	       "retransmissions)\n",
	       crc ? "on" : "off", (unsigned long long)(iop_now_ms() - t0), c->stalls);
	return IOP_PASS;
}
