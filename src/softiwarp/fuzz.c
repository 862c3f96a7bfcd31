/* SPDX-License-Identifier: MIT */
/*
 * Test and fuzz hook (siw_fuzz.h): one endpoint fed raw bytes, either over
 * an AF_UNIX socketpair and driven by the ordinary progress engine, or
 * (in_memory) with its socket's byte stream in memory and its receive and
 * transmit steps called directly, on resources made once per process.
 * Test code: compiled only with RPCRDMA_TEST_HOOKS (rpcrdma_softiwarp_test,
 * which the fuzz targets link), never into librpcrdma.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "softiwarp/siw.h"
#include "softiwarp/siw_fuzz.h"
#include "util/tsan.h"

#ifdef RPCRDMA_TEST_HOOKS

#define FUZZ_REGION_LEN 65536u
#define FUZZ_NRECV      8u
#define FUZZ_RECV_LEN   4096u
#define FUZZ_MAX_ROUNDS 4096
#define FUZZ_READ_OFF   32768u /* the posted Reads' sinks: the upper half */
#define FUZZ_READ_STAG  0x00c0de00u
/* Outside ASan's shadow. ThreadSanitizer keeps its traces there and its
 * runtime dies on a fixed mapping in them: under it, an address in its
 * low application range (below 0x008000000000). */
#ifdef RPCRDMA_UNDER_TSAN
#define FUZZ_REGION_ADDR ((void *)0x004000000000ull)
#else
#define FUZZ_REGION_ADDR ((void *)0x600000000000ull)
#endif

struct siw_fuzz {
	struct siw_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_mr *mr, *rmr;
	struct rpcrdma_ep *ep;
	struct siw_listener fake_listener; /* owner of the responder's request */
	uint8_t *region;
	bool region_mapped;
	uint8_t *rbuf;
	int peer; /* our end of the socketpair; the endpoint owns the other */
	/* in_memory: an eventfd whose duplicates stand for the socket (a real
	 * descriptor, so that closing it and epoll_ctl() on it work) */
	int stand_in;
	bool in_memory;
	struct siw_fuzz_info info;
};

/*
 * The in-memory stream (siw.h): what the peer sent and the endpoint has not
 * read yet is mem_in.p[off, len); at its end a receive says EAGAIN, or 0
 * (the peer closed) once eof is set. What the endpoint sends is counted
 * and kept in mem_in.f's info. One in-memory harness at a time: the
 * resources live in mem_cache from the first siw_fuzz_create() on.
 */
int siw_fuzz_mem_fd = -1;
static struct {
	const uint8_t *p;
	size_t len, off;
	bool eof;
	struct siw_fuzz *f;
} mem_in;
static struct siw_fuzz *mem_cache;
static bool mem_busy;

static void keep_tx(struct siw_fuzz *f, const uint8_t *p, size_t n)
{
	f->info.tx_bytes += n;
	if (n >= SIW_FUZZ_TX_KEEP) {
		memcpy(f->info.tx_keep, p + n - SIW_FUZZ_TX_KEEP, SIW_FUZZ_TX_KEEP);
		f->info.tx_keep_len = SIW_FUZZ_TX_KEEP;
		return;
	}
	if (f->info.tx_keep_len + n > SIW_FUZZ_TX_KEEP) {
		size_t drop = f->info.tx_keep_len + n - SIW_FUZZ_TX_KEEP;

		memmove(f->info.tx_keep, f->info.tx_keep + drop, f->info.tx_keep_len - drop);
		f->info.tx_keep_len -= (uint32_t)drop;
	}
	memcpy(f->info.tx_keep + f->info.tx_keep_len, p, n);
	f->info.tx_keep_len += (uint32_t)n;
}

ssize_t siw_fuzz_mem_recv(const struct msghdr *mh)
{
	size_t left = mem_in.len - mem_in.off, got = 0;

	if (!left) {
		if (mem_in.eof)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	for (size_t i = 0; i < mh->msg_iovlen && got < left; i++) {
		size_t k =
		    mh->msg_iov[i].iov_len < left - got ? mh->msg_iov[i].iov_len : left - got;

		if (k)
			memcpy(mh->msg_iov[i].iov_base, mem_in.p + mem_in.off + got, k);
		got += k;
	}
	mem_in.off += got;
	return (ssize_t)got;
}

ssize_t siw_fuzz_mem_send(const struct msghdr *mh)
{
	size_t n = 0;

	for (size_t i = 0; i < mh->msg_iovlen; i++) {
		if (mem_in.f && mh->msg_iov[i].iov_len)
			keep_tx(mem_in.f, mh->msg_iov[i].iov_base, mh->msg_iov[i].iov_len);
		n += mh->msg_iov[i].iov_len;
	}
	return (ssize_t)n;
}

/* Read and keep whatever the endpoint sent back. */
static void drain_peer(struct siw_fuzz *f)
{
	uint8_t buf[8192];

	for (;;) {
		ssize_t n = recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT);

		if (n <= 0)
			return;
		keep_tx(f, buf, (size_t)n);
	}
}

static int post_recv(struct siw_fuzz *f, uint32_t i)
{
	struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)(f->rbuf + (size_t)i * FUZZ_RECV_LEN),
				  FUZZ_RECV_LEN, rpcrdma_mr_stag(f->rmr)};

	return rpcrdma_post_recv(f->ep, i, &sge, 1);
}

/* Events (auto-accept) and completions (count, repost). Returns the
 * number of events. */
static int reap(struct siw_fuzz *f)
{
	struct rpcrdma_event ev;
	struct rpcrdma_wc wc[16];
	int n, nev = 0;

	while (rpcrdma_evch_get(f->ch, &ev) == 0) {
		nev++;
		if (ev.type == RPCRDMA_EV_CONNECT_REQUEST)
			(void)rpcrdma_accept(ev.req, f->ep, NULL, 0);
	}
	while ((n = rpcrdma_cq_poll(f->cq, wc, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status != RPCRDMA_WC_SUCCESS) {
				f->info.flushes++;
				continue;
			}
			if (wc[i].opcode == RPCRDMA_WC_RECV) {
				f->info.recvs_done++;
				(void)post_recv(f, (uint32_t)wc[i].wr_id);
			}
		}
	}
	return nev;
}

static bool ep_has_input(struct siw_fuzz *f)
{
	struct siw_ep *ep = to_siw_ep(f->ep);
	int avail = 0;

	if (ep->fd < 0)
		return false;
	if (ep->rx.st_off < ep->rx.st_len)
		return true;
	return ioctl(ep->fd, FIONREAD, &avail) == 0 && avail > 0;
}

static void pump(struct siw_fuzz *f)
{
	for (int round = 0; round < FUZZ_MAX_ROUNDS; round++) {
		int got = rpcrdma_dev_progress(&f->dev->base, 0);

		drain_peer(f);
		(void)reap(f);
		if (got <= 0 && !ep_has_input(f) && to_siw_ep(f->ep)->tx.left == 0)
			return;
	}
}

/* The device, the mapped target region, receive buffers and their MRs,
 * the CQ and the event channel. On failure the caller destroys @f. */
static int fuzz_resources(struct siw_fuzz *f)
{
	struct rpcrdma_cq_attr ca = {.cqe = 1024};
	int rc;

	rc = siw_dev_create(true, NULL, &f->dev);
	if (rc)
		return rc;
	f->region = mmap(FUZZ_REGION_ADDR, FUZZ_REGION_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (f->region == MAP_FAILED)
		f->region = mmap(NULL, FUZZ_REGION_LEN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->region_mapped = f->region != MAP_FAILED;
	f->rbuf = calloc(FUZZ_NRECV, FUZZ_RECV_LEN);
	if (!f->region_mapped || !f->rbuf)
		return -ENOMEM;
	rc = rpcrdma_pd_alloc(&f->dev->base, &f->pd);
	if (!rc)
		rc = rpcrdma_mr_reg(f->pd, f->region, FUZZ_REGION_LEN,
				    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE |
					RPCRDMA_ACCESS_REMOTE_READ,
				    &f->mr);
	if (!rc)
		rc = rpcrdma_mr_reg(f->pd, f->rbuf, (size_t)FUZZ_NRECV * FUZZ_RECV_LEN,
				    RPCRDMA_ACCESS_LOCAL_WRITE, &f->rmr);
	if (!rc)
		rc = rpcrdma_cq_create(&f->dev->base, &ca, &f->cq);
	if (!rc)
		rc = rpcrdma_evch_create(&f->dev->base, NULL, &f->ch);
	return rc;
}

/* in_memory: what the progress engine does for a readable socket (a
 * pending connection request, then the endpoint), one pass. */
static void mem_step(struct siw_fuzz *f)
{
	struct siw_ep *ep = to_siw_ep(f->ep);
	struct siw_creq *r, *rn;

	siw_dev_lock(f->dev);
	for (r = f->dev->creqs; r; r = rn) {
		rn = r->next;
		if (r->fd >= 0 && r->fd == siw_fuzz_mem_fd)
			siw_cm_creq_ready(r, EPOLLIN);
	}
	if (ep->fd >= 0 && ep->fd == siw_fuzz_mem_fd && ep->state != SIW_EP_CONNECTING) {
		(void)siw_rx_process(ep);
		if (ep->fd >= 0)
			(void)siw_tx_process(ep);
		if (ep->cq_overrun)
			siw_ep_check_overrun(ep);
	}
	siw_dev_unlock(f->dev);
}

/* in_memory: the peer's @len bytes (then its close, with @eof) arrive at
 * once; run until a pass changes nothing. What is left unread is dropped
 * (the endpoint stopped reading). */
static void mem_feed(struct siw_fuzz *f, const uint8_t *data, size_t len, bool eof)
{
	mem_in.p = data;
	mem_in.len = len;
	mem_in.off = 0;
	mem_in.eof = eof;
	for (int round = 0; round < FUZZ_MAX_ROUNDS; round++) {
		struct siw_ep *ep = to_siw_ep(f->ep);
		size_t off = mem_in.off;
		uint64_t tx = f->info.tx_bytes;
		int nev;

		mem_step(f);
		nev = reap(f);
		/* all of it read, nothing left to send or to accept: a
		 * further pass would find nothing (the common case, spared) */
		if (!nev && mem_in.off == mem_in.len && (ep->fd < 0 || !siw_tx_pending(ep)) &&
		    !f->dev->creqs)
			break;
		if (!nev && mem_in.off == off && f->info.tx_bytes == tx)
			break;
	}
	mem_in.p = NULL;
	mem_in.len = mem_in.off = 0;
}

/* RDMA Reads posted at creation (siw_fuzz_cfg.reads): Read i reads
 * 4 KiB << i into the upper half of the region. */
static void post_reads(struct siw_fuzz *f, const struct siw_fuzz_cfg *cfg)
{
	uint32_t ord = cfg->ord ? cfg->ord : 4;
	uint64_t to = FUZZ_READ_OFF;

	for (uint32_t i = 0; i < cfg->reads && i < ord && i < 3; i++) {
		uint32_t len = 4096u << i;
		struct rpcrdma_sge sge = {(uint64_t)(uintptr_t)(f->region + to), len,
					  rpcrdma_mr_stag(f->mr)};
		struct rpcrdma_send_wr wr = {.wr_id = 100u + i,
					     .opcode = RPCRDMA_WR_RDMA_READ,
					     .flags = RPCRDMA_SEND_SIGNALED,
					     .sg = &sge,
					     .num_sge = 1,
					     .remote_offset = (uint64_t)i << 16,
					     .remote_stag = FUZZ_READ_STAG + i};

		if (rpcrdma_post_send(f->ep, &wr) != 0)
			return;
		to += len;
	}
}

/* The endpoint under test, from @cfg, with its receives posted. */
static int fuzz_ep_create(struct siw_fuzz *f, const struct siw_fuzz_cfg *cfg)
{
	struct rpcrdma_ep_attr ea;
	int rc;

	memset(&ea, 0, sizeof(ea));
	ea.comp_mask = RPCRDMA_EP_ATTR_IRD_ORD | RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_MPA_REV |
		       RPCRDMA_EP_ATTR_SOCKBUF;
	ea.ird = cfg->ird ? cfg->ird : 4;
	ea.ord = cfg->ord ? cfg->ord : 4;
	ea.mpa_crc = cfg->crc;
	ea.mpa_rev = cfg->mpa_rev ? cfg->mpa_rev : 2;
	ea.sockbuf = 0;
	if (cfg->mode == SIW_FUZZ_MPA_INITIATOR && cfg->rtr) {
		ea.comp_mask |= RPCRDMA_EP_ATTR_RTR;
		ea.rtr = cfg->rtr == RPCRDMA_RTR_READ ? RPCRDMA_RTR_READ : RPCRDMA_RTR_WRITE;
	}
	if (cfg->max_ulpdu) {
		ea.comp_mask |= RPCRDMA_EP_ATTR_MAX_ULPDU;
		ea.max_ulpdu = cfg->max_ulpdu;
	}
	ea.send_cq = f->cq;
	ea.recv_cq = f->cq;
	ea.evch = f->ch;
	rc = rpcrdma_ep_create(f->pd, &ea, &f->ep);
	for (uint32_t i = 0; !rc && i < FUZZ_NRECV; i++)
		rc = post_recv(f, i);
	return rc;
}

/* SIW_FUZZ_MPA_RESPONDER: a connection request read from @fd (the peer's
 * bytes are its MPA request), answered by reap(). Device lock held. */
static int fuzz_attach_responder(struct siw_fuzz *f, int fd)
{
	struct siw_dev *dev = f->dev;
	struct siw_creq *req = calloc(1, sizeof(*req));
	int rc;

	if (!req)
		return -ENOMEM;
	f->fake_listener.dev = dev;
	f->fake_listener.evch = to_siw_evch(f->ch);
	f->fake_listener.fd = -1;
	req->base.dev = &dev->base;
	req->dev = dev;
	req->listener = &f->fake_listener;
	req->fd = fd;
	req->poll.kind = SIW_POLL_CREQ;
	req->state = SIW_CREQ_READING;
	rc = siw_poll_add(dev, &req->poll, fd, EPOLLIN);
	if (rc) {
		free(req);
		return rc;
	}
	req->next = dev->creqs;
	dev->creqs = req;
	return 0;
}

/* SIW_FUZZ_MPA_INITIATOR: our MPA request is sent (as cm.c would, with
 * the RFC 6581 §9 RTR bits) and the peer's bytes are the reply. */
static void fuzz_start_initiator(struct siw_ep *ep)
{
	bool enh = ep->want_rev >= MPA_REV2;
	uint16_t ird_w = (uint16_t)ep->ird, ord_w = (uint16_t)ep->ord;

	if (enh && ep->want_rtr != RPCRDMA_RTR_NONE) {
		ird_w |= MPA_V2_PEER_TO_PEER;
		ord_w |= ep->want_rtr == RPCRDMA_RTR_READ ? MPA_V2_READ_RTR : MPA_V2_WRITE_RTR;
	}
	ep->active = true;
	ep->state = SIW_EP_MPA_REQ_SENT;
	ep->rx.state = SIW_RX_MPA;
	ep->mpa_in.need = 0;
	ep->tx.mpa_len = siw_mpa_build(ep->tx.mpa, false, ep->want_crc ? MPA_FLAG_CRC : 0,
				       enh ? MPA_REV2 : MPA_REV1, enh, ird_w, ord_w, NULL, 0);
	ep->tx.mpa_off = 0;
}

/* The other modes: the endpoint owns @fd from the start, either mid-MPA as
 * initiator or already in RTS (the peer's bytes are FPDUs). Device lock
 * held. */
static int fuzz_attach_stream(struct siw_fuzz *f, const struct siw_fuzz_cfg *cfg, int fd)
{
	struct siw_ep *ep = to_siw_ep(f->ep);
	int rc;

	ep->fd = fd;
	ep->used = true;
	ep->peer_ird = ep->ird;
	ep->peer_ord = ep->ord;
	ep->eff_ord = ep->ord;
	ep->rev = ep->want_rev;
	if (cfg->mode == SIW_FUZZ_MPA_INITIATOR) {
		fuzz_start_initiator(ep);
	} else {
		ep->crc = cfg->crc;
		ep->rx.state = SIW_RX_MPA; /* siw_ep_enter_rts resets it to HDR */
		siw_ep_enter_rts(ep);
	}
	rc = siw_poll_add(f->dev, &ep->poll, fd, EPOLLIN);
	if (!rc)
		(void)siw_tx_process(ep);
	return rc;
}

/* Mark the endpoint a fuzz endpoint and give it @fd (its own, or the
 * connection request's); device lock taken here. */
static int fuzz_attach(struct siw_fuzz *f, const struct siw_fuzz_cfg *cfg, int fd)
{
	struct siw_ep *ep = to_siw_ep(f->ep);
	int rc;

	siw_dev_lock(f->dev);
	ep->fuzz = true;
	ep->nudge_ms = 0; /* no first-frame nudge: the peer's bytes are the input */
	ep->rx.pred_read = cfg->pred_read;
	if (cfg->mode == SIW_FUZZ_MPA_RESPONDER)
		rc = fuzz_attach_responder(f, fd);
	else
		rc = fuzz_attach_stream(f, cfg, fd);
	siw_dev_unlock(f->dev);
	return rc;
}

static int create_socketpair(const struct siw_fuzz_cfg *cfg, struct siw_fuzz **out)
{
	struct siw_fuzz *f;
	int sv[2], rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->peer = -1;
	f->stand_in = -1;
	rc = fuzz_resources(f);
	if (!rc)
		rc = fuzz_ep_create(f, cfg);
	if (!rc && socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		rc = -errno;
	if (rc) {
		siw_fuzz_destroy(f);
		return rc;
	}
	f->peer = sv[1];
	rc = fuzz_attach(f, cfg, sv[0]);
	if (rc) {
		close(sv[0]);
		siw_fuzz_destroy(f);
		return rc;
	}
	drain_peer(f);
	post_reads(f, cfg);
	drain_peer(f);
	*out = f;
	return 0;
}

/* The process-wide resources of the in-memory harness, made on first use. */
static int mem_resources(void)
{
	struct siw_fuzz *f;
	int rc;

	if (mem_cache)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->peer = -1;
	f->in_memory = true;
	f->stand_in = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = f->stand_in < 0 ? -errno : fuzz_resources(f);
	if (rc) {
		f->in_memory = false; /* destroy it all */
		siw_fuzz_destroy(f);
		return rc;
	}
	mem_cache = f;
	return 0;
}

static int create_in_memory(const struct siw_fuzz_cfg *cfg, struct siw_fuzz **out)
{
	struct siw_fuzz *f;
	int fd, rc;

	if (mem_busy)
		return -EBUSY;
	rc = mem_resources();
	if (rc)
		return rc;
	f = mem_cache;
	if (!f || !f->region_mapped)
		return -ENOMEM;
	/* every input starts from the same state: what an earlier one
	 * placed or invalidated (Send with Invalidate) is undone */
	memset(&f->info, 0, sizeof(f->info));
	memset(f->region, 0, FUZZ_REGION_LEN);
	to_siw_mr(f->mr)->valid = true;
	to_siw_mr(f->rmr)->valid = true;
	rc = fuzz_ep_create(f, cfg);
	if (rc)
		goto fail;
	fd = fcntl(f->stand_in, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	siw_fuzz_mem_fd = fd;
	mem_in.f = f;
	mem_busy = true;
	rc = fuzz_attach(f, cfg, fd);
	if (rc) {
		close(fd);
		siw_fuzz_destroy(f);
		return rc;
	}
	post_reads(f, cfg);
	*out = f;
	return 0;
fail:
	if (f->ep)
		rpcrdma_ep_destroy(f->ep);
	f->ep = NULL;
	return rc;
}

void siw_fuzz_mem_release(void)
{
	struct siw_fuzz *f = mem_cache;

	if (!f || mem_busy)
		return;
	mem_cache = NULL;
	f->in_memory = false; /* all of it, as for a socketpair harness */
	siw_fuzz_destroy(f);
}

int siw_fuzz_create(const struct siw_fuzz_cfg *cfg, struct siw_fuzz **out)
{
	if (!cfg || !out)
		return -EINVAL;
	return cfg->in_memory ? create_in_memory(cfg, out) : create_socketpair(cfg, out);
}

int siw_fuzz_feed(struct siw_fuzz *f, const uint8_t *data, size_t len)
{
	if (!f || (len && !data))
		return -EINVAL;
	if (f->in_memory) {
		mem_feed(f, data, len, false);
		return 0;
	}
	while (len) {
		ssize_t n =
		    send(f->peer, data, len > 65536 ? 65536 : len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				size_t before = f->info.tx_bytes;

				pump(f);
				/* the endpoint stopped reading: drop the rest */
				if (!ep_has_input(f) && f->info.tx_bytes == before &&
				    to_siw_ep(f->ep)->fd < 0)
					return 0;
				continue;
			}
			return 0; /* EPIPE: the endpoint closed its end */
		}
		data += n;
		len -= (size_t)n;
		pump(f);
	}
	pump(f);
	return 0;
}

int siw_fuzz_close(struct siw_fuzz *f)
{
	if (!f)
		return -EINVAL;
	if (f->in_memory) {
		mem_feed(f, NULL, 0, true);
		return 0;
	}
	if (shutdown(f->peer, SHUT_WR) < 0)
		return -errno;
	pump(f);
	return 0;
}

enum siw_fuzz_state siw_fuzz_state(struct siw_fuzz *f)
{
	const struct siw_ep *ep = to_siw_ep(f->ep);

	switch (ep->state) {
	case SIW_EP_RTS:
	case SIW_EP_CLOSING:
		return SIW_FUZZ_ST_RTS;
	case SIW_EP_ERROR:
		return SIW_FUZZ_ST_ERROR;
	case SIW_EP_CLOSED:
		return ep->stats.terminates_tx || ep->stats.terminates_rx ? SIW_FUZZ_ST_ERROR
									  : SIW_FUZZ_ST_CLOSED;
	default:
		return SIW_FUZZ_ST_MPA;
	}
}

int siw_fuzz_info(struct siw_fuzz *f, struct siw_fuzz_info *info)
{
	struct siw_ep *ep;

	if (!f || !info)
		return -EINVAL;
	ep = to_siw_ep(f->ep);
	f->info.state = siw_fuzz_state(f);
	f->info.stag = rpcrdma_mr_stag(f->mr);
	f->info.to = rpcrdma_mr_offset(f->mr);
	f->info.len = FUZZ_REGION_LEN;
	f->info.term_sent = ep->stats.terminates_tx != 0;
	f->info.term_layer = ep->term_layer;
	f->info.term_etype = ep->term_etype;
	f->info.term_code = ep->term_code;
	f->info.pred_fpdus = ep->rx.pred_fpdus;
	f->info.pred_miss = ep->rx.pred_miss;
	*info = f->info;
	return 0;
}

uint8_t *siw_fuzz_region(struct siw_fuzz *f)
{
	return f ? f->region : NULL;
}

/* The connection requests the input left on @dev. */
static void free_creqs(struct siw_dev *dev)
{
	struct siw_creq *r, *rn;

	siw_dev_lock(dev);
	for (r = dev->creqs; r; r = rn) {
		rn = r->next;
		siw_cm_creq_free(r);
	}
	siw_dev_unlock(dev);
}

/* in_memory: the endpoint and what refers to it go; the resources stay
 * for the next input. */
static void destroy_in_memory(struct siw_fuzz *f)
{
	struct rpcrdma_event ev;
	struct rpcrdma_wc wc[16];

	free_creqs(f->dev);
	rpcrdma_ep_destroy(f->ep);
	f->ep = NULL;
	while (rpcrdma_cq_poll(f->cq, wc, 16) > 0)
		;
	while (rpcrdma_evch_get(f->ch, &ev) == 0)
		;
	siw_fuzz_mem_fd = -1;
	mem_in.f = NULL;
	mem_busy = false;
}

void siw_fuzz_destroy(struct siw_fuzz *f)
{
	if (!f)
		return;
	if (f->in_memory && f == mem_cache) {
		destroy_in_memory(f);
		return;
	}
	if (f->dev)
		free_creqs(f->dev);
	if (f->ep)
		rpcrdma_ep_destroy(f->ep);
	if (f->mr)
		rpcrdma_mr_dereg(f->mr);
	if (f->rmr)
		rpcrdma_mr_dereg(f->rmr);
	if (f->ch)
		rpcrdma_evch_destroy(f->ch);
	if (f->cq)
		rpcrdma_cq_destroy(f->cq);
	if (f->pd)
		rpcrdma_pd_free(f->pd);
	if (f->dev)
		rpcrdma_dev_close(&f->dev->base);
	if (f->peer >= 0)
		close(f->peer);
	if (f->stand_in >= 0)
		close(f->stand_in);
	if (f->region_mapped)
		munmap(f->region, FUZZ_REGION_LEN);
	free(f->rbuf);
	free(f);
}

#endif /* RPCRDMA_TEST_HOOKS */
