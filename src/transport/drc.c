// SPDX-License-Identifier: MIT
/*
 * The server's duplicate request cache (drc.h says what it keeps and
 * when it answers). A hash table of entries by key, and a list of the
 * entries whose reply is kept, least recently used first. An entry is
 * referenced by the table and by each request using it (the call that
 * runs, a replay being sent); it is freed at the last reference.
 */
#include <errno.h>
#include <isa-l/crc.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/tirpc.h"
#include "transport/drc.h"
#include "transport/xprt.h"
#include "util/futex_mutex.h"

/* First try at encoding a reply's results; then the per-entry bound. */
#define DRC_FIRST_ENC 4096u

struct drc_item {
	uint32_t pos; /* stream position of its length word */
	uint32_t len;
	uint8_t *data;
};

struct svc_drc_entry {
	struct svc_drc_key key;
	struct svc_drc_entry *hnext;         /* hash chain */
	struct svc_drc_entry *lprev, *lnext; /* LRU list (done entries) */
	uint32_t refs;
	bool done, hashed;
	struct rpcrdma_svc_req *waiter; /* a duplicate parked while in progress */
	struct rpcrdma_rpc_reply rep;
	bool has_res;
	uint8_t *stream; /* results without the items kept apart */
	uint32_t slen, nitems;
	struct drc_item items[RPCRDMA_MAX_WRITE_CHUNKS];
	uint64_t bytes; /* charged to the cache */
};

struct svc_drc {
	struct futex_mutex lock;
	struct svc_drc_entry **tab;
	uint32_t mask;
	struct svc_drc_entry *lru_head, *lru_tail; /* head: least recently used */
	uint32_t max_entries;
	uint64_t max_bytes, max_entry_bytes;
	struct svc_drc_stats st;
};

int svc_drc_new(uint32_t max_entries, uint64_t max_bytes, struct svc_drc **out)
{
	struct svc_drc *d = calloc(1, sizeof(*d));
	uint32_t n = 64;

	if (!d)
		return -ENOMEM;
	d->max_entries = max_entries ? max_entries : SVC_DRC_DEF_ENTRIES;
	d->max_bytes = max_bytes ? max_bytes : SVC_DRC_DEF_BYTES;
	d->max_entry_bytes = d->max_bytes / 8;
	while (n < d->max_entries && n < (1u << 20))
		n <<= 1;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): a table of pointers */
	d->tab = calloc(n, sizeof(*d->tab));
	if (!d->tab) {
		free(d);
		return -ENOMEM;
	}
	d->mask = n - 1;
	futex_mutex_init(&d->lock);
	*out = d;
	return 0;
}

static void entry_free(struct svc_drc_entry *e)
{
	for (uint32_t i = 0; i < e->nitems; i++)
		free(e->items[i].data);
	free(e->stream);
	free(e);
}

void svc_drc_free(struct svc_drc *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i <= d->mask; i++) {
		while (d->tab[i]) {
			struct svc_drc_entry *e = d->tab[i];

			d->tab[i] = e->hnext;
			entry_free(e);
		}
	}
	free(d->tab);
	free(d);
}

void svc_drc_stats(struct svc_drc *d, struct svc_drc_stats *st)
{
	futex_mutex_lock(&d->lock);
	*st = d->st;
	futex_mutex_unlock(&d->lock);
}

void svc_drc_key(struct svc_drc_key *k, const struct sockaddr_storage *peer, uint32_t xid,
		 uint32_t prog, uint32_t vers, uint32_t proc, const void *msg, size_t len)
{
	const uint8_t *p = msg;
	uint32_t crc = 0xffffffffu;

	memset(k, 0, sizeof(*k));
	k->xid = xid;
	k->prog = prog;
	k->vers = vers;
	k->proc = proc;
	k->family = (uint8_t)peer->ss_family;
	if (peer->ss_family == AF_INET)
		memcpy(k->addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
	else if (peer->ss_family == AF_INET6)
		memcpy(k->addr, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
	/* CRC32c (crc32_iscsi continues a raw register; takes an int). */
	while (len) {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;

		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, n, crc);
		p += n;
		len -= (size_t)n;
	}
	k->crc = ~crc;
}

/* Everything but the checksum: a key that matches this way with another
 * checksum is a different call under a reused XID. */
static bool key_same_call(const struct svc_drc_key *a, const struct svc_drc_key *b)
{
	return a->xid == b->xid && a->prog == b->prog && a->vers == b->vers && a->proc == b->proc &&
	       a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static uint32_t key_hash(const struct svc_drc_key *k)
{
	uint64_t h = (uint64_t)k->xid * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)k->proc << 32 ^ k->prog ^ (uint64_t)k->vers << 48;
	for (size_t i = 0; i < sizeof(k->addr); i++)
		h = (h ^ k->addr[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

/* ---- lock held ---- */

static void lru_unlink(struct svc_drc *d, struct svc_drc_entry *e)
{
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else
		d->lru_head = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else
		d->lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void lru_append(struct svc_drc *d, struct svc_drc_entry *e)
{
	e->lnext = NULL;
	e->lprev = d->lru_tail;
	if (d->lru_tail)
		d->lru_tail->lnext = e;
	else
		d->lru_head = e;
	d->lru_tail = e;
}

static void entry_unref(struct svc_drc_entry *e)
{
	if (--e->refs == 0)
		entry_free(e);
}

/* Take @e out of the table (and the LRU list when done); the table's
 * reference goes. */
static void entry_remove(struct svc_drc *d, struct svc_drc_entry *e)
{
	struct svc_drc_entry **pp = &d->tab[key_hash(&e->key) & d->mask];

	if (!e->hashed)
		return;
	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hashed = false;
	if (e->done)
		lru_unlink(d, e);
	d->st.entries--;
	d->st.bytes -= e->bytes;
	entry_unref(e);
}

/* Evict least recently used replies until @need more bytes and @more
 * more entries fit. */
static void make_room(struct svc_drc *d, uint64_t need, uint32_t more)
{
	while (d->lru_head &&
	       (d->st.entries + more > d->max_entries || d->st.bytes + need > d->max_bytes)) {
		entry_remove(d, d->lru_head);
		d->st.evictions++;
	}
}

enum svc_drc_verdict svc_drc_lookup(struct svc_drc *d, const struct svc_drc_key *k,
				    struct rpcrdma_svc_req *r, struct svc_drc_entry **out,
				    struct rpcrdma_svc_req **dropped)
{
	struct svc_drc_entry **head, *e;
	enum svc_drc_verdict v = SVC_DRC_RUN;

	*out = NULL;
	*dropped = NULL;
	futex_mutex_lock(&d->lock);
	head = &d->tab[key_hash(k) & d->mask];
	for (e = *head; e && !key_same_call(&e->key, k); e = e->hnext)
		;
	if (e && e->key.crc == k->crc) {
		if (e->done) {
			/* Answered before: send the kept reply again. */
			lru_unlink(d, e);
			lru_append(d, e);
			e->refs++;
			d->st.hits++;
			*out = e;
			v = SVC_DRC_REPLAY;
		} else {
			/* Still running: this one waits for its reply. */
			if (e->waiter)
				d->st.inprogress_drops++;
			*dropped = e->waiter;
			e->waiter = r;
			v = SVC_DRC_PARKED;
		}
		futex_mutex_unlock(&d->lock);
		return v;
	}
	if (e) {
		/* The XID came back with another call: the old entry goes. An
		 * entry in progress stays with its call; this one runs
		 * uncached. */
		if (!e->done) {
			futex_mutex_unlock(&d->lock);
			return SVC_DRC_RUN;
		}
		entry_remove(d, e);
	}
	make_room(d, 0, 1);
	e = calloc(1, sizeof(*e));
	if (e) {
		e->key = *k;
		e->refs = 2; /* the table's and the running call's */
		e->hashed = true;
		e->hnext = *head;
		*head = e;
		d->st.entries++;
		*out = e;
	}
	futex_mutex_unlock(&d->lock);
	return v;
}

/* ---- keeping a reply (no lock held) ---- */

/* Encode @xres(@res) into @e: the stream, with the first bulk items kept
 * apart (ddp.c, XPRT_DDP_CAPTURE). @cap bytes at most. 0, or -EMSGSIZE
 * when it does not fit, -ENOMEM, -EINVAL when it does not encode. */
static int capture(struct svc_drc_entry *e, xdrproc_t xres, void *res, uint32_t cap,
		   uint64_t max_bytes)
{
	struct xprt_ddp *ddp = malloc(sizeof(*ddp));
	uint8_t *buf = malloc(cap);
	struct rpcrdma_xdr x;
	uint64_t total;
	XDR xdrs;
	int rc = 0;

	if (!ddp || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	xprt_ddp_init(ddp, XPRT_DDP_CAPTURE);
	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	rpcrdma_tirpc_xdr_create(&xdrs, &x);
	xprt_ddp_attach(&xdrs, ddp);
	if (!(*xres)(&xdrs, res)) {
		rc = rpcrdma_xdr_remaining(&x) < 8 ? -EMSGSIZE : -EINVAL;
		goto out;
	}
	e->slen = (uint32_t)rpcrdma_xdr_getpos(&x);
	total = e->slen;
	for (uint32_t i = 0; i < ddp->nitems; i++)
		total += ddp->items[i].len;
	if (total > max_bytes) {
		rc = -EMSGSIZE;
		goto out;
	}
	for (uint32_t i = 0; i < ddp->nitems; i++) {
		struct drc_item *it = &e->items[i];

		it->pos = ddp->items[i].pos;
		it->len = ddp->items[i].len;
		it->data = malloc(it->len ? it->len : 1);
		if (!it->data) {
			rc = -ENOMEM;
			goto out;
		}
		e->nitems = i + 1;
		if (it->len)
			memcpy(it->data, ddp->items[i].base, it->len);
	}
	e->stream = buf;
	buf = NULL;
	e->bytes = total;
out:
	free(buf);
	free(ddp);
	return rc;
}

bool svc_drc_done(struct svc_drc *d, struct svc_drc_entry *e, const struct rpcrdma_rpc_reply *rep,
		  xdrproc_t xres, void *res, struct rpcrdma_svc_req **waiter)
{
	bool replay;

	uint64_t max = d->max_entry_bytes;
	int rc = 0;

	e->rep = *rep;
	e->has_res = xres != NULL;
	if (xres) {
		rc = capture(e, xres, res, DRC_FIRST_ENC, max);
		if (rc == -EMSGSIZE && max > DRC_FIRST_ENC)
			rc = capture(e, xres, res, max > UINT32_MAX ? UINT32_MAX : (uint32_t)max,
				     max);
	}
	futex_mutex_lock(&d->lock);
	*waiter = e->waiter;
	e->waiter = NULL;
	if (rc) {
		/* Not kept: a later duplicate runs the call again. */
		entry_remove(d, e);
	} else if (e->hashed) {
		e->done = true;
		make_room(d, e->bytes, 0);
		d->st.bytes += e->bytes;
		lru_append(d, e);
	}
	replay = *waiter && !rc;
	if (*waiter && rc) {
		/* Nothing to answer it with: it is dropped (the client sends
		 * it again on its next connection). */
		d->st.inprogress_drops++;
	}
	if (!replay)
		entry_unref(e);
	futex_mutex_unlock(&d->lock);
	return replay;
}

void svc_drc_abandon(struct svc_drc *d, struct svc_drc_entry *e, struct rpcrdma_svc_req **waiter)
{
	futex_mutex_lock(&d->lock);
	*waiter = e->waiter;
	e->waiter = NULL;
	entry_remove(d, e);
	entry_unref(e);
	futex_mutex_unlock(&d->lock);
}

/* The results routine of a replay: the kept stream, with each item kept
 * apart encoded by rpcrdma_xdr_bulk() at its place (so it goes by Write
 * chunk when the first reply's did). */
static bool_t replay_xdr(XDR *xdrs, void *arg)
{
	const struct svc_drc_entry *e = arg;
	uint32_t cur = 0;

	for (uint32_t i = 0; i < e->nitems; i++) {
		const struct drc_item *it = &e->items[i];
		rpcrdma_bulk b = {it->data, it->len, 0};

		if (it->pos > cur && !XDR_PUTBYTES(xdrs, (char *)e->stream + cur, it->pos - cur))
			return FALSE;
		if (!rpcrdma_xdr_bulk(xdrs, &b))
			return FALSE;
		cur = it->pos;
	}
	return e->slen <= cur || XDR_PUTBYTES(xdrs, (char *)e->stream + cur, e->slen - cur);
}

void svc_drc_reply_of(const struct svc_drc_entry *e, uint32_t xid, struct rpcrdma_rpc_reply *rep,
		      xdrproc_t *xres, void **arg)
{
	*rep = e->rep;
	rep->xid = xid;
	*xres = e->has_res ? (xdrproc_t)replay_xdr : NULL;
	*arg = (void *)(uintptr_t)e;
}

void svc_drc_put(struct svc_drc *d, struct svc_drc_entry *e)
{
	futex_mutex_lock(&d->lock);
	entry_unref(e);
	futex_mutex_unlock(&d->lock);
}
