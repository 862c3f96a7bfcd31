// SPDX-License-Identifier: MIT
/*
 * Shared receive queues (include/rpcrdma/provider.h, rpcrdma_srq_create).
 * An endpoint created with one keeps a receive ring of a single slot: when
 * a Send starts arriving and the ring is empty, the receive on top of the
 * shared stack moves into it (siw_srq_take) and from there on the receive
 * path is the one of a private receive queue: placement, the completion,
 * and the flush of a connection that fails mid-message all see only the
 * endpoint's ring. Everything here runs under the device lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softiwarp/siw.h"

/* A server's pool covers its connections' grants (one each at least). */
#define SIW_MAX_SRQ_WR (1u << 20)

static inline struct siw_srq *to_siw_srq(struct rpcrdma_srq *s)
{
	return container_of(s, struct siw_srq, base);
}

static int srq_alloc(struct siw_srq *q, uint32_t max_wr)
{
	struct siw_rqe *e = realloc(q->e, (size_t)max_wr * sizeof(*e));
	struct rpcrdma_sge *sge;

	if (!e)
		return -ENOMEM;
	q->e = e;
	sge = realloc(q->sge, (size_t)max_wr * q->max_sge * sizeof(*sge));
	if (!sge)
		return -ENOMEM; /* e stays larger than needed: harmless */
	q->sge = sge;
	for (uint32_t i = 0; i < q->n; i++)
		q->e[i].sge = &q->sge[(size_t)i * q->max_sge];
	q->max_wr = max_wr;
	return 0;
}

int siw_srq_create(struct rpcrdma_pd *p, const struct rpcrdma_srq_attr *attr,
		   struct rpcrdma_srq **out)
{
	struct siw_pd *pd = to_siw_pd(p);
	struct siw_dev *dev = to_siw_dev(p->dev);
	uint32_t sge = attr->max_sge ? attr->max_sge : 1u;
	struct siw_srq *q;
	int rc;

	if (attr->max_wr > SIW_MAX_SRQ_WR || sge > SIW_MAX_SGE)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->base.pd = p;
	if (attr->comp_mask & RPCRDMA_SRQ_ATTR_CONTEXT)
		q->base.context = attr->context;
	q->pd = pd;
	q->max_sge = sge;
	rc = srq_alloc(q, attr->max_wr);
	if (rc) {
		free(q->e);
		free(q->sge);
		free(q);
		return rc;
	}
	siw_dev_lock(dev);
	pd->refs++;
	dev->nobjs++;
	siw_dev_unlock(dev);
	*out = &q->base;
	return 0;
}

int siw_srq_destroy(struct rpcrdma_srq *s)
{
	struct siw_srq *q = to_siw_srq(s);
	struct siw_dev *dev = to_siw_dev(s->pd->dev);

	siw_dev_lock(dev);
	if (q->refs) {
		siw_dev_unlock(dev);
		return -EBUSY;
	}
	q->pd->refs--;
	dev->nobjs--;
	siw_dev_unlock(dev);
	free(q->e);
	free(q->sge);
	free(q);
	return 0;
}

int siw_post_srq_recv(struct rpcrdma_srq *s, uint64_t wr_id, const struct rpcrdma_sge *sg,
		      unsigned int num_sge)
{
	struct siw_srq *q = to_siw_srq(s);
	struct siw_dev *dev = to_siw_dev(s->pd->dev);
	struct siw_rqe *r;
	uint64_t len = 0;

	if (num_sge > q->max_sge)
		return -EINVAL;
	siw_dev_lock(dev);
	if (q->n >= q->max_wr) {
		siw_dev_unlock(dev);
		return -ENOMEM;
	}
	r = &q->e[q->n];
	r->sge = &q->sge[(size_t)q->n * q->max_sge];
	r->wr_id = wr_id;
	r->num_sge = num_sge;
	for (unsigned int i = 0; i < num_sge; i++) {
		r->sge[i] = sg[i];
		len += sg[i].length;
	}
	r->len = len;
	q->n++;
	siw_dev_unlock(dev);
	return 0;
}

int siw_srq_resize(struct rpcrdma_srq *s, uint32_t max_wr)
{
	struct siw_srq *q = to_siw_srq(s);
	struct siw_dev *dev = to_siw_dev(s->pd->dev);
	int rc;

	if (max_wr > SIW_MAX_SRQ_WR)
		return -EINVAL;
	siw_dev_lock(dev);
	rc = q->n > max_wr ? -EBUSY : srq_alloc(q, max_wr);
	siw_dev_unlock(dev);
	return rc;
}

bool siw_srq_take(struct siw_ep *ep)
{
	struct siw_srq *q = ep->srq;
	struct siw_rqe *from, *to;

	if (!q || q->n == 0)
		return false;
	from = &q->e[--q->n];
	to = &ep->rq[ep->rq_tail % ep->max_recv_wr];
	to->sge = &ep->rq_sge[(size_t)(ep->rq_tail % ep->max_recv_wr) * ep->max_recv_sge];
	to->wr_id = from->wr_id;
	to->num_sge = from->num_sge;
	to->len = from->len;
	for (uint32_t i = 0; i < from->num_sge; i++)
		to->sge[i] = from->sge[i];
	ep->rq_tail++;
	return true;
}

/* ---------------- trim (issue 38) ---------------- */

struct srq_span {
	uintptr_t a, b; /* [a, b) */
};

static void span_sift(struct srq_span *v, size_t i, size_t n)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;

		if (l < n && v[l].a > v[m].a)
			m = l;
		if (r < n && v[r].a > v[m].a)
			m = r;
		if (m == i)
			return;
		struct srq_span t = v[i];

		v[i] = v[m];
		v[m] = t;
		i = m;
	}
}

/* Heapsort by start: no allocation (qsort may malloc its scratch). */
static void span_sort(struct srq_span *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		span_sift(v, i, n);
	for (size_t k = n; k-- > 1;) {
		struct srq_span t = v[0];

		v[0] = v[k];
		v[k] = t;
		span_sift(v, 0, k);
	}
}

/* Discard the pages wholly inside the union of @v's spans; the bytes. */
static size_t span_discard(struct srq_span *v, size_t n)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	size_t freed = 0;

	span_sort(v, n);
	for (size_t i = 0; i < n;) {
		uintptr_t a = v[i].a, b = v[i].b;

		for (i++; i < n && v[i].a <= b; i++)
			if (v[i].b > b)
				b = v[i].b;
		a = (a + pg - 1) & ~(pg - 1);
		b &= ~(pg - 1);
		if (b > a && madvise((void *)a, b - a, MADV_DONTNEED) == 0)
			freed += b - a;
	}
	return freed;
}

/*
 * The receives below the @keep on top of the stack are the ones taken
 * last: their buffers' pages go back to the system. The provider writes
 * a message through the process's own mapping (nothing is pinned), a
 * posted receive's content means nothing until it completes, and an entry
 * of the stack is not being written (siw_srq_take moves a receive out
 * before anything lands in it; the device lock is held here): the next
 * message into one of them finds a zeroed page. Only whole pages inside
 * the union of those buffers: a page shared with a receive on top, one
 * taken, or other memory of the caller's stays.
 */
int siw_srq_trim(struct rpcrdma_srq *s, uint32_t keep, size_t *bytes)
{
	struct siw_srq *q = to_siw_srq(s);
	struct siw_dev *dev = to_siw_dev(s->pd->dev);
	struct srq_span *v = MAP_FAILED;
	size_t nv = 0, len = 0, freed = 0;
	uint32_t cold;

	siw_dev_lock(dev);
	cold = q->n > keep ? q->n - keep : 0;
	if (cold) {
		len = (size_t)cold * q->max_sge * sizeof(*v);
		/* scratch from mmap: nothing left in the heap afterwards */
		v = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (v != MAP_FAILED) {
		for (uint32_t i = 0; i < cold; i++) {
			for (uint32_t j = 0; j < q->e[i].num_sge; j++) {
				const struct rpcrdma_sge *g = &q->e[i].sge[j];

				if (!g->length || g->addr > UINTPTR_MAX - g->length)
					continue;
				v[nv].a = (uintptr_t)g->addr;
				v[nv].b = (uintptr_t)g->addr + g->length;
				nv++;
			}
		}
		freed = span_discard(v, nv);
	}
	siw_dev_unlock(dev);
	if (v != MAP_FAILED)
		munmap(v, len);
	if (bytes)
		*bytes = freed;
	return cold && v == MAP_FAILED ? -ENOMEM : 0;
}
