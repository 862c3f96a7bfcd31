// SPDX-License-Identifier: MIT
/*
 * IRD/ORD (issue 13, defect 8): what each role advertises in the MPA
 * revision 2 enhanced IRD/ORD word (RFC 6581 §9) and that the server's
 * RDMA Reads honour the client's IRD (RFC 6581 §9; RFC 8166 §3.4.5 for
 * the Read chunks they pull). Two processes over loopback.
 *
 * MPA bytes (plain TCP sockets on our side, the real client/server on the
 * other):
 *   - the client's MPA request: revision 2, enhanced, IRD >= 128 (what the
 *     Linux client advertises: the server Reads our Read chunks), ORD > 0
 *     (we pull replies in responder-provided Read chunks, asked for or
 *     not, issue 32, and with a backchannel the reverse calls' Read
 *     chunks);
 *   - the server's MPA reply to the Linux client's request (IRD 128 / ORD
 *     0): ORD 128, IRD 0 (as Linux svcrdma answers); to a client with IRD
 *     4: ORD 4; with a backchannel: IRD > 0.
 * Reads: a raw client (the provider API, IRD 4) sends 8 calls at once,
 * each with one Read chunk of 64 segments (RFC 8166 §3.4.5) to a server
 * with 8 credits (its send queue holds 288 work requests, fewer than the
 * 512 Reads): every call completes with the checksum of its payload, the
 * server never had more than 4 Reads outstanding on the connection, and
 * the raw client's provider (which answers a Read beyond its IRD with a
 * Terminate, RFC 5040 IRD) saw none.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "rpcrdma/backchannel.h"
#include "util/be.h"
#include "xprt/xprt_test.h"

#define STATS_PROG 0x20000098u /* void -> u_int max_reads_outstanding */
#define PEER_IRD   4u
#define NCALLS     8u
#define NSEGS      64u
#define SEG_LEN    64u
#define BUF        4096u

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, p + got, n - got, 0);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* One MPA frame (RFC 5044 §7.1): key, flags, revision, private data. */
struct mpa_frame {
	uint8_t key[16];
	uint8_t flags, rev;
	uint16_t pd_len;
	uint16_t ird, ord; /* RFC 6581 §9 word, control bits masked off */
	bool enhanced;
};

static int mpa_read(int fd, struct mpa_frame *f)
{
	uint8_t b[20 + 512];

	if (read_full(fd, b, 20))
		return -1;
	memcpy(f->key, b, 16);
	f->flags = b[16];
	f->rev = b[17];
	f->pd_len = get_be16(b + 18);
	if (f->pd_len > 512 || read_full(fd, b + 20, f->pd_len))
		return -1;
	f->enhanced = (f->flags & 0x10) != 0;
	if (f->enhanced && f->pd_len >= 4) {
		f->ird = get_be16(b + 20) & 0x3fff;
		f->ord = get_be16(b + 22) & 0x3fff;
	}
	return 0;
}

/* --- the client's MPA request -------------------------------------- */

struct clnt_try {
	uint16_t port;
	bool bc;
	int rc;
};

static void *clnt_thread(void *arg)
{
	struct clnt_try *t = arg;
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT |
						   RPCRDMA_CLNT_OPT_RETRIES,
				      .connect_timeout_ms = 1500,
				      .retries = 0};
	struct rpcrdma_clnt *c = NULL;

	t->rc = t->bc ? rpcrdma_clnt_create_bc("127.0.0.1", t->port, XTEST_PROG, XTEST_VERS, &o,
					       NULL, &c)
		      : rpcrdma_clnt_create("127.0.0.1", t->port, XTEST_PROG, XTEST_VERS, &o, &c);
	if (c)
		rpcrdma_clnt_destroy(c);
	return NULL;
}

static void client_request(bool bc)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd;
	struct clnt_try t = {.bc = bc};
	struct mpa_frame f = {0};
	pthread_t th;

	XT_CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
		 listen(lfd, 1) == 0 && getsockname(lfd, (struct sockaddr *)&sin, &sl) == 0);
	t.port = ntohs(sin.sin_port);
	XT_CHECK(pthread_create(&th, NULL, clnt_thread, &t) == 0);
	fd = accept(lfd, NULL, NULL);
	XT_CHECK(fd >= 0);
	XT_CHECK(fd >= 0 && mpa_read(fd, &f) == 0);
	printf("client%s MPA request: rev %u enhanced %d IRD %u ORD %u\n",
	       bc ? " (backchannel)" : "", f.rev, f.enhanced, f.ird, f.ord);
	XT_CHECK(memcmp(f.key, "MPA ID Req Frame", 16) == 0);
	XT_CHECK(f.rev == 2 && f.enhanced);
	if (f.ird < 128)
		fprintf(stderr,
			"RFC 6581 §9: client IRD %u, below the 128 the Linux client "
			"advertises for the server's Reads\n",
			f.ird);
	XT_CHECK(f.ird >= 128);
	/* it pulls reverse calls' Read chunks (bc), and replies that come in
	 * a responder-provided Read chunk, asked for or not (issue 32) */
	(void)bc;
	if (f.ord == 0)
		fprintf(stderr, "RFC 6581 §9: client advertises ORD 0\n");
	XT_CHECK(f.ord > 0);
	if (fd >= 0)
		close(fd); /* the client's connect fails */
	pthread_join(th, NULL);
	XT_CHECK(t.rc != 0);
	close(lfd);
}

/* --- the server's MPA reply ---------------------------------------- */

static void server_reply(uint16_t port, uint16_t ird, uint16_t ord, uint16_t want_ird,
			 uint16_t want_ord)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	/* RFC 5044 §7.1 + RFC 6581 §9 + RFC 8797, as the Linux client sends:
	 * revision 2, enhanced, CRC off, IRD/ORD word, 4 KiB inline sizes. */
	uint8_t req[32] = "MPA ID Req Frame";
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct mpa_frame f = {0};
	const uint8_t pd[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};

	req[16] = 0x10;
	req[17] = 2;
	req[18] = 0;
	req[19] = 12;
	put_be16(req + 20, ird);
	put_be16(req + 22, ord);
	memcpy(req + 24, pd, 8);
	XT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	XT_CHECK(send(fd, req, sizeof(req), 0) == (ssize_t)sizeof(req));
	XT_CHECK(mpa_read(fd, &f) == 0);
	printf("server MPA reply to IRD %u ORD %u: rev %u enhanced %d IRD %u ORD %u\n", ird, ord,
	       f.rev, f.enhanced, f.ird, f.ord);
	XT_CHECK(memcmp(f.key, "MPA ID Rep Frame", 16) == 0);
	XT_CHECK(f.rev == 2 && f.enhanced && !(f.flags & 0x20));
	if (f.ird != want_ird || f.ord != want_ord)
		fprintf(stderr, "RFC 6581 §9: server answered IRD %u ORD %u, want IRD %u ORD %u\n",
			f.ird, f.ord, want_ird, want_ord);
	XT_CHECK(f.ird == want_ird && f.ord == want_ord);
	close(fd);
}

/* --- Reads bounded by the client's IRD ----------------------------- */

struct raw {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *mr, *dmr;
	uint8_t buf[16 + NCALLS][BUF]; /* 16 receives, then one send buffer per call */
	uint8_t data[NCALLS][NSEGS * SEG_LEN];
};

static int raw_open(struct raw *r, uint16_t port)
{
	struct rpcrdma_cq_attr ca = {.cqe = 256};
	struct rpcrdma_ep_attr ea = {0};
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	/* RFC 8797: 4 KiB inline both ways, so 64 Read segments fit */
	const uint8_t pd[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03};
	struct rpcrdma_event ev;
	uint64_t end;

	if (rpcrdma_dev_open(NULL, NULL, &r->dev) || rpcrdma_pd_alloc(r->dev, &r->pd) ||
	    rpcrdma_cq_create(r->dev, &ca, &r->cq) || rpcrdma_evch_create(r->dev, NULL, &r->ch) ||
	    rpcrdma_mr_reg(r->pd, r->buf, sizeof(r->buf), RPCRDMA_ACCESS_LOCAL_WRITE, &r->mr) ||
	    rpcrdma_mr_reg(r->pd, r->data, sizeof(r->data), RPCRDMA_ACCESS_REMOTE_READ, &r->dmr))
		return -1;
	ea.comp_mask = RPCRDMA_EP_ATTR_IRD_ORD | RPCRDMA_EP_ATTR_CAPS;
	ea.ird = PEER_IRD;
	ea.ord = 0;
	ea.max_send_wr = 32;
	ea.max_recv_wr = 16;
	ea.max_send_sge = 1;
	ea.max_recv_sge = 1;
	ea.send_cq = ea.recv_cq = r->cq;
	ea.evch = r->ch;
	if (rpcrdma_ep_create(r->pd, &ea, &r->ep))
		return -1;
	for (uint32_t i = 0; i < 16; i++) {
		struct rpcrdma_sge s = {(uint64_t)(uintptr_t)r->buf[i], BUF,
					rpcrdma_mr_stag(r->mr)};

		if (rpcrdma_post_recv(r->ep, i, &s, 1))
			return -1;
	}
	if (rpcrdma_connect(r->ep, (struct sockaddr *)&sin, sizeof(sin), pd, sizeof(pd)))
		return -1;
	end = ms_now() + 10000;
	while (ms_now() < end) {
		if (rpcrdma_evch_get(r->ch, &ev) == 0)
			return ev.type == RPCRDMA_EV_ESTABLISHED ? 0 : -1;
		rpcrdma_dev_progress(r->dev, 20);
	}
	return -1;
}

static void raw_close(struct raw *r)
{
	if (r->ep)
		rpcrdma_ep_destroy(r->ep);
	if (r->mr)
		rpcrdma_mr_dereg(r->mr);
	if (r->dmr)
		rpcrdma_mr_dereg(r->dmr);
	if (r->ch)
		rpcrdma_evch_destroy(r->ch);
	if (r->cq)
		rpcrdma_cq_destroy(r->cq);
	if (r->pd)
		rpcrdma_pd_free(r->pd);
	if (r->dev)
		rpcrdma_dev_close(r->dev);
}

static size_t put(uint8_t *p, size_t off, uint32_t v)
{
	put_be32(p + off, v);
	return off + 4;
}

static uint32_t get(const uint8_t *p, size_t off)
{
	return get_be32(p + off);
}

/* XT_WRITE {seed, bulk} with the bulk data in one Read chunk of NSEGS
 * segments at position 48 (RPC call header 40 + seed 4 + length 4;
 * RFC 8166 §3.4.5), sent as RDMA_MSG. */
static int post_call(struct raw *r, uint32_t i, uint32_t xid, uint32_t seed)
{
	uint8_t *p = r->buf[16 + i];
	size_t off = 0;
	uint32_t stag = rpcrdma_mr_stag(r->dmr);
	struct rpcrdma_sge s;
	struct rpcrdma_send_wr wr = {.wr_id = 1000 + i, .opcode = RPCRDMA_WR_SEND, .num_sge = 1};

	off = put(p, off, xid);
	off = put(p, off, 1);
	off = put(p, off, NCALLS);
	off = put(p, off, 0); /* RDMA_MSG */
	for (uint32_t k = 0; k < NSEGS; k++) {
		uint64_t to = (uint64_t)(uintptr_t)(r->data[i] + k * SEG_LEN);

		off = put(p, off, 1);
		off = put(p, off, 48);
		off = put(p, off, stag);
		off = put(p, off, SEG_LEN);
		off = put(p, off, (uint32_t)(to >> 32));
		off = put(p, off, (uint32_t)to);
	}
	off = put(p, off, 0); /* end of the Read list */
	off = put(p, off, 0); /* no Write list */
	off = put(p, off, 0); /* no Reply chunk */
	off = put(p, off, xid);
	off = put(p, off, 0); /* CALL */
	off = put(p, off, 2);
	off = put(p, off, XTEST_PROG);
	off = put(p, off, XTEST_VERS);
	off = put(p, off, XT_WRITE);
	for (int k = 0; k < 4; k++)
		off = put(p, off, 0); /* AUTH_NONE credential and verifier */
	off = put(p, off, seed);
	off = put(p, off, NSEGS * SEG_LEN);
	s = (struct rpcrdma_sge){(uint64_t)(uintptr_t)p, (uint32_t)off, rpcrdma_mr_stag(r->mr)};
	wr.sg = &s;
	return rpcrdma_post_send(r->ep, &wr);
}

static void reads_bounded(uint16_t port)
{
	struct raw *r = calloc(1, sizeof(*r));
	struct rpcrdma_ep_conn_info ci;
	struct rpcrdma_ep_stats est;
	uint64_t want[NCALLS];
	bool got[NCALLS] = {false};
	uint32_t xid0 = 0x51d00000u, nrep = 0;
	uint64_t end;

	XT_CHECK(r && raw_open(r, port) == 0);
	if (!r || !r->ep) {
		free(r);
		return;
	}
	XT_CHECK(rpcrdma_ep_query_conn(r->ep, &ci) == 0);
	for (uint32_t i = 0; i < NCALLS; i++) {
		xt_fill(r->data[i], sizeof(r->data[i]), 77 + i);
		want[i] = xt_hash(r->data[i], sizeof(r->data[i])) ^ (77 + i);
		XT_CHECK(post_call(r, i, xid0 + i, 77 + i) == 0);
	}
	end = ms_now() + 10000;
	while (nrep < NCALLS && ms_now() < end) {
		struct rpcrdma_wc wc;

		if (rpcrdma_cq_poll(r->cq, &wc, 1) != 1) {
			rpcrdma_dev_progress(r->dev, 5);
			continue;
		}
		if (wc.status != RPCRDMA_WC_SUCCESS) {
			fprintf(stderr, "completion %llu failed: status %d (connection lost)\n",
				(unsigned long long)wc.wr_id, (int)wc.status);
			xt_failures++;
			break;
		}
		if (wc.opcode != RPCRDMA_WC_RECV)
			continue;
		const uint8_t *m = r->buf[wc.wr_id];
		uint32_t i = get(m, 0) - xid0;

		/* RDMA_MSG, empty lists; reply: xid REPLY ACCEPTED verf SUCCESS;
		 * then {u_int len; u_hyper hash} */
		XT_CHECK(wc.byte_len == 28 + 24 + 12 && i < NCALLS && get(m, 12) == 0);
		if (i < NCALLS && wc.byte_len == 64) {
			uint64_t h = (uint64_t)get(m, 56) << 32 | get(m, 60);

			XT_CHECK(get(m, 28) == xid0 + i && get(m, 48) == 0);
			XT_CHECK(get(m, 52) == NSEGS * SEG_LEN);
			if (h != want[i])
				fprintf(stderr,
					"RFC 8166 §3.4.5: call %u payload checksum %016llx, "
					"want %016llx\n",
					i, (unsigned long long)h, (unsigned long long)want[i]);
			XT_CHECK(h == want[i] && !got[i]);
			got[i] = true;
		}
		nrep++;
		struct rpcrdma_sge s = {(uint64_t)(uintptr_t)r->buf[wc.wr_id], BUF,
					rpcrdma_mr_stag(r->mr)};

		XT_CHECK(rpcrdma_post_recv(r->ep, wc.wr_id, &s, 1) == 0);
	}
	if (nrep != NCALLS)
		fprintf(stderr, "RFC 8166 §3.4.5: %u of %u calls with %u Read segments answered\n",
			nrep, NCALLS, NSEGS);
	XT_CHECK(nrep == NCALLS);
	XT_CHECK(rpcrdma_ep_query_stats(r->ep, &est) == 0);
	printf("%u calls x %u Read segments, client IRD %u: %llu Reads served, %llu Terminates "
	       "sent\n",
	       NCALLS, NSEGS, PEER_IRD, (unsigned long long)est.reads_in,
	       (unsigned long long)est.terminates_tx);
	XT_CHECK(est.reads_in == NCALLS * NSEGS && est.terminates_tx == 0);
	raw_close(r);
	free(r);
}

static void stats_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct rpcrdma_xprt_stats st;
	u_int v = 0;

	(void)proc;
	(void)args;
	if (rpcrdma_svc_stats(ctx, &st) == 0)
		v = st.max_reads_outstanding;
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
}

static void add_stats(struct rpcrdma_svc *svc)
{
	XT_CHECK(rpcrdma_svc_register(svc, STATS_PROG, 1, stats_dispatch, svc) == 0);
}

static void add_bc(struct rpcrdma_svc *svc)
{
	XT_CHECK(rpcrdma_svc_bc_init(svc, NULL, NULL, NULL) == 0);
}

static uint32_t server_max_reads(uint16_t port)
{
	struct rpcrdma_clnt *c;
	u_int v = ~0u;

	if (rpcrdma_clnt_create("127.0.0.1", port, STATS_PROG, 1, NULL, &c))
		return ~0u;
	XT_CHECK(rpcrdma_clnt_call(c, 1, NULL, NULL, (xdrproc_t)xdr_u_int, &v, NULL) == 0);
	rpcrdma_clnt_destroy(c);
	return v;
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_svc_opts o = {.comp_mask = RPCRDMA_SVC_OPT_CREDITS | RPCRDMA_SVC_OPT_INLINE,
				     .credits = NCALLS,
				     .inline_send = BUF,
				     .inline_recv = BUF};
	uint32_t m;

	signal(SIGPIPE, SIG_IGN);
	client_request(false);
	client_request(true);

	if (xt_server_start(&srv, &o, add_stats))
		return 1;
	server_reply(srv.port, 128, 0, 0, 128); /* the Linux client's word */
	server_reply(srv.port, PEER_IRD, 0, 0, PEER_IRD);
	reads_bounded(srv.port);
	m = server_max_reads(srv.port);
	printf("server: at most %u Reads outstanding on one connection\n", m);
	if (m > PEER_IRD)
		fprintf(stderr,
			"RFC 6581 §9: %u Reads outstanding toward a client "
			"with IRD %u\n",
			m, PEER_IRD);
	XT_CHECK(m >= 1 && m <= PEER_IRD);
	XT_CHECK(xt_server_stop(&srv) == 0);

	if (xt_server_start(&srv, NULL, add_bc))
		return 1;
	server_reply(srv.port, 128, 0, 16, 128); /* serves a backchannel client's Reads */
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
