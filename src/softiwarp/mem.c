/* SPDX-License-Identifier: MIT */
/*
 * STag table and protection checks (RFC 5040 §2.1, RFC 5042 §5).
 *
 * An STag is index << 8 | key: the 24-bit index names a slot of the
 * device's table, the 8-bit key changes on every (re-)registration so that
 * a stale STag held by a peer stops matching (RFC 5042 §5.3, "STag reuse").
 * Index 0 is never handed out. Every tagged access, local or remote, goes
 * through siw_mem_check(): STag known, key equal, region valid (not
 * invalidated), same protection domain as the endpoint, access right
 * granted, [to, to + len) inside the region without wrapping. Accesses by
 * the peer (siw_mem_check_remote) also meet the region's endpoint scope,
 * if it has one (rpcrdma_mr_bind_ep).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "softiwarp/siw.h"

#define MEM_INIT_CAP 256u

int siw_mem_init(struct siw_dev *dev)
{
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): a table of pointers */
	dev->mr_tab = calloc(MEM_INIT_CAP, sizeof(*dev->mr_tab));
	dev->mr_free = calloc(MEM_INIT_CAP, sizeof(*dev->mr_free));
	if (!dev->mr_tab || !dev->mr_free) {
		free(dev->mr_tab);
		free(dev->mr_free);
		return -ENOMEM;
	}
	dev->mr_cap = MEM_INIT_CAP;
	/* free stack: lowest index on top, index 0 left out */
	dev->mr_nfree = 0;
	for (uint32_t i = MEM_INIT_CAP - 1; i >= 1; i--)
		dev->mr_free[dev->mr_nfree++] = i;
	return 0;
}

void siw_mem_fini(struct siw_dev *dev)
{
	free(dev->mr_tab);
	free(dev->mr_free);
	dev->mr_tab = NULL;
	dev->mr_free = NULL;
}

static int mem_grow(struct siw_dev *dev)
{
	uint32_t ncap = dev->mr_cap * 2u;
	struct siw_mr **tab;
	uint32_t *fr;

	if (dev->mr_cap >= SIW_MAX_MR)
		return -ENOSPC;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): a table of pointers */
	tab = realloc(dev->mr_tab, (size_t)ncap * sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	dev->mr_tab = tab;
	fr = realloc(dev->mr_free, (size_t)ncap * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	dev->mr_free = fr;
	for (uint32_t i = dev->mr_cap; i < ncap; i++)
		tab[i] = NULL;
	for (uint32_t i = ncap - 1; i >= dev->mr_cap; i--)
		fr[dev->mr_nfree++] = i;
	dev->mr_cap = ncap;
	return 0;
}

uint8_t siw_mem_next_key(struct siw_dev *dev, uint8_t old)
{
	/* Any change will do for RFC 5042 §5.3; mix in the seed so keys
	 * differ between runs, and never repeat the old one. */
	uint8_t k = (uint8_t)(old + 1u + (dev->key_seed & 0x3u) * 2u);

	return k == old ? (uint8_t)(k + 1u) : k;
}

int siw_mem_add(struct siw_dev *dev, struct siw_mr *mr)
{
	uint32_t idx;
	int rc;

	if (!dev->mr_nfree) {
		rc = mem_grow(dev);
		if (rc)
			return rc;
	}
	idx = dev->mr_free[--dev->mr_nfree];
	dev->mr_tab[idx] = mr;
	dev->key_seed = dev->key_seed * 1103515245u + 12345u;
	mr->stag = idx << 8 | (uint8_t)(dev->key_seed >> 16);
	return 0;
}

/*
 * A table grown for thousands of connections (each registers its buffers)
 * goes back to a size for the registrations left once fewer than a
 * quarter of its slots are in use (issue 38), if none in use sits above
 * the new size (an STag names its slot). Tried again only once the count
 * has halved. The free stack is rebuilt lowest index on top. A stale
 * STag of a dropped slot finds no region (index beyond the table), and
 * once the table grows again a new key (siw_mem_add), as before.
 */
static void mem_shrink(struct siw_dev *dev)
{
	uint32_t used = dev->mr_cap - 1u - dev->mr_nfree, n = dev->mr_cap, top = n;
	struct siw_mr **tab;
	uint32_t *fr;

	if (n <= MEM_INIT_CAP || used >= n / 4u ||
	    (dev->mr_shrink_failed && used * 2u >= dev->mr_shrink_failed))
		return;
	while (top > 1 && !dev->mr_tab[top - 1])
		top--;
	while (n > MEM_INIT_CAP && n / 2u >= top && n / 2u >= used * 2u)
		n /= 2u;
	if (n == dev->mr_cap) {
		dev->mr_shrink_failed = used ? used : 1u;
		return;
	}
	dev->mr_shrink_failed = 0;
	dev->mr_nfree = 0;
	for (uint32_t i = n - 1; i >= 1; i--)
		if (!dev->mr_tab[i])
			dev->mr_free[dev->mr_nfree++] = i;
	dev->mr_cap = n;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): a table of pointers */
	tab = realloc(dev->mr_tab, (size_t)n * sizeof(*tab));
	if (tab)
		dev->mr_tab = tab;
	fr = realloc(dev->mr_free, (size_t)n * sizeof(*fr));
	if (fr)
		dev->mr_free = fr;
}

void siw_mem_del(struct siw_dev *dev, struct siw_mr *mr)
{
	uint32_t idx = mr->stag >> 8;

	if (idx < dev->mr_cap && dev->mr_tab[idx] == mr) {
		dev->mr_tab[idx] = NULL;
		dev->mr_free[dev->mr_nfree++] = idx;
		mem_shrink(dev);
	}
}

struct siw_mr *siw_mem_lookup(struct siw_dev *dev, uint32_t stag)
{
	uint32_t idx = stag >> 8;
	struct siw_mr *mr;

	if (idx == 0 || idx >= dev->mr_cap)
		return NULL;
	mr = dev->mr_tab[idx];
	if (!mr || mr->stag != stag)
		return NULL;
	return mr;
}

enum siw_mem_err siw_mem_check_remote(struct siw_ep *ep, uint32_t stag, uint32_t access,
				      uint64_t to, uint64_t len, struct siw_mr **mrp)
{
	struct siw_mr *mr;
	enum siw_mem_err e = siw_mem_check(ep->dev, stag, ep->pd, access, to, len, &mr);

	if (e)
		return e;
	/* rpcrdma_mr_bind_ep: a server's PD is shared by all its
	 * connections; the scope narrows the STag to one of them, as a
	 * type-2 memory window bound to a QP does in verbs. */
	if (mr->scope && mr->scope != ep->id)
		return SIW_MEM_SCOPE;
	if (mrp)
		*mrp = mr;
	return SIW_MEM_OK;
}

enum siw_mem_err siw_mem_check(struct siw_dev *dev, uint32_t stag, struct siw_pd *pd,
			       uint32_t access, uint64_t to, uint64_t len, struct siw_mr **mrp)
{
	struct siw_mr *mr = siw_mem_lookup(dev, stag);

	if (!mr || !mr->valid)
		return SIW_MEM_INVALID_STAG;
	/* RFC 5042 §5.2: an STag is usable only on streams of its PD. */
	if (mr->pd != pd)
		return SIW_MEM_PD;
	if ((mr->access & access) != access)
		return SIW_MEM_ACCESS;
	if (to > UINT64_MAX - len)
		return SIW_MEM_WRAP;
	if (to < mr->addr || to + len > mr->addr + mr->len)
		return SIW_MEM_BOUNDS;
	if (mrp)
		*mrp = mr;
	return SIW_MEM_OK;
}
