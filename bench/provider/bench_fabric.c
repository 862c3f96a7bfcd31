/* SPDX-License-Identifier: MIT */
/*
 * The usual alternative: Debian's libfabric with its "tcp" provider
 * (FI_EP_MSG, FI_MSG | FI_RMA) doing the same operations as the softiwarp
 * benchmark: 64-byte fi_send/fi_recv ping-pong, 1 MiB fi_write and fi_read
 * with several in flight, waiting for completions either on the CQ's wait fd
 * (fi_trywait + poll) or by spinning on fi_cq_read.
 *
 * What the tcp provider of libfabric 1.17 needs, found by experiment (and
 * printed as INFO lines): it accepts FI_CONTEXT/FI_CONTEXT2 (we always pass
 * a struct fi_context2), FI_SOCKADDR_IN addresses, and grants the mr_mode
 * bits we offer; we honour FI_MR_LOCAL (descriptors), FI_MR_VIRT_ADDR
 * (virtual addresses vs. 0-based offsets) and FI_MR_PROV_KEY (provider keys
 * vs. ours) whichever way it answers.
 */
#define _GNU_SOURCE
#include "bench_common.h"
#include "bench_rdma.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define FAB_VERSION FI_VERSION(1, 17)
#define NTX         16u
#define EQ_TIMEOUT  20000 /* ms for connection events */

static struct bench_opts opt;

static struct {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_pep *pep;
	int cq_fd;
	uint64_t mr_mode;

	/* One registration for the control messages, one for the 16 MiB
	 * RMA region; both live for the whole connection. */
	struct bench_msg *msgs; /* BENCH_NRECV receive slots then NTX send slots */
	struct fid_mr *msg_mr;
	void *msg_desc;
	unsigned char *region;
	struct fid_mr *reg_mr;
	void *reg_desc;

	struct fi_context2 rx_ctx[BENCH_NRECV], tx_ctx[NTX], rma_ctx[BENCH_MAX_QD];
	unsigned char tx_busy[NTX];
	unsigned tx_next;
	unsigned rxq[BENCH_NRECV], rxq_head, rxq_len; /* completed receives, in order */
	uint64_t rma_done;

	uint64_t raddr, rkey; /* the peer's region */
} F;

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int rc_ = (int)(call);                                                             \
		if (rc_)                                                                           \
			bench_die("%s: %s (%d)", #call, fi_strerror(-rc_), rc_);                   \
	} while (0)

static struct fi_info *make_hints(int manual)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		bench_die("fi_allocinfo failed");
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->addr_format = FI_SOCKADDR_IN;
	h->fabric_attr->prov_name = strdup("tcp");
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	if (manual)
		h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	return h;
}

static void get_info(const char *service, uint64_t flags)
{
	int manual, rc = -FI_ENODATA;

	/* Prefer manual progress (no provider thread: the same single-threaded
	 * model as our provider); take whatever the provider has otherwise. */
	for (manual = 1; manual >= 0 && rc; manual--) {
		struct fi_info *h = make_hints(manual);

		rc = fi_getinfo(FAB_VERSION, opt.host, service, flags, h, &F.info);
		fi_freeinfo(h);
	}
	if (rc)
		bench_die("fi_getinfo(tcp, FI_EP_MSG, FI_MSG|FI_RMA): %s", fi_strerror(-rc));
	F.mr_mode = F.info->domain_attr->mr_mode;
	bench_info("fabric_provider", "%s %u.%u", F.info->fabric_attr->prov_name,
		   FI_MAJOR(F.info->fabric_attr->prov_version),
		   FI_MINOR(F.info->fabric_attr->prov_version));
	bench_info("fabric_progress", "%s",
		   F.info->domain_attr->data_progress == FI_PROGRESS_MANUAL ? "manual" : "auto");
	bench_info("fabric_mr_mode", "local=%d virt_addr=%d prov_key=%d allocated=%d",
		   !!(F.mr_mode & FI_MR_LOCAL), !!(F.mr_mode & FI_MR_VIRT_ADDR),
		   !!(F.mr_mode & FI_MR_PROV_KEY), !!(F.mr_mode & FI_MR_ALLOCATED));
	CHECK(fi_fabric(F.info->fabric_attr, &F.fabric, NULL));
	{
		struct fi_eq_attr ea = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};

		CHECK(fi_eq_open(F.fabric, &ea, &F.eq, NULL));
	}
}

static struct fid_mr *reg(void *buf, size_t len, uint64_t access, uint64_t key, void **desc)
{
	struct fid_mr *mr;

	CHECK(fi_mr_reg(F.domain, buf, len, access, 0, key, 0, &mr, NULL));
	if (F.mr_mode & FI_MR_ENDPOINT) {
		CHECK(fi_mr_bind(mr, &F.ep->fid, 0));
		CHECK(fi_mr_enable(mr));
	}
	*desc = fi_mr_desc(mr);
	return mr;
}

static void post_recv(unsigned i)
{
	ssize_t rc;

	while ((rc = fi_recv(F.ep, &F.msgs[i], sizeof(struct bench_msg), F.msg_desc, 0,
			     &F.rx_ctx[i])) == -FI_EAGAIN)
		;
	if (rc)
		bench_die("fi_recv: %s", fi_strerror((int)-rc));
}

/* Builds domain, CQ, endpoint and memory for info (the CONNREQ's on the
 * server side) and posts the receives before the connection is up. */
static void setup_ep(struct fi_info *info)
{
	struct fi_cq_attr ca = {
	    .size = 1024,
	    .format = FI_CQ_FORMAT_CONTEXT,
	    .wait_obj = opt.mode == BENCH_BLOCK ? FI_WAIT_FD : FI_WAIT_NONE,
	};
	unsigned i;

	CHECK(fi_domain(F.fabric, info, &F.domain, NULL));
	CHECK(fi_cq_open(F.domain, &ca, &F.cq, NULL));
	F.cq_fd = -1;
	if (opt.mode == BENCH_BLOCK) {
		CHECK(fi_control(&F.cq->fid, FI_GETWAIT, &F.cq_fd));
		if (F.cq_fd < 0)
			bench_die("CQ has no wait fd");
	}
	CHECK(fi_endpoint(F.domain, info, &F.ep, NULL));
	CHECK(fi_ep_bind(F.ep, &F.eq->fid, 0));
	CHECK(fi_ep_bind(F.ep, &F.cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(F.ep));

	/* aligned_alloc wants a size that is a multiple of the alignment. */
	F.msgs = aligned_alloc(4096, 4096);
	_Static_assert((BENCH_NRECV + NTX) * sizeof(struct bench_msg) <= 4096, "msg slots");
	F.region = aligned_alloc(4096, BENCH_REGION);
	if (!F.msgs || !F.region)
		bench_die("out of memory");
	memset(F.msgs, 0, (BENCH_NRECV + NTX) * sizeof(struct bench_msg));
	memset(F.region, 0, BENCH_REGION);
	F.msg_mr = reg(F.msgs, (BENCH_NRECV + NTX) * sizeof(struct bench_msg), FI_SEND | FI_RECV, 1,
		       &F.msg_desc);
	F.reg_mr = reg(F.region, BENCH_REGION,
		       FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 2, &F.reg_desc);
	for (i = 0; i < BENCH_NRECV; i++)
		post_recv(i);
}

static void wait_connected(void)
{
	struct fi_eq_cm_entry e;
	uint32_t ev;
	ssize_t n = fi_eq_sread(F.eq, &ev, &e, sizeof(e), EQ_TIMEOUT, 0);

	if (n < 0) {
		struct fi_eq_err_entry ee = {0};

		if (n == -FI_EAVAIL && fi_eq_readerr(F.eq, &ee, 0) > 0)
			bench_die("connection failed: %s", fi_strerror(ee.err));
		bench_die("waiting for FI_CONNECTED: %s", fi_strerror((int)-n));
	}
	if (ev != FI_CONNECTED)
		bench_die("unexpected EQ event %u", ev);
}

/* Reaps completions; in blocking mode first sleeps on the CQ's fd when
 * fi_trywait says nothing is pending. Returns the number reaped (> 0). */
static int progress(void)
{
	struct fi_cq_entry ce[16];
	ssize_t n;
	int i;

	for (;;) {
		n = fi_cq_read(F.cq, ce, 16);
		if (n > 0)
			break;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry ee = {0};

			fi_cq_readerr(F.cq, &ee, 0);
			bench_die("completion error: %s (prov %d)", fi_strerror(ee.err),
				  ee.prov_errno);
		}
		if (n != -FI_EAGAIN)
			bench_die("fi_cq_read: %s", fi_strerror((int)-n));
		if (opt.mode == BENCH_BLOCK && opt.progress_wait) {
			/* libfabric's own blocking wait (the counterpart of
			 * softiwarp's rpcrdma_dev_progress(dev, 1000)) */
			n = fi_cq_sread(F.cq, ce, 16, NULL, 1000);
			if (n > 0)
				break;
			if (n == -FI_EAGAIN || n == -FI_EINTR)
				continue;
			if (n != -FI_EAVAIL)
				bench_die("fi_cq_sread: %s", fi_strerror((int)-n));
			continue; /* fi_cq_read reports the error entry */
		} else if (opt.mode == BENCH_BLOCK) {
			struct fid *fids[1] = {&F.cq->fid};

			if (fi_trywait(F.fabric, fids, 1) == FI_SUCCESS) {
				struct pollfd p = {.fd = F.cq_fd, .events = POLLIN};

				if (poll(&p, 1, 1000) < 0 && errno != EINTR)
					bench_die("poll: %s", strerror(errno));
			}
		} else {
			bench_idle(&opt);
		}
	}
	for (i = 0; i < n; i++) {
		struct fi_context2 *c = ce[i].op_context;

		if (c >= F.rx_ctx && c < F.rx_ctx + BENCH_NRECV) {
			F.rxq[(F.rxq_head + F.rxq_len++) % BENCH_NRECV] = (unsigned)(c - F.rx_ctx);
		} else if (c >= F.tx_ctx && c < F.tx_ctx + NTX) {
			F.tx_busy[c - F.tx_ctx] = 0;
		} else if (c >= F.rma_ctx && c < F.rma_ctx + BENCH_MAX_QD) {
			F.rma_done++;
		} else {
			bench_die("completion with unknown context %p", (void *)c);
		}
	}
	return (int)n;
}

static void send_msg(const struct bench_msg *m)
{
	unsigned i = F.tx_next;
	ssize_t rc;

	while (F.tx_busy[i])
		progress();
	F.tx_next = (i + 1) % NTX;
	F.tx_busy[i] = 1;
	F.msgs[BENCH_NRECV + i] = *m;
	while ((rc = fi_send(F.ep, &F.msgs[BENCH_NRECV + i], sizeof(*m), F.msg_desc, 0,
			     &F.tx_ctx[i])) == -FI_EAGAIN)
		progress();
	if (rc)
		bench_die("fi_send: %s", fi_strerror((int)-rc));
}

/* Returns the next received message (copied out; the slot is reposted). */
static struct bench_msg recv_msg(void)
{
	struct bench_msg m;
	unsigned i;

	while (!F.rxq_len)
		progress();
	i = F.rxq[F.rxq_head];
	F.rxq_head = (F.rxq_head + 1) % BENCH_NRECV;
	F.rxq_len--;
	m = F.msgs[i];
	post_recv(i);
	return m;
}

static uint64_t mr_key(struct fid_mr *mr, uint64_t ours)
{
	return (F.mr_mode & FI_MR_PROV_KEY) ? fi_mr_key(mr) : ours;
}

static void progress_one(void)
{
	(void)progress();
}

/* Until the last Send posted has completed. */
static void drain_sends(void)
{
	while (F.tx_busy[(F.tx_next + NTX - 1) % NTX])
		progress();
}

static void post_rma(int write, uint64_t i);

static const struct bench_rdma *transport(void)
{
	static struct bench_rdma b;

	b = (struct bench_rdma){
	    .opt = &opt,
	    .region = F.region,
	    .rma_done = &F.rma_done,
	    .progress = progress_one,
	    .send_msg = send_msg,
	    .recv_msg = recv_msg,
	    .post_rma = post_rma,
	    .drain_sends = drain_sends,
	    .alloc_count = NULL, /* libfabric's allocations are not ours to count */
	};
	return &b;
}

static int run_server(void)
{
	struct sockaddr_in sa;
	size_t sl = sizeof(sa);
	struct fi_eq_cm_entry e;
	uint32_t ev;
	ssize_t n;
	char svc[16];

	snprintf(svc, sizeof(svc), "%u", opt.port);
	get_info(svc, FI_SOURCE);
	CHECK(fi_passive_ep(F.fabric, F.info, &F.pep, NULL));
	CHECK(fi_pep_bind(F.pep, &F.eq->fid, 0));
	CHECK(fi_listen(F.pep));
	CHECK(fi_getname(&F.pep->fid, &sa, &sl));
	bench_ready(ntohs(sa.sin_port));

	n = fi_eq_sread(F.eq, &ev, &e, sizeof(e), EQ_TIMEOUT, 0);
	if (n < 0 || ev != FI_CONNREQ)
		bench_die("waiting for FI_CONNREQ: %s",
			  n < 0 ? fi_strerror((int)-n) : "other event");
	setup_ep(e.info);
	CHECK(fi_accept(F.ep, NULL, 0));
	wait_connected();
	fi_freeinfo(e.info);

	{
		struct bench_msg m = {.op = BENCH_OP_MR, .c = BENCH_REGION};

		m.a = (F.mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)F.region : 0;
		m.b = mr_key(F.reg_mr, 2);
		send_msg(&m);
	}
	bench_rdma_serve(transport());
	return 0;
}

static void post_rma(int write, uint64_t i)
{
	unsigned slot = (unsigned)(i % BENCH_SLOTS);
	unsigned char *lbuf = F.region + (size_t)slot * BENCH_BW_SIZE;
	uint64_t raddr = F.raddr + (uint64_t)slot * BENCH_BW_SIZE;
	void *ctx = &F.rma_ctx[i % BENCH_MAX_QD];
	ssize_t rc;

	for (;;) {
		rc = write ? fi_write(F.ep, lbuf, BENCH_BW_SIZE, F.reg_desc, 0, raddr, F.rkey, ctx)
			   : fi_read(F.ep, lbuf, BENCH_BW_SIZE, F.reg_desc, 0, raddr, F.rkey, ctx);
		if (rc != -FI_EAGAIN)
			break;
		progress();
	}
	if (rc)
		bench_die("fi_%s: %s", write ? "write" : "read", fi_strerror((int)-rc));
}

static int run_client(void)
{
	char svc[16];
	struct bench_msg m;

	snprintf(svc, sizeof(svc), "%u", opt.port);
	get_info(svc, 0);
	setup_ep(F.info);
	CHECK(fi_connect(F.ep, F.info->dest_addr, NULL, 0));
	wait_connected();
	m = recv_msg();
	if (m.op != BENCH_OP_MR)
		bench_die("expected the server's MR, got op %u", m.op);
	F.raddr = m.a;
	F.rkey = m.b;

	bench_rdma_client(transport());
	return 0;
}

static void teardown(void)
{
	if (F.ep)
		fi_close(&F.ep->fid);
	if (F.msg_mr)
		fi_close(&F.msg_mr->fid);
	if (F.reg_mr)
		fi_close(&F.reg_mr->fid);
	if (F.pep)
		fi_close(&F.pep->fid);
	if (F.cq)
		fi_close(&F.cq->fid);
	if (F.eq)
		fi_close(&F.eq->fid);
	if (F.domain)
		fi_close(&F.domain->fid);
	if (F.fabric)
		fi_close(&F.fabric->fid);
	if (F.info)
		fi_freeinfo(F.info);
	free(F.msgs);
	free(F.region);
}

int main(int argc, char **argv)
{
	int rc;

	bench_parse(&opt, argc, argv, "bench_fabric");
	bench_pin(opt.cpu);
	bench_watchdog(&opt);
	rc = opt.role == BENCH_SERVER ? run_server() : run_client();
	teardown();
	return rc;
}
