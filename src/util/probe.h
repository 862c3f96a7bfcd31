/* SPDX-License-Identifier: MIT */
/*
 * USDT probes (issue 37): SystemTap SDT markers at the points where the
 * Linux kernel's NFS/RDMA has its xprtrdma_* / svcrdma_* trace events,
 * provider "rpcrdma". man/man3/rpcrdma.3 (section TRACING) lists every
 * probe, its arguments and the kernel event it mirrors; a probe added
 * here goes on that list and in tests/probe.
 *
 *   RPCRDMA_PROBE(name, arg, ...)   1 to 12 integer arguments
 *
 * Untraced, a probe is one nop in the code and a note in .note.stapsdt
 * (<sys/sdt.h>, systemtap-sdt-dev: header only, no library); a tracer
 * (gdb `break -probe-stap rpcrdma:NAME`, bpftrace `usdt:...:rpcrdma:NAME`,
 * perf probe `sdt_rpcrdma:NAME`) turns the nop into a breakpoint. The
 * arguments are asm operands the compiler may leave in registers or
 * memory: pass values the code has at hand anyway (a field, a local),
 * never something computed only for the probe: that work would be paid
 * untraced too. A bool that may sit in a register goes as (uint32_t):
 * gdb reads no byte-register operand (`1@%r13b`); a bool field read
 * from memory (`1@656(%rbx)`) is fine as it is. Without the header (RPCRDMA_USDT=OFF) a probe is nothing.
 */
#ifndef RPCRDMA_UTIL_PROBE_H
#define RPCRDMA_UTIL_PROBE_H

#ifdef RPCRDMA_HAVE_SDT
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
/* STAP_PROBEV counts its arguments with macros (_SDT_NARG) that, for
 * some argument counts, leave a variadic parameter empty: standard C since
 * C23, a GNU extension before it, which clang's -Wpedantic reports at each
 * probe (the fuzz build, -Werror). The expansion is the header's. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-zero-variadic-macro-arguments"
#endif
#define RPCRDMA_PROBE(name, ...) STAP_PROBEV(rpcrdma, name, __VA_ARGS__)
#else
#define RPCRDMA_PROBE(name, ...)                                                                   \
	do {                                                                                       \
	} while (0)
#endif

/* The role argument of conn_*, error_* and v2_result: who fires it. */
enum { RPCRDMA_PROBE_CLIENT = 0, RPCRDMA_PROBE_SERVER = 1 };
/* The direction argument of credits: which credit window (RFC 8167 §4). */
enum { RPCRDMA_PROBE_FORWARD = 0, RPCRDMA_PROBE_REVERSE = 1 };

#endif
