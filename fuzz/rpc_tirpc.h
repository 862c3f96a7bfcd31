/* SPDX-License-Identifier: MIT */
/*
 * src/rpc's decoders against libtirpc's on the same bytes (issue 37): our
 * call header (rpcrdma_rpc_decode_call) against xdr_callmsg, our reply
 * header (rpcrdma_rpc_decode_reply) against xdr_replymsg, our AUTH_SYS
 * parameters (rpcrdma_rpc_decode_authsys, and rpcrdma_rpc_auth_get_sys on
 * a decoded call's credential) against xdr_authunix_parms. Used by
 * fuzz/fuzz_rpc.c (every input) and tests/rpc/test_rpc_tirpc.c (a fixed
 * corpus of hand-made messages and their mutations).
 *
 * Each rt_cmp_*() returns NULL when the two agree: both refuse the bytes,
 * or both take them, read as many bytes, and give the same xid, msg_type,
 * rpcvers / prog / vers / proc, credential and verifier (flavor, length,
 * body), reply_stat, accept_stat / reject_stat / auth_stat, mismatch
 * low / high, and AUTH_SYS stamp / machinename / uid / gid / gids. Else a
 * sentence saying how they differ.
 *
 * Where the two differ on purpose, the rule is written out below (RT_RULE
 * marks each one, with its RFC 5531 reference) and counted in rt_stats, so
 * the unit test can see that every rule was exercised; any other
 * difference is a disagreement. libtirpc's allocations (opaque_auth
 * bodies, the machine name, the gids) are released with xdr_free() on
 * every path, so the callers stay clean under ASan / LSan.
 */
#ifndef RPCRDMA_FUZZ_RPC_TIRPC_H
#define RPCRDMA_FUZZ_RPC_TIRPC_H

#include <errno.h>
#include <rpc/rpc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"
#include "util/be.h"

/* What the comparisons saw (the unit test reads them). */
struct rt_stats {
	unsigned both_ok[3], both_bad[3]; /* by kind: 0 call, 1 reply, 2 AUTH_SYS */
	unsigned rule_rpcvers;            /* RT_RULE 1 applied */
	unsigned rule_accept_stat;        /* RT_RULE 2 */
	unsigned rule_auth_stat;          /* RT_RULE 3 */
	unsigned rule_nul_name;           /* RT_RULE 4 */
	unsigned rule_trailing;           /* RT_RULE 5 */
	unsigned sys_creds;               /* AUTH_SYS credentials compared inside calls */
};
static struct rt_stats rt_stats;

/* A private copy of the input for each decoder: our cursor wants a
 * mutable buffer and so does xdrmem_create(); an exact-size heap block
 * lets ASan see a read past the end. */
static uint8_t *rt_dup(const uint8_t *in, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);
	if (p && len)
		memcpy(p, in, len);
	return p;
}

/* Two private copies of @in, one per decoder (each may scribble on its
 * own); false, with nothing held, when out of memory: nothing compared. */
static bool rt_dup2(const uint8_t *in, size_t len, uint8_t **a, uint8_t **b)
{
	*a = rt_dup(in, len);
	*b = rt_dup(in, len);
	if (*a && *b)
		return true;
	free(*a);
	free(*b);
	return false;
}

static int rt_auth_eq(const struct rpcrdma_rpc_auth *a, const struct opaque_auth *o)
{
	return a->flavor == (uint32_t)o->oa_flavor && a->len == o->oa_length &&
	       (a->len == 0 || memcmp(a->body, o->oa_base, a->len) == 0);
}

/*
 * AUTH_SYS parameters (RFC 5531 Appendix A) at @in. @exact: the bytes are
 * a credential's whole body (rpcrdma_rpc_auth_get_sys); else a stream
 * (rpcrdma_rpc_decode_authsys), where the positions must agree.
 */
static const char *rt_cmp_authsys_bytes(const uint8_t *in, size_t len, int exact)
{
	struct rpcrdma_rpc_authsys s;
	struct authunix_parms p;
	struct rpcrdma_xdr x;
	XDR t;
	const char *why = NULL;
	int rc;
	uint8_t *a, *b;

	if (!rt_dup2(in, len, &a, &b))
		return NULL; /* out of memory: nothing compared */
	if (exact) {
		struct rpcrdma_rpc_auth cred = {.flavor = RPCRDMA_RPC_AUTH_SYS};
		if (len > sizeof(cred.body)) {
			free(a);
			free(b);
			return "an AUTH_SYS body over 400 bytes reached the comparison";
		}
		cred.len = (uint32_t)len;
		memcpy(cred.body, a, len);
		rc = rpcrdma_rpc_auth_get_sys(&cred, &s);
	} else {
		rpcrdma_xdr_init(&x, a, len, RPCRDMA_XDR_DECODE);
		rc = rpcrdma_rpc_decode_authsys(&x, &s);
	}
	memset(&p, 0, sizeof(p));
	xdrmem_create(&t, (char *)b, (u_int)len, XDR_DECODE);
	int theirs = xdr_authunix_parms(&t, &p) == TRUE;
	int ours = rc == 0;

	if (theirs && !ours && p.aup_machname &&
	    memchr(p.aup_machname, '\0', (size_t)get_be32(in + 4))) {
		/* RT_RULE 4. RFC 5531 Appendix A: machinename is a
		 * string<255>. libtirpc copies a name with a NUL inside and
		 * hands C code a shorter name than the wire's; ours refuses it
		 * (-EINVAL, src/xdr/xdr.c rpcrdma_xdr_get_string) rather than
		 * give out a different value. */
		rt_stats.rule_nul_name++;
		if (rc != -EINVAL)
			why = "a machine name with a NUL: ours failed with another error than "
			      "-EINVAL";
	} else if (exact && theirs && !ours && xdr_getpos(&t) < len) {
		/* RT_RULE 5. RFC 5531 §8.2 / Appendix A: an AUTH_SYS
		 * credential's body is the authsys_parms and nothing else;
		 * ours refuses a body with bytes after them (-EINVAL,
		 * rpcrdma_rpc_auth_get_sys), xdr_authunix_parms stops reading
		 * where the parameters end and does not look. */
		rt_stats.rule_trailing++;
		if (rc != -EINVAL)
			why =
			    "an AUTH_SYS body with trailing bytes: ours failed with another error";
	} else if (ours != theirs) {
		why = ours ? "ours takes AUTH_SYS parameters libtirpc refuses"
			   : "libtirpc takes AUTH_SYS parameters ours refuses";
	} else if (ours) {
		if (!exact && rpcrdma_xdr_getpos(&x) != xdr_getpos(&t))
			why = "AUTH_SYS: the two read different byte counts";
		else if (exact && xdr_getpos(&t) != len)
			why = "AUTH_SYS: ours took a body libtirpc did not read to its end";
		else if (s.stamp != (uint32_t)p.aup_time)
			why = "AUTH_SYS stamp differs";
		else if (!p.aup_machname || strcmp(s.machinename, p.aup_machname) != 0)
			why = "AUTH_SYS machinename differs";
		else if (s.uid != (uint32_t)p.aup_uid || s.gid != (uint32_t)p.aup_gid)
			why = "AUTH_SYS uid or gid differs";
		else if (s.ngids != p.aup_len)
			why = "AUTH_SYS gid count differs";
		for (uint32_t i = 0; !why && i < s.ngids; i++)
			if (s.gids[i] != (uint32_t)p.aup_gids[i])
				why = "AUTH_SYS gids differ";
	}
	if (!exact && ours == theirs)
		(ours ? rt_stats.both_ok : rt_stats.both_bad)[2]++;
	xdr_free((xdrproc_t)xdr_authunix_parms, (char *)&p);
	xdr_destroy(&t);
	free(a);
	free(b);
	return why;
}

static const char *rt_cmp_authsys(const uint8_t *in, size_t len)
{
	return rt_cmp_authsys_bytes(in, len, 0);
}

static const char *rt_cmp_call(const uint8_t *in, size_t len)
{
	struct rpcrdma_rpc_call c;
	struct rpc_msg m;
	struct rpcrdma_xdr x;
	XDR t;
	const char *why = NULL;
	uint8_t *a, *b;

	if (!rt_dup2(in, len, &a, &b))
		return NULL; /* out of memory: nothing compared */
	rpcrdma_xdr_init(&x, a, len, RPCRDMA_XDR_DECODE);
	int ours = rpcrdma_rpc_decode_call(&x, &c) == 0;
	memset(&m, 0, sizeof(m));
	xdrmem_create(&t, (char *)b, (u_int)len, XDR_DECODE);
	int theirs = xdr_callmsg(&t, &m) == TRUE;

	if (ours && c.rpcvers != RPCRDMA_RPC_VERS) {
		/* RT_RULE 1. RFC 5531 §9: "rpcvers must be equal to 2", and
		 * the rest of call_body is defined for version 2 only. Ours
		 * takes xid and rpcvers of any other version and stops there,
		 * so the server can answer MSG_DENIED / RPC_MISMATCH
		 * (RFC 5531 §9, rejected_reply); xdr_callmsg refuses it. */
		rt_stats.rule_rpcvers++;
		if (theirs)
			why = "libtirpc took a call whose rpcvers is not 2";
		else if (rpcrdma_xdr_getpos(&x) != 12 || c.prog || c.vers || c.proc)
			why = "a call with rpcvers != 2: ours did not stop after rpcvers";
	} else if (ours != theirs) {
		why = ours ? "ours takes a call header libtirpc refuses"
			   : "libtirpc takes a call header ours refuses";
	} else if (ours) {
		if (rpcrdma_xdr_getpos(&x) != xdr_getpos(&t))
			why = "call: the two read different byte counts";
		else if (c.xid != m.rm_xid || m.rm_direction != CALL)
			why = "call xid or msg_type differs";
		else if (c.rpcvers != m.rm_call.cb_rpcvers || c.prog != m.rm_call.cb_prog ||
			 c.vers != m.rm_call.cb_vers || c.proc != m.rm_call.cb_proc)
			why = "call rpcvers / prog / vers / proc differ";
		else if (!rt_auth_eq(&c.cred, &m.rm_call.cb_cred))
			why = "call credential differs";
		else if (!rt_auth_eq(&c.verf, &m.rm_call.cb_verf))
			why = "call verifier differs";
		else if (c.cred.flavor == RPCRDMA_RPC_AUTH_SYS) {
			/* The credential's body as the server parses it. */
			rt_stats.sys_creds++;
			why = rt_cmp_authsys_bytes(c.cred.body, c.cred.len, 1);
		}
	}
	if (ours == theirs)
		(ours ? rt_stats.both_ok : rt_stats.both_bad)[0]++;
	xdr_free((xdrproc_t)xdr_opaque_auth, (char *)&m.rm_call.cb_cred);
	xdr_free((xdrproc_t)xdr_opaque_auth, (char *)&m.rm_call.cb_verf);
	xdr_destroy(&t);
	free(a);
	free(b);
	return why;
}

static const char *rt_cmp_reply_fields(const struct rpcrdma_rpc_reply *r, const struct rpc_msg *m)
{
	if (r->xid != m->rm_xid || m->rm_direction != REPLY)
		return "reply xid or msg_type differs";
	if (r->reply_stat != (uint32_t)m->rm_reply.rp_stat)
		return "reply_stat differs";
	if (r->reply_stat == RPCRDMA_RPC_MSG_ACCEPTED) {
		const struct accepted_reply *ar = &m->acpted_rply;
		if (!rt_auth_eq(&r->verf, &ar->ar_verf))
			return "reply verifier differs";
		if (r->accept_stat != (uint32_t)ar->ar_stat)
			return "accept_stat differs";
		if (r->accept_stat == RPCRDMA_RPC_PROG_MISMATCH &&
		    (r->mismatch_low != ar->ar_vers.low || r->mismatch_high != ar->ar_vers.high))
			return "PROG_MISMATCH low / high differ";
		return NULL;
	}
	const struct rejected_reply *rr = &m->rjcted_rply;
	if (r->reject_stat != (uint32_t)rr->rj_stat)
		return "reject_stat differs";
	if (r->reject_stat == RPCRDMA_RPC_RPC_MISMATCH &&
	    (r->mismatch_low != rr->rj_vers.low || r->mismatch_high != rr->rj_vers.high))
		return "RPC_MISMATCH low / high differ";
	if (r->reject_stat == RPCRDMA_RPC_AUTH_ERROR && r->auth_stat != (uint32_t)rr->rj_why)
		return "auth_stat differs";
	return NULL;
}

/* A SUCCESS reply's results: the procedure's, none here (xdr_void has
 * another type than xdrproc_t). */
static bool_t rt_no_results(XDR *x, ...)
{
	(void)x;
	return TRUE;
}

static const char *rt_cmp_reply(const uint8_t *in, size_t len)
{
	struct rpcrdma_rpc_reply r;
	struct rpc_msg m;
	struct rpcrdma_xdr x;
	XDR t;
	const char *why = NULL;
	uint8_t *a, *b;

	if (!rt_dup2(in, len, &a, &b))
		return NULL; /* out of memory: nothing compared */
	rpcrdma_xdr_init(&x, a, len, RPCRDMA_XDR_DECODE);
	int rc = rpcrdma_rpc_decode_reply(&x, &r);
	int ours = rc == 0;
	memset(&m, 0, sizeof(m));
	m.acpted_rply.ar_results.where = NULL;
	m.acpted_rply.ar_results.proc = rt_no_results;
	xdrmem_create(&t, (char *)b, (u_int)len, XDR_DECODE);
	int theirs = xdr_replymsg(&t, &m) == TRUE;
	uint32_t rp_stat = (uint32_t)m.rm_reply.rp_stat;

	if (theirs && !ours && rp_stat == MSG_ACCEPTED &&
	    (uint32_t)m.acpted_rply.ar_stat > RPCRDMA_RPC_SYSTEM_ERR) {
		/* RT_RULE 2. RFC 5531 §9: accept_stat is an enum of six
		 * values, and RFC 4506 §4.3 makes any other value of an enum
		 * an error; ours refuses it (-EINVAL). xdr_accepted_reply
		 * takes any value ("open ended set of problems") and stops
		 * after it. */
		rt_stats.rule_accept_stat++;
		if (rc != -EINVAL)
			why = "an unknown accept_stat: ours failed with another error than -EINVAL";
	} else if (theirs && !ours && rp_stat == MSG_DENIED &&
		   m.rjcted_rply.rj_stat == AUTH_ERROR &&
		   (uint32_t)m.rjcted_rply.rj_why > RPCRDMA_RPC_RPCSEC_GSS_CTXPROBLEM) {
		/* RT_RULE 3. RFC 5531 §9: auth_stat is an enum (0-14 with
		 * RPCSEC_GSS's); as in RT_RULE 2 ours refuses another value
		 * (-EINVAL), xdr_rejected_reply takes any. */
		rt_stats.rule_auth_stat++;
		if (rc != -EINVAL)
			why = "an unknown auth_stat: ours failed with another error than -EINVAL";
	} else if (ours != theirs) {
		why = ours ? "ours takes a reply header libtirpc refuses"
			   : "libtirpc takes a reply header ours refuses";
	} else if (ours) {
		if (rpcrdma_xdr_getpos(&x) != xdr_getpos(&t))
			why = "reply: the two read different byte counts";
		else
			why = rt_cmp_reply_fields(&r, &m);
	}
	if (ours == theirs)
		(ours ? rt_stats.both_ok : rt_stats.both_bad)[1]++;
	/* ru is a union: only an accepted reply can hold a verifier body
	 * (a rejected one's rj_vers lies over ar_verf.oa_base). */
	if (m.rm_direction == REPLY && m.rm_reply.rp_stat == MSG_ACCEPTED)
		xdr_free((xdrproc_t)xdr_opaque_auth, (char *)&m.acpted_rply.ar_verf);
	xdr_destroy(&t);
	free(a);
	free(b);
	return why;
}

#endif
