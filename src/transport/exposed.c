// SPDX-License-Identifier: MIT
/*
 * Reliable replies, the responder's side (draft-cel-nfsv4-rpcrdma-reliable-
 * reply; docs/reliable-replies.md): a reply that fits neither the client's
 * inline threshold nor the Reply chunk it offered is encoded into memory
 * of its own, registered remotely readable (read-only) and sent as
 * RDMA_NOMSG with a Position-Zero Read chunk; the client pulls it with RDMA
 * Reads and notifies pull completion (RDMA_DONE, or our Version Two
 * optional message), and the memory is invalidated and freed then.
 *
 * Each connection keeps its exposed replies in a small table searched by
 * XID (one entry per credit: the extra receives the connection posts
 * carry the notifications, svc_rr_extra_recvs). The bytes exposed are
 * bounded per connection and per server; a reply nobody notified is
 * reclaimed after the timeout, after which a Read of it fails at the
 * provider (its STag is invalid) and the connection ends with a
 * Terminate. Lock held unless said.
 *
 * Cost: the reply is encoded once, straight into the memory exposed. Its
 * size is estimated first (xdr_sizeof: bulk items count inline, so it is
 * an upper bound unless a result encoder misbehaves; then the buffer
 * grows by doubling). Buffers of released replies are kept (a few, up to
 * SVC_RR_CACHE_MAX each) so the next reply does not pay for a fresh
 * mapping's page faults and its unmapping's TLB flush; a kept buffer is
 * registered anew for each reply (new STag) over the reply's bytes only,
 * and unmapped once none was kept or taken for a second.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rpc/xdr.h>

#include "transport/responder.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/probe.h"

struct svc_rr_ent {
	bool used;
	uint32_t xid;
	uint8_t *buf;
	size_t cap; /* bytes mapped */
	size_t len; /* bytes exposed */
	struct rpcrdma_mr *mr;
	uint64_t deadline; /* monotonic ns */
	uint64_t seq;      /* order of exposure on the connection */
};

struct svc_rr {
	uint32_t n, cap; /* entries in use, entries */
	uint64_t bytes;  /* bytes mapped for them */
	uint64_t seq;    /* exposures so far */
	struct svc_rr_ent ent[];
};

static void buf_free(uint8_t *buf, size_t cap)
{
	if (buf)
		munmap(buf, cap);
}

/* Keep @buf for a later reply, or unmap it. */
static void buf_put(struct rpcrdma_svc *s, uint8_t *buf, size_t cap)
{
	if (buf && s->rr_ncache < SVC_RR_CACHE && cap <= SVC_RR_CACHE_MAX) {
		s->rr_cache[s->rr_ncache].buf = buf;
		s->rr_cache[s->rr_ncache].cap = cap;
		s->rr_ncache++;
		s->rr_cache_ns = monotonic_ns();
		return;
	}
	buf_free(buf, cap);
}

/* The smallest kept buffer of [want, max] bytes, taken out of the cache. */
static uint8_t *buf_take(struct rpcrdma_svc *s, size_t want, size_t max, size_t *cap)
{
	uint32_t best = UINT32_MAX;
	uint8_t *p;

	for (uint32_t i = 0; i < s->rr_ncache; i++)
		if (s->rr_cache[i].cap >= want && s->rr_cache[i].cap <= max &&
		    (best == UINT32_MAX || s->rr_cache[i].cap < s->rr_cache[best].cap))
			best = i;
	if (best == UINT32_MAX)
		return NULL;
	p = s->rr_cache[best].buf;
	*cap = s->rr_cache[best].cap;
	s->rr_cache[best] = s->rr_cache[--s->rr_ncache];
	s->rr_cache_ns = monotonic_ns();
	return p;
}

void svc_rr_fini(struct rpcrdma_svc *s)
{
	while (s->rr_ncache) {
		s->rr_ncache--;
		buf_free(s->rr_cache[s->rr_ncache].buf, s->rr_cache[s->rr_ncache].cap);
	}
}

/* Bytes to map for a reply of about @n bytes: whole pages, and at least
 * 64 KiB so that kept buffers fit most later replies. */
static size_t map_size(size_t n)
{
	size_t m = 64u << 10;

	while (m < n && m < SIZE_MAX / 2)
		m *= 2;
	return m;
}

/* Bytes one more reply may take on @c now. */
static uint64_t room(const struct svc_conn *c)
{
	const struct rpcrdma_svc *s = c->svc;
	uint64_t used = c->rr ? c->rr->bytes : 0;
	uint64_t a = used < s->rr_max_conn ? s->rr_max_conn - used : 0;
	uint64_t b = s->rr_bytes < s->rr_max ? s->rr_max - s->rr_bytes : 0;

	return a < b ? a : b;
}

int svc_rr_encode(struct svc_conn *c, const struct xprt_reply *rp, uint8_t **buf, size_t *cap,
		  size_t *mlen)
{
	struct rpcrdma_svc *s = c->svc;
	/* The RPC reply header with the largest verifier (RFC 5531 §8.2:
	 * 400 bytes of body) is below 512 bytes. */
	size_t est = rp->xres ? xdr_sizeof(rp->xres, rp->res) : 0, want, max, got = 0;
	uint64_t limit;
	uint8_t *p;

	want = est || !rp->xres ? map_size(est + 512u) : 256u << 10;
	futex_mutex_lock(&s->lock);
	limit = room(c);
	max = (size_t)(limit < SIZE_MAX ? limit : SIZE_MAX) & ~(size_t)4095u;
	p = buf_take(s, want < max ? want : max, max, &got);
	futex_mutex_unlock(&s->lock);
	/* The estimate was too low only if the result encoder counts
	 * differently than it encodes: then grow until it fits (each size
	 * twice the last). */
	for (;;) {
		int rc;

		if (!p) {
			if (want > max)
				want = max;
			if (!want)
				return -EMSGSIZE;
			p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
			if (p == MAP_FAILED)
				return -ENOMEM;
			got = want;
		}
		rc = xprt_reply_encode(rp, p, got, mlen);
		if (!rc) {
			*buf = p;
			*cap = got;
			return 0;
		}
		munmap(p, got);
		p = NULL;
		if (got >= max || rc != -EMSGSIZE)
			return -EMSGSIZE;
		want = got * 2 > got ? got * 2 : max;
	}
}

static struct svc_rr_ent *ent_free_slot(struct svc_conn *c)
{
	if (!c->rr) {
		uint32_t n = c->svc->credits;

		c->rr = calloc(1, sizeof(*c->rr) + n * sizeof(c->rr->ent[0]));
		if (!c->rr)
			return NULL;
		c->rr->cap = n;
	}
	if (c->rr->n >= c->rr->cap)
		return NULL;
	for (uint32_t i = 0; i < c->rr->cap; i++)
		if (!c->rr->ent[i].used)
			return &c->rr->ent[i];
	return NULL;
}

int svc_rr_expose(struct svc_conn *c, struct rpcrdma_svc_req *r, uint8_t *buf, size_t cap,
		  size_t mlen)
{
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma1_chunks *ch = &r->h.chunks;
	struct svc_rr_ent *e;
	int rc;

	/* over the connection's bound: -ENOSPC; no entry free: -ENOBUFS */
	rc = cap > room(c) || mlen > UINT32_MAX ? -ENOSPC : 0;
	e = rc ? NULL : ent_free_slot(c);
	if (!e) {
		buf_put(s, buf, cap);
		return rc ? rc : -ENOBUFS;
	}
	/* Read-only for the peer: RFC 5040 lets a Read Response source be
	 * any local memory, remote read is the only right it needs. */
	rc = rpcrdma_mr_reg(s->pd, buf, mlen, RPCRDMA_ACCESS_REMOTE_READ, &e->mr);
	/* Issue 16: scoped to its connection. Every connection of the
	 * server shares its PD, so without the scope the STag would be
	 * readable from the others too. A provider that cannot scope
	 * (verbs: -EOPNOTSUPP) exposes it PD-wide, as documented in
	 * docs/reliable-replies.md §2. */
	if (!rc) {
		rc = rpcrdma_mr_bind_ep(e->mr, c->ep);
		if (rc == -EOPNOTSUPP)
			rc = 0;
		else if (rc)
			rpcrdma_mr_dereg(e->mr);
	}
	if (rc) {
		e->mr = NULL;
		buf_put(s, buf, cap);
		return rc;
	}
	e->used = true;
	e->xid = r->h.xid;
	e->buf = buf;
	e->cap = cap;
	e->len = mlen;
	e->deadline = monotonic_ns() + (uint64_t)s->rr_timeout_ms * 1000000ull;
	e->seq = c->rr->seq++;
	c->rr->n++;
	c->rr->bytes += cap;
	s->rr_bytes += cap;
	s->st.rr_replies++;
	s->st.rr_exposed++;
	s->st.rr_exposed_bytes += mlen;
	s->st.rr_exposed_total += mlen;
	s->st.reg_bytes += mlen;
	/* The draft: one Position-Zero Read chunk, here of one segment (its
	 * length is a uint32 and bounded above). */
	ch->nreads = 1;
	ch->reads[0].position = 0;
	ch->reads[0].seg.handle = rpcrdma_mr_stag(e->mr);
	ch->reads[0].seg.length = (uint32_t)mlen;
	ch->reads[0].seg.offset = rpcrdma_mr_offset(e->mr);
	RPCRDMA_PROBE(rr_expose, e->xid, mlen, ch->reads[0].seg.handle);
	return 0;
}

void svc_rr_refused(struct svc_conn *c, const struct rpcrdma_svc_req *r, size_t len, int rc,
		    bool encoded)
{
	struct rpcrdma_svc *s = c->svc;
	uint64_t now = monotonic_ns();
	const char *why;

	s->st.rr_refused++;
	if (s->rr_refused_ns && now - s->rr_refused_ns < 1000000000ull)
		return;
	s->rr_refused_ns = now;
	switch (rc) {
	case -EMSGSIZE:
	case -ENOSPC:
		why = "over the bound on bytes exposed";
		break;
	case -ENOBUFS:
		why = "every exposed-reply entry of the connection in use";
		break;
	default:
		/* A kernel device pins the pages it registers: ENOMEM there
		 * is often RLIMIT_MEMLOCK (Linux siw charges root too). */
		why = encoded ? "registration failed (memlock limit?)" : "no memory";
		break;
	}
	RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer,
		  "reply xid %#x (%zu B) not exposed: %s (%s; %u replies, %llu B exposed on the "
		  "connection, %llu B on the server)",
		  r->h.xid, len, why, rlog_errname(rc), c->rr ? c->rr->n : 0u,
		  (unsigned long long)(c->rr ? c->rr->bytes : 0), (unsigned long long)s->rr_bytes);
}

/* Invalidate (unless the peer did: @inv is its STag), deregister, free. */
static void ent_release(struct svc_conn *c, struct svc_rr_ent *e, uint32_t inv)
{
	struct rpcrdma_svc *s = c->svc;

	if (inv && inv == rpcrdma_mr_stag(e->mr)) {
		s->st.remote_invalidations++;
	} else {
		rpcrdma_mr_invalidate(e->mr);
		s->st.local_invalidations++;
	}
	rpcrdma_mr_dereg(e->mr);
	buf_put(s, e->buf, e->cap);
	c->rr->n--;
	c->rr->bytes -= e->cap;
	s->rr_bytes -= e->cap;
	s->st.rr_exposed--;
	s->st.rr_exposed_bytes -= e->len;
	memset(e, 0, sizeof(*e));
}

void svc_rr_done(struct svc_conn *c, uint32_t xid, uint32_t inv)
{
	struct svc_rr_ent *e = NULL;

	/* A requester may reuse an XID while a reply to its earlier use is
	 * still exposed (it never notified, or its notification is still on
	 * the way), so one XID can name several entries. Send With
	 * Invalidate says which (its STag); a plain notification takes the
	 * oldest, the one pulled first (issue 32: matching the first entry
	 * found failed the connection when the STag was another entry's). */
	for (uint32_t i = 0; c->rr && i < c->rr->cap; i++) {
		struct svc_rr_ent *x = &c->rr->ent[i];

		if (!x->used || x->xid != xid)
			continue;
		if (inv ? inv == rpcrdma_mr_stag(x->mr) : !e || x->seq < e->seq)
			e = x;
		if (inv && e)
			break;
	}
	/* The draft: Send With Invalidate names exactly the reply's STag. One
	 * that named another STag of ours (the provider has invalidated it
	 * already) ends the connection: that memory can no longer be used. */
	if (inv && (!e || inv != rpcrdma_mr_stag(e->mr))) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer,
			  "pull completion for xid %#x invalidated STag %#x: not the reply's", xid,
			  inv);
		c->svc->st.bad_headers++;
		svc_conn_fail(c);
	}
	if (!e)
		return; /* the draft: no chunk waiting, dropped silently */
	c->svc->st.rr_notifications++;
	RPCRDMA_PROBE(rr_done, xid, e->len, inv);
	ent_release(c, e, inv);
}

void svc_rr_tick(struct rpcrdma_svc *s)
{
	uint64_t now = monotonic_ns();

	/* Kept buffers are for replies that follow each other; a server
	 * that has exposed nothing for a second gives their memory back. */
	if (s->rr_ncache && now - s->rr_cache_ns > 1000000000ull)
		svc_rr_fini(s);
	if (!s->rr_bytes)
		return;
	for (struct svc_conn *c = s->conns; c; c = c->next) {
		for (uint32_t i = 0; c->rr && c->rr->n && i < c->rr->cap; i++) {
			struct svc_rr_ent *e = &c->rr->ent[i];

			if (e->used && now >= e->deadline) {
				RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer,
					  "exposed reply xid %#x reclaimed: no pull completion",
					  e->xid);
				s->st.rr_reclaimed++;
				ent_release(c, e, 0);
			}
		}
	}
}

void svc_rr_conn_free(struct svc_conn *c)
{
	for (uint32_t i = 0; c->rr && i < c->rr->cap; i++)
		if (c->rr->ent[i].used)
			ent_release(c, &c->rr->ent[i], 0);
	free(c->rr);
	c->rr = NULL;
}
