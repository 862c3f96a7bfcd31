// SPDX-License-Identifier: MIT
/*
 * The combination matrix (issue 32): every combination of
 *   RPC-over-RDMA version  v1 | v2 | auto: the client's policy; the server
 *                          Version One for v1, Version Two capable for
 *                          v2; auto against both (a Version One server:
 *                          it falls back); and v2 against a Version One
 *                          server, refused by design: its first call must
 *                          fail with ERR_VERS (-EPROTONOSUPPORT)
 *   backchannel            off | on, reverse calls running meanwhile
 *   reliable replies       off | on (Version One: RFC 5666 mode both sides)
 *   inline threshold       1 KiB | 4 KiB (both sides)
 *   RFC 8797 private data  sent | none (both sides)
 * each cell a server child process of its own and a client here, over the
 * default provider (softiwarp) on loopback. One ctest entry per version x
 * backchannel (argv: v1|v2|auto bcoff|bcon), so that a failure names its
 * cell and ctest -j2 runs two at a time.
 *
 * A cell makes 14 forward calls: call payloads at every boundary that
 * matters for the inline threshold I in force and the transport header H
 * (0, I - H - 1, I - H, I - H + 1, I + 1, 64 KiB, 1 MiB + 3, where H is
 * the transport header plus the RPC call's header and arguments), each
 * once with its reply size declared exactly (the reply the same boundary
 * of the reply side) and once with the reply size unknown
 * (RPCRDMA_CALL_OPT_UNKNOWN_REPLY; the replies in reverse order). The
 * server checks the argument bytes, the client the reply's. A reply that
 * fits nothing offered fails by design with ERR_CHUNK without reliable
 * replies (asserted), and comes in a responder-provided Read chunk with.
 * Every call must end by its deadline, go as a Short message or a Long
 * Call as its size says, and come back as its size says. With the
 * backchannel on, the server runs 14 reverse calls (RFC 8167) of the same
 * boundaries at the same time, checked both ways: seven with their reply
 * size declared, seven without (the arguments in reverse order; a reply
 * larger than the threshold then fails by design with ERR_CHUNK: there
 * are no reliable replies in the reverse direction).
 * At the end nothing may be left: no exposed reply, no pulled memory, no
 * registration with a remote right on either side, no more valid
 * registrations than after connecting; every message in the version the
 * cell negotiates; the inline thresholds as RFC 8797 and the Version Two
 * draft say.
 *
 * Each cell prints one line: name, calls, bytes, PASS or FAIL with its
 * first failure (which call, what error); the failures after the first
 * go to stderr. $MX_CELL (a part of a cell's name) runs only the cells
 * that match.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "api/api_int.h" /* rpcrdma_clnt_set_testhook; struct rpcrdma_clnt: its device */
#include "matrix/matrix.h"

#define CHECK_WITH_PID
#include "lib/check.h"
#include "util/be.h"

#define NB          7u    /* boundaries */
#define CALL_TMO_MS 5000u /* every call's deadline */
#define SLACK_MS    1500u /* how late a call may return after it */
#define SETTLE_MS   3000u /* for what is released after the last reply */

struct cell {
	const char *vname;
	enum rpcrdma_version_policy cvers, svers;
	bool bc, rr, pdata;
	uint32_t inline_thr;
	char name[48];
	bool refused; /* by design: Version Two only, a Version One server */
	/* derived */
	uint32_t thr; /* the inline threshold in force */
	uint32_t hdr; /* transport header of a Short message */
};

struct cell_run {
	uint32_t calls, refused, rev, rev_refused;
	uint64_t bytes;
	uint32_t rr_expected; /* replies the server should expose */
	int nfail;
	char first[320];
	bool stop; /* a call timed out or the connection went: no more calls */
};

/* ---- what the client sees: the reverse program and the versions ---- */

static atomic_uint cb_calls, cb_bad, cb_reply_err;
/* dispatches entered and finished: the server may see a reply (or its
 * ERR_CHUNK) before our dispatch counts what rpcrdma_bc_reply returned,
 * so the counts above are read once every dispatch has returned */
static atomic_uint cb_entered, cb_left;
/* rx_errvers: RDMA_ERROR / ERR_VERS answers, which carry the version of
 * the call they refuse (as Linux's svcrdma: a Version Two probe's answer
 * says 2 in its header, its body 1..1) and so count in no version */
static atomic_uint rx_v1, rx_v2, tx_v1, tx_v2, rx_errvers;

static void on_recv(void *arg, const uint8_t *buf, size_t len)
{
	(void)arg;
	if (len >= 20 && get_be32(buf + 12) == 4 && get_be32(buf + 16) == 1)
		atomic_fetch_add(&rx_errvers, 1); /* RDMA_ERROR, ERR_VERS */
	else if (len >= 8)
		atomic_fetch_add(get_be32(buf + 4) == 2 ? &rx_v2 : &rx_v1, 1);
}

static void on_send(void *arg, const uint8_t *hdr, size_t hdr_len, size_t msg_len)
{
	(void)arg;
	(void)msg_len;
	if (hdr_len >= 8)
		atomic_fetch_add(get_be32(hdr + 4) == 2 ? &tx_v2 : &tx_v1, 1);
}

static void cb_dispatch_one(struct rpcrdma_bc_req *req, uint32_t proc)
{
	struct mx_echo_args a = {0};
	struct mx_echo_res r = {0};
	int rc;

	if (proc != MXCB_ECHO) {
		rpcrdma_bc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_bc_getargs(req, (xdrproc_t)xdr_mx_echo_args, &a) || a.reply_len > MX_MAX_LEN) {
		atomic_fetch_add(&cb_bad, 1);
		rpcrdma_bc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	atomic_fetch_add(&cb_calls, 1);
	if (!mx_data_ok(a.val, a.len, a.seed)) {
		fprintf(stderr, "[client] reverse call %u: the %u argument bytes differ\n", a.id,
			a.len);
		atomic_fetch_add(&cb_bad, 1);
	}
	r.id = a.id;
	r.hash = tl_hash(a.val, a.len);
	r.len = r.cap = a.reply_len;
	r.val = malloc(r.len + 1);
	tl_fill(r.val, r.len, a.seed + 1);
	rc = rpcrdma_bc_reply(req, (xdrproc_t)xdr_mx_echo_res, &r);
	if (rc) {
		/* expected only for the replies that fit nothing (-EMSGSIZE);
		 * named either way, so that a failed count says which */
		fprintf(stderr, "[client] reverse reply %u (%u bytes): %d (%s)\n", a.id,
			a.reply_len, rc, rpcrdma_strerror(rc));
		atomic_fetch_add(&cb_reply_err, 1);
	}
	free(r.val);
	xdr_free((xdrproc_t)xdr_mx_echo_args, (char *)&a);
}

static void cb_dispatch(struct rpcrdma_bc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	atomic_fetch_add(&cb_entered, 1);
	cb_dispatch_one(req, proc);
	atomic_fetch_add(&cb_left, 1);
}

/* The server counted its reverse calls done when their replies arrived;
 * our dispatches may still be between their Send and their count. */
static void cb_quiesce(void)
{
	uint64_t until = tl_now_ms() + 2 * SLACK_MS;

	while (atomic_load(&cb_left) != atomic_load(&cb_entered) && tl_now_ms() < until)
		usleep(1000);
}

/* ---- the watchdog: a call that never returns still ends the cell ----
 * A process of its own, forked first, sharing one page with us: the server
 * children are forked later, and a fork of a process that runs a thread is
 * one ThreadSanitizer refuses (the child of a multi-threaded fork may also
 * find a lock held for ever). */

struct watch_page {
	_Atomic uint64_t until_ms;
	_Atomic pid_t pid; /* the cell's server child */
	char what[160];
};
static struct watch_page *wp;
static pid_t wd_pid;

static void watch(const struct cell *cl, const char *what, uint32_t ms)
{
	snprintf(wp->what, sizeof(wp->what), "%s: %s", cl->name, what);
	atomic_store(&wp->until_ms, ms ? tl_now_ms() + ms : 0);
}

static void watchdog_run(pid_t parent)
{
	while (getppid() == parent) {
		uint64_t u = atomic_load(&wp->until_ms);

		if (u && tl_now_ms() > u) {
			pid_t pid = atomic_load(&wp->pid);

			fprintf(stderr, "cell %s: not over %u ms after its deadline: FAIL\n",
				wp->what, 2 * SLACK_MS);
			if (pid > 0)
				kill(pid, SIGKILL);
			kill(parent, SIGKILL);
			_exit(1);
		}
		usleep(50000);
	}
	_exit(0); /* the test ended */
}

static int watchdog_start(void)
{
	pid_t parent = getpid();

	wp = mmap(NULL, sizeof(*wp), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (wp == MAP_FAILED)
		return -1;
	wd_pid = fork();
	if (wd_pid < 0)
		return -1;
	if (wd_pid == 0)
		watchdog_run(parent);
	return 0;
}

/* ---- one forward call ---- */

static void fail(struct cell_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct cell_run *run, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  %s\n", msg);
	if (!run->nfail++)
		snprintf(run->first, sizeof(run->first), "%s", msg);
}

struct bufs {
	char *arg, *reply, *want;
};

/* The seven boundaries of a side with @over bytes of RPC header and
 * arguments besides the payload. */
static void boundaries(const struct cell *cl, uint32_t over, uint32_t *b)
{
	uint32_t h = cl->hdr + over;

	b[0] = 0;
	b[1] = cl->thr - h - 1;
	b[2] = cl->thr - h;
	b[3] = cl->thr - h + 1;
	b[4] = cl->thr + 1;
	b[5] = 64u << 10;
	b[6] = (1u << 20) + 3;
}

/* Whether the outcome of a call is right: 0, or the expected refusal. */
static void check_outcome(const struct cell *cl, struct cell_run *run, const char *what, int rc,
			  const struct rpcrdma_call_result *res, const struct mx_echo_args *a,
			  const struct mx_echo_res *r, bool known, const struct bufs *b)
{
	bool fits = mx_reply_fits(a->reply_len, cl->thr, cl->hdr);
	bool refuse = !known && !fits && !cl->rr;
	uint32_t want_call = mx_call_proc(a->len, cl->thr, cl->hdr, known && !fits);

	if (refuse) {
		/* RFC 8166 §4.5.2: nothing offered fits the reply */
		if (rc != -EREMOTEIO || res->rdma_err != 2)
			fail(run, "%s: %d (%s), rdma_err %u, want ERR_CHUNK", what, rc,
			     rpcrdma_strerror(rc), res->rdma_err);
		else
			run->refused++;
		return;
	}
	if (rc) {
		fail(run, "%s: %d (%s), rdma_err %u, reply_proc %u", what, rc, rpcrdma_strerror(rc),
		     res->rdma_err, res->reply_proc);
		if (rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -ECANCELED)
			run->stop = true;
		return;
	}
	if (r->id != a->id || r->hash != tl_hash(b->arg, a->len) || r->len != a->reply_len ||
	    memcmp(r->val, b->want, a->reply_len))
		fail(run, "%s: reply id %u/%u, arg hash ok %d, %u reply bytes, data ok %d", what,
		     r->id, a->id, r->hash == tl_hash(b->arg, a->len), r->len,
		     r->len == a->reply_len && !memcmp(r->val, b->want, a->reply_len));
	else if (res->call_proc != want_call)
		fail(run, "%s: call sent as proc %u, want %u", what, res->call_proc, want_call);
	else if (res->reply_proc != (fits ? 0u : 1u))
		fail(run, "%s: reply came as proc %u, want %u", what, res->reply_proc, !fits);
	if (!fits && !known)
		run->rr_expected++;
	run->bytes += a->len + a->reply_len;
}

static void fwd_call(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run,
		     uint32_t id, uint32_t alen, uint32_t rlen, bool known, const struct bufs *b)
{
	struct mx_echo_args a = {id, 0x46574400u + id * 131u, rlen, b->arg, alen};
	struct mx_echo_res r = {0, 0, b->reply, 0, rlen};
	struct rpcrdma_call_result res = {0};
	struct rpcrdma_call_opts o = {0};
	char what[96];
	uint64_t t0;
	int rc;

	snprintf(what, sizeof(what), "call %u (%u B, reply %u B %s)", id, alen, rlen,
		 known ? "declared" : "unknown");
	tl_fill(b->arg, alen, a.seed);
	tl_fill(b->want, rlen, a.seed + 1);
	o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_TIMEOUT;
	o.comp_mask |= known ? RPCRDMA_CALL_OPT_REPLY_SIZE : RPCRDMA_CALL_OPT_UNKNOWN_REPLY;
	o.reply_size = mx_reply_size(rlen);
	o.timeout_ms = CALL_TMO_MS;
	o.result = &res;
	watch(cl, what, CALL_TMO_MS + 2 * SLACK_MS);
	t0 = tl_now_ms();
	rc = rpcrdma_clnt_call(c, MX_ECHO, (xdrproc_t)xdr_mx_echo_args, &a,
			       (xdrproc_t)xdr_mx_echo_res, &r, &o);
	watch(cl, "", 0);
	run->calls++;
	if (tl_now_ms() - t0 > CALL_TMO_MS + SLACK_MS)
		fail(run, "%s: ended %llu ms after it started, past its deadline", what,
		     (unsigned long long)(tl_now_ms() - t0));
	check_outcome(cl, run, what, rc, &res, &a, &r, known, b);
}

static void fwd_calls(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run)
{
	uint32_t cb[NB], rb[NB];
	struct bufs b = {malloc(MX_MAX_LEN), malloc(MX_MAX_LEN), malloc(MX_MAX_LEN)};

	boundaries(cl, MX_CALL_OVERHEAD, cb);
	boundaries(cl, MX_REPLY_OVERHEAD, rb);
	for (uint32_t i = 0; b.arg && b.reply && b.want && i < NB && !run->stop; i++) {
		fwd_call(c, cl, run, 2 * i, cb[i], rb[i], true, &b);
		if (!run->stop)
			fwd_call(c, cl, run, 2 * i + 1, cb[i], rb[NB - 1 - i], false, &b);
	}
	free(b.arg);
	free(b.reply);
	free(b.want);
}

/* ---- the server's side ---- */

static int server_result(struct rpcrdma_clnt *c, struct mx_result *r)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_TIMEOUT,
				      .timeout_ms = CALL_TMO_MS};

	memset(r, 0, sizeof(*r));
	return rpcrdma_clnt_call(c, MX_RESULT, (xdrproc_t)xdr_mx_void, NULL,
				 (xdrproc_t)xdr_mx_result, r, &o);
}

static int start_reverse(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run)
{
	struct mx_rev_args a = {.n = 2 * NB,
				.timeout_ms = CALL_TMO_MS,
				.hdr = cl->hdr,
				.inline_thr = cl->thr,
				.nknown = NB};
	uint32_t cb[NB], rb[NB];
	int rc, res = -1;

	boundaries(cl, MX_CALL_OVERHEAD, cb);
	boundaries(cl, MX_REPLY_OVERHEAD, rb);
	for (uint32_t i = 0; i < NB; i++) {
		a.arg_len[i] = cb[i];
		a.reply_len[i] = rb[i];
		a.arg_len[NB + i] = cb[NB - 1 - i];
		a.reply_len[NB + i] = rb[i];
	}
	for (uint32_t i = 0; i < a.n; i++) {
		if (i >= a.nknown && !mx_reply_fits(a.reply_len[i], cl->thr, cl->hdr))
			run->rev_refused++; /* ERR_CHUNK by design */
		else
			run->bytes += a.arg_len[i] + a.reply_len[i];
	}
	watch(cl, "MX_REV", CALL_TMO_MS + 2 * SLACK_MS);
	rc = rpcrdma_clnt_call(c, MX_REV, (xdrproc_t)xdr_mx_rev_args, &a, (xdrproc_t)xdr_int, &res,
			       NULL);
	watch(cl, "", 0);
	if (rc || res)
		fail(run, "starting the reverse calls: %d (%s), server %d", rc,
		     rpcrdma_strerror(rc), res);
	else
		run->rev = a.n;
	return rc || res;
}

/* Wait until the server says the reverse calls are done and nothing is
 * held any longer; *r is its last word. */
static void settle(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run,
		   struct mx_result *r, uint32_t *cregs, uint32_t *call)
{
	uint64_t t_rev = tl_now_ms() + CALL_TMO_MS + SLACK_MS, t_free = 0;
	int rc = 0;

	watch(cl, "waiting for the reverse calls and the releases",
	      CALL_TMO_MS + SETTLE_MS + 4 * SLACK_MS);
	for (;;) {
		uint64_t now = tl_now_ms();
		bool rev_done;

		rc = server_result(c, r);
		mx_dev_regs(c->dev, cregs, call);
		rev_done = !rc && r->rev_done >= run->rev;
		if (rev_done && !t_free)
			t_free = now + SETTLE_MS;
		if (rc || (!rev_done && now > t_rev) || (t_free && now > t_free))
			break;
		if (rev_done && !r->rr_exposed && !r->regs_remote && !r->pull_bytes && !*cregs)
			break;
		usleep(10000);
	}
	watch(cl, "", 0);
	if (rc)
		fail(run, "MX_RESULT: %d (%s)", rc, rpcrdma_strerror(rc));
	else if (r->rev_done < run->rev)
		fail(run, "reverse calls: %u of %u done by their deadline", r->rev_done, run->rev);
}

/* ---- one cell ---- */

static int cell_client(const struct cell *cl, uint16_t port, struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt_opts co = {0};
	struct rpcrdma_bc_opts bo = {
	    .comp_mask = RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS, .credits = 4, .chunks = 1};
	int rc;

	co.comp_mask = RPCRDMA_CLNT_OPT_CREDITS | RPCRDMA_CLNT_OPT_TIMEOUT |
		       RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT | RPCRDMA_CLNT_OPT_RDMA_VERSION |
		       RPCRDMA_CLNT_OPT_INLINE | RPCRDMA_CLNT_OPT_PRIVATE_DATA |
		       RPCRDMA_CLNT_OPT_RELIABLE_REPLY;
	co.credits = 16;
	co.timeout_ms = CALL_TMO_MS;
	co.connect_timeout_ms = 3000;
	co.rdma_version = cl->cvers;
	co.rdma_props = 1;
	co.inline_send = co.inline_recv = cl->inline_thr;
	co.private_data = cl->pdata;
	co.reliable_reply = cl->rr;
	*out = NULL;
	if (!cl->bc)
		return rpcrdma_clnt_create(tl_addr(), port, MX_PROG, MX_VERS, &co, out);
	rc = rpcrdma_clnt_create_bc(tl_addr(), port, MX_PROG, MX_VERS, &co, &bo, out);
	if (!rc)
		rc = rpcrdma_clnt_bc_register(*out, MXCB_PROG, MXCB_VERS, cb_dispatch, NULL);
	return rc;
}

/* After the calls: what must be left (nothing) and what was negotiated. */
static void cell_end_checks(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run,
			    const struct mx_result *base, uint32_t cbase)
{
	struct rpcrdma_xprt_stats st;
	struct mx_result r;
	uint32_t cregs = 0, call = 0;
	bool v2 = cl->cvers != RPCRDMA_VERSION_1 && cl->svers == RPCRDMA_VERSION_2;

	settle(c, cl, run, &r, &cregs, &call);
	cb_quiesce();
	if (r.arg_bad)
		fail(run, "server: %u forward arguments differed", r.arg_bad);
	if (r.rev_bad)
		fail(run, "reverse call %u failed: %d (%s) (%u of %u bad)", r.rev_first_id,
		     r.rev_first_err, rpcrdma_strerror(r.rev_first_err), r.rev_bad, run->rev);
	if (r.rev_wrong_proc)
		fail(run, "%u reverse calls or their replies not sent as their size says",
		     r.rev_wrong_proc);
	if (!r.rev_bad && r.rev_refused != run->rev_refused)
		fail(run, "reverse calls refused with ERR_CHUNK: %u, want %u", r.rev_refused,
		     run->rev_refused);
	/* the client's reverse responder: each call checked, and no reply
	 * failed but those that fit nothing */
	if (atomic_load(&cb_bad) ||
	    (!r.rev_bad && (atomic_load(&cb_calls) != run->rev ||
			    atomic_load(&cb_reply_err) != run->rev_refused)))
		fail(run, "client's reverse responder: %u calls of %u, %u bad, %u replies failed",
		     atomic_load(&cb_calls), run->rev, atomic_load(&cb_bad),
		     atomic_load(&cb_reply_err));
	if (r.rr_exposed || r.rr_reclaimed || r.pull_bytes)
		fail(run, "server holds %u exposed replies (%u reclaimed), %u pulled bytes",
		     r.rr_exposed, r.rr_reclaimed, r.pull_bytes);
	if (!run->nfail && r.rr_replies - base->rr_replies != run->rr_expected)
		fail(run, "server exposed %u replies in Read chunks, want %u",
		     r.rr_replies - base->rr_replies, run->rr_expected);
	if (r.regs_remote || cregs)
		fail(run, "registrations with remote access left: server %u, client %u",
		     r.regs_remote, cregs);
	if (r.regs_all > base->regs_all || call > cbase)
		fail(run, "valid registrations: server %u (%u after connecting), client %u (%u)",
		     r.regs_all, base->regs_all, call, cbase);
	CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	if (st.rr_replies != st.rr_notifications)
		fail(run, "client pulled %llu replies, notified %llu",
		     (unsigned long long)st.rr_replies, (unsigned long long)st.rr_notifications);
	if (st.inline_send != cl->thr || st.inline_recv != cl->thr)
		fail(run, "inline thresholds %u/%u, want %u", st.inline_send, st.inline_recv,
		     cl->thr);
	if ((v2 ? atomic_load(&rx_v1) || atomic_load(&tx_v1) : atomic_load(&rx_v2)) ||
	    atomic_load(&rx_errvers) > atomic_load(&tx_v2))
		fail(run, "messages by version: sent v1 %u v2 %u, received v1 %u v2 %u ERR_VERS %u",
		     atomic_load(&tx_v1), atomic_load(&tx_v2), atomic_load(&rx_v1),
		     atomic_load(&rx_v2), atomic_load(&rx_errvers));
}

/* After a call that timed out: what each side saw, on the first failure's
 * line (the server's word when it still answers). */
static void diagnose(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run)
{
	struct rpcrdma_bc_stats bs = {0};
	struct rpcrdma_xprt_stats st;
	struct mx_result r;
	size_t n = strlen(run->first);
	int rc;

	CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	n += (size_t)snprintf(
	    run->first + n, sizeof(run->first) - n, "; client: %llu pulled, %llu notified",
	    (unsigned long long)st.rr_replies, (unsigned long long)st.rr_notifications);
	if (cl->bc && !rpcrdma_clnt_bc_stats(c, &bs) && n < sizeof(run->first))
		n += (size_t)snprintf(run->first + n, sizeof(run->first) - n,
				      ", %llu reverse calls received, %llu ERR_CHUNK sent",
				      (unsigned long long)bs.calls_received,
				      (unsigned long long)bs.err_chunk_tx);
	watch(cl, "MX_RESULT after a timeout", CALL_TMO_MS + 2 * SLACK_MS);
	rc = server_result(c, &r);
	watch(cl, "", 0);
	if (!rc && n < sizeof(run->first))
		snprintf(run->first + n, sizeof(run->first) - n, "; server: %u replies exposed now",
			 r.rr_exposed);
}

/* The first call of a cell (BC_ENABLE with the backchannel, else
 * MX_RESULT): 0, or the cell is over. A combination refused by design
 * must be refused right there, clearly. */
static int first_call(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run,
		      struct mx_result *base)
{
	const char *what = cl->bc ? "BC_ENABLE" : "MX_RESULT";
	int rc;

	watch(cl, what, CALL_TMO_MS + 2 * SLACK_MS);
	rc = cl->bc ? rpcrdma_clnt_bc_enable(c) : 0;
	if (!rc)
		rc = server_result(c, base);
	watch(cl, "", 0);
	run->calls++;
	if (cl->refused) {
		/* Version Two only against a Version One server: RDMA_ERROR
		 * ERR_VERS (RFC 8166 §4.5.1, draft §5) */
		if (rc == -EPROTONOSUPPORT)
			snprintf(run->first, sizeof(run->first),
				 "refused by design: first call (%s) %d (%s)", what, rc,
				 rpcrdma_strerror(rc));
		else
			fail(run, "first call (%s): %d (%s), want %d (%s)", what, rc,
			     rpcrdma_strerror(rc), -EPROTONOSUPPORT,
			     rpcrdma_strerror(-EPROTONOSUPPORT));
		return 1;
	}
	if (rc)
		fail(run, "first call (%s): %d (%s)", what, rc, rpcrdma_strerror(rc));
	return rc;
}

static void cell_calls(struct rpcrdma_clnt *c, const struct cell *cl, struct cell_run *run)
{
	struct mx_result base;
	uint32_t cremote, cbase = 0;

	if (first_call(c, cl, run, &base))
		return;
	mx_dev_regs(c->dev, &cremote, &cbase);
	if (cl->bc && start_reverse(c, cl, run))
		return;
	fwd_calls(c, cl, run);
	if (!run->stop)
		cell_end_checks(c, cl, run, &base, cbase);
	else
		diagnose(c, cl, run);
}

static int run_cell(struct cell *cl)
{
	const struct mx_srv_cfg sc = {cl->svers, cl->bc, cl->rr, cl->pdata, cl->inline_thr};
	const struct clnt_testhook h = {.on_send = on_send, .on_recv = on_recv};
	struct cell_run run = {0};
	struct rpcrdma_clnt *c = NULL;
	struct tl_server srv;
	uint64_t t0 = tl_now_ms();
	int rc, st;

	atomic_store(&cb_calls, 0);
	atomic_store(&cb_bad, 0);
	atomic_store(&cb_reply_err, 0);
	atomic_store(&cb_entered, 0);
	atomic_store(&cb_left, 0);
	atomic_store(&rx_v1, 0);
	atomic_store(&rx_v2, 0);
	atomic_store(&rx_errvers, 0);
	atomic_store(&tx_v1, 0);
	atomic_store(&tx_v2, 0);
	if (mx_server_start(&srv, &sc)) {
		printf("cell %-28s server did not start: FAIL\n", cl->name);
		return 1;
	}
	atomic_store(&wp->pid, srv.pid);
	rc = cell_client(cl, srv.port, &c);
	if (rc)
		fail(&run, "client create: %d (%s)", rc, rpcrdma_strerror(rc));
	if (c) {
		rpcrdma_clnt_set_testhook(c, &h);
		if (!rc)
			cell_calls(c, cl, &run);
		watch(cl, "destroying the client", 4 * SLACK_MS);
		rpcrdma_clnt_destroy(c);
		watch(cl, "", 0);
	}
	st = tl_server_stop(&srv, 5000);
	atomic_store(&wp->pid, 0);
	if (st)
		fail(&run, "server child exit status %d", st);
	/* calls: forward calls made (ERR_CHUNK by design among them),
	 * reverse calls; bytes: payload both ways */
	printf("cell %-28s %2u calls (%u ERR_CHUNK) %2u reverse %9llu bytes %5.2f s  %s%s%s\n",
	       cl->name, run.calls, run.refused, run.rev, (unsigned long long)run.bytes,
	       (double)(tl_now_ms() - t0) / 1000.0, run.nfail ? "FAIL" : "PASS",
	       run.nfail || cl->refused ? ": " : "", run.nfail || cl->refused ? run.first : "");
	fflush(stdout);
	return run.nfail != 0;
}

/* The inline threshold a cell's connection must agree: RFC 8797 private
 * data says it; without, Version One assumes 1024 (RFC 8166 §3.3.2) and
 * Version Two's transport properties say it. */
static void cell_derive(struct cell *cl)
{
	bool v2 = cl->cvers != RPCRDMA_VERSION_1 && cl->svers == RPCRDMA_VERSION_2;

	cl->refused = cl->cvers == RPCRDMA_VERSION_2 && cl->svers == RPCRDMA_VERSION_1;
	cl->hdr = v2 ? MX_HDR_V2 : MX_HDR_V1;
	cl->thr = cl->pdata || v2 ? cl->inline_thr : 1024u;
	snprintf(cl->name, sizeof(cl->name), "%s%s/bc-%s/rr-%s/%uk/%s", cl->vname,
		 cl->cvers == RPCRDMA_VERSION_1 || (cl->cvers == RPCRDMA_VERSION_2 && !cl->refused)
		     ? ""
		     : (cl->svers == RPCRDMA_VERSION_2 ? ">v2" : ">v1"),
		 cl->bc ? "on" : "off", cl->rr ? "on" : "off", cl->inline_thr / 1024u,
		 cl->pdata ? "pd" : "nopd");
}

int main(int argc, char **argv)
{
	struct cell cl = {0};
	uint32_t ncells = 0, nfailed = 0;
	uint64_t t0 = tl_now_ms();
	const char *only = getenv("MX_CELL"); /* debugging: the cells whose name has it */

	if (argc != 3 || (strcmp(argv[2], "bcon") && strcmp(argv[2], "bcoff"))) {
		fprintf(stderr, "usage: %s v1|v2|auto bcon|bcoff\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "v1")) {
		cl.cvers = RPCRDMA_VERSION_1;
	} else if (!strcmp(argv[1], "v2")) {
		cl.cvers = RPCRDMA_VERSION_2;
	} else if (!strcmp(argv[1], "auto")) {
		cl.cvers = RPCRDMA_VERSION_AUTO;
	} else {
		fprintf(stderr, "unknown version %s\n", argv[1]);
		return 2;
	}
	cl.vname = argv[1];
	cl.bc = !strcmp(argv[2], "bcon");
	if (watchdog_start()) {
		perror("watchdog");
		return 1;
	}
	/* the server's version: v1 its own; v2 its own, then a Version One
	 * server (refused by design); auto both, Version One first */
	for (int sv = 0; sv < (cl.cvers == RPCRDMA_VERSION_1 ? 1 : 2); sv++) {
		if (cl.cvers == RPCRDMA_VERSION_2)
			cl.svers = sv ? RPCRDMA_VERSION_1 : RPCRDMA_VERSION_2;
		else
			cl.svers = sv ? RPCRDMA_VERSION_2 : RPCRDMA_VERSION_1;
		for (int m = 0; m < 8; m++) {
			cl.rr = m & 4;
			cl.inline_thr = m & 2 ? 4096u : 1024u;
			cl.pdata = !(m & 1);
			cell_derive(&cl);
			if (only && !strstr(cl.name, only))
				continue;
			nfailed += run_cell(&cl) != 0;
			ncells++;
		}
	}
	printf("%u cells, %u failed, %.1f s\n", ncells, nfailed, (double)(tl_now_ms() - t0) / 1e3);
	kill(wd_pid, SIGKILL);
	waitpid(wd_pid, NULL, 0);
	return nfailed || failures ? 1 : 0;
}
