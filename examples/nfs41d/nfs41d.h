/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma-nfs41d: an NFSv4.1 (RFC 8881) server over RPC-over-RDMA built on
 * the public server API, with the backchannel of RFC 8167 for callbacks.
 * XDR is rpcgen's, from xdr/nfs41.x (the file the test
 * client uses too). File handles, the handle -> path resolution and acting
 * with the caller's identity are rpcrdma-nfs3d's (examples/nfs3d/fh.c and
 * creds.c, compiled in unchanged: one handle and export layer for both
 * servers). Files:
 *   main.c     options, startup, the COMPOUND loop (§16.2.3); the startup
 *              both servers share is examples/nfs3d/daemon.h
 *   state.c    client IDs, sessions and slots, stateids, delegations,
 *              callbacks (CB_NULL probe, CB_SEQUENCE + CB_RECALL)
 *   attr.c     fattr4: GETATTR / READDIR encoding, SETATTR decoding
 *   ops_fs.c   the operations on the file system
 */
#ifndef NFS41D_H
#define NFS41D_H

#include <rpcrdma.h>

#include "export.h" /* export, handles, credentials (shared with rpcrdma-nfs3d) */
#include "nfs41.h"  /* rpcgen */

#include <pthread.h>

/* Longest name component served (as rpcrdma-nfs3d: NFS3_MAXNAME). */
#define NFS41D_MAXNAME 255u
/* nfs3d_fh_resolve()'s answer for a handle whose object is gone: NFSv3's
 * NFS3ERR_STALE (RFC 1813); any other failure is a bad handle. */
#define NFS41D_FH_STALE 70

/* Largest READ / WRITE offered (maxread / maxwrite, the Linux client's
 * RPC-over-RDMA maximum payload). */
#define NFS41D_MAXIO  (1u << 20)
#define NFS41D_LEASE  90u /* seconds (lease_time) */
#define NFS41D_SLOTS  32u /* fore channel slots per session at most */
#define NFS41D_MAXOPS 64u /* operations per COMPOUND at most */

/* What one COMPOUND works on (§16.2.3: current and saved filehandle). */
struct n41_fh {
	bool set;
	char rel[PATH_MAX]; /* export-relative path ("" = root) */
	struct stat st;
	struct nfs3d_fh fh;
};

struct n41_session;

struct n41_compound {
	struct rpcrdma_svc_req *req;
	struct nfs3d_caller caller;
	struct n41_fh cur, saved;
	struct n41_session *sess; /* after SEQUENCE (NULL before) */
	uint32_t slot;
	/* memory referenced by the results until the reply is sent */
	void **keep;
	uint32_t nkeep, capkeep;
	/* after the reply: probe the backchannel of this session */
	struct n41_session *probe;
};
/* Keep @p (malloc'd) until the reply is sent; frees it and returns false
 * when out of memory. */
bool n41_keep(struct n41_compound *c, void *p);
void *n41_alloc(struct n41_compound *c, size_t n); /* zeroed, kept */

/* errno -> nfsstat4 */
nfsstat4 n41_errno(int err);

/* ---- state.c ---- */

void n41_state_init(struct rpcrdma_svc *svc);
/* Counters of the server's NFSv4.1 state (printed with the transport's). */
struct n41_counters {
	uint64_t sessions, cb_null_ok, cb_null_fail, delegations, recalls, recalls_ok, recalls_fail,
	    delegreturns, open_delay;
	uint64_t binds;         /* BIND_CONN_TO_SESSION that moved a back channel */
	uint64_t recall_delays; /* recalls answered NFS4ERR_DELAY (sent again) */
};
void n41_counters(struct n41_counters *out);
/* Backchannel event (rpcrdma_svc_bc_init's callback). */
void n41_bc_event(struct rpcrdma_svc_client *cl, enum rpcrdma_bc_event ev, void *ctx);
void n41_exchange_id(struct n41_compound *c, EXCHANGE_ID4args *a, EXCHANGE_ID4res *r);
void n41_create_session(struct n41_compound *c, CREATE_SESSION4args *a, CREATE_SESSION4res *r);
nfsstat4 n41_destroy_session(struct n41_compound *c, DESTROY_SESSION4args *a);
nfsstat4 n41_destroy_clientid(struct n41_compound *c, DESTROY_CLIENTID4args *a);
void n41_bind_conn(struct n41_compound *c, BIND_CONN_TO_SESSION4args *a,
		   BIND_CONN_TO_SESSION4res *r);
/* SEQUENCE (first op): finds the session and slot; r->sr_status. */
void n41_sequence(struct n41_compound *c, SEQUENCE4args *a, SEQUENCE4res *r);
/* The COMPOUND is answered: release the slot taken by SEQUENCE, start
 * the backchannel probe asked for. */
void n41_compound_done(struct n41_compound *c);
/* A client ID of the session (0 when none). */
uint64_t n41_clientid(const struct n41_compound *c);

/* Open state. OPEN: record an open of @st by the session's client with
 * @access/@deny, recall conflicting delegations of other clients (waits
 * for their return up to a few seconds: NFS4ERR_DELAY if they are still
 * out), and grant a read delegation when possible (*@deleg). */
nfsstat4 n41_open_state(struct n41_compound *c, const struct stat *st, uint32_t access,
			uint32_t deny, stateid4 *sid, open_delegation4 *deleg);
nfsstat4 n41_close_state(struct n41_compound *c, const stateid4 *sid);
nfsstat4 n41_downgrade_state(struct n41_compound *c, const stateid4 *sid, uint32_t access,
			     uint32_t deny, stateid4 *out);
nfsstat4 n41_delegreturn(struct n41_compound *c, const stateid4 *sid);
nfsstat4 n41_free_stateid(struct n41_compound *c, const stateid4 *sid);
nfsstat4 n41_test_stateid(struct n41_compound *c, const stateid4 *sid);
/* A change of @st by this COMPOUND's client (WRITE, SETATTR, REMOVE,
 * RENAME): recall other clients' delegations of it first (as OPEN). */
nfsstat4 n41_break_deleg(struct n41_compound *c, const struct stat *st);

/* ---- attr.c ---- */

/* Encode the attributes @req of the object (@st, handle @fh) into @out
 * (attrmask + attr_vals, memory kept by @c). */
nfsstat4 n41_getattr(struct n41_compound *c, const bitmap4 *req, const struct stat *st,
		     const struct nfs3d_fh *fh, fattr4 *out);
/* SETATTR's, CREATE's and OPEN's attributes, decoded. */
struct n41_sattr {
	bool mode, uid, gid, size;
	uint32_t mode_v, uid_v, gid_v;
	uint64_t size_v;
	uint32_t atime, mtime; /* 0 no, 1 server time, 2 client time */
	struct timespec atime_v, mtime_v;
	uint32_t set[3]; /* the bitmap of what it sets */
};
nfsstat4 n41_sattr_decode(const fattr4 *in, struct n41_sattr *sa);
/* Apply @sa to @rel (not its mode when !@with_mode): 0 or -errno. */
int n41_sattr_apply(const char *rel, const struct n41_sattr *sa, bool with_mode);
/* @set as a bitmap4 in memory kept by @c. */
void n41_bitmap_out(struct n41_compound *c, const uint32_t set[3], bitmap4 *out);

/* ---- ops_fs.c ---- */

/* Run operation @a (after the session ops main.c runs itself) into @r:
 * false when @a is not one of them. */
bool n41_fs_op(struct n41_compound *c, nfs_argop4 *a, nfs_resop4 *r);
/* The status of result @r (every result's first word). */
nfsstat4 n41_res_status(const nfs_resop4 *r);
/* Re-resolve the current handle (after another op changed the tree). */
nfsstat4 n41_fh_set(struct n41_fh *f, const char *rel);

#endif
