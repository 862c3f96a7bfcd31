/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the soft-iWARP end-to-end tests (helper "siwtest" owns
 * this file): a fast 64-bit checksum and a deterministic fill pattern for the
 * bytes that cross, a control channel between the two test processes, a
 * fork wrapper with watchdogs, and byte builders for a hand-written MPA peer
 * (MPA start frames and FPDUs with CRC32c, DDP/RDMAP headers) spelled out
 * from RFC 5044 / 6581 / 5041 / 5040 independently of the provider's code.
 */
#ifndef SIW_TEST_UTIL_H
#define SIW_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/be.h"

/* ---- test verdicts ------------------------------------------------------ */

extern int siwt_failures;
extern const char *siwt_role; /* "parent" or "child", prefixes messages */

#define SIWT_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			siwt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                         \
		}                                                                                  \
	} while (0)

#define SIWT_EQ(a, b)                                                                              \
	do {                                                                                       \
		long long siwt_a_ = (long long)(a), siwt_b_ = (long long)(b);                      \
		if (siwt_a_ != siwt_b_)                                                            \
			siwt_fail(__FILE__, __LINE__, #a " == " #b, "%lld != %lld", siwt_a_,       \
				  siwt_b_);                                                        \
	} while (0)

void siwt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prints "SKIP: reason" and exits 77 (the ctest skip code). */
void siwt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- data that crosses: pattern and checksum ---------------------------- */

/* Fills n bytes with a pattern derived from seed (xorshift64*); any offset,
 * any length. Different seeds give unrelated bytes. */
void siwt_fill(void *p, size_t n, uint64_t seed);

/* 64-bit checksum (4-lane multiply-rotate over 8-byte words, then the
 * tail); position-dependent, so swapped or shifted bytes change it. Adds n
 * to siwt_bytes_hashed. */
uint64_t siwt_hash(const void *p, size_t n);
extern uint64_t siwt_bytes_hashed;

/* ---- control channel between the two processes -------------------------- */

/* Fixed-size message; every field is whatever the test needs. */
struct siwt_msg {
	uint32_t type;
	uint32_t a;
	uint64_t u[8];
	uint8_t data[64];
};

/* 0 or -errno; recv waits at most timeout_ms (-ETIMEDOUT). */
int siwt_send_msg(int fd, const struct siwt_msg *m);
int siwt_recv_msg(int fd, struct siwt_msg *m, int timeout_ms);
/* Convenience: send {type,a,u0,u1} / expect a message of that type (fails
 * the test and returns -EPROTO on another type). */
int siwt_send4(int fd, uint32_t type, uint32_t a, uint64_t u0, uint64_t u1);
int siwt_expect(int fd, uint32_t type, struct siwt_msg *out);

/* fork() with a socketpair: the child runs fn(ctl, arg) under a watchdog of
 * watchdog_s seconds and exits 0 when it recorded no failures. Returns the
 * child's pid and the parent's control fd in *ctl. */
pid_t siwt_fork(int (*fn)(int ctl, void *arg), void *arg, int *ctl, unsigned watchdog_s);
/* Waits for the child (at most timeout_s, then kills it); 0 when it exited
 * 0, else records a failure and returns -1. */
int siwt_wait_child(pid_t pid, unsigned timeout_s);

/* Monotonic milliseconds. */
uint64_t siwt_now_ms(void);

/* ---- hand-written iWARP bytes (independent of src/softiwarp) ------------ */

/* CRC32c (Castagnoli, reflected polynomial 0x82F63B78, init and final xor
 * 0xffffffff) — RFC 5044 §6 / RFC 3385. Table-driven, small inputs only. */
uint32_t siwt_crc32c(const void *p, size_t n);

/* RFC 5044 §7.1 / RFC 6581 §5 MPA request or reply. bits: the 16-bit
 * M|C|R|H|Res|Rev word as sent (e.g. 0x4000 | 0x1000 | 2). If enhanced
 * (0x1000) the 4-byte IRD/ORD word precedes pd and is counted in the
 * private data length. Returns bytes written to out (>= 20 + 4 + pdlen). */
#define SIWT_MPA_M 0x8000u
#define SIWT_MPA_C 0x4000u
#define SIWT_MPA_R 0x2000u
#define SIWT_MPA_H 0x1000u
size_t siwt_mpa_frame(uint8_t *out, bool request, uint16_t bits, uint16_t ird_word,
		      uint16_t ord_word, const void *pd, size_t pdlen);

/* RFC 5044 §4: ULPDU_Length | ULPDU | pad to 4 | CRC (0 when !crc). The
 * CRC is stored so that it reads as little-endian, the byte order Linux siw
 * and Wireshark use (docs/linux-peer.md). Returns the FPDU length. */
size_t siwt_fpdu(uint8_t *out, const void *ulpdu, size_t len, bool crc);

/* RFC 5041 §4 / RFC 5040 §4: an untagged (QN, MSN, MO) or tagged (STag, TO)
 * DDP header followed by the RDMAP control byte (RV=1, opcode). Returns 18
 * (untagged) or 14 (tagged). inv_stag goes in the RDMAP reserved/Invalidate
 * STag word of untagged headers. */
#define SIWT_OP_WRITE       0
#define SIWT_OP_READ_REQ    1
#define SIWT_OP_READ_RESP   2
#define SIWT_OP_SEND        3
#define SIWT_OP_SEND_INV    4
#define SIWT_OP_SEND_SE     5
#define SIWT_OP_SEND_SE_INV 6
#define SIWT_OP_TERMINATE   7
size_t siwt_ddp_untagged(uint8_t *out, bool last, unsigned op, uint32_t inv_stag, uint32_t qn,
			 uint32_t msn, uint32_t mo);
size_t siwt_ddp_tagged(uint8_t *out, bool last, unsigned op, uint32_t stag, uint64_t to);

/* Big-endian stores and loads: get_be32 and the like of util/be.h. */

/* Raw TCP helpers for the hand-written peer: blocking with timeouts. */
int siwt_tcp_connect(uint16_t port); /* fd or -errno */
int siwt_tcp_listen(uint16_t *port); /* fd or -errno; port out */
int siwt_write_all(int fd, const void *p, size_t n);
/* Reads exactly n bytes within timeout_ms: 0, -ETIMEDOUT, or -EPIPE on EOF
 * (*got says how many arrived). */
int siwt_read_exact(int fd, void *p, size_t n, int timeout_ms, size_t *got);
/* Reads one FPDU (no markers): returns the ULPDU length or -errno; checks
 * the CRC when crc and sets *crc_ok. */
int siwt_read_fpdu(int fd, uint8_t *ulpdu, size_t cap, bool crc, bool *crc_ok, int timeout_ms);
/* Waits for EOF/RST: 0 when the peer closed within timeout_ms. */
int siwt_wait_closed(int fd, int timeout_ms);

void siwt_hexdump(FILE *f, const char *what, const void *p, size_t n);

/* ---- provider harness ---------------------------------------------------- */

#include "rpcrdma/provider.h"

#define SIWT_RING 64

/* One process's provider objects. Completions and events are collected
 * into rings by siwt_pump() so waiting for one kind never loses another. */
struct siwt_node {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *scq, *rcq;
	struct rpcrdma_evch *evch;
	struct rpcrdma_listener *lis;
	struct rpcrdma_ep *ep;
	uint16_t port; /* listener port */
	struct rpcrdma_wc swc[SIWT_RING], rwc[SIWT_RING];
	unsigned swc_n, rwc_n;
	struct rpcrdma_event ev[32];
	unsigned ev_n;
	bool thread; /* RPCRDMA_DEV_F_PROGRESS_THREAD: wait on fds, never progress */
	/* thread mode: leave the receive CQ's notification to the test (its
	 * completions are still reaped, found at the next wake-up) */
	bool no_rcq_notify;
};

/* Opens the softiwarp device, a PD, two CQs (cqe 1024) and an event
 * channel. Fails the test (and returns -errno) on error. */
int siwt_node_open(struct siwt_node *n);
/* The same with device flags (RPCRDMA_DEV_F_PROGRESS_THREAD). */
int siwt_node_open_flags(struct siwt_node *n, uint32_t dev_flags);
/* Destroys everything in n (ep, listener, ...), checking each result. */
void siwt_node_close(struct siwt_node *n);
/* The node's device reads the RPCRDMA_SIW_* environment again, as if it had
 * been opened with it (softiwarp reads it once per device, at open): for
 * tests that change a knob between connections of one device. Endpoints
 * created afterwards get the new values. */
void siwt_node_reread_env(struct siwt_node *n);
/* Listens on 127.0.0.1: port $SIWT_PORT when set (the wire test picks
 * it), else an ephemeral one; n->port says which. */
int siwt_listen(struct siwt_node *n);

/* Endpoint attributes: defaults + overrides. */
void siwt_ep_attr(struct siwt_node *n, struct rpcrdma_ep_attr *a);

/* Drives progress once (waiting at most timeout_ms) and reaps completions
 * and events into the rings. Returns 0 or -errno. */
int siwt_pump(struct siwt_node *n, int timeout_ms);
/* Pops the oldest completion of the send (recv=false) or receive CQ,
 * pumping up to timeout_ms. -ETIMEDOUT when none came. */
int siwt_wc(struct siwt_node *n, bool recv, struct rpcrdma_wc *wc, int timeout_ms);
/* Forgets the collected completions and events of a connection that
 * ended, but keeps CONNECT_REQUESTs: those belong to the listener, and a
 * peer that reconnects at once may already have sent the next one. */
void siwt_forget(struct siwt_node *n);
/* Pops the oldest event, pumping up to timeout_ms. */
int siwt_event(struct siwt_node *n, struct rpcrdma_event *ev, int timeout_ms);
/* Waits for an event of type want; an event of another type fails the
 * test (printed) and returns -EPROTO with *ev holding it. */
int siwt_expect_event(struct siwt_node *n, enum rpcrdma_event_type want, struct rpcrdma_event *ev,
		      int timeout_ms);
/* Pumps until a control message arrives on ctl (serving the peer's Reads
 * and Writes meanwhile). */
int siwt_pump_until_msg(struct siwt_node *n, int ctl, struct siwt_msg *m, int timeout_ms);
/* siwt_pump_until_msg + a type check (fails the test on another type). */
int siwt_expect_pumped(struct siwt_node *n, int ctl, uint32_t type, struct siwt_msg *out);
/* Pumps for ms milliseconds. */
void siwt_pump_for(struct siwt_node *n, int ms);

/* Passive side: waits for CONNECT_REQUEST (returned in *req_ev), creates
 * n->ep with attr, calls pre_accept(n, arg) (post receives there), accepts
 * with pd/len and waits for ESTABLISHED (*est_ev). */
int siwt_accept(struct siwt_node *n, const struct rpcrdma_ep_attr *attr,
		int (*pre_accept)(struct siwt_node *n, void *arg), void *arg, const void *pd,
		size_t len, struct rpcrdma_event *req_ev, struct rpcrdma_event *est_ev);
/* Active side: creates n->ep, calls pre(n, arg), connects to 127.0.0.1:port
 * with pd/len, waits for ESTABLISHED (*est_ev). */
int siwt_connect(struct siwt_node *n, const struct rpcrdma_ep_attr *attr,
		 int (*pre)(struct siwt_node *n, void *arg), void *arg, uint16_t port,
		 const void *pd, size_t len, struct rpcrdma_event *est_ev);

/* Posting shorthands (fail the test on a non-zero return). */
int siwt_post_recv1(struct siwt_node *n, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey);
int siwt_post(struct siwt_node *n, uint64_t wr_id, enum rpcrdma_wr_opcode op, uint32_t flags,
	      const struct rpcrdma_sge *sg, uint32_t nsge, uint32_t rstag, uint64_t roff,
	      uint32_t inv);
/* Waits for one completion and checks wr_id, status and opcode. */
int siwt_expect_wc(struct siwt_node *n, bool recv, uint64_t wr_id, enum rpcrdma_wc_status status,
		   enum rpcrdma_wc_opcode op, struct rpcrdma_wc *out);

/* Waits for a TERMINATE event (skipping nothing) and checks term_local and
 * layer/etype/code against one of the allowed triples (packed as
 * layer << 16 | etype << 8 | code, n_allowed of them). Returns the packed
 * value seen, or -errno. */
int siwt_expect_terminate(struct siwt_node *n, bool local, const uint32_t *allowed,
			  unsigned n_allowed);
#define SIWT_TERM(l, e, c) (((uint32_t)(l) << 16) | ((uint32_t)(e) << 8) | (uint32_t)(c))

/* Anonymous page-aligned buffer of len bytes (+ guard) — freed with
 * siwt_free_buf. */
void *siwt_alloc_buf(size_t len);
void siwt_free_buf(void *p, size_t len);

/* Prints the totals (bytes hashed, per-test timing) at the end of a test
 * program and returns its exit code. */
int siwt_finish(const char *test, uint64_t bytes_verified, uint64_t t0_ms);

const char *siwt_status_str(enum rpcrdma_wc_status s);
const char *siwt_event_str(enum rpcrdma_event_type t);

#endif
