/* SPDX-License-Identifier: MIT */
/*
 * softiwarp runtime state: device, protection domains, memory regions,
 * completion queues, event channels, endpoints (queue pair + connection),
 * listeners and pending connection requests. Wire format lives in iwarp.h.
 *
 * Locking: one mutex per device (dev->lock, a futex_mutex) guards
 * every object of the device. Public entry points take it; everything named siw_*_locked or
 * documented "lock held" expects it. The lock is never held across a
 * blocking wait (epoll_wait is called without it).
 *
 * Ownership: the application owns the handles it created; an endpoint owns
 * its socket, its preallocated work slots and its rx/tx state; registered
 * memory always stays the application's (the provider only reads/writes it
 * while work referencing it is outstanding).
 */
#ifndef SIW_H
#define SIW_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/futex_mutex.h"
#include "provider/provider_int.h"
#include "softiwarp/iwarp.h"
#include "softiwarp/siw_fault.h"

#define SIW_PROVIDER_NAME "softiwarp"

#define SIW_MAX_QP_WR   16384u
#define SIW_MAX_SGE     16u
#define SIW_MAX_CQE     (1u << 24)
#define SIW_MAX_IRD_ORD MPA_V2_IRD_ORD_MASK
#define SIW_MAX_MR      (1u << 20)
#define SIW_DEF_WR      128u
#define SIW_DEF_SGE     4u
#define SIW_DEF_IRD_ORD 16u
#define SIW_DEF_ULPDU   65516u /* 2 + 65516 + 2 pad = 65520: 4-aligned */
#define SIW_MIN_ULPDU   64u
#define SIW_DEF_TIMEOUT 10000u
#define SIW_DEF_SOCKBUF (4u << 20)
#define SIW_SOCKBUF_MAX (256u << 20)
#define SIW_MAX_MSG     0x7fffffffu

/* tx batching: FPDUs and iovecs gathered into one sendmsg() */
#define SIW_TX_FPDUS 64u
#define SIW_TX_IOV   256u
/* Moderate batches let the receiver start copying sooner, while the data
 * is still in cache; with CRC the batch is checksummed before sendmsg()
 * copies it, which favours smaller ones (bench/provider/README.md, "Design
 * notes from measurements").
 * RPCRDMA_SIW_TX_BATCH=BYTES overrides both (tunables.c). */
#ifndef SIW_TX_BYTES
#define SIW_TX_BYTES (512u << 10)
#endif
#define SIW_TX_BYTES_CRC (256u << 10)
#define SIW_TX_BYTES_MAX (64u << 20)
/* Read Responses without CRC go in pieces of this many bytes (qp_tx.c);
 * RPCRDMA_SIW_TX_RRESP=BYTES overrides (tunables.c). */
#define SIW_TX_RRESP_BYTES (512u << 10)
/* Receive spin (verbs.c progress_run): when a progress call ends with a
 * message half received and made no completion, keep polling for up to
 * this long after the last bytes came before returning
 * (RPCRDMA_SIW_RX_SPIN_US overrides, 0 = off). The rest of a message in
 * flight follows within microseconds; a receiver asleep in poll() costs
 * the sending side a wake-up (an inter-processor interrupt, a VM exit on
 * virtual machines) for nearly every segment. */
#define SIW_RX_SPIN_US     50u
#define SIW_RX_SPIN_US_MAX 1000000u
/* one progress call spins at most this long beyond the budget (control
 * goes back to the application at least this often) */
#define SIW_RX_SPIN_CALL_NS 2000000u
/* a sched_yield() in the spin that took longer than this let another task
 * run: the CPU is shared, the spin ends; after this many such ends with no
 * hit between them the device does not spin for SIW_RX_SPIN_BACKOFF_NS */
#define SIW_RX_SPIN_YIELD_NS      10000u
#define SIW_RX_SPIN_SHARED_STREAK 4u
#define SIW_RX_SPIN_BACKOFF_NS    100000000u
/* a zero-timeout progress call on a one-connection device asks epoll every
 * this many calls (a power of two), and tries the socket directly otherwise */
#define SIW_SOLO_EPOLL_EVERY 16u
/* rx staging: headers and trailers are read through this; bulk payload is
 * received straight into the target memory (qp_rx.c). */
#define SIW_RX_STAGE 512u
/* Read Responses: FPDUs received by one recvmsg() beyond the current one
 * (their sink is known: see qp_rx_read.c) */
#define SIW_PRED_FPDUS 15u
#define SIW_REPLAY_MAX (SIW_PRED_FPDUS * (MPA_MAX_ULPDU + 12u) + SIW_RX_STAGE)
/* active side: first-frame nudge delay, ms (cm.c; RPCRDMA_SIW_NUDGE_MS) */
#define SIW_NUDGE_MS     20u
#define SIW_NUDGE_MS_MAX 60000u
/* header buffer: MPA len + untagged DDP + the largest RDMAP extension
 * (Terminate control + copied DDP length/header + Read Request header). */
#define SIW_HDR_MAX                                                                                \
	(MPA_LEN_SIZE + DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_CTRL_LEN + 2u + DDP_UNTAGGED_HDR_LEN +   \
	 RDMAP_RREQ_LEN)

/* ---------------- poll registry ---------------- */

enum siw_poll_kind {
	SIW_POLL_EP = 1,
	SIW_POLL_LISTENER,
	SIW_POLL_CREQ,
};

/* Every socket in the device's epoll set is named by (slot, generation),
 * so an event for an object destroyed meanwhile is recognised and dropped. */
struct siw_pollable {
	enum siw_poll_kind kind;
	uint32_t slot;
	uint32_t events; /* EPOLLIN/EPOLLOUT currently requested */
};

struct siw_poll_slot {
	struct siw_pollable *p; /* NULL when free */
	uint32_t gen;
};

/* ---------------- raw system calls ---------------- */

/*
 * syscall(2) with its contract (the result, or -1 and errno), for the
 * system calls of the fast paths (epoll_pwait with a zero timeout, recvfrom,
 * sendmsg). They are made raw because glibc's wrappers of them
 * are cancellation points, bookkeeping a non-blocking call does not
 * need. On x86-64 the syscall instruction is issued inline, which also
 * saves the call into libc's syscall() and its argument shuffle; elsewhere
 * (and for the static analyzer, which cannot see what the instruction
 * writes) it is syscall() itself.
 */
/* the kernel's -errno as syscall()'s -1 and errno */
static inline long siw_syscall_ret(long ret)
{
	if (__builtin_expect(ret < 0 && ret > -4096, 0)) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static inline long siw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
#if defined(__x86_64__) && !defined(__clang_analyzer__)
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return siw_syscall_ret(ret);
#else
	return syscall(nr, a1, a2, a3, a4, a5, a6);
#endif
}

/* The same with four arguments (rdi, rsi, rdx, r10): r8 and r9 keep the
 * caller's values across the call. */
static inline long siw_syscall4(long nr, long a1, long a2, long a3, long a4)
{
#if defined(__x86_64__) && !defined(__clang_analyzer__)
	long ret;
	register long r10 __asm__("r10") = a4;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
			 : "rcx", "r11", "memory");
	return siw_syscall_ret(ret);
#else
	return syscall(nr, a1, a2, a3, a4);
#endif
}

/* ---------------- device lock ---------------- */

/*
 * The device lock: a futex mutex (util/futex_mutex.h). No condition
 * variable ever waits on it.
 */
/* ---------------- tunables ---------------- */

/* Every RPCRDMA_SIW_* environment variable (README.md's knob table), read
 * once when the device opens (tunables.c). Endpoints copy the ones that
 * shape a connection when they are created (verbs.c siw_ep_init). */
struct siw_tunables {
	uint32_t nudge_ms;     /* RPCRDMA_SIW_NUDGE_MS: active side's nudge, 0 = off */
	uint32_t tx_batch;     /* RPCRDMA_SIW_TX_BATCH: Write/Send bytes per sendmsg() */
	uint32_t tx_batch_crc; /* the same with CRC (one variable sets both) */
	uint32_t tx_rresp;     /* RPCRDMA_SIW_TX_RRESP: Read Response bytes per sendmsg() */
	uint32_t rx_spin_ns;   /* RPCRDMA_SIW_RX_SPIN_US, in ns (0 = no spin) */
	uint32_t sockbuf;      /* RPCRDMA_SIW_SOCKBUF: when the attributes leave it unset */
	bool solo;             /* RPCRDMA_SIW_SOLO: one-connection fast path */
	bool rx_predict;       /* RPCRDMA_SIW_RX_PREDICT: Read Response prediction */
#ifdef RPCRDMA_TEST_HOOKS
	struct siw_fault_cfg fault; /* RPCRDMA_SIW_FAULT (siw_fault.h) */
#endif
};

/* Fill @t from the environment (defaults for what is unset or invalid). */
void siw_tunables_read(struct siw_tunables *t);

/* ---------------- device ---------------- */

struct siw_ep;
struct siw_creq;
struct siw_listener;

struct siw_dev {
	struct rpcrdma_dev base;
	struct futex_mutex lock;
	int epfd;
	int timerfd;
	int wakefd;
	bool thread_mode;
	bool thread_stop;
	pthread_t thread;
	struct siw_tunables tun; /* read once at open */
#ifdef RPCRDMA_TEST_HOOKS
	/* fault injection (siw_fault.h): fired once; ops and registrations
	 * counted toward it */
	bool fault_fired;
	uint64_t fault_ops, fault_regs, fault_setups, fault_reads;
#endif

	/* STag table (mem.c): index -> MR; slot 0 is never used so that
	 * STag 0 never names memory. */
	struct siw_mr **mr_tab;
	uint32_t mr_cap;
	uint32_t *mr_free; /* stack of free indices */
	uint32_t mr_nfree;
	/* slots in use when a shrink last found one in use too high (0:
	 * none; tried again at half that; mem.c, issue 38) */
	uint32_t mr_shrink_failed;
	uint32_t key_seed;
	/* bumped whenever an MR is freed (verbs.c siw_mr_dereg): a cached
	 * MR pointer of an older generation may dangle */
	uint64_t mr_gen;

	struct siw_poll_slot *polls;
	uint32_t npolls;
	/* Slots in use; the lowest that may be free (accept finds one in
	 * O(1), not by a walk from 0); the generation slots made by growth
	 * start from (above every one a slot dropped by a shrink had: an
	 * event still pending for it never matches); the count in use when
	 * a shrink last found a slot in use too high (0: none; tried again
	 * at half that) (progress.c, issue 38). */
	uint32_t npolls_used, poll_hint, poll_gen0, poll_shrink_failed;

	/* objects alive (dev_close refuses while any is) */
	uint32_t nobjs;
	uint32_t next_pd_id;
	uint64_t next_ep_id; /* siw_ep.id: never reused */

	/* endpoints and requests with a connection deadline (cm.c) */
	struct siw_ep *eps;     /* every endpoint of the device */
	struct siw_creq *creqs; /* every pending connection request */

	int produced; /* completions + events made during one progress call */
	/* set during a progress round when an endpoint's receive stopped
	 * with a message half received (the peer is sending, more bytes
	 * follow): the largest spin budget of such endpoints, ns (0: none) */
	uint32_t rx_spin_want;
	/* receive spins (relaxed atomics, siw_dev_rx_spin_stats): entered,
	 * ended by bytes that made a completion or finished the message,
	 * ended without them (budget passed), ended because the CPU was
	 * found shared */
	uint64_t rx_spins, rx_spin_hits, rx_spin_misses, rx_spin_shared;
	/* CLOCK_MONOTONIC ns before which no spin starts: set when a spin
	 * found the CPU shared (SIW_RX_SPIN_YIELD_NS) */
	uint64_t rx_spin_off_until;
	uint32_t rx_spin_streak; /* shared-CPU ends since the last hit */
	/* One connection (verbs.c progress_once): while exactly one endpoint
	 * socket is in the epoll set, solo_tag is its epoll tag (else 0), and
	 * a zero-timeout progress call tries that socket directly, asking
	 * epoll only every SIW_SOLO_EPOLL_EVERY-th call (listeners, timers,
	 * EPOLLOUT): one system call less per message received. Read without
	 * the lock; the tag is checked under it as an epoll event's is. */
	uint64_t solo_tag;
	uint32_t n_ep_polls; /* endpoint sockets in the epoll set */
	uint32_t solo_iter;
	/* Direct reaping (verbs.c progress_once, for rpcrdma_dev_progress_poll):
	 * during its lock round, completions of reap_cq that find its ring
	 * empty go straight into reap_wc[reap_n++] (< reap_cap), not through
	 * the ring (cq.c siw_cq_push). NULL outside that round. */
	struct siw_cq *reap_cq;
	struct rpcrdma_wc *reap_wc;
	int reap_cap, reap_n;
	/* endpoints holding RPCRDMA_SEND_DEFER work (ep->tx_deferred); read
	 * without the lock by progress (atomic), changed with it */
	uint32_t ndeferred;
	uint8_t scratch[4096]; /* discard area for payload we drop */
};

static inline struct siw_dev *to_siw_dev(struct rpcrdma_dev *d)
{
	return container_of(d, struct siw_dev, base);
}

static inline void siw_dev_lock(struct siw_dev *dev)
{
	futex_mutex_lock(&dev->lock);
}

static inline void siw_dev_unlock(struct siw_dev *dev)
{
	futex_mutex_unlock(&dev->lock);
}

/* ---------------- memory ---------------- */

struct siw_pd {
	struct rpcrdma_pd base;
	uint32_t id;
	uint32_t refs; /* MRs + endpoints */
};

/* A shared receive queue (srq.c): a stack, so that the receive posted
 * last (the buffer just given back, whose pages are warm) is taken first. */
struct siw_srq {
	struct rpcrdma_srq base;
	struct siw_pd *pd;
	uint32_t max_wr, max_sge, n;
	uint32_t refs;           /* endpoints using it */
	struct siw_rqe *e;       /* e[0 .. n) posted, e[n - 1] taken next */
	struct rpcrdma_sge *sge; /* max_sge per entry */
};

struct siw_mr {
	struct rpcrdma_mr base;
	struct siw_pd *pd;
	uint32_t stag; /* index << 8 | key */
	uint64_t addr; /* first byte (also its Tagged Offset) */
	uint64_t len;
	uint32_t access; /* RPCRDMA_ACCESS_* */
	bool valid;
	/* rpcrdma_mr_bind_ep: the id of the one endpoint remote accesses may
	 * come through, or 0 (any endpoint of the PD) */
	uint64_t scope;
#ifdef RPCRDMA_TEST_HOOKS
	int64_t pinned; /* pages charged (RPCRDMA_SIW_FAULT=pin:0) */
#endif
};

static inline struct siw_pd *to_siw_pd(struct rpcrdma_pd *p)
{
	return container_of(p, struct siw_pd, base);
}

static inline struct siw_mr *to_siw_mr(struct rpcrdma_mr *m)
{
	return container_of(m, struct siw_mr, base);
}

/* Result of a protection check (RFC 5042 §5): 0 = allowed. */
enum siw_mem_err {
	SIW_MEM_OK = 0,
	SIW_MEM_INVALID_STAG, /* no such STag, key mismatch, or invalidated */
	SIW_MEM_PD,           /* STag of another protection domain */
	SIW_MEM_ACCESS,       /* right not granted */
	SIW_MEM_BOUNDS,       /* outside [addr, addr + len) */
	SIW_MEM_WRAP,         /* offset + length wraps */
	SIW_MEM_SCOPE,        /* STag scoped to another endpoint */
};

int siw_mem_init(struct siw_dev *dev);
void siw_mem_fini(struct siw_dev *dev);
int siw_mem_add(struct siw_dev *dev, struct siw_mr *mr);
void siw_mem_del(struct siw_dev *dev, struct siw_mr *mr);
uint8_t siw_mem_next_key(struct siw_dev *dev, uint8_t old);
/* Look up @stag and check that [to, to + len) in protection domain @pd
 * allows @access; on success *mrp is the region. */
enum siw_mem_err siw_mem_check(struct siw_dev *dev, uint32_t stag, struct siw_pd *pd,
			       uint32_t access, uint64_t to, uint64_t len, struct siw_mr **mrp);
struct siw_mr *siw_mem_lookup(struct siw_dev *dev, uint32_t stag);
/* siw_mem_check() for a tagged access by the peer of @ep (in its PD),
 * which must also be the endpoint the region is scoped to, if any. */
enum siw_mem_err siw_mem_check_remote(struct siw_ep *ep, uint32_t stag, uint32_t access,
				      uint64_t to, uint64_t len, struct siw_mr **mrp);

/* ---------------- completion queues and events ---------------- */

struct siw_cq {
	struct rpcrdma_cq base;
	/* ring_n entries (<= cap, grown on demand: cq.c), count waiting
	 * from head */
	struct rpcrdma_wc *ring;
	uint32_t cap, ring_n, head, count;
	int efd;
	bool armed, solicited_only, fd_signaled;
	uint32_t refs; /* endpoints using it */
};

static inline struct siw_cq *to_siw_cq(struct rpcrdma_cq *c)
{
	return container_of(c, struct siw_cq, base);
}

struct siw_ev_node {
	struct siw_ev_node *next;
	struct rpcrdma_event ev;
};

struct siw_evch {
	struct rpcrdma_evch base;
	struct siw_ev_node *head, *tail;
	int efd;
	bool fd_signaled;
	uint32_t refs; /* endpoints + listeners */
};

static inline struct siw_evch *to_siw_evch(struct rpcrdma_evch *c)
{
	return container_of(c, struct siw_evch, base);
}

/* Lock held. Returns 0 or -ENOSPC (CQ overrun). */
int siw_cq_push(struct siw_dev *dev, struct siw_cq *cq, const struct rpcrdma_wc *wc);
/* Lock held. Allocates the event node (events are rare: not steady state). */
int siw_evch_push(struct siw_dev *dev, struct siw_evch *ch, const struct rpcrdma_event *ev);
void siw_evch_purge(struct siw_evch *ch, const struct rpcrdma_ep *e);

/* ---------------- endpoints ---------------- */

enum siw_ep_state {
	SIW_EP_IDLE = 0,
	SIW_EP_CONNECTING,   /* active: TCP connect in progress */
	SIW_EP_MPA_REQ_SENT, /* active: MPA request out, waiting for the reply */
	SIW_EP_MPA_REP_SENT, /* passive: reply out, waiting for the peer's RTR */
	SIW_EP_RTS,          /* connected: data transfer */
	SIW_EP_CLOSING,      /* orderly close: flushing tx, then shutdown */
	SIW_EP_ERROR,        /* after a Terminate or failure: sending it, then close */
	SIW_EP_CLOSED,
};

enum siw_wqe_state {
	SIW_WQE_QUEUED = 0,
	SIW_WQE_READ_WAIT, /* RDMA Read request sent, response not complete */
	SIW_WQE_DONE,
};

/* Send queue slot; its SGE array lives in ep->sq_sge. */
struct siw_wqe {
	uint64_t wr_id;
	struct rpcrdma_sge *sge;
	uint32_t num_sge;
	uint8_t opcode; /* enum rpcrdma_wr_opcode */
	uint8_t state;  /* enum siw_wqe_state */
	uint32_t flags; /* RPCRDMA_SEND_* */
	uint32_t inv_stag;
	uint32_t rstag;
	uint64_t raddr;
	uint64_t len;
	uint64_t read_got;
	enum rpcrdma_wc_status status;
	uint32_t vendor_err;
};

struct siw_rqe {
	uint64_t wr_id;
	struct rpcrdma_sge *sge;
	uint32_t num_sge;
	uint64_t len;
};

/* Inbound RDMA Read Request being answered (IRQ; RFC 5040 §5.2). */
struct siw_irqe {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t len;
	uint32_t src_stag;
	uint64_t src_to;
};

enum siw_txm_kind {
	SIW_TXM_NONE = 0,
	SIW_TXM_WQE,       /* Send / Write / Read Request from the send queue */
	SIW_TXM_READ_RESP, /* answering the IRQ head */
	SIW_TXM_TERM,      /* our Terminate */
	SIW_TXM_RTR,       /* RFC 6581 zero-length RTR */
};

/* The message being cut into FPDUs (qp_tx.c). */
struct siw_txmsg {
	enum siw_txm_kind kind;
	struct siw_wqe *wqe;
	uint8_t op; /* enum rdmap_opcode */
	bool tagged;
	uint32_t stag; /* tagged: sink STag */
	uint64_t to;   /* tagged: TO of the next byte */
	uint32_t qn, msn, inv_stag;
	uint64_t total, done;
	/* gather cursor over the source SGEs */
	const struct rpcrdma_sge *sge;
	uint32_t nsge, sge_idx;
	uint64_t sge_off;
	struct rpcrdma_sge one;
	/* RDMAP bytes after the DDP header that are not memory (Read Request
	 * header, Terminate control + copied header) */
	uint8_t ext[RDMAP_TERM_CTRL_LEN + 2u + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN];
	uint32_t ext_len;
};

struct siw_fpdu_buf {
	uint8_t hdr[SIW_HDR_MAX];
	uint8_t trl[8]; /* pad + CRC */
};

enum siw_done_kind {
	SIW_DONE_WQE = 1,
	SIW_DONE_IRQ,
	SIW_DONE_TERM,
	SIW_DONE_RTR,
};

struct siw_tx {
	struct iovec iov[SIW_TX_IOV];
	uint32_t iov_n, iov_i;
	uint64_t left; /* bytes of the batch not yet accepted by TCP */
	struct siw_fpdu_buf fb[SIW_TX_FPDUS];
	uint32_t nfb;
	/* messages whose last byte is in the batch: retired once it is sent */
	struct {
		uint8_t kind;
		struct siw_wqe *wqe;
		uint64_t end; /* batch bytes up to the message's last byte */
	} done[SIW_TX_FPDUS];
	uint32_t ndone, done_i;
	uint64_t built, sent; /* batch bytes built / accepted by TCP */
	struct siw_txmsg msg;
	bool blocked; /* socket full: waiting for EPOLLOUT */
	/* MPA start frame being sent (cm.c) */
	uint8_t mpa[MPA_HDR_LEN + MPA_MAX_PD];
	uint32_t mpa_len, mpa_off;
};

enum siw_rx_state {
	SIW_RX_MPA = 0, /* reading an MPA start frame (cm.c) */
	SIW_RX_HDR,     /* MPA length + DDP/RDMAP header (+ RDMAP extension) */
	SIW_RX_DATA,    /* payload into its target */
	SIW_RX_TRAILER, /* pad + CRC */
	SIW_RX_DEAD,    /* error: input ignored */
};

enum siw_rx_kind {
	SIW_RXK_WRITE = 1,
	SIW_RXK_READ_RESP,
	SIW_RXK_SEND,
	SIW_RXK_READ_REQ,
	SIW_RXK_TERM,
	SIW_RXK_ZERO, /* zero-length tagged (RTR Write / RTR Read Response) */
};

struct siw_rx {
	uint8_t state;
	uint8_t kind;
	bool last;
	bool msg_open; /* the last FPDU header had L clear: more follow */
	uint8_t stage[SIW_RX_STAGE];
	uint32_t st_off, st_len;
	uint8_t hdr[SIW_HDR_MAX];
	uint32_t hdr_have, hdr_need;
	uint32_t ulpdu_len;
	uint32_t data_left; /* payload bytes of this FPDU still to come */
	uint8_t trl[8];
	uint32_t trl_have, trl_need;
	uint32_t crc; /* running CRC32c (raw, not inverted) */
	/* placement target of the remaining payload */
	struct iovec tgt[SIW_MAX_SGE + 1];
	uint32_t tgt_n, tgt_i;
	bool discard;
	/* current untagged message */
	uint32_t qn, msn, mo;
	uint32_t inv_stag;
	uint8_t op;
	uint64_t msg_bytes; /* Send: bytes placed so far */
	/* Read Response prediction (qp_rx_read.c siw_rx_recv_predict): headers and
	 * trailers of the FPDUs expected after the current one */
	uint8_t pred_exp[SIW_PRED_FPDUS][MPA_LEN_SIZE + DDP_TAGGED_HDR_LEN];
	uint8_t pred_rx[SIW_PRED_FPDUS][MPA_LEN_SIZE + DDP_TAGGED_HDR_LEN + 8];
	bool pred_off; /* a misprediction happened: stop predicting */
	/* bytes to parse again after a misprediction (heap, made on first
	 * use: not steady state) */
	uint8_t *replay;
	uint32_t replay_off, replay_len;
	/* FPDUs received through prediction, mispredictions */
	uint64_t pred_fpdus, pred_miss;
	bool pred_read; /* opt-in: RPCRDMA_SIW_RX_PREDICT=1 (dev->tun) */
	/* Terminate payload we keep for decoding */
	uint8_t term[RDMAP_TERM_CTRL_LEN + 2u + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN];
	uint32_t term_len;
};

/* Incoming MPA start frame being read. */
struct siw_mpa_in {
	uint8_t buf[MPA_HDR_LEN + MPA_MAX_PD + MPA_V2_WORD_LEN];
	uint32_t have, need;
};

struct siw_ep {
	struct rpcrdma_ep base;
	struct siw_pollable poll;
	struct siw_dev *dev;
	struct siw_pd *pd;
	struct siw_cq *scq, *rcq;
	struct siw_evch *evch;
	struct siw_srq *srq; /* RPCRDMA_EP_ATTR_SRQ, else NULL */
	struct siw_ep *next; /* dev->eps */
	uint64_t id;         /* unique on the device (siw_mr.scope) */
	size_t map_len;      /* the mapping it and its queues live in (verbs.c) */
	int fd;
	enum siw_ep_state state;
	bool active;
	bool used; /* connect/accept called once */
	bool fuzz; /* fuzz/test endpoint over a socketpair */

	/* attributes */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t ird, ord, max_ulpdu, timeout_ms, sockbuf;
	bool want_crc;
	uint8_t want_rev;
	enum rpcrdma_rtr want_rtr;

	/* negotiated */
	bool crc;
	uint8_t rev;
	enum rpcrdma_rtr rtr;
	uint32_t peer_ird, peer_ord;
	uint32_t eff_ord;      /* min(ord, peer IRD) when the peer said */
	bool rtr_read_pending; /* active: RTR Read sent, response awaited */

	/* send queue: free-running counters, slot = counter % max_send_wr */
	struct siw_wqe *sq;
	struct rpcrdma_sge *sq_sge;
	uint32_t sq_head, sq_tx, sq_tail;
	/* outstanding outbound reads (send-queue counters), ORD deep */
	uint32_t *orq;
	uint32_t orq_cap, orq_head, orq_tail;
	/* receive queue */
	struct siw_rqe *rq;
	struct rpcrdma_sge *rq_sge;
	uint32_t rq_head, rq_tail;
	/* inbound read queue, IRD deep */
	struct siw_irqe *irq;
	uint32_t irq_cap, irq_head, irq_tx, irq_tail; /* retire / next to answer / next free */

	uint32_t tx_msn[3];
	uint32_t rx_msn[3];
	/* the MR the last local Send SGE check found (qp_tx.c sges_ok), valid
	 * while dev->mr_gen == tx_mr_gen */
	struct siw_mr *tx_mr;
	uint64_t tx_mr_gen;
	/* the same for the receive fast path's RQE check (qp_rx.c) */
	struct siw_mr *rx_mr;
	uint64_t rx_mr_gen;

	/* Terminate to send (RFC 5040 §7) */
	bool term_pending, term_sent;
	uint8_t term_layer, term_etype, term_code;
	uint8_t term_hdr[2u + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN];
	uint32_t term_hdr_len;
	bool term_hdr_rreq;
	bool rtr_pending; /* active: RTR to send */
	/* qp.c: unsent rest of the FPDU a Terminate follows (heap, error
	 * path only; freed with the socket by siw_ep_close_socket) */
	uint8_t *tx_rest;
	/* cm.c: first-frame nudge of the active side (siw_cm_timers): the
	 * delay in ms (dev->tun at creation; 0: off), the end of the watch window, tx/rx byte
	 * counts at RTS, and the phase (enum in cm.c) */
	uint32_t nudge_ms;
	uint64_t nudge_until;
	uint64_t nudge_tx_mark, nudge_rx_mark;
	uint8_t nudge_phase;
	uint8_t nudges; /* sent on this connection (at most SIW_NUDGE_MAX) */

	struct siw_tx tx;
	bool tx_deferred; /* RPCRDMA_SEND_DEFER work queued, not yet pushed */
	/* copied from dev->tun at creation: bytes of Writes/Sends gathered
	 * into one sendmsg(), CRC off/on; of Read Responses, CRC off; the
	 * receive spin budget, ns */
	uint32_t tx_cap, tx_cap_crc;
	uint32_t tx_cap_rresp;
	uint32_t rx_spin_ns;
	struct siw_rx rx;

	/* connection management (cm.c) */
	uint64_t deadline_ms; /* CLOCK_MONOTONIC ms; 0 = none */
	uint8_t pdata[MPA_MAX_PD];
	uint16_t pdata_len;
	struct siw_mpa_in mpa_in;
	struct sockaddr_storage peer, local;
	bool disc_reported;
	bool cq_overrun; /* a completion did not fit its CQ: fatal (verbs semantics) */
	int close_status;

	struct rpcrdma_ep_stats stats;
#ifdef RPCRDMA_TEST_HOOKS
	struct siw_fault_ep fault; /* its stream, as fault injection sees it */
#endif
};

static inline struct siw_ep *to_siw_ep(struct rpcrdma_ep *e)
{
	return container_of(e, struct siw_ep, base);
}

/* The socket calls of an endpoint, with the test builds' fuzz and fault
 * diversions (they need struct siw_ep above). */
#include "softiwarp/siw_sock.h"

struct siw_listener {
	struct rpcrdma_listener base;
	struct siw_pollable poll;
	struct siw_dev *dev;
	struct siw_evch *evch;
	int fd;
};

enum siw_creq_state {
	SIW_CREQ_READING = 0, /* reading the peer's MPA request */
	SIW_CREQ_PENDING,     /* delivered: the application must answer */
	SIW_CREQ_REJECTING,   /* reject reply being sent, then close */
};

struct siw_creq {
	struct rpcrdma_conn_req base;
	struct siw_pollable poll;
	struct siw_dev *dev;
	struct siw_listener *listener;
	struct siw_creq *next;
	int fd;
	enum siw_creq_state state;
	uint64_t deadline_ms;
	struct siw_mpa_in mpa_in;
	struct sockaddr_storage peer;
	/* parsed request */
	uint16_t flags;
	uint8_t rev;
	bool enhanced;
	uint16_t peer_ird_word, peer_ord_word;
	const uint8_t *pd;
	uint16_t pd_len;
	uint8_t out[MPA_HDR_LEN + MPA_MAX_PD];
	uint32_t out_len, out_off;
};

/* ---------------- cross-file internals ---------------- */

/* crc.c: raw CRC32c continuation (start with SIW_CRC_INIT, finish with ~). */
#define SIW_CRC_INIT 0xffffffffu
uint32_t siw_crc_update(uint32_t crc, const void *buf, size_t len);

uint64_t siw_now_ms(void);

/* progress.c: the device's event loop. The poll registry and the timer
 * want the lock held; init/fini and the thread run before the device is
 * shared / after it is idle. */
int siw_progress_init(struct siw_dev *dev);
void siw_progress_fini(struct siw_dev *dev);
int siw_progress_thread_start(struct siw_dev *dev);
void siw_progress_thread_stop(struct siw_dev *dev);
int siw_progress(struct rpcrdma_dev *d, int timeout_ms);
int siw_progress_poll(struct rpcrdma_dev *d, int timeout_ms, struct rpcrdma_cq *cq,
		      struct rpcrdma_wc *wc, int n, int *npolled);
int siw_get_fd(const struct rpcrdma_dev *d);
int siw_poll_add(struct siw_dev *dev, struct siw_pollable *p, int fd, uint32_t events);
void siw_poll_mod(struct siw_dev *dev, struct siw_pollable *p, int fd, uint32_t events);
void siw_poll_del(struct siw_dev *dev, struct siw_pollable *p, int fd);
void siw_ep_want_write(struct siw_ep *ep, bool on);
void siw_timer_rearm(struct siw_dev *dev);
/* push the held work of every endpoint (lock held) */
void siw_flush_deferred(struct siw_dev *dev);

/* verbs.c */
int siw_ep_init(struct siw_dev *dev, struct siw_pd *pd, const struct rpcrdma_ep_attr *attr,
		struct siw_ep **out);
void siw_ep_free(struct siw_ep *ep);
int siw_dev_create(bool fuzz, const struct rpcrdma_dev_attr *attr, struct siw_dev **out);
extern struct rpcrdma_dev_ops siw_ops;

/* qp.c: state changes, completion and flushing */
void siw_ep_enter_rts(struct siw_ep *ep);
/* Fatal local error: queue a Terminate with layer/etype/code (RFC order),
 * flush, then close. @hdr may be NULL. */
void siw_ep_terminate(struct siw_ep *ep, uint8_t layer, uint8_t etype, uint8_t code);
/* Connection lost or closed: flush everything, report, close the socket. */
void siw_ep_fail(struct siw_ep *ep, int status, enum rpcrdma_wc_status first_status,
		 uint32_t vendor_err);
void siw_ep_flush(struct siw_ep *ep, enum rpcrdma_wc_status first_status, uint32_t vendor_err);
void siw_ep_close_socket(struct siw_ep *ep, bool abortive);
void siw_sq_retire(struct siw_ep *ep);
void siw_ep_event(struct siw_ep *ep, enum rpcrdma_event_type type, int status);
/* After work on @ep: a CQ overrun puts it in error (Terminate). */
void siw_ep_check_overrun(struct siw_ep *ep);
int siw_rq_complete(struct siw_ep *ep, struct siw_rqe *rqe, enum rpcrdma_wc_status st,
		    uint32_t byte_len, uint32_t flags, uint32_t inv);

/* srq.c (ops of verbs.c's table). siw_srq_take: device lock held, @ep's
 * receive ring empty; moves the shared queue's next receive into it.
 * false: the shared queue is empty too (or @ep has none). */
int siw_srq_create(struct rpcrdma_pd *p, const struct rpcrdma_srq_attr *attr,
		   struct rpcrdma_srq **out);
int siw_srq_destroy(struct rpcrdma_srq *s);
int siw_post_srq_recv(struct rpcrdma_srq *s, uint64_t wr_id, const struct rpcrdma_sge *sg,
		      unsigned int num_sge);
int siw_srq_resize(struct rpcrdma_srq *s, uint32_t max_wr);
int siw_srq_trim(struct rpcrdma_srq *s, uint32_t keep, size_t *bytes);
bool siw_srq_take(struct siw_ep *ep);
/* A receive is ready for the next Send of @ep (device lock held). */
static inline bool siw_rq_ready(struct siw_ep *ep)
{
	return ep->rq_head != ep->rq_tail || siw_srq_take(ep);
}

/* qp_tx.c */
int siw_tx_process(struct siw_ep *ep);
/* siw_post_send()'s direct path for a lone unsignaled Send (qp_tx.c) */
ssize_t siw_tx_direct(struct siw_ep *ep, const struct rpcrdma_send_wr *wr, uint64_t len);
void siw_tx_direct_rest(struct siw_ep *ep, uint64_t sent);
/* Whether siw_tx_process() has anything to do (bytes of a batch left,
 * messages queued, a Terminate / RTR / Read Response to send). */
bool siw_tx_pending(const struct siw_ep *ep);

/* qp_rx.c */
int siw_rx_process(struct siw_ep *ep);
/* qp_rx_read.c: FPDUs received through prediction (one recvmsg() for several)
 * and mispredictions, for tests and benchmarks */
void siw_ep_rx_pred_stats(struct rpcrdma_ep *ep, uint64_t *fpdus, uint64_t *miss);
/* receive spins of a softiwarp device (tests): entered, hits, misses,
 * ended on a shared CPU */
void siw_dev_rx_spin_stats(struct rpcrdma_dev *dev, uint64_t out[4]);
/* Decode a received Terminate control field in either bit order. */
void siw_term_decode(const uint8_t *ctrl, uint8_t *layer, uint8_t *etype, uint8_t *code);

/* cm.c */
int siw_cm_connect(struct siw_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		   const void *pdata, size_t len);
int siw_cm_listen(struct siw_dev *dev, struct siw_evch *evch, const struct sockaddr *addr,
		  socklen_t addrlen, int backlog, void *context, struct siw_listener **out);
void siw_cm_listener_destroy(struct siw_listener *l);
int siw_cm_accept(struct siw_creq *req, struct siw_ep *ep, const void *pdata, size_t len);
int siw_cm_reject(struct siw_creq *req, const void *pdata, size_t len);
void siw_cm_listener_ready(struct siw_listener *l);
void siw_cm_creq_ready(struct siw_creq *req, uint32_t events);
void siw_cm_creq_free(struct siw_creq *req);
/* Endpoint socket events while not in RTS/closing (connect, MPA). */
void siw_cm_ep_ready(struct siw_ep *ep, uint32_t events);
/* MPA bytes of an endpoint's rx (SIW_RX_MPA). 0 or -errno/-EAGAIN. */
int siw_cm_rx_mpa(struct siw_ep *ep);
void siw_cm_timers(struct siw_dev *dev, uint64_t now);
int siw_cm_flush_mpa_out(struct siw_ep *ep);
/* Build an MPA frame into @buf; returns its length. */
uint32_t siw_mpa_build(uint8_t *buf, bool reply, uint16_t flags, uint8_t rev, bool enhanced,
		       uint16_t ird_word, uint16_t ord_word, const void *pdata, uint16_t len);
/* Read an MPA frame: 1 complete, 0 need more (EAGAIN), -errno. */
int siw_mpa_read(int fd, struct siw_mpa_in *in, const char *key);
/* Socket setup for data transfer. */
void siw_sock_tune(int fd, uint32_t sockbuf);

/* cq.c: ops */
int siw_cq_create(struct rpcrdma_dev *d, const struct rpcrdma_cq_attr *attr,
		  struct rpcrdma_cq **out);
int siw_cq_destroy(struct rpcrdma_cq *c);
int siw_cq_poll(struct rpcrdma_cq *c, struct rpcrdma_wc *wc, int n);
int siw_cq_take(struct siw_cq *cq, struct rpcrdma_wc *wc, int n);
int siw_cq_req_notify(struct rpcrdma_cq *c, bool solicited_only);
int siw_cq_get_fd(const struct rpcrdma_cq *c);
int siw_cq_ack_notify(struct rpcrdma_cq *c);
int siw_cq_resize(struct rpcrdma_cq *c, uint32_t cqe);
int siw_evch_create(struct rpcrdma_dev *d, const struct rpcrdma_evch_attr *attr,
		    struct rpcrdma_evch **out);
int siw_evch_destroy(struct rpcrdma_evch *c);
int siw_evch_get(struct rpcrdma_evch *c, struct rpcrdma_event *ev);
int siw_evch_get_fd(const struct rpcrdma_evch *c);

#endif
