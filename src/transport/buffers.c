// SPDX-License-Identifier: MIT
/*
 * Pre-registered buffer pools (RFC 8166 §3.3.1: the responder posts one
 * receive per credit; the requester keeps one send buffer per slot). A pool
 * is one allocation and one registration, so an inline message costs no
 * allocation and no registration (xprtrdma's "regbuf" idea).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "transport/xprt.h"

/* Pools of this many bytes or more are mappings of their own (issue 38):
 * from the heap, a connection's send pool (72 buffers, 72-288 kB) landed
 * in an arena whose heaps stayed mapped, a page or more resident each,
 * after thousands of connections had closed; and glibc's mmap threshold
 * rises to the size of the first such block freed, so they all did.
 * Under AddressSanitizer they come from the heap, where its leak check
 * sees them. */
#define XPRT_POOL_MAP_MIN 65536u
#if defined(__SANITIZE_ADDRESS__)
#define XPRT_POOL_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XPRT_POOL_HEAP 1
#endif
#endif
#ifndef XPRT_POOL_HEAP
#define XPRT_POOL_HEAP 0
#endif

static void pool_mem_free(struct xprt_pool *p)
{
	if (p->map_len)
		munmap(p->base, p->map_len);
	else
		free(p->base);
	p->base = NULL;
	p->map_len = 0;
}

int xprt_pool_init(struct xprt_pool *p, struct rpcrdma_pd *pd, uint32_t count, size_t size)
{
	size_t total;
	int rc;

	memset(p, 0, sizeof(*p));
	if (!count || !size || size > SIZE_MAX / count)
		return -EINVAL;
	total = (size_t)count * size;
	if (!XPRT_POOL_HEAP && total >= XPRT_POOL_MAP_MIN && total <= SIZE_MAX - 4095u) {
		size_t len = (total + 4095u) & ~(size_t)4095u;
		void *m =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -ENOMEM;
		p->base = m;
		p->map_len = len;
	} else {
		p->base = aligned_alloc(64, (total + 63) & ~(size_t)63);
		if (!p->base)
			return -ENOMEM;
	}
	/* Not cleared: a receive buffer is written before it is read, a send
	 * buffer is sent only up to what was encoded into it; untouched pages
	 * of an idle connection then cost no resident memory. */
	rc = rpcrdma_mr_reg(pd, p->base, total, RPCRDMA_ACCESS_LOCAL_WRITE, &p->mr);
	if (rc) {
		pool_mem_free(p);
		return rc;
	}
	p->size = size;
	p->count = count;
	p->lkey = rpcrdma_mr_stag(p->mr);
	return 0;
}

void xprt_pool_fini(struct xprt_pool *p)
{
	if (p->mr)
		rpcrdma_mr_dereg(p->mr);
	pool_mem_free(p);
	memset(p, 0, sizeof(*p));
}

int xprt_pool_post_recv(const struct xprt_pool *p, struct rpcrdma_ep *ep, uint32_t i,
			uint64_t wr_id)
{
	struct rpcrdma_sge s = {
	    .addr = (uint64_t)(uintptr_t)xprt_pool_buf(p, i),
	    .length = (uint32_t)p->size,
	    .lkey = p->lkey,
	};

	/* The buffer belongs to the provider until the RECV completion. */
	return rpcrdma_post_recv(ep, wr_id, &s, 1);
}

int xprt_lbuf_reserve(struct xprt_lbuf *b, size_t len)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *n;

	if (len <= b->cap)
		return 0;
	while (cap < len) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	n = aligned_alloc(4096, cap);
	if (!n)
		return -ENOMEM;
	free(b->buf);
	b->buf = n;
	b->cap = cap;
	return 0;
}

void xprt_lbuf_fini(struct xprt_lbuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->cap = 0;
}

int xprt_mr_use(struct rpcrdma_pd *pd, struct rpcrdma_mr **mr, const void *addr, size_t len,
		unsigned int access)
{
	/* The provider never writes through a registration without
	 * RPCRDMA_ACCESS_*_WRITE, so registering const memory read-only is
	 * sound. */
	void *a = (void *)(uintptr_t)addr;

	if (!*mr)
		return rpcrdma_mr_reg(pd, a, len, access, mr);
	return rpcrdma_mr_rereg(*mr, a, len, access);
}
