// SPDX-License-Identifier: MIT
/*
 * Fault injection in the softiwarp provider (src/softiwarp/siw_fault.h,
 * test builds only), and what the provider does about each fault. One
 * process, one device per case, endpoint A connected to endpoint B over
 * loopback; A sends eight 1000-byte Sends (one 1024-byte FPDU each, the
 * nudge off, so FPDU k starts at stream byte 1024 k) with known contents;
 * B's receives are checked by checksum.
 *   - no fault: eight delivered intact;
 *   - cut:2500: Sends 0 and 1 delivered intact, nothing after; both ends
 *     see the connection end, every receive and Send completes once;
 *   - corrupt:1500 with CRC: B counts a CRC error and the connection ends;
 *     nothing corrupt is delivered (Send 0 is);
 *   - corrupt:1500 without CRC: all eight delivered, exactly one with wrong
 *     bytes (only the CRC can catch payload damage);
 *   - corrupt:1035 without CRC (the queue number of FPDU 1): B answers
 *     with a DDP Terminate, Send 0 delivered, nothing corrupt;
 *   - drop:1: Send 0 delivered, then the MSN gap makes B terminate
 *     (RFC 5041 §5.3), nothing after is delivered;
 *   - delay:1500:300: eight delivered intact, 300 ms later at least;
 *   - cut-op:3: the third post cuts: Sends 0 and 1 delivered, then the
 *     connection ends;
 *   - refuse-reg:3: the third registration fails with -ENOMEM, the fourth
 *     works (a fault fires once);
 *   - the RPCRDMA_SIW_FAULT parser: seeds pick the same fault each time,
 *     malformed strings mean no fault.
 *
 * `test_siw_fault campaign N [FIRST]`: N runs with the faults seeds FIRST..
 * pick (RPCRDMA_SIW_FAULT=seed:S:SPAN), CRC on, each a mix of Sends, RDMA
 * Writes announced by a Send and RDMA Reads of sizes the seed picks. In
 * every run: each work request and each receive completes exactly once,
 * within 5 s (no hang); every delivered Send carries its bytes; a delivered
 * Send announcing a Write finds the Write placed (RFC 5040 §5.5: the Write
 * before it); a Read that succeeds brought the right bytes. One exception
 * is written down: a dropped FPDU of an RDMA Write cannot be seen by an
 * iWARP receiver (tagged DDP has no sequence number: TCP never drops), so
 * after a drop fault the Write check is not made; and a dropped frame that
 * no later frame reveals (a Read Response, the last Send) is noticed by no
 * one but a timeout of the upper layer: after 300 ms without a completion
 * the run disconnects, as that timeout would, and then every request must
 * complete.
 */
#include "siw_test_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "softiwarp/siw_fault.h"

#define NSEND 8
#define SIZE  1000
#define SLOT  (64 * 1024)

struct rig {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cqa, *cqb;
	struct rpcrdma_evch *evch;
	struct rpcrdma_ep *epa, *epb;
	struct rpcrdma_mr *mra, *mrb;
	uint8_t a[NSEND][SIZE], b[NSEND][SIZE + 64];
};

struct result {
	unsigned ok, bad, rflushed, sdone, sfail;
	bool ended, term;
	uint64_t ms;
};

static struct rig R;
static uint64_t verified;

static struct rpcrdma_ep *new_ep(struct rpcrdma_cq *cq, bool crc)
{
	struct rpcrdma_ep_attr ea = {0};
	struct rpcrdma_ep *ep = NULL;

	ea.comp_mask = RPCRDMA_EP_ATTR_CRC;
	ea.mpa_crc = crc;
	ea.send_cq = cq;
	ea.recv_cq = cq;
	ea.evch = R.evch;
	SIWT_CHECK(rpcrdma_ep_create(R.pd, &ea, &ep) == 0, "ep_create");
	return ep;
}

/* Device with @fault (NULL: none), A connected to B with @crc, B's eight
 * receives posted. */
static int rig_open(const char *fault, bool crc)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_storage la;
	struct rpcrdma_listener *l;
	struct rpcrdma_cq_attr ca = {.cqe = 64};
	struct rpcrdma_event ev;
	uint64_t end;
	int up = 0;

	memset(&R, 0, sizeof(R));
	if (fault)
		setenv("RPCRDMA_SIW_FAULT", fault, 1);
	else
		unsetenv("RPCRDMA_SIW_FAULT");
	if (rpcrdma_dev_open("softiwarp", NULL, &R.dev) || rpcrdma_pd_alloc(R.dev, &R.pd) ||
	    rpcrdma_cq_create(R.dev, &ca, &R.cqa) || rpcrdma_cq_create(R.dev, &ca, &R.cqb) ||
	    rpcrdma_evch_create(R.dev, NULL, &R.evch)) {
		SIWT_CHECK(0, "set-up of the device failed");
		return -1;
	}
	int rc = rpcrdma_mr_reg(R.pd, R.a, sizeof(R.a), RPCRDMA_ACCESS_LOCAL_WRITE, &R.mra);

	if (!rc)
		rc = rpcrdma_mr_reg(R.pd, R.b, sizeof(R.b), RPCRDMA_ACCESS_LOCAL_WRITE, &R.mrb);
	if (rc) {
		/* a fault refusing one of these: the caller's error, no more */
		SIWT_CHECK(rc == -ENOMEM && fault, "registration: %s", strerror(-rc));
		return rc;
	}
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rpcrdma_listen(R.dev, R.evch, (struct sockaddr *)&sin, sizeof(sin), 4, NULL, &l) ||
	    rpcrdma_listener_addr(l, &la)) {
		SIWT_CHECK(0, "listen failed");
		return -1;
	}
	R.epa = new_ep(R.cqa, crc);
	SIWT_CHECK(rpcrdma_connect(R.epa, (struct sockaddr *)&la, sizeof(sin), NULL, 0) == 0,
		   "connect");
	end = siwt_now_ms() + 5000;
	while (up < 2 && siwt_now_ms() < end) {
		(void)rpcrdma_dev_progress(R.dev, 10);
		while (rpcrdma_evch_get(R.evch, &ev) == 0) {
			if (ev.type == RPCRDMA_EV_CONNECT_REQUEST) {
				R.epb = new_ep(R.cqb, crc);
				for (uint32_t i = 0; i < NSEND; i++) {
					struct rpcrdma_sge sg = {(uintptr_t)R.b[i], sizeof(R.b[i]),
								 rpcrdma_mr_stag(R.mrb)};

					SIWT_CHECK(rpcrdma_post_recv(R.epb, i, &sg, 1) == 0,
						   "post_recv %u", i);
				}
				SIWT_CHECK(rpcrdma_accept(ev.req, R.epb, NULL, 0) == 0, "accept");
			} else if (ev.type == RPCRDMA_EV_ESTABLISHED) {
				up++;
			}
		}
	}
	(void)rpcrdma_listener_destroy(l);
	SIWT_CHECK(up == 2, "connection not established (%d of 2)", up);
	return up == 2 ? 0 : -1;
}

static void rig_close(void)
{
	if (R.epa)
		rpcrdma_ep_destroy(R.epa);
	if (R.epb)
		rpcrdma_ep_destroy(R.epb);
	if (R.mra)
		rpcrdma_mr_dereg(R.mra);
	if (R.mrb)
		rpcrdma_mr_dereg(R.mrb);
	if (R.cqa)
		rpcrdma_cq_destroy(R.cqa);
	if (R.cqb)
		rpcrdma_cq_destroy(R.cqb);
	if (R.evch)
		rpcrdma_evch_destroy(R.evch);
	if (R.pd)
		rpcrdma_pd_free(R.pd);
	if (R.dev)
		SIWT_CHECK(rpcrdma_dev_close(R.dev) == 0, "dev_close");
}

/* A posts the eight Sends; collect until every Send and every receive
 * completed, or the connection ended and things settled, or 5 s. */
static struct result run(void)
{
	struct result res = {0};
	uint64_t t0 = siwt_now_ms(), end = t0 + 5000, settle = 0;
	unsigned rdone = 0;

	for (unsigned i = 0; i < NSEND; i++) {
		struct rpcrdma_sge sg = {(uintptr_t)R.a[i], SIZE, rpcrdma_mr_stag(R.mra)};
		struct rpcrdma_send_wr wr = {.wr_id = 100 + i,
					     .opcode = RPCRDMA_WR_SEND,
					     .flags = RPCRDMA_SEND_SIGNALED,
					     .sg = &sg,
					     .num_sge = 1};

		siwt_fill(R.a[i], SIZE, 0xf00 + i);
		int rc = rpcrdma_post_send(R.epa, &wr);

		if (rc) {
			/* refused after the connection ended: counts as failed */
			SIWT_CHECK(rc == -ENOTCONN, "post_send %u: %s", i, strerror(-rc));
			res.sdone++;
			res.sfail++;
		}
	}
	while (siwt_now_ms() < end) {
		struct rpcrdma_wc wc;
		struct rpcrdma_event ev;

		(void)rpcrdma_dev_progress(R.dev, 5);
		while (rpcrdma_cq_poll(R.cqa, &wc, 1) == 1) {
			SIWT_CHECK(wc.wr_id >= 100 && wc.wr_id < 100 + NSEND, "A: wr_id %llu",
				   (unsigned long long)wc.wr_id);
			res.sdone++;
			if (wc.status != RPCRDMA_WC_SUCCESS)
				res.sfail++;
		}
		while (rpcrdma_cq_poll(R.cqb, &wc, 1) == 1) {
			rdone++;
			if (wc.status != RPCRDMA_WC_SUCCESS) {
				res.rflushed++;
				continue;
			}
			SIWT_EQ(wc.byte_len, SIZE);
			if (siwt_hash(R.b[wc.wr_id], SIZE) == siwt_hash(R.a[wc.wr_id], SIZE)) {
				res.ok++;
				verified += SIZE;
			} else {
				res.bad++;
			}
		}
		while (rpcrdma_evch_get(R.evch, &ev) == 0) {
			if (ev.type == RPCRDMA_EV_TERMINATE)
				res.term = true;
			if (ev.type == RPCRDMA_EV_DISCONNECTED || ev.type == RPCRDMA_EV_TERMINATE) {
				res.ended = true;
				if (!settle)
					settle = siwt_now_ms() + 300;
			}
		}
		if (rdone == NSEND && res.sdone == NSEND)
			break;
		if (settle && siwt_now_ms() > settle)
			break;
	}
	res.ms = siwt_now_ms() - t0;
	SIWT_EQ(res.sdone, NSEND); /* every Send completes exactly once */
	printf("  ok %u bad %u flushed %u, sends failed %u of %u, ended %d term %d, %llu ms\n",
	       res.ok, res.bad, res.rflushed, res.sfail, res.sdone, res.ended, res.term,
	       (unsigned long long)res.ms);
	return res;
}

/* One case: open with @fault and @crc, send, check what came. */
static struct result one(const char *fault, bool crc)
{
	struct result res = {0};

	printf("%s, CRC %s\n", fault ? fault : "no fault", crc ? "on" : "off");
	if (rig_open(fault, crc) == 0)
		res = run();
	return res;
}

static void test_parse(void)
{
	struct siw_fault_cfg a, b;
	static const char *bad[] = {"",        "cut",    "cut:",     "cut:12x", "bogus:1",
				    "delay:5", "seed:1", "seed:1:0", "drop:-",  "delay:5:999999"};

	SIWT_CHECK(siw_fault_parse("seed:7:4096", &a) && siw_fault_parse("seed:7:4096", &b),
		   "seed parse");
	SIWT_CHECK(memcmp(&a, &b, sizeof(a)) == 0, "a seed picks the same fault each time");
	SIWT_CHECK(a.kind != SIW_FAULT_NONE, "a seed picks a fault");
	for (uint64_t s = 0; s < 200; s++) {
		char str[40];

		snprintf(str, sizeof(str), "seed:%llu:4096", (unsigned long long)s);
		SIWT_CHECK(siw_fault_parse(str, &a), "%s", str);
		SIWT_CHECK((a.kind != SIW_FAULT_CUT && a.kind != SIW_FAULT_CORRUPT) || a.at < 4096,
			   "%s: byte position in the span", str);
	}
	SIWT_CHECK(siw_fault_parse("delay:5:100", &a) && a.kind == SIW_FAULT_DELAY && a.at == 5 &&
		       a.delay_ms == 100,
		   "delay parse");
	SIWT_CHECK(siw_fault_parse("refuse-reg:3", &a) && a.kind == SIW_FAULT_REFUSE_REG &&
		       a.at == 3,
		   "refuse-reg parse");
	SIWT_CHECK(siw_fault_parse("pin:0", &a) && a.kind == SIW_FAULT_PIN, "pin parse");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		SIWT_CHECK(!siw_fault_parse(bad[i], &a) && a.kind == SIW_FAULT_NONE,
			   "\"%s\" must mean no fault", bad[i]);
}

static void test_refuse_reg(void)
{
	static uint8_t buf[4096];
	struct rpcrdma_mr *m3 = NULL, *m4 = NULL;

	printf("refuse-reg:3\n");
	if (rig_open("refuse-reg:3", true))
		return;
	SIWT_EQ(rpcrdma_mr_reg(R.pd, buf, 2048, RPCRDMA_ACCESS_LOCAL_WRITE, &m3), -ENOMEM);
	SIWT_EQ(rpcrdma_mr_reg(R.pd, buf + 2048, 2048, RPCRDMA_ACCESS_LOCAL_WRITE, &m4), 0);
	if (m4)
		rpcrdma_mr_dereg(m4);
	rig_close();
}

/* pin:0: registrations charged to RLIMIT_MEMLOCK by the pages they span
 * (Linux siw), given back at deregistration; the device says it pins. */
static void test_pin(void)
{
	static uint8_t buf[3 * 4096] __attribute__((aligned(4096)));
	struct rpcrdma_mr *m1 = NULL, *m2 = NULL;
	struct rpcrdma_dev_caps caps;
	struct rlimit rl, old;

	printf("pin:0\n");
	if (getrlimit(RLIMIT_MEMLOCK, &old))
		return;
	rl = old;
	rl.rlim_cur = 2 * 4096;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) || rig_open("pin:0", true)) {
		(void)setrlimit(RLIMIT_MEMLOCK, &old);
		return;
	}
	SIWT_EQ(rpcrdma_dev_query(R.dev, &caps), 0);
	SIWT_CHECK(caps.flags & RPCRDMA_DEV_CAP_PINS_MEMORY, "pin:0 reports the flag");
	/* 2 bytes across a page boundary: two pages, the whole limit */
	SIWT_EQ(rpcrdma_mr_reg(R.pd, buf + 4095, 2, RPCRDMA_ACCESS_LOCAL_WRITE, &m1), 0);
	SIWT_EQ(rpcrdma_mr_reg(R.pd, buf, 1, RPCRDMA_ACCESS_LOCAL_WRITE, &m2), -ENOMEM);
	if (m1)
		rpcrdma_mr_dereg(m1);
	SIWT_EQ(rpcrdma_mr_reg(R.pd, buf, 2 * 4096, RPCRDMA_ACCESS_LOCAL_WRITE, &m2), 0);
	if (m2)
		rpcrdma_mr_dereg(m2);
	rig_close();
	(void)setrlimit(RLIMIT_MEMLOCK, &old);
}

/* ---------------- the seeded campaign ---------------- */

struct camp {
	uint8_t *asrc, *bdst; /* A: Write sources and Read sinks; B: Write targets, Read sources */
	struct rpcrdma_mr *amr, *bmr;
	uint32_t op[NSEND], len[NSEND]; /* 0 Send, 1 Write + Send, 2 Read */
	unsigned wrs, wdone, rdone, bad;
};

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Post the run's work: message i is a Send of len (op 0), a Write of len
 * into B's slot i then a Send naming it (op 1), or a Read of len from B's
 * slot i (op 2). */
static void camp_post(struct camp *c, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;

	for (unsigned i = 0; i < NSEND; i++) {
		uint8_t *a = c->asrc + (size_t)i * SLOT, *b = c->bdst + (size_t)i * SLOT;
		struct rpcrdma_sge sg = {(uintptr_t)a, 0, rpcrdma_mr_stag(c->amr)};
		struct rpcrdma_send_wr wr = {
		    .flags = RPCRDMA_SEND_SIGNALED, .sg = &sg, .num_sge = 1};

		c->op[i] = (uint32_t)(xs(&x) % 3);
		c->len[i] = 1 + (uint32_t)(xs(&x) % (c->op[i] ? SLOT : SIZE));
		siwt_fill(a, c->len[i], seed << 8 | i);
		siwt_fill(b, c->len[i], seed << 8 | i | 0x80);
		memcpy(R.a[i], &i, sizeof(i));
		if (c->op[i]) {
			wr.opcode = c->op[i] == 1 ? RPCRDMA_WR_RDMA_WRITE : RPCRDMA_WR_RDMA_READ;
			wr.wr_id = 200 + i;
			sg.length = c->len[i];
			wr.remote_stag = rpcrdma_mr_stag(c->bmr);
			wr.remote_offset = rpcrdma_mr_offset(c->bmr) + (uint64_t)i * SLOT;
			c->wrs++;
			if (rpcrdma_post_send(R.epa, &wr)) {
				c->wdone++; /* refused: the connection is gone */
				continue;
			}
		}
		if (c->op[i] == 2)
			continue;
		/* the Send: the Send's own bytes, or (after a Write) its index */
		if (c->op[i] == 1) {
			sg.addr = (uintptr_t)R.a[i];
			sg.length = sizeof(i);
			sg.lkey = rpcrdma_mr_stag(R.mra);
		} else {
			sg.length = c->len[i];
		}
		wr.opcode = RPCRDMA_WR_SEND;
		wr.wr_id = 100 + i;
		c->wrs++;
		if (rpcrdma_post_send(R.epa, &wr))
			c->wdone++;
	}
}

/* What B received in receive @k (a SUCCESS of @len bytes): the Send of
 * message i, or the one announcing its Write. */
static void camp_recv(struct camp *c, unsigned i, unsigned k, uint32_t len, bool dropped,
		      uint64_t seed)
{
	if (c->op[i] == 1) {
		uint8_t *a = c->asrc + (size_t)i * SLOT, *b = c->bdst + (size_t)i * SLOT;

		SIWT_CHECK(len == sizeof(i), "seed %llu: announcing Send %u: %u bytes",
			   (unsigned long long)seed, i, len);
		if (!dropped && memcmp(a, b, c->len[i]) != 0) {
			c->bad++;
			SIWT_CHECK(0, "seed %llu: Send %u delivered before its Write was placed",
				   (unsigned long long)seed, i);
		}
		verified += c->len[i];
		return;
	}
	if (len != c->len[i] ||
	    siwt_hash(R.b[k], len) != siwt_hash(c->asrc + (size_t)i * SLOT, c->len[i])) {
		c->bad++;
		SIWT_CHECK(0, "seed %llu: Send %u delivered with wrong bytes (%u of %u)",
			   (unsigned long long)seed, i, len, c->len[i]);
	}
	verified += len;
}

/* One run: seed @seed picks the fault and the mix. */
static void camp_run(uint64_t seed)
{
	struct camp c = {0};
	char f[48];
	struct siw_fault_cfg fc;
	uint64_t end, last, settle = 0;
	unsigned nrecv;
	bool cut = false;

	snprintf(f, sizeof(f), "seed:%llu:%u", (unsigned long long)seed, 2 * NSEND * SLOT);
	(void)siw_fault_parse(f, &fc);
	if (rig_open(f, true)) {
		rig_close();
		return;
	}
	c.asrc = siwt_alloc_buf((size_t)NSEND * SLOT);
	c.bdst = siwt_alloc_buf((size_t)NSEND * SLOT);
	if (rpcrdma_mr_reg(R.pd, c.asrc, (size_t)NSEND * SLOT, RPCRDMA_ACCESS_LOCAL_WRITE,
			   &c.amr) ||
	    rpcrdma_mr_reg(R.pd, c.bdst, (size_t)NSEND * SLOT,
			   RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE |
			       RPCRDMA_ACCESS_REMOTE_READ,
			   &c.bmr)) {
		/* a refused registration: an error to the caller, nothing else */
		SIWT_CHECK(fc.kind == SIW_FAULT_REFUSE_REG, "seed %llu: registration failed",
			   (unsigned long long)seed);
		goto out;
	}
	camp_post(&c, seed);
	nrecv = 0;
	for (unsigned i = 0; i < NSEND; i++)
		nrecv += c.op[i] != 2;
	end = siwt_now_ms() + 5000;
	last = siwt_now_ms();
	while (c.wdone < c.wrs || c.rdone < nrecv) {
		struct rpcrdma_wc wc;
		struct rpcrdma_event ev;
		unsigned before = c.wdone + c.rdone;

		/* A dropped frame no later frame reveals is never noticed (a
		 * lost Read Response, a last Send): what notices it is the
		 * ULP's timeout, which ends the connection. Then every
		 * outstanding request must still complete, once. */
		if (fc.kind == SIW_FAULT_DROP && !cut && siwt_now_ms() - last > 300) {
			(void)rpcrdma_disconnect(R.epa);
			cut = true;
			end = siwt_now_ms() + 3000;
		}

		if (siwt_now_ms() > end) {
			SIWT_CHECK(0,
				   "seed %llu (%s: kind %d at %llu): %u of %u requests, %u of %u "
				   "receives after 5 s",
				   (unsigned long long)seed, f, (int)fc.kind,
				   (unsigned long long)fc.at, c.wdone, c.wrs, c.rdone, nrecv);
			break;
		}
		if (settle && siwt_now_ms() > settle)
			break; /* ended: the receives beyond the posted ones never come */
		(void)rpcrdma_dev_progress(R.dev, 5);
		while (rpcrdma_cq_poll(R.cqa, &wc, 1) == 1) {
			c.wdone++;
			if (wc.wr_id >= 200 && wc.status == RPCRDMA_WC_SUCCESS &&
			    c.op[wc.wr_id - 200] == 2) {
				unsigned i = (unsigned)wc.wr_id - 200;

				SIWT_CHECK(memcmp(c.asrc + (size_t)i * SLOT,
						  c.bdst + (size_t)i * SLOT, c.len[i]) == 0,
					   "seed %llu: Read %u succeeded with wrong bytes",
					   (unsigned long long)seed, i);
				verified += c.len[i];
			}
		}
		while (rpcrdma_cq_poll(R.cqb, &wc, 1) == 1) {
			if (wc.wr_id < NSEND && wc.status == RPCRDMA_WC_SUCCESS) {
				/* receives are consumed in order: the k-th Send lands in
				 * receive k; its first word or bytes say which message */
				unsigned k = c.rdone, i = 0, seen = 0;

				for (i = 0; i < NSEND; i++)
					if (c.op[i] != 2 && seen++ == k)
						break;
				SIWT_EQ(wc.wr_id, k);
				if (i < NSEND)
					camp_recv(&c, i, k, wc.byte_len, fc.kind == SIW_FAULT_DROP,
						  seed);
			}
			c.rdone++;
		}
		while (rpcrdma_evch_get(R.evch, &ev) == 0)
			if ((ev.type == RPCRDMA_EV_DISCONNECTED ||
			     ev.type == RPCRDMA_EV_TERMINATE) &&
			    !settle)
				settle = siwt_now_ms() + 1000;
		if (c.wdone + c.rdone != before)
			last = siwt_now_ms();
	}
	SIWT_CHECK(c.wdone == c.wrs, "seed %llu: %u of %u work requests completed",
		   (unsigned long long)seed, c.wdone, c.wrs);
out:
	if (R.epa)
		rpcrdma_ep_destroy(R.epa);
	if (R.epb)
		rpcrdma_ep_destroy(R.epb);
	R.epa = R.epb = NULL;
	if (c.amr)
		rpcrdma_mr_dereg(c.amr);
	if (c.bmr)
		rpcrdma_mr_dereg(c.bmr);
	rig_close();
	siwt_free_buf(c.asrc, (size_t)NSEND * SLOT);
	siwt_free_buf(c.bdst, (size_t)NSEND * SLOT);
}

static int campaign(int argc, char **argv)
{
	uint64_t t0 = siwt_now_ms();
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 100;
	uint64_t first = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;

	siwt_role = "campaign";
	setenv("RPCRDMA_SIW_NUDGE_MS", "0", 1);
	for (uint64_t s = first; s < first + n; s++)
		camp_run(s);
	printf("campaign: %llu seeded runs from seed %llu\n", (unsigned long long)n,
	       (unsigned long long)first);
	return siwt_finish("test_siw_fault campaign", verified, t0);
}

int main(int argc, char **argv)
{
	uint64_t t0 = siwt_now_ms();
	struct result r;
	struct rpcrdma_ep_stats st;

	if (argc > 1 && strcmp(argv[1], "campaign") == 0)
		return campaign(argc, argv);
	siwt_role = "fault";
	setenv("RPCRDMA_SIW_NUDGE_MS", "0", 1);
	test_parse();

	r = one(NULL, true);
	SIWT_CHECK(r.ok == NSEND && r.bad == 0 && !r.ended, "no fault: all delivered");
	rig_close();

	r = one("cut:2500", true);
	SIWT_CHECK(r.ok == 2 && r.bad == 0, "cut: Sends 0 and 1 delivered, nothing else");
	SIWT_CHECK(r.ended && r.rflushed == NSEND - 2, "cut: the rest of the receives flushed");
	SIWT_CHECK(r.sfail >= 1, "cut: a Send after the cut failed");
	rig_close();

	r = one("corrupt:1500", true);
	SIWT_CHECK(r.ok == 1 && r.bad == 0 && r.ended, "corrupt + CRC: caught, Send 0 delivered");
	SIWT_CHECK(rpcrdma_ep_query_stats(R.epb, &st) == 0 && st.crc_errors >= 1,
		   "corrupt + CRC: B counted a CRC error");
	rig_close();

	r = one("corrupt:1500", false);
	SIWT_CHECK(r.ok == NSEND - 1 && r.bad == 1 && !r.ended,
		   "corrupt payload, no CRC: delivered, one Send damaged");
	rig_close();

	r = one("corrupt:1035", false);
	SIWT_CHECK(r.ok == 1 && r.bad == 0 && r.term, "corrupt QN, no CRC: B terminates");
	rig_close();

	r = one("drop:1", true);
	SIWT_CHECK(r.ok == 1 && r.bad == 0 && r.term, "drop: MSN gap terminates");
	rig_close();

	r = one("delay:1500:300", true);
	SIWT_CHECK(r.ok == NSEND && r.bad == 0 && !r.ended && r.ms >= 300,
		   "delay: all delivered, 300 ms late");
	rig_close();

	r = one("cut-op:3", true);
	SIWT_CHECK(r.ok == 2 && r.bad == 0 && r.ended, "cut-op: two delivered, then the end");
	rig_close();

	test_refuse_reg();
	test_pin();
	return siwt_finish("test_siw_fault", verified, t0);
}
