/* SPDX-License-Identifier: MIT */
/*
 * Protection (RFC 5042 §5, RFC 5040 §7, RFC 5041 §7) between two processes.
 * The parent is the target: it registers regions with different rights,
 * one it invalidates, one it deregisters, one in a second PD, one scoped
 * to another endpoint of the same PD (rpcrdma_mr_bind_ep). For every
 * case the forked child connects afresh and issues one bad tagged access
 * (wrong key, invalidated STag, deregistered STag, out of bounds before /
 * after / TO wrap, write to a read-only region, read from a write-only
 * region, STag of another PD or scoped to another endpoint), followed at
 * once by a Send and a good
 * 4 KiB Write to the read-write region.
 *
 * Asserts on the target: a Terminate is sent (TERMINATE event with
 * term_local and the layer/etype/code of RFC 5040 §7 / RFC 5041 §7,
 * stats.terminates_tx), DISCONNECTED follows, all its posted receives are
 * flushed (the Send after the bad access is never delivered), and every
 * region — the target of the bad access and of the good Write that came
 * after it — is byte-for-byte unchanged (checksums before and after).
 * On the initiator: TERMINATE event (received) with the same code, a bad
 * Read completes REM_ACCESS_ERR with vendor_err = layer/etype/code, every
 * posted request completes exactly once and in order, work posted after the
 * Terminate is flushed, DISCONNECTED follows.
 * A last case posts a Send with an invalid local key: LOC_PROT_ERR and the
 * endpoint in error on both sides, nothing delivered.
 *
 * Where the RFCs leave the layer open (an access-rights or PD violation of
 * a tagged Write can be reported by DDP or by RDMAP), both encodings are
 * accepted; Linux siw uses the DDP tagged-buffer codes for Writes.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_PORT = 1, MSG_INFO, MSG_DONE, MSG_NEXT };

enum region { R_RW, R_RO, R_WO, R_INV, R_DEREG, R_PD2, R_SCOPE, NREG };
#define RW_LEN  ((size_t)1 << 20)
#define SUB_LEN ((size_t)256 * 1024)

struct pcase {
	const char *name;
	bool write;
	enum region reg;
	int stag_mod; /* 1: flip the key byte */
	int to_mode;  /* 0: base+64, 1: end-100, 2: base-16, 3: TO wrap */
	uint32_t len;
	uint32_t term[2]; /* accepted layer/etype/code (second 0 = none) */
};

/* RFC 5041 §7.2 (DDP tagged: layer 1, etype 1) and RFC 5040 §7.1 (RDMAP
 * remote protection: layer 0, etype 1). */
static const struct pcase cases[] = {
    {"write wrong key", true, R_RW, 1, 0, 262144, {SIWT_TERM(1, 1, 0), 0}},
    {"write invalidated STag", true, R_INV, 0, 0, 262144, {SIWT_TERM(1, 1, 0), 0}},
    {"write deregistered STag", true, R_DEREG, 0, 0, 4096, {SIWT_TERM(1, 1, 0), 0}},
    {"write past the end", true, R_RW, 0, 1, 262144, {SIWT_TERM(1, 1, 1), 0}},
    {"write before the start", true, R_RW, 0, 2, 100, {SIWT_TERM(1, 1, 1), 0}},
    {"write TO wrap", true, R_RW, 0, 3, 512, {SIWT_TERM(1, 1, 1), SIWT_TERM(1, 1, 3)}},
    {"write to read-only region",
     true,
     R_RO,
     0,
     0,
     262144,
     {SIWT_TERM(0, 1, 2), SIWT_TERM(1, 1, 0)}},
    {"write to STag of another PD",
     true,
     R_PD2,
     0,
     0,
     65536,
     {SIWT_TERM(1, 1, 2), SIWT_TERM(0, 1, 3)}},
    {"read wrong key", false, R_RW, 1, 0, 262144, {SIWT_TERM(0, 1, 0), 0}},
    {"read invalidated STag", false, R_INV, 0, 0, 4096, {SIWT_TERM(0, 1, 0), 0}},
    {"read deregistered STag", false, R_DEREG, 0, 0, 4096, {SIWT_TERM(0, 1, 0), 0}},
    {"read past the end", false, R_RW, 0, 1, 262144, {SIWT_TERM(0, 1, 1), 0}},
    {"read from write-only region", false, R_WO, 0, 0, 4096, {SIWT_TERM(0, 1, 2), 0}},
    {"read STag of another PD", false, R_PD2, 0, 0, 4096, {SIWT_TERM(0, 1, 3), 0}},
    /* same PD, but bound to an endpoint that is not this stream's */
    {"write to STag scoped to another endpoint",
     true,
     R_SCOPE,
     0,
     0,
     65536,
     {SIWT_TERM(1, 1, 2), SIWT_TERM(0, 1, 3)}},
    {"read STag scoped to another endpoint", false, R_SCOPE, 0, 0, 4096, {SIWT_TERM(0, 1, 3), 0}},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const size_t reg_len[NREG] = {RW_LEN, SUB_LEN, SUB_LEN, SUB_LEN, SUB_LEN, SUB_LEN, SUB_LEN};

/* ------------------------------------------------------------------ */
/* child: the initiator of bad accesses                                */
/* ------------------------------------------------------------------ */

static int child_case(struct siwt_node *n, int ctl, uint16_t port, unsigned c, uint8_t *buf,
		      size_t buflen)
{
	const struct pcase *pc = &cases[c];
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;
	uint32_t stag[NREG];
	int rc;

	siwt_ep_attr(n, &a);
	if (siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est))
		return -1;
	if (siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return -1;
	memcpy(stag, m.data, sizeof(stag));
	rc = rpcrdma_mr_reg(n->pd, buf, buflen, RPCRDMA_ACCESS_LOCAL_WRITE, &mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		return -1;
	uint32_t lkey = rpcrdma_mr_stag(mr);
	uint32_t rs = stag[pc->reg] ^ (pc->stag_mod ? 0xa5u : 0u);
	uint64_t base = m.u[pc->reg], to;
	switch (pc->to_mode) {
	case 1:
		to = base + reg_len[pc->reg] - 100;
		break;
	case 2:
		to = base - 16;
		break;
	case 3:
		to = UINT64_MAX - 255;
		break;
	default:
		to = base + 64;
	}
	siwt_fill(buf, buflen, 0xbad0 + c);
	struct rpcrdma_sge sg = {(uintptr_t)buf, pc->len, lkey};
	struct rpcrdma_sge sg2 = {(uintptr_t)(buf + 300000), 64, lkey};
	struct rpcrdma_sge sg3 = {(uintptr_t)(buf + 310000), 4096, lkey};
	siwt_post(n, 1, pc->write ? RPCRDMA_WR_RDMA_WRITE : RPCRDMA_WR_RDMA_READ,
		  RPCRDMA_SEND_SIGNALED, &sg, 1, rs, to, 0);
	siwt_post(n, 2, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg2, 1, 0, 0, 0);
	siwt_post(n, 3, RPCRDMA_WR_RDMA_WRITE, RPCRDMA_SEND_SIGNALED, &sg3, 1, stag[R_RW],
		  m.u[R_RW] + 8192, 0);

	/* the peer's Terminate */
	int got = siwt_expect_terminate(n, false, pc->term, pc->term[1] ? 2 : 1);

	/* each of the three requests completes exactly once, in order */
	for (uint64_t id = 1; id <= 3; id++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, false, &wc, 10000)) {
			SIWT_CHECK(0, "%s: request %llu never completed", pc->name,
				   (unsigned long long)id);
			break;
		}
		SIWT_EQ(wc.wr_id, id);
		if (id == 1 && !pc->write) {
			SIWT_CHECK(wc.status == RPCRDMA_WC_REM_ACCESS_ERR,
				   "%s: Read completed %s, want REM_ACCESS_ERR", pc->name,
				   siwt_status_str(wc.status));
			if (got >= 0)
				SIWT_CHECK(wc.vendor_err == (uint32_t)got,
					   "%s: vendor_err 0x%x, want 0x%x", pc->name,
					   wc.vendor_err, got);
		} else {
			SIWT_CHECK(wc.status == RPCRDMA_WC_SUCCESS ||
				       wc.status == RPCRDMA_WC_WR_FLUSH_ERR ||
				       wc.status == RPCRDMA_WC_REM_ACCESS_ERR,
				   "%s: request %llu completed %s", pc->name,
				   (unsigned long long)id, siwt_status_str(wc.status));
		}
	}
	/* after the Terminate: flushed, not sent */
	if (siwt_post(n, 4, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg2, 1, 0, 0, 0) == 0)
		siwt_expect_wc(n, false, 4, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_SEND, NULL);
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	struct rpcrdma_ep_stats st;
	if (rpcrdma_ep_query_stats(n->ep, &st) == 0)
		SIWT_CHECK(st.terminates_rx == 1, "%s: stats.terminates_rx %llu", pc->name,
			   (unsigned long long)st.terminates_rx);
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	siwt_expect_pumped(n, ctl, MSG_NEXT, &m);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_forget(n);
	return 0;
}

/* A Send gathering from an invalid local STag: LOC_PROT_ERR (RFC 5042
 * §5.4 applies to local access too), the endpoint goes to error. */
static int child_local(struct siwt_node *n, int ctl, uint16_t port, uint8_t *buf)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est, ev;
	struct rpcrdma_mr *mr;
	struct siwt_msg m;

	siwt_ep_attr(n, &a);
	if (siwt_connect(n, &a, NULL, NULL, port, NULL, 0, &est))
		return -1;
	if (siwt_expect_pumped(n, ctl, MSG_INFO, &m))
		return -1;
	if (rpcrdma_mr_reg(n->pd, buf, 4096, 0, &mr))
		return -1;
	struct rpcrdma_sge good = {(uintptr_t)buf, 64, rpcrdma_mr_stag(mr)};
	struct rpcrdma_sge bad = {(uintptr_t)buf, 64, rpcrdma_mr_stag(mr) ^ 0x5a5a00u};
	struct rpcrdma_sge oob = {(uintptr_t)buf + 4090, 64, rpcrdma_mr_stag(mr)};
	siwt_post(n, 1, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &bad, 1, 0, 0, 0);
	siwt_post(n, 2, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &good, 1, 0, 0, 0);
	siwt_expect_wc(n, false, 1, RPCRDMA_WC_LOC_PROT_ERR, RPCRDMA_WC_SEND, NULL);
	siwt_expect_wc(n, false, 2, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_SEND, NULL);
	if (siwt_post(n, 3, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &oob, 1, 0, 0, 0) == 0)
		siwt_expect_wc(n, false, 3, RPCRDMA_WC_WR_FLUSH_ERR, RPCRDMA_WC_SEND, NULL);
	/* skip a TERMINATE (we may tell the peer why) until DISCONNECTED */
	for (int i = 0; i < 3; i++) {
		if (siwt_event(n, &ev, 10000)) {
			SIWT_CHECK(0, "no DISCONNECTED after a local protection error");
			break;
		}
		if (ev.type == RPCRDMA_EV_DISCONNECTED)
			break;
		SIWT_CHECK(ev.type == RPCRDMA_EV_TERMINATE, "unexpected event %s",
			   siwt_event_str(ev.type));
	}
	siwt_send4(ctl, MSG_DONE, 0, 0, 0);
	siwt_expect_pumped(n, ctl, MSG_NEXT, &m);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	rpcrdma_mr_dereg(mr);
	siwt_forget(n);
	return 0;
}

static int child_main(int ctl, void *arg)
{
	struct siwt_node n;
	struct siwt_msg m;
	size_t buflen = 400000;
	uint8_t *buf = siwt_alloc_buf(buflen);

	(void)arg;
	if (!buf || siwt_expect(ctl, MSG_PORT, &m) || siwt_node_open(&n))
		return -1;
	for (unsigned c = 0; c < NCASES && !siwt_failures; c++)
		child_case(&n, ctl, (uint16_t)m.a, c, buf, buflen);
	if (!siwt_failures)
		child_local(&n, ctl, (uint16_t)m.a, buf);
	siwt_node_close(&n);
	siwt_free_buf(buf, buflen);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent: the target                                                  */
/* ------------------------------------------------------------------ */

static uint8_t *mem[NREG];
static struct rpcrdma_mr *mrs[NREG];
static uint32_t stags[NREG];
static uint64_t tos[NREG];
/* MSG_INFO carries every region's STag and Tagged Offset */
_Static_assert(sizeof(((struct siwt_msg *)0)->u) >= sizeof(tos), "siwt_msg.u: one per region");
_Static_assert(sizeof(((struct siwt_msg *)0)->data) >= sizeof(stags), "siwt_msg.data: regions");
static uint8_t rbuf[4][4096];
static struct rpcrdma_mr *rmr;

static int post_recvs(struct siwt_node *n, void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 4; i++)
		if (siwt_post_recv1(n, i, rbuf[i], sizeof(rbuf[i]), rpcrdma_mr_stag(rmr)))
			return -1;
	return 0;
}

static void region_hashes(uint64_t h[NREG])
{
	uint64_t saved = siwt_bytes_hashed;
	for (unsigned r = 0; r < NREG; r++)
		h[r] = siwt_hash(mem[r], reg_len[r]);
	siwt_bytes_hashed = saved;
}

static int parent_case(struct siwt_node *n, int ctl, const char *name, const uint32_t *term,
		       unsigned nterm)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est, ev;
	struct siwt_msg m = {.type = MSG_INFO};
	uint64_t before[NREG], after[NREG];

	region_hashes(before);
	siwt_ep_attr(n, &a);
	if (siwt_accept(n, &a, post_recvs, NULL, NULL, 0, &req, &est))
		return -1;
	memcpy(m.data, stags, sizeof(stags));
	memcpy(m.u, tos, sizeof(tos));
	siwt_send_msg(ctl, &m);
	if (term) {
		siwt_expect_terminate(n, true, term, nterm);
		siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 10000);
	} else {
		for (int i = 0; i < 3; i++) {
			if (siwt_event(n, &ev, 10000)) {
				SIWT_CHECK(0, "%s: no DISCONNECTED", name);
				break;
			}
			if (ev.type == RPCRDMA_EV_DISCONNECTED)
				break;
			SIWT_CHECK(ev.type == RPCRDMA_EV_TERMINATE, "%s: unexpected event %s", name,
				   siwt_event_str(ev.type));
		}
	}
	/* every posted receive flushed: the Send after the violation never
	 * arrived (RFC 5040 §7: once a Terminate is sent the stream is in
	 * error and nothing after the failing segment is placed or delivered) */
	for (uint64_t i = 0; i < 4; i++) {
		struct rpcrdma_wc wc;
		if (siwt_wc(n, true, &wc, 5000)) {
			SIWT_CHECK(0, "%s: receive %llu not flushed", name, (unsigned long long)i);
			break;
		}
		SIWT_EQ(wc.wr_id, i);
		SIWT_CHECK(wc.status == RPCRDMA_WC_WR_FLUSH_ERR,
			   "%s: receive %llu completed %s (a Send after the violation was "
			   "delivered?)",
			   name, (unsigned long long)i, siwt_status_str(wc.status));
	}
	struct rpcrdma_ep_stats st;
	if (term && rpcrdma_ep_query_stats(n->ep, &st) == 0)
		SIWT_CHECK(st.terminates_tx == 1, "%s: stats.terminates_tx %llu", name,
			   (unsigned long long)st.terminates_tx);
	siwt_expect_pumped(n, ctl, MSG_DONE, &m);
	region_hashes(after);
	for (unsigned r = 0; r < NREG; r++)
		SIWT_CHECK(before[r] == after[r], "%s: region %u changed", name, r);
	siwt_send4(ctl, MSG_NEXT, 0, 0, 0);
	rpcrdma_ep_destroy(n->ep);
	n->ep = NULL;
	siwt_forget(n); /* keeps a next CONNECT_REQUEST */
	return 0;
}

int main(void)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	struct rpcrdma_pd *pd2 = NULL;
	struct rpcrdma_ep *other = NULL; /* never connected: R_SCOPE's endpoint */
	struct rpcrdma_ep_attr ea;
	int ctl, rc;

	memset(&n, 0, sizeof(n));

	alarm(150);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 140);
	if (pid < 0)
		return 1;
	if (siwt_node_open(&n) || siwt_listen(&n))
		goto out;
	rc = rpcrdma_pd_alloc(n.dev, &pd2);
	SIWT_CHECK(rc == 0, "pd_alloc: %s", strerror(-rc));
	static const unsigned acc[NREG] = {
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ,
	    RPCRDMA_ACCESS_REMOTE_READ,
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE,
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ,
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ,
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ,
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ,
	};
	for (unsigned r = 0; r < NREG && !siwt_failures; r++) {
		mem[r] = siwt_alloc_buf(reg_len[r]);
		siwt_fill(mem[r], reg_len[r], 0x900 + r);
		rc = rpcrdma_mr_reg(r == R_PD2 ? pd2 : n.pd, mem[r], reg_len[r], acc[r], &mrs[r]);
		SIWT_CHECK(rc == 0, "mr_reg %u: %s", r, strerror(-rc));
		if (rc)
			break;
		stags[r] = rpcrdma_mr_stag(mrs[r]);
		tos[r] = rpcrdma_mr_offset(mrs[r]);
	}
	rc = rpcrdma_mr_reg(n.pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &rmr);
	SIWT_CHECK(rc == 0, "mr_reg recv: %s", strerror(-rc));
	if (siwt_failures)
		goto out;
	siwt_ep_attr(&n, &ea);
	rc = rpcrdma_ep_create(n.pd, &ea, &other);
	SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
	if (!rc) {
		rc = rpcrdma_mr_bind_ep(mrs[R_SCOPE], other);
		SIWT_CHECK(rc == 0, "mr_bind_ep: %s", strerror(-rc));
	}
	if (siwt_failures)
		goto out;
	/* local invalidate (RFC 5040 §6.2) and deregistration */
	rc = rpcrdma_mr_invalidate(mrs[R_INV]);
	SIWT_CHECK(rc == 0 && !rpcrdma_mr_valid(mrs[R_INV]), "mr_invalidate: %d", rc);
	rc = rpcrdma_mr_dereg(mrs[R_DEREG]);
	SIWT_CHECK(rc == 0, "mr_dereg: %s", strerror(-rc));
	mrs[R_DEREG] = NULL;

	siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
	for (unsigned c = 0; c < NCASES && !siwt_failures; c++)
		parent_case(&n, ctl, cases[c].name, cases[c].term, cases[c].term[1] ? 2 : 1);
	if (!siwt_failures)
		parent_case(&n, ctl, "invalid local key", NULL, 0);
out:
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	for (unsigned r = 0; r < NREG; r++) {
		if (mrs[r])
			rpcrdma_mr_dereg(mrs[r]);
		siwt_free_buf(mem[r], reg_len[r]);
	}
	if (rmr)
		rpcrdma_mr_dereg(rmr);
	if (other)
		rpcrdma_ep_destroy(other);
	if (pd2)
		rpcrdma_pd_free(pd2);
	siwt_node_close(&n);
	close(ctl);
	return siwt_finish("test_siw_prot", 0, t0);
}
