// SPDX-License-Identifier: MIT
/*
 * The one dispatcher of Version Two optional messages (opt_dispatch.h):
 * the unknown opttype and the wrong direction are judged here, for every
 * role.
 */
#include "transport/opt_dispatch.h"
#include "transport/rpcrdma2_wire.h"

bool xprt_opt_dispatch(const struct xprt_opt_role *role, void *ctx, const struct xprt_opt_msg *m)
{
	const struct xprt_opt_row *row = NULL;
	bool more = false;
	uint32_t err;

	for (uint32_t i = 0; i < role->nrows; i++) {
		if (role->rows[i].opttype == m->opttype) {
			row = &role->rows[i];
			break;
		}
	}
	if (!row) {
		/* Draft §3.1: not ours to know; answered whatever it carried. */
		role->answer(ctx, m, RPCRDMA2_ERR_INVAL_OPTION);
		return false;
	}
	if (row->optdir != XPRT_OPT_EITHER && row->optdir != m->optdir) {
		if (row->wrong_dir_inval)
			role->answer(ctx, m, RPCRDMA2_ERR_INVAL_OPTION);
		else if (role->settle)
			role->settle(ctx, m);
		return false;
	}
	err = row->fn(ctx, m, &more);
	if (err) {
		role->answer(ctx, m, err);
		return false;
	}
	if (!more && role->settle)
		role->settle(ctx, m);
	return more;
}
