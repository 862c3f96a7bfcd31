// SPDX-License-Identifier: MIT
/* The combination matrix: XDR routines and the registration count (see
 * matrix.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "matrix/matrix.h"
#include "softiwarp/siw.h" /* the STag table: registrations still valid */

bool_t xdr_mx_echo_args(XDR *x, struct mx_echo_args *a)
{
	return xdr_u_int(x, &a->id) && xdr_u_int(x, &a->seed) && xdr_u_int(x, &a->reply_len) &&
	       xdr_bytes(x, &a->val, &a->len, MX_MAX_LEN);
}

bool_t xdr_mx_echo_res(XDR *x, struct mx_echo_res *r)
{
	u_int cap = r->cap ? r->cap : MX_MAX_LEN;

	return xdr_u_int(x, &r->id) && xdr_uint64_t(x, &r->hash) &&
	       xdr_bytes(x, &r->val, &r->len, cap);
}

bool_t xdr_mx_rev_args(XDR *x, struct mx_rev_args *a)
{
	if (!xdr_u_int(x, &a->n) || a->n > MX_MAX_REV)
		return FALSE;
	for (uint32_t i = 0; i < a->n; i++)
		if (!xdr_u_int(x, &a->arg_len[i]) || !xdr_u_int(x, &a->reply_len[i]))
			return FALSE;
	return xdr_u_int(x, &a->timeout_ms) && xdr_u_int(x, &a->hdr) &&
	       xdr_u_int(x, &a->inline_thr) && xdr_u_int(x, &a->nknown);
}

bool_t xdr_mx_result(XDR *x, struct mx_result *r)
{
	uint32_t *w[] = {&r->rev_started, &r->rev_done,     &r->rev_bad,      &r->arg_bad,
			 &r->rr_exposed,  &r->rr_reclaimed, &r->rr_replies,   &r->regs_remote,
			 &r->regs_all,    &r->pull_bytes,   &r->rev_first_id, &r->rev_wrong_proc,
			 &r->rev_refused};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!xdr_u_int(x, w[i]))
			return FALSE;
	return xdr_int(x, &r->rev_first_err);
}

bool_t xdr_mx_void(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

bool mx_data_ok(const void *p, uint32_t len, uint32_t seed)
{
	uint8_t *want;
	bool ok;

	if (!len)
		return true;
	want = malloc(len);
	if (!want || !p) {
		free(want);
		return false;
	}
	tl_fill(want, len, seed);
	ok = !memcmp(p, want, len);
	free(want);
	return ok;
}

int mx_dev_regs(struct rpcrdma_dev *d, uint32_t *remote, uint32_t *all)
{
	struct siw_dev *dev;

	*remote = *all = 0;
	if (!d || !d->name || strcmp(d->name, SIW_PROVIDER_NAME))
		return -ENOTSUP;
	dev = to_siw_dev(d);
	siw_dev_lock(dev);
	for (uint32_t i = 0; i < dev->mr_cap; i++) {
		const struct siw_mr *m = dev->mr_tab[i];

		if (!m || !m->valid)
			continue;
		(*all)++;
		if (m->access & (RPCRDMA_ACCESS_REMOTE_READ | RPCRDMA_ACCESS_REMOTE_WRITE))
			(*remote)++;
	}
	siw_dev_unlock(dev);
	return 0;
}
