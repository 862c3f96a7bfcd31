/* SPDX-License-Identifier: MIT */
/*
 * Tunables: every RPCRDMA_SIW_* environment variable, read here once when a
 * device opens (README.md, "Environment knobs"). Endpoints copy the
 * per-connection values from their device when they are created, so the
 * environment is never read on a connection's path. An unset, empty,
 * malformed or out-of-range value means the default.
 */
#include <errno.h>
#include <stdlib.h>

#include "softiwarp/siw.h"

/* The environment variable @name as an unsigned number (C notation) within
 * [min, max]; @def when unset, empty or not such a number. */
static uint32_t env_u32(const char *name, uint32_t def, uint32_t min, uint32_t max)
{
	const char *e = getenv(name);
	char *end;
	unsigned long v;

	if (!e || !*e)
		return def;
	errno = 0;
	v = strtoul(e, &end, 0);
	if (errno || *end || v < min || v > max)
		return def;
	return (uint32_t)v;
}

void siw_tunables_read(struct siw_tunables *t)
{
	/* one knob for both batch sizes; 0 (below the minimum) = unset */
	uint32_t batch = env_u32("RPCRDMA_SIW_TX_BATCH", 0, 4096, SIW_TX_BYTES_MAX);

	t->nudge_ms = env_u32("RPCRDMA_SIW_NUDGE_MS", SIW_NUDGE_MS, 0, SIW_NUDGE_MS_MAX);
	t->tx_batch = batch ? batch : SIW_TX_BYTES;
	t->tx_batch_crc = batch ? batch : SIW_TX_BYTES_CRC;
	t->tx_rresp = env_u32("RPCRDMA_SIW_TX_RRESP", SIW_TX_RRESP_BYTES, 4096, SIW_TX_BYTES_MAX);
	t->rx_spin_ns =
	    1000u * env_u32("RPCRDMA_SIW_RX_SPIN_US", SIW_RX_SPIN_US, 0, SIW_RX_SPIN_US_MAX);
	t->sockbuf = env_u32("RPCRDMA_SIW_SOCKBUF", SIW_DEF_SOCKBUF, 0, SIW_SOCKBUF_MAX);
	t->solo = env_u32("RPCRDMA_SIW_SOLO", 1, 0, 1) != 0;
	t->rx_predict = env_u32("RPCRDMA_SIW_RX_PREDICT", 0, 0, 1) != 0;
#ifdef RPCRDMA_TEST_HOOKS
	(void)siw_fault_parse(getenv("RPCRDMA_SIW_FAULT"), &t->fault);
#endif
}
