/* SPDX-License-Identifier: MIT */
/*
 * Bidirectional concurrent traffic (helper "siw"): both processes run the
 * same random mix at once on one connection — Sends of 0..16 KiB (with a
 * credit window on the peer's posted receives), RDMA Writes into rotating
 * slots of the peer's region, each announced by the Send that follows it
 * (RFC 5040 §5.5: the Write is placed when the Send completes there), and
 * RDMA Reads of random ranges of the peer's read-only source, up to 6 in
 * flight against IRD/ORD 4 (the provider holds back the excess). This mixes
 * Read Responses with send-queue traffic in both directions, the case
 * per-operation tests do not cover. Asserted: every completion succeeds,
 * Sends arrive in order with their bytes (checksum), every announced Write
 * is placed (checksum of the slot), every Read returns the source bytes.
 * Two runs: CRC on with 64 KiB FPDUs on one side and 9000-byte ones on the
 * other, then CRC off.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/provider.h"

#define CHECK_WITH_PID
#define CHECK_ON_FAIL return -1
#include "lib/check.h"

#define NSLOT   32u
#define SLOT    (128u << 10)
#define SRC_LEN (1u << 20)
#define NRECV   16u
#define MSGMAX  (16u << 10)
#define MSGBUF  (MSGMAX + 64u)
#define NOUT    8u
#define NSINK   4u
#define SINK    (256u << 10)
#define NOPS    1500 /* Sends with data (about half announce a Write) */
#define NREADS  400
#define RUN_MS  30000u

enum { T_DATA = 1, T_FIN = 2, T_ACK = 3 };

/* The message header, copied in and out field by field (same host). */
struct hdr {
	uint32_t type, seq, acks, slot, skew, wlen, elen;
	uint64_t whash, ehash;
};

struct adv {
	uint32_t rstag, sstag;
	uint64_t rto, sto, seed;
};

struct side {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_ep *ep;
	uint8_t *region, *src, *msgs, *out, *wsrc, *sink, *peer_src;
	struct rpcrdma_mr *mr_region, *mr_src, *mr_msgs, *mr_out, *mr_wsrc, *mr_sink;
	struct adv peer;
	uint64_t seed, rng;
	uint32_t sent, acked_by_peer, received, acked_to_peer, writes;
	uint32_t reads_out, reads_done, sends_done;
	bool out_busy[NOUT], sink_busy[NSINK], fin_tx, fin_rx;
	uint32_t sink_off[NSINK], sink_len[NSINK];
};

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 2654435761u + 1u;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static uint32_t rnd(struct side *s, uint32_t mod)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng % mod);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int repost(struct side *s, uint32_t i)
{
	struct rpcrdma_sge g = {(uintptr_t)(s->msgs + (size_t)i * MSGBUF), MSGBUF,
				rpcrdma_mr_stag(s->mr_msgs)};

	return rpcrdma_post_recv(s->ep, i, &g, 1);
}

static int reg(struct side *s, void *p, size_t len, unsigned acc, struct rpcrdma_mr **mr)
{
	CHECK(p && rpcrdma_mr_reg(s->pd, p, len, acc, mr) == 0);
	return 0;
}

static int setup(struct side *s, uint64_t seed, bool crc, uint32_t ulpdu)
{
	struct rpcrdma_cq_attr ca = {.cqe = 1024};
	const unsigned lw = RPCRDMA_ACCESS_LOCAL_WRITE;

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	s->rng = seed * 7919u + 3u;
	CHECK(rpcrdma_dev_open(NULL, NULL, &s->dev) == 0);
	CHECK(rpcrdma_pd_alloc(s->dev, &s->pd) == 0);
	CHECK(rpcrdma_cq_create(s->dev, &ca, &s->cq) == 0);
	CHECK(rpcrdma_evch_create(s->dev, NULL, &s->ch) == 0);
	s->region = aligned_alloc(4096, (size_t)NSLOT * SLOT);
	s->src = malloc(SRC_LEN);
	s->peer_src = malloc(SRC_LEN);
	s->msgs = malloc((size_t)NRECV * MSGBUF);
	s->out = malloc((size_t)NOUT * MSGBUF);
	s->wsrc = malloc((size_t)NOUT * SLOT);
	s->sink = malloc((size_t)NSINK * SINK);
	CHECK(s->src && s->peer_src);
	fill(s->src, SRC_LEN, seed);
	if (reg(s, s->region, (size_t)NSLOT * SLOT, lw | RPCRDMA_ACCESS_REMOTE_WRITE,
		&s->mr_region) ||
	    reg(s, s->src, SRC_LEN, RPCRDMA_ACCESS_REMOTE_READ, &s->mr_src) ||
	    reg(s, s->msgs, (size_t)NRECV * MSGBUF, lw, &s->mr_msgs) ||
	    reg(s, s->out, (size_t)NOUT * MSGBUF, 0, &s->mr_out) ||
	    reg(s, s->wsrc, (size_t)NOUT * SLOT, 0, &s->mr_wsrc) ||
	    reg(s, s->sink, (size_t)NSINK * SINK, lw, &s->mr_sink))
		return -1;
	struct rpcrdma_ep_attr ea = {
	    .comp_mask = RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_CAPS | RPCRDMA_EP_ATTR_IRD_ORD |
			 RPCRDMA_EP_ATTR_MAX_ULPDU,
	    .mpa_crc = crc,
	    .max_send_wr = 64,
	    .max_recv_wr = NRECV,
	    .max_send_sge = 2,
	    .max_recv_sge = 1,
	    .ird = 4,
	    .ord = 4,
	    .max_ulpdu = ulpdu,
	    .send_cq = s->cq,
	    .recv_cq = s->cq,
	    .evch = s->ch,
	};
	CHECK(rpcrdma_ep_create(s->pd, &ea, &s->ep) == 0);
	for (uint32_t i = 0; i < NRECV; i++)
		CHECK(repost(s, i) == 0);
	return 0;
}

static void teardown(struct side *s)
{
	struct rpcrdma_mr *mrs[] = {s->mr_region, s->mr_src,  s->mr_msgs,
				    s->mr_out,    s->mr_wsrc, s->mr_sink};

	if (s->ep)
		rpcrdma_ep_destroy(s->ep);
	for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++)
		if (mrs[i])
			rpcrdma_mr_dereg(mrs[i]);
	rpcrdma_evch_destroy(s->ch);
	rpcrdma_cq_destroy(s->cq);
	rpcrdma_pd_free(s->pd);
	rpcrdma_dev_close(s->dev);
	free(s->region);
	free(s->src);
	free(s->peer_src);
	free(s->msgs);
	free(s->out);
	free(s->wsrc);
	free(s->sink);
}

static struct adv my_adv(struct side *s)
{
	struct adv a = {rpcrdma_mr_stag(s->mr_region), rpcrdma_mr_stag(s->mr_src),
			rpcrdma_mr_offset(s->mr_region), rpcrdma_mr_offset(s->mr_src), s->seed};

	return a;
}

static int free_out(struct side *s)
{
	for (uint32_t i = 0; i < NOUT; i++)
		if (!s->out_busy[i])
			return (int)i;
	return -1;
}

/* A Send of @type; T_DATA may be preceded by a Write it announces.
 * 1 posted, 0 no free send buffer, -1 failure. */
static int post_msg(struct side *s, uint32_t type)
{
	int o = free_out(s);
	struct hdr h = {.type = type, .seq = s->sent, .acks = s->received};

	if (o < 0)
		return 0;
	uint8_t *m = s->out + (size_t)o * MSGBUF;

	if (type == T_DATA && rnd(s, 2)) {
		uint8_t *w = s->wsrc + (size_t)o * SLOT;

		h.slot = s->writes % NSLOT;
		h.skew = rnd(s, 7);
		h.wlen = rnd(s, SLOT - h.skew) + 1;
		fill(w, h.wlen, s->rng);
		h.whash = hash(w, h.wlen);
		uint32_t a = h.wlen / 3;
		struct rpcrdma_sge g[2] = {
		    {(uintptr_t)w, a, rpcrdma_mr_stag(s->mr_wsrc)},
		    {(uintptr_t)(w + a), h.wlen - a, rpcrdma_mr_stag(s->mr_wsrc)}};
		struct rpcrdma_send_wr wr = {
		    .wr_id = 1000u + (uint32_t)o,
		    .opcode = RPCRDMA_WR_RDMA_WRITE,
		    .sg = g,
		    .num_sge = 2,
		    .remote_stag = s->peer.rstag,
		    .remote_offset = s->peer.rto + (uint64_t)h.slot * SLOT + h.skew,
		};
		CHECK(rpcrdma_post_send(s->ep, &wr) == 0);
		s->writes++;
	}
	h.elen = type == T_DATA ? rnd(s, MSGMAX) : 0;
	fill(m + sizeof(h), h.elen, s->rng);
	h.ehash = hash(m + sizeof(h), h.elen);
	memcpy(m, &h, sizeof(h));
	struct rpcrdma_sge g = {(uintptr_t)m, (uint32_t)sizeof(h) + h.elen,
				rpcrdma_mr_stag(s->mr_out)};
	struct rpcrdma_send_wr wr = {.wr_id = (uint64_t)o,
				     .opcode = RPCRDMA_WR_SEND,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &g,
				     .num_sge = 1};
	CHECK(rpcrdma_post_send(s->ep, &wr) == 0);
	s->out_busy[o] = true;
	s->sent++;
	s->acked_to_peer = s->received;
	if (type == T_FIN)
		s->fin_tx = true;
	return 1;
}

static int post_read(struct side *s)
{
	uint32_t k;

	for (k = 0; k < NSINK && s->sink_busy[k]; k++)
		;
	if (k == NSINK)
		return 0;
	uint32_t len = rnd(s, 4) ? rnd(s, SINK) + 1 : 0;
	uint32_t off = rnd(s, SRC_LEN - len + 1);
	struct rpcrdma_sge g = {(uintptr_t)(s->sink + (size_t)k * SINK), len,
				rpcrdma_mr_stag(s->mr_sink)};
	struct rpcrdma_send_wr wr = {.wr_id = 2000u + k,
				     .opcode = RPCRDMA_WR_RDMA_READ,
				     .flags = RPCRDMA_SEND_SIGNALED,
				     .sg = &g,
				     .num_sge = 1,
				     .remote_stag = s->peer.sstag,
				     .remote_offset = s->peer.sto + off};

	CHECK(rpcrdma_post_send(s->ep, &wr) == 0);
	s->sink_busy[k] = true;
	s->sink_off[k] = off;
	s->sink_len[k] = len;
	s->reads_out++;
	return 0;
}

static int on_wc(struct side *s, const struct rpcrdma_wc *wc)
{
	CHECK(wc->status == RPCRDMA_WC_SUCCESS);
	if (wc->opcode == RPCRDMA_WC_SEND) {
		CHECK(wc->wr_id < NOUT);
		s->out_busy[wc->wr_id] = false;
		s->sends_done++;
		return 0;
	}
	if (wc->opcode == RPCRDMA_WC_RDMA_READ) {
		uint32_t k = (uint32_t)(wc->wr_id - 2000u);

		CHECK(k < NSINK && wc->byte_len == s->sink_len[k]);
		CHECK(memcmp(s->sink + (size_t)k * SINK, s->peer_src + s->sink_off[k],
			     s->sink_len[k]) == 0);
		s->sink_busy[k] = false;
		s->reads_done++;
		return 0;
	}
	CHECK(wc->opcode == RPCRDMA_WC_RECV && wc->wr_id < NRECV);
	const uint8_t *m = s->msgs + (size_t)wc->wr_id * MSGBUF;
	struct hdr h;

	CHECK(wc->byte_len >= sizeof(h));
	memcpy(&h, m, sizeof(h));
	CHECK(wc->byte_len == sizeof(h) + h.elen && hash(m + sizeof(h), h.elen) == h.ehash);
	CHECK(h.seq == s->received); /* RFC 5040 §5.3: Sends in order */
	if (h.wlen)
		CHECK(hash(s->region + (size_t)h.slot * SLOT + h.skew, h.wlen) == h.whash);
	if (h.acks > s->acked_by_peer)
		s->acked_by_peer = h.acks;
	if (h.type == T_FIN)
		s->fin_rx = true;
	s->received++;
	return repost(s, (uint32_t)wc->wr_id);
}

static int run(struct side *s)
{
	uint64_t end = now_ms() + RUN_MS;
	int ops = 0;
	unsigned idle = 0;

	fill(s->peer_src, SRC_LEN, s->peer.seed);
	while (!(s->fin_tx && s->fin_rx && s->sends_done == s->sent &&
		 s->reads_done == s->reads_out)) {
		struct rpcrdma_wc wc[32];
		uint32_t inflight = s->sent - s->acked_by_peer; /* peer's receives in use */
		int n;

		CHECK(now_ms() < end);
		if (ops < NOPS && inflight < NRECV - 2 && rnd(s, 2)) {
			int rc = post_msg(s, T_DATA);

			if (rc < 0)
				return -1;
			ops += rc;
		}
		if (s->reads_out < NREADS && s->reads_out - s->reads_done < 6 && !rnd(s, 3) &&
		    post_read(s))
			return -1;
		if (ops == NOPS && !s->fin_tx && s->reads_done == NREADS && inflight < NRECV - 1 &&
		    post_msg(s, T_FIN) < 0)
			return -1;
		/* acknowledge receives once half the peer's window is used */
		inflight = s->sent - s->acked_by_peer;
		if (s->received - s->acked_to_peer >= NRECV / 2 && inflight < NRECV - 1 &&
		    post_msg(s, T_ACK) < 0)
			return -1;
		/* sleep (1 ms at most) only after a while without news: a
		 * sleeping process pays a scheduling delay on a loaded machine */
		int got = rpcrdma_dev_progress(s->dev, idle > 1000 ? 1 : 0);

		CHECK(got >= 0);
		n = rpcrdma_cq_poll(s->cq, wc, 32);
		CHECK(n >= 0);
		idle = got == 0 && n == 0 ? idle + 1 : 0;
		for (int i = 0; i < n; i++)
			if (on_wc(s, &wc[i]))
				return -1;
	}
	CHECK(s->writes > NOPS / 4 && s->reads_done == NREADS);
	/* let the peer see the last completions before the socket goes */
	for (int i = 0; i < 20; i++)
		(void)rpcrdma_dev_progress(s->dev, 5);
	return 0;
}

static int wait_event(struct side *s, struct rpcrdma_event *ev)
{
	uint64_t end = now_ms() + 10000u;

	while (rpcrdma_evch_get(s->ch, ev) != 0) {
		CHECK(now_ms() < end);
		(void)rpcrdma_dev_progress(s->dev, 20);
	}
	return 0;
}

static int child(int port_fd, uint64_t seed, bool crc)
{
	struct side s;
	struct rpcrdma_event ev;
	uint16_t port;
	int rc = -1;

	if (read(port_fd, &port, sizeof(port)) != sizeof(port))
		return -1;
	if (setup(&s, seed, crc, 65516) == 0) {
		struct sockaddr_in sin = {.sin_family = AF_INET,
					  .sin_port = htons(port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		struct adv a = my_adv(&s);

		if (rpcrdma_connect(s.ep, (struct sockaddr *)&sin, sizeof(sin), &a, sizeof(a)) ==
			0 &&
		    wait_event(&s, &ev) == 0 && ev.type == RPCRDMA_EV_ESTABLISHED &&
		    ev.private_data_len == sizeof(s.peer)) {
			memcpy(&s.peer, ev.private_data, sizeof(s.peer));
			rc = run(&s);
		}
	}
	teardown(&s);
	return rc;
}

static int parent(int port_fd, uint64_t seed, bool crc)
{
	struct side s;
	struct rpcrdma_listener *l = NULL;
	struct rpcrdma_event ev;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage ss;
	int rc = -1;

	if (setup(&s, seed, crc, 9000) == 0 &&
	    rpcrdma_listen(s.dev, s.ch, (struct sockaddr *)&sin, sizeof(sin), 4, NULL, &l) == 0 &&
	    rpcrdma_listener_addr(l, &ss) == 0) {
		uint16_t port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		struct adv a = my_adv(&s);

		if (write(port_fd, &port, sizeof(port)) == sizeof(port) &&
		    wait_event(&s, &ev) == 0 && ev.type == RPCRDMA_EV_CONNECT_REQUEST &&
		    ev.private_data_len == sizeof(s.peer)) {
			memcpy(&s.peer, ev.private_data, sizeof(s.peer));
			if (rpcrdma_accept(ev.req, s.ep, &a, sizeof(a)) == 0 &&
			    wait_event(&s, &ev) == 0 && ev.type == RPCRDMA_EV_ESTABLISHED)
				rc = run(&s);
		}
	}
	if (l)
		rpcrdma_listener_destroy(l);
	teardown(&s);
	return rc;
}

static int once(bool crc)
{
	int p[2], status = 0;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[1]);
		alarm(60);
		_exit(child(p[0], 11, crc) == 0 && failures == 0 ? 0 : 1);
	}
	close(p[0]);
	alarm(60);
	int rc = parent(p[1], 10, crc);

	close(p[1]);
	if (waitpid(pid, &status, 0) < 0 || rc || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bidi (crc %s): parent %d, child status 0x%x\n", crc ? "on" : "off",
			rc, status);
		return -1;
	}
	printf("bidi (crc %s): ok\n", crc ? "on" : "off");
	return 0;
}

int main(void)
{
	int rc = once(true);

	if (!rc)
		rc = once(false);
	return rc || failures ? 1 : 0;
}
