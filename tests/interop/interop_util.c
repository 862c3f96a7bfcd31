/* SPDX-License-Identifier: MIT */
/* Shared code of the interop test programs: see interop_util.h. */
#include "interop_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mount3.h"
#include "rpcrdma/client.h"
#include "util/be.h"

int iop_failures;
enum rpcrdma_rtr iop_connect_rtr = RPCRDMA_RTR_NONE;
uint32_t iop_connect_ird = 128;

const uint8_t iop_linux_client_pdata[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};

void iop_note_invalid_xid(const struct iop_env *e, uint32_t xid)
{
	char path[600];
	FILE *f;

	if (!e->state[0])
		return;
	snprintf(path, sizeof(path), "%s/invalid-xids", e->state);
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%08x\n", xid);
		fclose(f);
	}
}

uint64_t iop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---------------------------------------------------------------- env */

static int read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/* Value of KEY=... in a key=value file body, copied into @out. */
static int kv(const char *body, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);

	for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, "\n");

			if (n >= cap)
				return -1;
			memcpy(out, v, n);
			out[n] = '\0';
			return 0;
		}
	}
	return -1;
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

const char *iop_addr(void)
{
	const char *a = getenv("RPCRDMA_INTEROP_ADDR");

	return a && *a ? a : "127.0.0.1";
}

int iop_env_get(struct iop_env *e)
{
	const char *st = getenv("RPCRDMA_INTEROP_STATE");
	char path[600], body[2048], v[512];

	memset(e, 0, sizeof(*e));
	if (st && *st) {
		snprintf(e->state, sizeof(e->state), "%s", st);
		snprintf(path, sizeof(path), "%s/skip", st);
		if (read_file(path, body, sizeof(body)) == 0) {
			printf("SKIP: %s", body);
			return IOP_SKIP;
		}
		snprintf(path, sizeof(path), "%s/guest-ready", st);
		if (read_file(path, body, sizeof(body)) != 0) {
			/* The fixture setup failed (then ctest does not run us)
			 * or this program was started by hand. */
			printf("SKIP: no guest running (%s missing): run scripts/interop.sh\n",
			       path);
			return IOP_SKIP;
		}
		if (kv(body, "RDMA_PORT", v, sizeof(v)) || parse_port(v, &e->rdma_port) ||
		    kv(body, "MOUNT_PORT", v, sizeof(v)) || parse_port(v, &e->mount_port)) {
			printf("FAIL: %s is malformed\n", path);
			return IOP_FAIL;
		}
		if (kv(body, "GUEST_OUT", e->guest_out, sizeof(e->guest_out)))
			e->guest_out[0] = '\0';
		return IOP_PASS;
	}
	const char *rp = getenv("RPCRDMA_INTEROP_RDMA_PORT");
	const char *mp = getenv("RPCRDMA_INTEROP_MOUNT_PORT");
	const char *go = getenv("RPCRDMA_INTEROP_GUEST_OUT");

	if (!rp || !mp || parse_port(rp, &e->rdma_port) || parse_port(mp, &e->mount_port)) {
		printf("SKIP: no guest: run through `ctest -L interop` or scripts/interop.sh\n");
		return IOP_SKIP;
	}
	snprintf(e->guest_out, sizeof(e->guest_out), "%s", go ? go : "");
	return IOP_PASS;
}

/* ---------------------------------------------------------------- connection */

#define TIMEOUT_MS 20000

static int wait_event(struct iop_conn *c, struct rpcrdma_event *ev, int timeout_ms)
{
	uint64_t end = iop_now_ms() + (uint64_t)timeout_ms;

	while (iop_now_ms() < end) {
		if (rpcrdma_evch_get(c->evch, ev) == 0)
			return 0;
		int rc = rpcrdma_dev_progress(c->dev, 50);

		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	return -ETIMEDOUT;
}

int iop_wait_event(struct iop_conn *c, struct rpcrdma_event *ev, int timeout_ms)
{
	return wait_event(c, ev, timeout_ms);
}

/* The share folder (the guest's /peer): guest_out without its last part. */
static int share_dir(const struct iop_env *e, char *share, size_t cap)
{
	char *slash;

	if (!e->guest_out[0] || strlen(e->guest_out) >= cap)
		return -1;
	snprintf(share, cap, "%s", e->guest_out);
	slash = strrchr(share, '/');
	if (!slash || slash == share)
		return -1;
	*slash = '\0';
	return 0;
}

int iop_guest_cmd(const struct iop_env *e, const char *what, int timeout_ms, char *answer,
		  size_t cap)
{
	char cmd[700], done[700], share[512];
	uint64_t end = iop_now_ms() + (uint64_t)timeout_ms;
	FILE *f;

	if (share_dir(e, share, sizeof(share)))
		return -1;
	snprintf(done, sizeof(done), "%s/%s.done", e->guest_out, what);
	snprintf(cmd, sizeof(cmd), "%s/cmd-%s", share, what);
	remove(done);
	f = fopen(cmd, "w");
	if (!f)
		return -1;
	fclose(f);
	while (iop_now_ms() < end) {
		if (read_file(done, answer, cap) == 0 && answer[0]) {
			answer[strcspn(answer, "\n")] = '\0';
			return 0;
		}
		usleep(100 * 1000);
	}
	remove(cmd);
	return -1;
}

int iop_guest_sh_start(const struct iop_env *e, const char *tag, const char *line)
{
	char share[512], tmp[700], cmd[700], done[700];
	FILE *f;
	int ok;

	if (share_dir(e, share, sizeof(share)))
		return -1;
	snprintf(done, sizeof(done), "%s/sh-%s.done", e->guest_out, tag);
	snprintf(cmd, sizeof(cmd), "%s/cmd-sh-%s", share, tag);
	/* Written under a name the guest's loop does not match, then renamed:
	 * the loop must never read a half-written line. */
	snprintf(tmp, sizeof(tmp), "%s/.tmp-sh-%s", share, tag);
	remove(done);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%s\n", line) > 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, cmd) != 0) {
		remove(tmp);
		return -1;
	}
	return 0;
}

int iop_guest_sh_wait(const struct iop_env *e, const char *tag, int timeout_ms, int *status,
		      char *answer, size_t cap)
{
	char done[700], body[1024];
	uint64_t end = iop_now_ms() + (uint64_t)timeout_ms;

	snprintf(done, sizeof(done), "%s/sh-%s.done", e->guest_out, tag);
	while (iop_now_ms() < end) {
		/* The guest writes the answer with one shell redirection: an
		 * empty file or one without its newline is still being
		 * written. */
		if (read_file(done, body, sizeof(body)) == 0 && strchr(body, '\n')) {
			char *sp;

			body[strcspn(body, "\n")] = '\0';
			if (strncmp(body, "rc=", 3) != 0) {
				snprintf(answer, cap, "%s", body); /* TIMEOUT ... */
				return -1;
			}
			*status = atoi(body + 3);
			sp = strchr(body, ' ');
			snprintf(answer, cap, "%s", sp ? sp + 1 : "");
			return 0;
		}
		usleep(50 * 1000);
	}
	snprintf(answer, cap, "no answer within %d ms", timeout_ms);
	return -1;
}

int iop_guest_sh(const struct iop_env *e, const char *tag, const char *line, int timeout_ms,
		 int *status, char *answer, size_t cap)
{
	if (iop_guest_sh_start(e, tag, line) != 0)
		return -1;
	return iop_guest_sh_wait(e, tag, timeout_ms, status, answer, cap);
}

static const char *ev_name(enum rpcrdma_event_type t)
{
	switch (t) {
	case RPCRDMA_EV_CONNECT_REQUEST:
		return "CONNECT_REQUEST";
	case RPCRDMA_EV_ESTABLISHED:
		return "ESTABLISHED";
	case RPCRDMA_EV_REJECTED:
		return "REJECTED";
	case RPCRDMA_EV_CONNECT_ERROR:
		return "CONNECT_ERROR";
	case RPCRDMA_EV_DISCONNECTED:
		return "DISCONNECTED";
	case RPCRDMA_EV_TERMINATE:
		return "TERMINATE";
	}
	return "?";
}

static uint8_t *slot(struct iop_conn *c, uint32_t i)
{
	return c->buf + (size_t)i * IOP_INLINE;
}

static int post_slot(struct iop_conn *c, uint32_t i)
{
	struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)slot(c, i), IOP_INLINE,
				  rpcrdma_mr_stag(c->buf_mr)};

	return rpcrdma_post_recv(c->ep, i, &sge, 1);
}

bool iop_peer_ops_counted(const struct iop_conn *c)
{
	struct rpcrdma_dev_caps caps;

	return rpcrdma_dev_query(c->dev, &caps) == 0 &&
	       (caps.flags & RPCRDMA_DEV_CAP_PEER_OPS_COUNTED);
}

int iop_connect(struct iop_conn *c, uint16_t port, uint8_t rev, bool crc, const void *pd,
		size_t pdlen)
{
	struct rpcrdma_cq_attr ca = {.cqe = 256};
	struct rpcrdma_ep_attr ea = {0};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	const char *prov = getenv("RPCRDMA_INTEROP_PROVIDER");
	struct rpcrdma_dev_caps caps = {0};
	uint8_t pdv[RPCRDMA_MAX_PRIVATE_DATA];
	int rc;

	memset(c, 0, sizeof(*c));
	c->xid = 0x1f000000u ^ (uint32_t)(getpid() << 8);
	IOP_CHECK(inet_pton(AF_INET, iop_addr(), &sin.sin_addr) == 1);
	IOP_CHECK((rc = rpcrdma_dev_open(prov && *prov ? prov : "softiwarp", NULL, &c->dev)) == 0);
	IOP_CHECK(rpcrdma_pd_alloc(c->dev, &c->pd) == 0);
	IOP_CHECK(rpcrdma_dev_query(c->dev, &caps) == 0);
	if (pd && pdlen >= 8 && pdlen <= sizeof(pdv) &&
	    memcmp(pd, iop_linux_client_pdata, 4) == 0) {
		memcpy(pdv, pd, pdlen);
		if (!(caps.flags & RPCRDMA_DEV_CAP_REMOTE_INV))
			pdv[5] &= (uint8_t)~RPCRDMA1_CM_FLAG_REMOTE_INV;
		c->inv_offered = (pdv[5] & RPCRDMA1_CM_FLAG_REMOTE_INV) != 0;
		pd = pdv;
	}
	IOP_CHECK(rpcrdma_cq_create(c->dev, &ca, &c->cq) == 0);
	IOP_CHECK(rpcrdma_evch_create(c->dev, NULL, &c->evch) == 0);
	c->buf = aligned_alloc(4096, (IOP_NRECV + 1) * IOP_INLINE);
	IOP_CHECK(c->buf);
	memset(c->buf, 0, (IOP_NRECV + 1) * IOP_INLINE);
	IOP_CHECK(rpcrdma_mr_reg(c->pd, c->buf, (IOP_NRECV + 1) * IOP_INLINE,
				 RPCRDMA_ACCESS_LOCAL_WRITE, &c->buf_mr) == 0);
	/* RFC 6581 §9 as the Linux client fills it: IRD 128 (the server may
	 * RDMA Read our Read chunks 128 at a time), ORD 0 (we never Read). */
	ea.comp_mask = RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_MPA_REV | RPCRDMA_EP_ATTR_IRD_ORD |
		       RPCRDMA_EP_ATTR_RTR;
	ea.rtr = iop_connect_rtr;
	ea.mpa_crc = crc;
	ea.mpa_rev = rev;
	ea.ird = iop_connect_ird;
	ea.ord = 0;
	ea.send_cq = c->cq;
	ea.recv_cq = c->cq;
	ea.evch = c->evch;
	IOP_CHECK((rc = rpcrdma_ep_create(c->pd, &ea, &c->ep)) == 0);
	for (uint32_t i = 0; i < IOP_NRECV; i++)
		IOP_CHECK(post_slot(c, i) == 0);
	IOP_CHECK(rpcrdma_connect(c->ep, (struct sockaddr *)&sin, sizeof(sin), pd, pdlen) == 0);
	rc = wait_event(c, &c->est, TIMEOUT_MS);
	if (rc) {
		fprintf(stderr, "connect to %s:%u: no event (%d)\n", iop_addr(), port, rc);
		return rc;
	}
	if (c->est.type != RPCRDMA_EV_ESTABLISHED) {
		printf("connect to %s:%u (MPA rev %u): %s status %d, %u bytes of private "
		       "data\n",
		       iop_addr(), port, rev, ev_name(c->est.type), c->est.status,
		       c->est.private_data_len);
		return c->est.status ? c->est.status : -ECONNREFUSED;
	}
	rpcrdma1_cm_private_decode(c->est.private_data, c->est.private_data_len, &c->pp);
	return 0;
}

/*
 * Every Send we make is a call the server answers once, duplicates of a
 * first-Send retransmission included. Wait (up to 3 s) until all answers
 * are in before leaving: Linux 6.1 siw does not flush a Send it has not
 * started when the connection goes down, so the nfsd thread that posted
 * the late duplicate would wait for its completion forever (seen: that
 * thread stuck in svc_rdma_sendto, and `rpc.nfsd 0` then hanging in
 * kthread_stop).
 */
static void drain_replies(struct iop_conn *c)
{
	static struct iop_msg m;
	struct rpcrdma_ep_stats st;
	uint64_t end = iop_now_ms() + 3000;

	while (rpcrdma_ep_query_stats(c->ep, &st) == 0 && st.recvs < st.sends && iop_now_ms() < end)
		(void)iop_recv(c, &m, 200);
}

void iop_close(struct iop_conn *c)
{
	struct rpcrdma_event ev;

	if (c->ep && c->est.type == RPCRDMA_EV_ESTABLISHED) {
		drain_replies(c);
		rpcrdma_disconnect(c->ep);
		(void)wait_event(c, &ev, 5000);
	}
	if (c->ep)
		rpcrdma_ep_destroy(c->ep);
	if (c->buf_mr)
		rpcrdma_mr_dereg(c->buf_mr);
	if (c->evch)
		rpcrdma_evch_destroy(c->evch);
	if (c->cq)
		rpcrdma_cq_destroy(c->cq);
	if (c->pd)
		rpcrdma_pd_free(c->pd);
	if (c->dev)
		rpcrdma_dev_close(c->dev);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

/* RECV completions that arrive while a Send completion is awaited are
 * parked here, oldest first, for the next iop_recv(). */
#define PARK_MAX IOP_NRECV
static struct rpcrdma_wc parked[PARK_MAX];
static unsigned int nparked;

static const char *wc_status_name(enum rpcrdma_wc_status s)
{
	static const char *const n[] = {
	    "SUCCESS",        "LOC_LEN_ERR",     "LOC_PROT_ERR", "LOC_QP_OP_ERR", "WR_FLUSH_ERR",
	    "REM_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_OP_ERR",   "TRANSPORT_ERR", "GENERAL_ERR"};

	return (unsigned int)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static int wait_wc(struct iop_conn *c, enum rpcrdma_wc_opcode op, struct rpcrdma_wc *wc,
		   int timeout_ms)
{
	uint64_t end = iop_now_ms() + (uint64_t)timeout_ms;

	if (op == RPCRDMA_WC_RECV && nparked) {
		*wc = parked[0];
		nparked--;
		memmove(parked, parked + 1, nparked * sizeof(parked[0]));
		return 0;
	}
	for (;;) {
		int n = rpcrdma_cq_poll(c->cq, wc, 1);

		if (n < 0)
			return n;
		if (n == 1) {
			if (wc->status != RPCRDMA_WC_SUCCESS) {
				fprintf(stderr,
					"completion error: wr_id %llu opcode %d status %s "
					"vendor_err 0x%06x\n",
					(unsigned long long)wc->wr_id, wc->opcode,
					wc_status_name(wc->status), wc->vendor_err);
				return -EIO;
			}
			if (wc->opcode == op)
				return 0;
			if (wc->opcode == RPCRDMA_WC_RECV && nparked < PARK_MAX)
				parked[nparked++] = *wc;
			continue;
		}
		if (iop_now_ms() >= end)
			return -ETIMEDOUT;
		n = rpcrdma_dev_progress(c->dev, 20);
		if (n < 0 && n != -EINTR)
			return n;
	}
}

int iop_send(struct iop_conn *c, const void *msg, uint32_t len)
{
	uint8_t *s = slot(c, IOP_NRECV);
	struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)s, len, rpcrdma_mr_stag(c->buf_mr)};
	struct rpcrdma_send_wr wr = {.wr_id = 1000,
				     .opcode = RPCRDMA_WR_SEND,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &sge,
				     .num_sge = 1};
	struct rpcrdma_wc wc;
	int rc;

	if (len > IOP_INLINE)
		return -EMSGSIZE;
	memcpy(s, msg, len);
	rc = rpcrdma_post_send(c->ep, &wr);
	if (rc)
		return rc;
	rc = wait_wc(c, RPCRDMA_WC_SEND, &wc, TIMEOUT_MS);
	if (rc)
		return rc;
	return wc.byte_len == len ? 0 : -EIO;
}

int iop_recv(struct iop_conn *c, struct iop_msg *m, int timeout_ms)
{
	struct rpcrdma_wc wc;
	int rc = wait_wc(c, RPCRDMA_WC_RECV, &wc, timeout_ms);

	if (rc)
		return rc;
	if (wc.wr_id >= IOP_NRECV || wc.byte_len > IOP_INLINE)
		return -EIO;
	m->len = wc.byte_len;
	m->wc_flags = wc.wc_flags;
	m->inv_stag = wc.invalidated_stag;
	memcpy(m->data, slot(c, (uint32_t)wc.wr_id), wc.byte_len);
	return post_slot(c, (uint32_t)wc.wr_id);
}

/* ---------------------------------------------------------------- calls */

void iop_clnt_auth_root(struct rpcrdma_clnt_opts *co)
{
	static const struct rpcrdma_rpc_authsys root = {.machinename = "rpcrdma-interop"};

	co->comp_mask |= RPCRDMA_CLNT_OPT_AUTH;
	co->auth_flavor = RPCRDMA_RPC_AUTH_SYS;
	co->auth_sys = &root;
}

int iop_encode_call(struct iop_conn *c, uint8_t *buf, size_t cap, uint32_t xid,
		    const struct rpcrdma1_chunks *ch, uint32_t prog, uint32_t vers, uint32_t proc,
		    xdrproc_t xargs, void *args, size_t *rpc_off)
{
	struct rpcrdma_xdr x;
	struct rpcrdma_rpc_call call = {
	    .xid = xid, .rpcvers = RPCRDMA_RPC_VERS, .prog = prog, .vers = vers, .proc = proc};
	struct rpcrdma_rpc_authsys sys = {.stamp = 0, .machinename = "rpcrdma-interop"};
	int rc;

	(void)c;
	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	/* RFC 8166 §4.2.3: the requester's credit field asks for credits;
	 * Linux's client asks for 128 (docs/linux-peer.md). */
	rc = rpcrdma1_encode_msg(&x, xid, 128, ch);
	if (rc)
		return rc;
	*rpc_off = rpcrdma_xdr_getpos(&x);
	rc = rpcrdma_rpc_auth_sys(&call.cred, &sys);
	if (rc)
		return rc;
	rpcrdma_rpc_auth_none(&call.verf);
	rc = rpcrdma_rpc_encode_call(&x, &call);
	if (rc)
		return rc;
	if (xargs) {
		XDR xdrs;

		rpcrdma_tirpc_xdr_create(&xdrs, &x);
		if (!xargs(&xdrs, args))
			return -EMSGSIZE;
	}
	return (int)rpcrdma_xdr_getpos(&x);
}

static int decode_reply(struct iop_reply *r)
{
	int rc;

	rpcrdma_xdr_init(&r->x, r->msg.data, r->msg.len, RPCRDMA_XDR_DECODE);
	rc = rpcrdma1_decode(&r->x, &r->hdr);
	/* Linux svcrdma echoes the call's rdma_vers (2) in the fixed words of
	 * its ERR_VERS reply; the codec decodes an RDMA_ERROR / ERR_VERS
	 * whatever its rdma_vers (RFC 8166 §7), so low/high come from it. */
	if (rc) {
		fprintf(stderr, "reply transport header does not decode: %d\n", rc);
		return rc;
	}
	memset(&r->rpc, 0, sizeof(r->rpc));
	if (r->hdr.proc != RPCRDMA1_MSG)
		return 0; /* RDMA_NOMSG (Reply chunk) or RDMA_ERROR: the caller looks */
	rc = rpcrdma_rpc_decode_reply(&r->x, &r->rpc);
	if (rc) {
		fprintf(stderr, "RPC reply header does not decode: %d\n", rc);
		return rc;
	}
	rpcrdma_tirpc_xdr_create(&r->xdrs, &r->x);
	return 0;
}

bool iop_nudge_on(void)
{
	const char *e = getenv("RPCRDMA_SIW_NUDGE_MS");

	/* src/softiwarp/cm.c: unset or empty means the default period */
	return !e || !*e || strtoul(e, NULL, 10) != 0;
}

int iop_call(struct iop_conn *c, const void *msg, uint32_t len, uint32_t xid, bool retry,
	     struct iop_reply *r)
{
	int rc, tries;

	/* The provider's first-frame nudge makes Linux read a first Send
	 * (iop_nudge_on): the resend is only for runs with it off. */
	retry = retry && !iop_nudge_on();
	tries = retry ? 3 : 1;

	rc = iop_send(c, msg, len);
	if (rc) {
		fprintf(stderr, "Send of xid 0x%08x failed: %d\n", xid, rc);
		return rc;
	}
	for (;;) {
		rc = iop_recv(c, &r->msg, retry ? 1000 : TIMEOUT_MS);
		if (rc == -ETIMEDOUT && --tries > 0) {
			c->stalls++;
			printf("no reply to xid 0x%08x after 1 s: sending it again\n", xid);
			rc = iop_send(c, msg, len);
			if (rc)
				return rc;
			continue;
		}
		if (rc) {
			fprintf(stderr, "no reply to xid 0x%08x: %d\n", xid, rc);
			return rc;
		}
		if (r->msg.len < RPCRDMA1_FIXED_SIZE) {
			fprintf(stderr, "short message (%u bytes)\n", r->msg.len);
			return -EBADMSG;
		}
		if (get_be32(r->msg.data) != xid) {
			fprintf(stderr, "skipping a message for xid 0x%08x (waiting for 0x%08x)\n",
				get_be32(r->msg.data), xid);
			continue;
		}
		break;
	}
	rc = decode_reply(r);
	if (rc == 0)
		c->grant = r->hdr.credit;
	return rc;
}

int iop_nfs_null(struct iop_conn *c, bool retry)
{
	static struct iop_reply r;
	uint8_t buf[512];
	size_t off;
	uint32_t xid = c->xid++;
	int len = iop_encode_call(c, buf, sizeof(buf), xid, NULL, 100003, 3, 0, NULL, NULL, &off);

	IOP_CHECK(len > 0);
	IOP_CHECK(iop_call(c, buf, (uint32_t)len, xid, retry, &r) == 0);
	/* RFC 8166 §4.2: the reply echoes the xid; Linux grants 64 credits. */
	IOP_CHECK(r.hdr.xid == xid && r.hdr.vers == RPCRDMA1_VERSION);
	IOP_CHECK(r.hdr.proc == RPCRDMA1_MSG);
	IOP_CHECK(r.hdr.credit == 64);
	IOP_CHECK(r.hdr.chunks.nreads == 0 && r.hdr.chunks.nwrites == 0 &&
		  !r.hdr.chunks.reply_present);
	IOP_CHECK(r.rpc.xid == xid && r.rpc.reply_stat == RPCRDMA_RPC_MSG_ACCEPTED &&
		  r.rpc.accept_stat == RPCRDMA_RPC_SUCCESS);
	IOP_CHECK(rpcrdma_xdr_remaining(&r.x) == 0); /* NULL returns void */
	/* RFC 8797 §4 / docs/linux-peer.md: replies to calls without chunks
	 * are plain Sends, never Send with Invalidate. */
	IOP_CHECK((r.msg.wc_flags & RPCRDMA_WC_F_WITH_INV) == 0);
	return 0;
}

/* ---------------------------------------------------------------- MOUNT */

int iop_mount(uint16_t port, const char *path, uint8_t *fh, uint32_t *fhlen)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int sock = RPC_ANYSOCK;
	struct timeval tv = {20, 0};
	mountres3 res;
	dirpath p = (char *)(uintptr_t)path;
	CLIENT *cl;
	enum clnt_stat st;
	int rc = -1;

	/* A port in the address: libtirpc connects straight to mountd, no
	 * rpcbind query (the guest's rpcbind is not forwarded). */
	if (inet_pton(AF_INET, iop_addr(), &sin.sin_addr) != 1)
		return -1;
	cl = clnttcp_create(&sin, MOUNT_PROGRAM, MOUNT_V3, &sock, 0, 0);
	if (!cl) {
		fprintf(stderr, "%s\n", clnt_spcreateerror("clnttcp_create(mountd)"));
		return -1;
	}
	cl->cl_auth = authunix_create((char *)(uintptr_t) "rpcrdma-interop", 0, 0, 0, NULL);
	memset(&res, 0, sizeof(res));
	st = clnt_call(cl, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, (char *)&p,
		       (xdrproc_t)xdr_mountres3, (char *)&res, tv);
	if (st != RPC_SUCCESS) {
		fprintf(stderr, "%s\n", clnt_sperror(cl, "MOUNTPROC3_MNT"));
	} else if (res.fhs_status != MNT3_OK) {
		fprintf(stderr, "MOUNTPROC3_MNT %s: mountstat3 %d\n", path, res.fhs_status);
	} else if (res.mountres3_u.mountinfo.fhandle.fhandle3_len > FHSIZE3) {
		fprintf(stderr, "MOUNTPROC3_MNT: handle too long\n");
	} else {
		*fhlen = res.mountres3_u.mountinfo.fhandle.fhandle3_len;
		memcpy(fh, res.mountres3_u.mountinfo.fhandle.fhandle3_val, *fhlen);
		rc = 0;
	}
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_mountres3, (char *)&res);
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
	return rc;
}

/* ---------------------------------------------------------------- checksums */

uint32_t iop_cksum(const void *p, size_t n)
{
	static uint32_t table[256];
	const uint8_t *b = p;
	uint32_t crc = 0;

	if (!table[1]) {
		/* CRC-32, polynomial 0x04c11db7, most significant bit first */
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i << 24;

			for (int k = 0; k < 8; k++)
				v = (v & 0x80000000u) ? (v << 1) ^ 0x04c11db7u : v << 1;
			table[i] = v;
		}
	}
	for (size_t i = 0; i < n; i++)
		crc = (crc << 8) ^ table[(crc >> 24) ^ b[i]];
	for (size_t len = n; len; len >>= 8)
		crc = (crc << 8) ^ table[(crc >> 24) ^ (len & 0xffu)];
	return ~crc;
}

int iop_cksum_lookup(const char *file, const char *fname, uint32_t *crc, uint64_t *size)
{
	FILE *f = fopen(file, "r");
	char line[600], n[512];
	unsigned long c;
	unsigned long long s;
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lu %llu %511s", &c, &s, n) == 3 && strcmp(n, fname) == 0) {
			*crc = (uint32_t)c;
			*size = s;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

void iop_fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed | 1u;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}
