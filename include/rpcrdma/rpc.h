/* SPDX-License-Identifier: MIT */
/*
 * ONC RPC Version 2 message headers (RFC 5531): call and reply headers,
 * opaque_auth credentials/verifiers, AUTH_NONE and AUTH_SYS, and the
 * server-side decision that turns a call header into a reply without
 * dispatching it (wrong RPC version, unusable credentials).
 *
 * Everything encodes into and decodes from a struct rpcrdma_xdr cursor; the
 * header structs hold auth bodies inline (bounded arrays), so nothing here
 * allocates. Decoders treat the input as hostile: every length and
 * discriminant is checked before use.
 *
 * Errors (beyond those of xdr.h, which pass through unchanged):
 *   -EINVAL  a discriminant the protocol does not define (msg_type,
 *            reply_stat, accept_stat, reject_stat, auth_stat), or a bad
 *            argument given to an encoder
 *   -E2BIG   an opaque_auth body over 400 bytes, a machine name over 255,
 *            more than 16 AUTH_SYS gids
 * On failure the cursor is where it was before the call (nothing consumed;
 * an encoder may have written bytes past the position, but does not count
 * them) and the output struct is unspecified.
 */
#ifndef RPCRDMA_RPC_H
#define RPCRDMA_RPC_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/common.h"
#include "rpcrdma/xdr.h"

RPCRDMA_EXTERN_C_BEGIN

/* ---- wire constants (RFC 5531 §9 and §8.2, Appendix A) ---- */

#define RPCRDMA_RPC_VERS 2u /* RFC 5531 §9: rpcvers must be 2 */

/* RFC 5531 §8.2: opaque body<400>. */
#define RPCRDMA_RPC_AUTH_BODY_MAX 400u
/* RFC 5531 Appendix A: string machinename<255>, unsigned int gids<16>. */
#define RPCRDMA_RPC_MACHINENAME_MAX  255u
#define RPCRDMA_RPC_AUTHSYS_MAX_GIDS 16u

enum rpcrdma_rpc_msg_type {
	RPCRDMA_RPC_CALL = 0,
	RPCRDMA_RPC_REPLY = 1,
};

enum rpcrdma_rpc_reply_stat {
	RPCRDMA_RPC_MSG_ACCEPTED = 0,
	RPCRDMA_RPC_MSG_DENIED = 1,
};

enum rpcrdma_rpc_accept_stat {
	RPCRDMA_RPC_SUCCESS = 0,       /* RPC executed successfully */
	RPCRDMA_RPC_PROG_UNAVAIL = 1,  /* remote hasn't exported the program */
	RPCRDMA_RPC_PROG_MISMATCH = 2, /* remote can't support version #; low/high follow */
	RPCRDMA_RPC_PROC_UNAVAIL = 3,  /* program can't support procedure */
	RPCRDMA_RPC_GARBAGE_ARGS = 4,  /* procedure can't decode params */
	RPCRDMA_RPC_SYSTEM_ERR = 5,    /* e.g. memory allocation failure */
};

enum rpcrdma_rpc_reject_stat {
	RPCRDMA_RPC_RPC_MISMATCH = 0, /* RPC version number != 2; low/high follow */
	RPCRDMA_RPC_AUTH_ERROR = 1,   /* remote can't authenticate caller; auth_stat follows */
};

/* RFC 5531 §9 auth_stat, including the RPCSEC_GSS values. */
enum rpcrdma_rpc_auth_stat {
	RPCRDMA_RPC_AUTH_OK = 0,
	RPCRDMA_RPC_AUTH_BADCRED = 1,
	RPCRDMA_RPC_AUTH_REJECTEDCRED = 2,
	RPCRDMA_RPC_AUTH_BADVERF = 3,
	RPCRDMA_RPC_AUTH_REJECTEDVERF = 4,
	RPCRDMA_RPC_AUTH_TOOWEAK = 5,
	RPCRDMA_RPC_AUTH_INVALIDRESP = 6,
	RPCRDMA_RPC_AUTH_FAILED = 7,
	RPCRDMA_RPC_AUTH_KERB_GENERIC = 8,
	RPCRDMA_RPC_AUTH_TIMEEXPIRE = 9,
	RPCRDMA_RPC_AUTH_TKT_FILE = 10,
	RPCRDMA_RPC_AUTH_DECODE = 11,
	RPCRDMA_RPC_AUTH_NET_ADDR = 12,
	RPCRDMA_RPC_RPCSEC_GSS_CREDPROBLEM = 13,
	RPCRDMA_RPC_RPCSEC_GSS_CTXPROBLEM = 14,
};

/* RFC 5531 §8.2 / IANA: auth_flavor is open-ended; any other value decodes
 * as an opaque body. */
enum rpcrdma_rpc_auth_flavor {
	RPCRDMA_RPC_AUTH_NONE = 0,
	RPCRDMA_RPC_AUTH_SYS = 1,
	RPCRDMA_RPC_AUTH_SHORT = 2,
	RPCRDMA_RPC_AUTH_DH = 3,
	RPCRDMA_RPC_RPCSEC_GSS = 6,
};

/* ---- header structs ---- */

/* opaque_auth (RFC 5531 §8.2): a flavor and its body as on the wire. */
struct rpcrdma_rpc_auth {
	uint32_t flavor;
	uint32_t len; /* body bytes, <= RPCRDMA_RPC_AUTH_BODY_MAX */
	uint8_t body[RPCRDMA_RPC_AUTH_BODY_MAX];
};

/* authsys_parms (RFC 5531 Appendix A), the body of an AUTH_SYS credential. */
struct rpcrdma_rpc_authsys {
	uint32_t stamp;
	char machinename[RPCRDMA_RPC_MACHINENAME_MAX + 1]; /* NUL-terminated */
	uint32_t uid;
	uint32_t gid;
	uint32_t ngids; /* <= RPCRDMA_RPC_AUTHSYS_MAX_GIDS */
	uint32_t gids[RPCRDMA_RPC_AUTHSYS_MAX_GIDS];
};

/* rpc_msg with a call_body (RFC 5531 §9), up to and including the verifier;
 * the procedure's arguments follow on the wire. */
struct rpcrdma_rpc_call {
	uint32_t xid;
	uint32_t rpcvers; /* RPCRDMA_RPC_VERS */
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
	struct rpcrdma_rpc_auth cred;
	struct rpcrdma_rpc_auth verf;
};

/* rpc_msg with a reply_body (RFC 5531 §9); for SUCCESS the procedure's
 * results follow on the wire. Fields outside the arm that @reply_stat (and
 * @accept_stat / @reject_stat) selects are not encoded and decode as zero. */
struct rpcrdma_rpc_reply {
	uint32_t xid;
	uint32_t reply_stat; /* enum rpcrdma_rpc_reply_stat */
	/* MSG_ACCEPTED */
	struct rpcrdma_rpc_auth verf;
	uint32_t accept_stat; /* enum rpcrdma_rpc_accept_stat */
	/* MSG_DENIED */
	uint32_t reject_stat; /* enum rpcrdma_rpc_reject_stat */
	uint32_t auth_stat;   /* enum rpcrdma_rpc_auth_stat, for AUTH_ERROR */
	/* mismatch_info: PROG_MISMATCH (accepted) or RPC_MISMATCH (denied) */
	uint32_t mismatch_low;
	uint32_t mismatch_high;
};

/* ---- opaque_auth and AUTH_SYS ---- */

RPCRDMA_API int rpcrdma_rpc_encode_auth(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_auth *a);
/* Any flavor; the body is copied as is. -E2BIG if longer than 400. */
RPCRDMA_API int rpcrdma_rpc_decode_auth(struct rpcrdma_xdr *x, struct rpcrdma_rpc_auth *a);

RPCRDMA_API int rpcrdma_rpc_encode_authsys(struct rpcrdma_xdr *x,
					   const struct rpcrdma_rpc_authsys *s);
RPCRDMA_API int rpcrdma_rpc_decode_authsys(struct rpcrdma_xdr *x, struct rpcrdma_rpc_authsys *s);

/* @a := AUTH_NONE with an empty body (RFC 5531 §10.1). */
RPCRDMA_API void rpcrdma_rpc_auth_none(struct rpcrdma_rpc_auth *a);
/* @a := AUTH_SYS carrying @s. -E2BIG / -EINVAL if @s breaks a bound. */
RPCRDMA_API int rpcrdma_rpc_auth_sys(struct rpcrdma_rpc_auth *a,
				     const struct rpcrdma_rpc_authsys *s);
/* Parse the body of an AUTH_SYS @a into @s. -EINVAL if @a is not AUTH_SYS
 * or its body holds bytes after the parameters; decode errors otherwise. */
RPCRDMA_API int rpcrdma_rpc_auth_get_sys(const struct rpcrdma_rpc_auth *a,
					 struct rpcrdma_rpc_authsys *s);

/* Bytes of a credential and a verifier as a call header carries them
 * (two opaque_auth, RFC 5531 §9): at most 2 x (8 + 400). */
#define RPCRDMA_RPC_CRED_VERF_MAX (2u * (8u + RPCRDMA_RPC_AUTH_BODY_MAX))

/*
 * @s := this process's AUTH_SYS identity, as libtirpc's
 * authunix_create_default() builds it: effective uid and gid, the first 16
 * supplementary groups, gethostname() (cut at 255 bytes), and the current
 * time in seconds as the stamp (RFC 5531 §10.2: an arbitrary id the
 * caller chooses). 0, or -errno from getgroups().
 */
RPCRDMA_API int rpcrdma_rpc_authsys_default(struct rpcrdma_rpc_authsys *s);

/*
 * Encode a credential of @flavor followed by an AUTH_NONE verifier into
 * @buf (@cap bytes, RPCRDMA_RPC_CRED_VERF_MAX is always enough) and set
 * *@len. @flavor AUTH_NONE ignores @sys. For AUTH_SYS, @sys NULL means
 * rpcrdma_rpc_authsys_default(); otherwise a copy of *@sys where a zero
 * stamp becomes the current time in seconds and an empty machine name
 * gethostname(). -EINVAL other flavors, -E2BIG a bound of @sys broken,
 * -EMSGSIZE @cap too small.
 */
RPCRDMA_API int rpcrdma_rpc_encode_cred_verf(void *buf, size_t cap, uint32_t flavor,
					     const struct rpcrdma_rpc_authsys *sys, uint32_t *len);

/* 0 when @buf holds exactly two opaque_auth (a credential and a verifier,
 * bodies of at most 400 bytes) and nothing else; -EINVAL otherwise. */
RPCRDMA_API int rpcrdma_rpc_check_cred_verf(const void *buf, size_t len);

/* ---- call and reply headers ---- */

RPCRDMA_API int rpcrdma_rpc_encode_call(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_call *c);
/*
 * Decode a call header. -EINVAL if msg_type is not CALL. A call whose
 * rpcvers is not 2 still decodes (so the server can answer RPC_MISMATCH):
 * only xid and rpcvers are filled, the rest is zero, and the cursor stops
 * after rpcvers, since the layout that follows is defined only for v2.
 */
RPCRDMA_API int rpcrdma_rpc_decode_call(struct rpcrdma_xdr *x, struct rpcrdma_rpc_call *c);

/* -EINVAL for a stat outside its enum. */
RPCRDMA_API int rpcrdma_rpc_encode_reply(struct rpcrdma_xdr *x, const struct rpcrdma_rpc_reply *r);
/* -EINVAL if msg_type is not REPLY or any stat is outside its enum. */
RPCRDMA_API int rpcrdma_rpc_decode_reply(struct rpcrdma_xdr *x, struct rpcrdma_rpc_reply *r);

/* Read xid and msg_type without moving the cursor (RFC 8167 §4.1: a
 * receiver tells calls from replies by msg_type). -EINVAL for a msg_type
 * other than CALL/REPLY. */
RPCRDMA_API int rpcrdma_rpc_peek(const struct rpcrdma_xdr *x, uint32_t *xid, uint32_t *msg_type);

/* Reply builders: @r := a reply to @xid with an AUTH_NONE verifier. */
RPCRDMA_API void rpcrdma_rpc_reply_accepted(struct rpcrdma_rpc_reply *r, uint32_t xid,
					    uint32_t accept_stat);
RPCRDMA_API void rpcrdma_rpc_reply_prog_mismatch(struct rpcrdma_rpc_reply *r, uint32_t xid,
						 uint32_t low, uint32_t high);
RPCRDMA_API void rpcrdma_rpc_reply_rpc_mismatch(struct rpcrdma_rpc_reply *r, uint32_t xid,
						uint32_t low, uint32_t high);
RPCRDMA_API void rpcrdma_rpc_reply_auth_error(struct rpcrdma_rpc_reply *r, uint32_t xid,
					      uint32_t auth_stat);

/* ---- server-side admission ---- */

/* Bit for @flavor in rpcrdma_rpc_check_call()'s @flavors (flavors < 32). */
#define RPCRDMA_RPC_FLAVOR_BIT(f) (1u << (f))
#define RPCRDMA_RPC_FLAVORS_DEFAULT                                                                \
	(RPCRDMA_RPC_FLAVOR_BIT(RPCRDMA_RPC_AUTH_NONE) |                                           \
	 RPCRDMA_RPC_FLAVOR_BIT(RPCRDMA_RPC_AUTH_SYS))

/*
 * Decide whether a decoded call may be dispatched. Returns 0 (dispatch it;
 * @r untouched) or 1 with @r holding the reply header to send instead:
 *   rpcvers != 2                       MSG_DENIED RPC_MISMATCH low=2 high=2
 *   credential flavor not in @flavors  MSG_DENIED AUTH_ERROR AUTH_BADCRED
 *   AUTH_NONE cred with a body, or an AUTH_SYS body that does not parse
 *   exactly                            MSG_DENIED AUTH_ERROR AUTH_BADCRED
 *   AUTH_NONE/AUTH_SYS call whose verifier is not an empty AUTH_NONE
 *                                      MSG_DENIED AUTH_ERROR AUTH_BADVERF
 * Only AUTH_NONE and AUTH_SYS are understood here: a caller that puts other
 * flavors in @flavors checks those credentials itself.
 */
RPCRDMA_API int rpcrdma_rpc_check_call(const struct rpcrdma_rpc_call *c, uint32_t flavors,
				       struct rpcrdma_rpc_reply *r);

/*
 * For a call header at @x that rpcrdma_rpc_decode_call() refused: 1 with
 * @r := MSG_DENIED / AUTH_ERROR when the header is complete up to an
 * opaque_auth whose length exceeds 400 bytes (RFC 5531 §8.2, §9):
 * AUTH_BADCRED for the credential, AUTH_BADVERF for the verifier. 0 for
 * anything else (a truncated or non-CALL header has no sensible reply).
 * Does not move @x.
 */
RPCRDMA_API int rpcrdma_rpc_oversize_auth(const struct rpcrdma_xdr *x, struct rpcrdma_rpc_reply *r);

/* Names for logs and tools: never NULL ("?" for unknown values). */
RPCRDMA_API const char *rpcrdma_rpc_accept_stat_name(uint32_t s);
RPCRDMA_API const char *rpcrdma_rpc_auth_stat_name(uint32_t s);

RPCRDMA_EXTERN_C_END

#endif
