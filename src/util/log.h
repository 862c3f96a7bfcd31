/* SPDX-License-Identifier: MIT */
/*
 * The debug log (rpcrdma_set_log() in rpcrdma/common.h, environment
 * variable RPCRDMA_DEBUG): what happens per connection, off by default.
 *
 * Cost when off: a call site is one load of rlog_level and a compare,
 * marked unlikely; its arguments are evaluated and formatted only when the
 * level asks for the message (rlog_emit() is out of line and cold).
 */
#ifndef RPCRDMA_UTIL_LOG_H
#define RPCRDMA_UTIL_LOG_H

#include <stdint.h>

#include "rpcrdma/common.h"

/* The current level (enum rpcrdma_log_level): read by every call site,
 * written by the constructor that reads RPCRDMA_DEBUG and by
 * rpcrdma_set_log(). */
extern int rlog_level;

#define RLOG_ON(lvl) __builtin_expect(__atomic_load_n(&rlog_level, __ATOMIC_RELAXED) >= (lvl), 0)

/* RLOG_PEER(level, "clnt", &sockaddr_storage, fmt, ...): one message
 * "clnt 192.0.2.1:20049: ..." about the connection with that peer. */
#define RLOG_PEER(lvl, side, peer, ...)                                                            \
	do {                                                                                       \
		if (RLOG_ON(lvl))                                                                  \
			rlog_emit_peer((lvl), (side), (peer), __VA_ARGS__);                        \
	} while (0)

/* Format and hand one message to the sink (lock held across the sink
 * call, so rpcrdma_set_log() returning means the old sink is done). */
void rlog_emit_peer(int level, const char *side, const void *peer, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), cold));

/* The symbolic name of errno @err (positive or negative), "E?" if none. */
const char *rlog_errname(int err);

#endif
