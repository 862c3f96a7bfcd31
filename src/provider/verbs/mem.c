/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's memory registration and its STag map.
 *
 * Per-call chunk registration: ibv_reg_mr with a new key on every
 * re-registration (rpcrdma_mr_rereg deregisters and registers again), not
 * memory windows and not fast registration. User space has no fast
 * registration work request (IB_WR_REG_MR is the kernel's), the kernel's
 * siw has no memory windows at all and rxe only type 2 ones bound through
 * a QP, while rpcrdma_mr_rereg() and rpcrdma_mr_invalidate() must work on
 * a registration with no connection in sight and take effect at once. A
 * fresh registration is a new STag, so handles given out before stop
 * working (RFC 5042 §5.3); deregistering is an invalidation that is not
 * ordered after posted work, as the contract says. The cost is a system
 * call (and page pinning) per chunk: the price of keys that cannot be
 * reused by mistake.
 *
 * Scoping a registration to one connection (rpcrdma_mr_bind_ep) is the
 * one use of memory windows: type 2, bound to the endpoint's QP by a Bind
 * work request, on devices that have them (verbs_mr_bind_ep).
 *
 * Remote invalidation (RFC 8797 §4, Send With Invalidate): the device
 * invalidates the rkey itself; cq.c marks the registration invalid when
 * the receive completion names it, found through the STag map.
 */
#include <errno.h>
#include <stdlib.h>

#include "provider/verbs/verbs.h"

/* A scoped region grants its remote rights only through its window. */
static int to_ibv_access(const struct vmr *m)
{
	int a = 0;

	if (m->access & RPCRDMA_ACCESS_LOCAL_WRITE)
		a |= IBV_ACCESS_LOCAL_WRITE;
	if (m->scoped)
		return a | IBV_ACCESS_MW_BIND;
	if (m->access & RPCRDMA_ACCESS_REMOTE_WRITE)
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (m->access & RPCRDMA_ACCESS_REMOTE_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	return a;
}

static unsigned int bucket(uint32_t key)
{
	return (key ^ (key >> 8) ^ (key >> 16)) % VERBS_HASH;
}

static void map_add(struct vdev *d, struct vmr *m)
{
	unsigned int b = bucket(m->stag);

	m->hnext = d->stags[b];
	d->stags[b] = m;
	m->hashed = true;
}

static void map_del(struct vdev *d, struct vmr *m)
{
	struct vmr **pp = &d->stags[bucket(m->stag)];

	if (!m->hashed)
		return;
	while (*pp && *pp != m)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = m->hnext;
	m->hashed = false;
}

struct vmr *verbs_mr_find(struct vdev *d, uint32_t stag)
{
	struct vmr *m = d->stags[bucket(stag)];

	while (m && m->stag != stag)
		m = m->hnext;
	return m;
}

/* Bind a new type-2 window over @m to @m->bound's QP (locked; @m is
 * registered and hashed): the STag becomes the window's rkey. The Bind
 * goes on the QP's send queue ahead of whatever the caller posts next
 * there (the Send that hands the STag to the peer): the peer never sees
 * a key that is not bound yet. */
static int mw_bind(struct vdev *d, struct vpd *p, struct vmr *m)
{
	struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	uint32_t rkey;
	int rc;

	if (!mw)
		return verbs_errno(ENOMEM);
	rkey = ibv_inc_rkey(mw->rkey);
	rc = verbs_post_bind(m->bound, mw, m->mr,
			     (uint64_t)(uintptr_t)(m->length ? m->addr : &m->zbyte),
			     m->length ? m->length : 1,
			     (m->access & RPCRDMA_ACCESS_REMOTE_WRITE) != 0, rkey, &m->bind_seq);
	if (rc) {
		ibv_dealloc_mw(mw);
		return rc;
	}
	map_del(d, m);
	m->mw = mw;
	m->stag = rkey;
	map_add(d, m);
	return 0;
}

/* Free @m's window (locked): its rkey answers nobody from now on. */
static void mw_drop(struct vmr *m)
{
	if (m->mw && m->bound)
		verbs_bind_wait(m->bound, m->bind_seq);
	if (m->mw)
		ibv_dealloc_mw(m->mw);
	m->mw = NULL;
}

/* Register @m's range (locked by the caller). */
static int mr_register(struct vdev *d, struct vpd *p, struct vmr *m)
{
	void *addr = m->length ? m->addr : &m->zbyte;
	size_t len = m->length ? m->length : 1;
	int rc;

	m->mr = ibv_reg_mr(p->pd, addr, len, to_ibv_access(m));
	if (!m->mr)
		return verbs_errno(ENOMEM);
	m->lkey = m->mr->lkey;
	m->stag = (m->access & (RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ))
		      ? m->mr->rkey
		      : m->mr->lkey;
	if (m->stag != m->lkey)
		d->keys_differ = true;
	m->valid = true;
	map_add(d, m);
	if (m->scoped && m->bound && (rc = mw_bind(d, p, m))) {
		map_del(d, m);
		ibv_dereg_mr(m->mr);
		m->mr = NULL;
		m->valid = false;
		return rc;
	}
	return 0;
}

static void mr_unregister(struct vdev *d, struct vmr *m)
{
	map_del(d, m);
	mw_drop(m); /* before the region: rxe refuses to free one with windows */
	if (m->mr)
		ibv_dereg_mr(m->mr);
	m->mr = NULL;
	m->valid = false;
}

int verbs_mr_reg(struct rpcrdma_pd *pd, void *addr, size_t length, unsigned int access,
		 struct rpcrdma_mr **out)
{
	struct vpd *p = container_of(pd, struct vpd, base);
	struct vdev *d = vdev_of(pd->dev);
	struct vmr *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	m->base.pd = pd;
	m->addr = addr;
	m->length = length;
	m->access = access;
	pthread_mutex_lock(&d->lock);
	rc = mr_register(d, p, m);
	if (!rc)
		p->nmr++;
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(m);
		return rc;
	}
	*out = &m->base;
	return 0;
}

int verbs_mr_rereg(struct rpcrdma_mr *mr, void *addr, size_t length, unsigned int access)
{
	struct vmr *m = container_of(mr, struct vmr, base);
	struct vpd *p = container_of(mr->pd, struct vpd, base);
	struct vdev *d = vdev_of(mr->pd->dev);
	int rc;

	pthread_mutex_lock(&d->lock);
	mr_unregister(d, m);
	m->addr = addr;
	m->length = length;
	m->access = access;
	rc = mr_register(d, p, m);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int verbs_mr_invalidate(struct rpcrdma_mr *mr)
{
	struct vmr *m = container_of(mr, struct vmr, base);
	struct vdev *d = vdev_of(mr->pd->dev);

	pthread_mutex_lock(&d->lock);
	/* the STag stays what it was (rpcrdma_mr_stag), but nothing answers
	 * to it any more */
	mr_unregister(d, m);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int verbs_mr_dereg(struct rpcrdma_mr *mr)
{
	struct vmr *m = container_of(mr, struct vmr, base);
	struct vpd *p = container_of(mr->pd, struct vpd, base);
	struct vdev *d = vdev_of(mr->pd->dev);

	pthread_mutex_lock(&d->lock);
	mr_unregister(d, m);
	if (m->scoped)
		d->nscoped--;
	p->nmr--;
	pthread_mutex_unlock(&d->lock);
	free(m);
	return 0;
}

/*
 * rpcrdma_mr_bind_ep on a device with type-2 memory windows (rxe has them,
 * siw none: -EOPNOTSUPP there): the region is registered again without
 * remote rights of its own (so that its rkey, which a peer could guess,
 * grants nothing), and a window bound to @ep's QP grants them; the STag
 * handed out is the window's rkey, which the device honours on that QP
 * only (a Read from any other QP fails with a remote access error and
 * that connection ends). The cost is a second registration, a window and
 * a Bind work request per call. @ep must be connected (-ENOTCONN).
 */
int verbs_mr_bind_ep(struct rpcrdma_mr *mr, struct rpcrdma_ep *ep)
{
	struct vmr *m = container_of(mr, struct vmr, base);
	struct vpd *p = container_of(mr->pd, struct vpd, base);
	struct vdev *d = vdev_of(mr->pd->dev);
	struct vep *e = ep ? container_of(ep, struct vep, base) : NULL;
	bool was = m->scoped;
	int rc;

	if (!d->mw2)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&d->lock);
	/* (a passive endpoint takes Binds once accepted: rdma_accept left its
	 * QP ready to send, and the peer's first call may arrive before the
	 * ESTABLISHED event is read; issue 32: rxe rr_scope's third
	 * connection had its first reply refused -ENOTCONN) */
	if (e && !verbs_ep_can_bind(e)) {
		rc = -ENOTCONN;
		goto out;
	}
	mr_unregister(d, m);
	m->scoped = e != NULL;
	m->bound = e;
	rc = mr_register(d, p, m);
	if (rc) {
		/* not registered at all now: invalid, as after an invalidate */
		m->scoped = false;
		m->bound = NULL;
	}
	if (was != m->scoped) {
		if (m->scoped)
			d->nscoped++;
		else
			d->nscoped--;
	}
out:
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void verbs_mr_unbind_ep(struct vdev *d, struct vep *e)
{
	for (unsigned int b = 0; b < VERBS_HASH; b++)
		for (struct vmr *m = d->stags[b]; m; m = m->hnext)
			if (m->bound == e) {
				/* no endpoint answers for it any more */
				mw_drop(m);
				m->bound = NULL;
			}
}

uint32_t verbs_mr_stag(const struct rpcrdma_mr *mr)
{
	return container_of(mr, const struct vmr, base)->stag;
}

bool verbs_mr_valid(const struct rpcrdma_mr *mr)
{
	return __atomic_load_n(&container_of(mr, const struct vmr, base)->valid, __ATOMIC_RELAXED);
}

uint64_t verbs_mr_offset(const struct rpcrdma_mr *mr)
{
	return (uint64_t)(uintptr_t)container_of(mr, const struct vmr, base)->addr;
}

size_t verbs_mr_length(const struct rpcrdma_mr *mr)
{
	return container_of(mr, const struct vmr, base)->length;
}
