/* SPDX-License-Identifier: MIT */
/*
 * A minimal NFSv3 client for the interop tests, over one iop_conn
 * (interop_util.h): every call is an RDMA_MSG built by hand, with the
 * Upper-Layer Binding of RFC 8267 §4 for the two DDP-eligible items used
 * here:
 *   - READ3resok.data comes back through a Write chunk the call offers
 *     (RFC 8267 §4.2, RFC 8166 §3.4.6); the inline reply keeps the length
 *     word and drops the bytes;
 *   - WRITE3args.data goes out through a Read chunk at the XDR position of
 *     the data (RFC 8166 §3.4.5), length = the data's length without XDR
 *     padding; the inline call ends with the length word.
 * Each call checks the transport-level facts of its reply (credit grant,
 * chunk echo, Send with Invalidate naming the chunk's STag) with
 * IOP_EXPECT and returns the NFS status, so tests assert both layers.
 */
#ifndef RPCRDMA_TESTS_INTEROP_NFS3_CLIENT_H
#define RPCRDMA_TESTS_INTEROP_NFS3_CLIENT_H

#include "interop_util.h"
#include "nfs3.h"

struct iop_fh {
	uint32_t len;
	uint8_t data[NFS3_FHSIZE];
};

/* A registered data buffer for chunks; the MR is re-registered for every
 * call that uses it (a fresh STag each time, since the server invalidates
 * the previous one remotely). */
struct iop_dbuf {
	uint8_t *p;
	size_t cap;
	struct rpcrdma_mr *mr;
};

int iop_dbuf_alloc(struct iop_conn *c, struct iop_dbuf *b, size_t cap);
void iop_dbuf_free(struct iop_dbuf *b);

/* Each returns the nfsstat3 (>= 0) of the reply, or -1 when the exchange
 * itself failed (already counted as a failure and printed). */
int iop_nfs3_getattr(struct iop_conn *c, const struct iop_fh *fh, fattr3 *attr);
int iop_nfs3_lookup(struct iop_conn *c, const struct iop_fh *dir, const char *name,
		    struct iop_fh *out, fattr3 *attr);
int iop_nfs3_fsinfo(struct iop_conn *c, const struct iop_fh *root, FSINFO3resok *info);

/* CREATE @name in @dir (RFC 1813 §3.3.8), UNCHECKED or GUARDED, with mode
 * @mode set and nothing else. NFS3_OK: the new handle in @out (the reply
 * must carry one) and its attributes in @attr (may be NULL). */
int iop_nfs3_create(struct iop_conn *c, const struct iop_fh *dir, const char *name, createmode3 how,
		    uint32_t mode, struct iop_fh *out, fattr3 *attr);
/* REMOVE @name from @dir (RFC 1813 §3.3.12). */
int iop_nfs3_remove(struct iop_conn *c, const struct iop_fh *dir, const char *name);

/* READ @count bytes at @offset into b->p + @boff through a Write chunk of
 * exactly @count bytes. *got and *eof from the reply. */
int iop_nfs3_read(struct iop_conn *c, const struct iop_fh *fh, uint64_t offset, uint32_t count,
		  struct iop_dbuf *b, size_t boff, uint32_t *got, bool *eof);
/* Segments of the Read chunk iop_nfs3_write() offers (default 1): @count
 * split in that many consecutive pieces of the same registration. */
extern uint32_t iop_nfs3_write_segs;
/* WRITE @count bytes from b->p + @boff at @offset through a Read chunk.
 * *written and *committed from the reply; @verf (8 bytes) may be NULL. */
int iop_nfs3_write(struct iop_conn *c, const struct iop_fh *fh, uint64_t offset, uint32_t count,
		   stable_how stable, struct iop_dbuf *b, size_t boff, uint32_t *written,
		   stable_how *committed, uint8_t *verf);
int iop_nfs3_commit(struct iop_conn *c, const struct iop_fh *fh, uint8_t *verf);
/*
 * READDIRPLUS offering all of @b as a one-segment Reply chunk (RFC 8166
 * §3.5.3.2). A reply longer than the inline threshold comes back as
 * RDMA_NOMSG with the Reply chunk echoed at the length written, and is
 * decoded from @b (*long_reply set); a short one inline. @res is filled
 * (free it with xdr_free(xdr_READDIRPLUS3res)) when the status is >= 0.
 */
int iop_nfs3_readdirplus(struct iop_conn *c, const struct iop_fh *dir, uint64_t cookie,
			 const uint8_t *verf, uint32_t maxcount, struct iop_dbuf *b,
			 READDIRPLUS3res *res, bool *long_reply);

/* MOUNT + connect (MPA CRC as @crc) + NULL: the setup every NFS test
 * starts with. Returns IOP_PASS, or IOP_SKIP / IOP_FAIL to exit with;
 * iop_close(@c) is safe either way. */
int iop_nfs3_setup(struct iop_env *env, struct iop_conn *c, struct iop_fh *root, bool crc);

#endif
