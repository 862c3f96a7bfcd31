/* SPDX-License-Identifier: MIT */
/*
 * The RDMA provider interface (DESIGN §2): a small verbs-like API behind
 * opaque handles. Everything above it (the RPC-over-RDMA transport, tools,
 * tests) uses only this header and never knows which provider it runs on:
 * "softiwarp" (iWARP in user space over TCP, the default) or "verbs"
 * (rdma-core: libibverbs and librdmacm, for RNICs and the kernel's siw and
 * rxe; built when their headers are found).
 *
 * Conventions kept by every function here:
 *   - returns 0 (or a count, where said) on success, a negative errno on
 *     failure; nothing is printed, nothing exits;
 *   - constructors take an out-parameter and leave it untouched on failure;
 *   - no function blocks unless it says so: posting work, connecting,
 *     accepting and disconnecting only start the operation; its outcome
 *     arrives later as a completion (CQ) or a connection event (event
 *     channel), produced by rpcrdma_dev_progress() or by the provider's
 *     progress thread (RPCRDMA_DEV_F_PROGRESS_THREAD);
 *   - an operation a provider does not implement returns -EOPNOTSUPP;
 *   - attribute structs start with comp_mask: set the bit of every optional
 *     field you filled in (RPCRDMA_*_ATTR_*); unset fields take the
 *     documented defaults, so old callers keep working when a struct grows.
 *     A zeroed struct is always a valid "all defaults" request.
 *
 * Threading: all objects of one device may be used from any thread; the
 * provider serialises internally (one lock per device). Without a progress
 * thread, nothing happens unless someone calls rpcrdma_dev_progress(); the
 * single-threaded pattern is
 *
 *     poll({ rpcrdma_dev_fd(dev), POLLIN }) -> rpcrdma_dev_progress(dev, 0)
 *       -> rpcrdma_cq_poll() / rpcrdma_evch_get()
 *
 * or just rpcrdma_dev_progress(dev, timeout_ms) which waits itself.
 *
 * Memory and addressing (RFC 5040 §2, RFC 5042): memory is registered in a
 * protection domain and named by an STag (32 bits: a 24-bit index chosen by
 * the provider and an 8-bit key that changes on every re-registration). A
 * remote peer addresses registered memory by STag plus Tagged Offset, and
 * the Tagged Offset is the *virtual address* of the byte in the registering
 * process, as with verbs and Linux siw: the region [addr, addr + length)
 * answers to offsets addr .. addr + length - 1. Local scatter/gather
 * elements name memory the same way (addr, length, lkey = STag).
 */
#ifndef RPCRDMA_PROVIDER_H
#define RPCRDMA_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/common.h"

RPCRDMA_EXTERN_C_BEGIN

/* Opaque handles. */
struct rpcrdma_dev;      /* an opened provider instance */
struct rpcrdma_pd;       /* protection domain */
struct rpcrdma_mr;       /* registered memory region */
struct rpcrdma_cq;       /* completion queue */
struct rpcrdma_evch;     /* connection event channel */
struct rpcrdma_ep;       /* connected endpoint (queue pair + connection) */
struct rpcrdma_srq;      /* shared receive queue (optional per provider) */
struct rpcrdma_listener; /* passive endpoint bound to an address */
struct rpcrdma_conn_req; /* an incoming connection awaiting accept/reject */

/* RFC 5044 §7.1: at most 512 bytes of private data in each MPA frame. For
 * MPA revision 2 the provider adds its 4-byte IRD/ORD word (RFC 6581 §9)
 * itself, inside those 512: a caller may then supply at most 508 bytes
 * (connect/accept/reject return -EINVAL beyond). The caller always sees and
 * supplies only its own bytes. */
#define RPCRDMA_MAX_PRIVATE_DATA 512u

/* ------------------------------------------------------------------ */
/* Device                                                              */
/* ------------------------------------------------------------------ */

enum rpcrdma_dev_flags {
	/* Start an internal thread that drives progress; then completions
	 * and events appear on their own and the CQ / event channel fds are
	 * what the caller waits on. rpcrdma_dev_progress() must not be
	 * called on such a device (-EINVAL). */
	RPCRDMA_DEV_F_PROGRESS_THREAD = 1u << 0,
};

enum rpcrdma_dev_attr_mask {
	RPCRDMA_DEV_ATTR_FLAGS = 1u << 0,
	RPCRDMA_DEV_ATTR_DEVICE = 1u << 1,
};

struct rpcrdma_dev_attr {
	uint32_t comp_mask; /* RPCRDMA_DEV_ATTR_* */
	uint32_t flags;     /* RPCRDMA_DEV_F_* (default 0) */
	/* RPCRDMA_DEV_ATTR_DEVICE: the device to open, by the name
	 * rpcrdma_dev_list() gives ("siw0", "rxe0", "mlx5_0"); default (or
	 * NULL, ""): the provider's first device. softiwarp has one device,
	 * named "softiwarp". Not kept after rpcrdma_dev_open() returns. */
	const char *device;
};

/* One device of a provider (rpcrdma_dev_list()). */
struct rpcrdma_dev_info {
	uint32_t comp_mask; /* reserved, 0 */
	char name[64];      /* what RPCRDMA_DEV_ATTR_DEVICE takes */
	char transport[16]; /* "iWARP", "InfiniBand", "RoCE", "unknown" */
	uint64_t node_guid; /* host order; 0 when the device has none */
	uint32_t ports;     /* physical ports (0 when unknown) */
	bool active;        /* port 1 is ACTIVE (softiwarp: always) */
};

enum rpcrdma_dev_cap_flags {
	/* The peer's Send With Invalidate can invalidate this device's
	 * registrations (softiwarp). Verbs devices invalidate only
	 * fast-registered regions remotely, and the verbs provider registers
	 * with ibv_reg_mr: Linux siw answers such a Send with a Terminate,
	 * rxe fails the receive. The client and server leave the RFC 8797
	 * Remote Invalidation flag clear without it. */
	RPCRDMA_DEV_CAP_REMOTE_INV = 1u << 0,
	/* rpcrdma_ep_stats counts the peer's RDMA Writes and Read Requests
	 * (writes_in, reads_in): softiwarp serves them itself; a verbs
	 * device does so without telling, and they stay 0. */
	RPCRDMA_DEV_CAP_PEER_OPS_COUNTED = 1u << 1,
	/* Registrations pin their pages and the kernel charges them to the
	 * process's RLIMIT_MEMLOCK (verbs: Linux siw charges every process,
	 * root too; other devices those without CAP_IPC_LOCK): beyond it
	 * rpcrdma_mr_reg fails with -ENOMEM. The server sizes its shared
	 * receive pool to half of that limit, so that connections still get
	 * their own buffers registered. softiwarp pins nothing. */
	RPCRDMA_DEV_CAP_PINS_MEMORY = 1u << 2,
};

/* What a device can do; filled by rpcrdma_dev_query(). */
struct rpcrdma_dev_caps {
	uint32_t comp_mask;        /* reserved, 0 */
	char provider[16];         /* "softiwarp", "verbs" */
	uint32_t max_mr;           /* registrations at once */
	uint64_t max_mr_size;      /* bytes in one registration */
	uint32_t max_qp_wr;        /* send or receive queue depth */
	uint32_t max_sge;          /* SGEs in a Send / Write / Receive */
	uint32_t max_sge_rd;       /* SGEs in an RDMA Read's local list (1 on iWARP) */
	uint32_t max_ird;          /* inbound RDMA Reads outstanding */
	uint32_t max_ord;          /* outbound RDMA Reads outstanding */
	uint32_t max_private_data; /* RPCRDMA_MAX_PRIVATE_DATA */
	uint32_t max_msg_size;     /* bytes in one Send / Write / Read */
	uint32_t flags;            /* RPCRDMA_DEV_CAP_* */
	/* receives one shared receive queue holds (rpcrdma_srq_create()
	 * refuses more with -EINVAL); 0: no limit reported (softiwarp) or no
	 * shared receive queue (verbs devices with max_srq 0) */
	uint32_t max_srq_wr;
};

/*
 * Open provider @name: "softiwarp" (also the default when @name is NULL or
 * "", unless the environment variable RPCRDMA_PROVIDER names another) or
 * "verbs". "PROVIDER:DEVICE" (e.g. "verbs:rxe0") also picks the device, as
 * RPCRDMA_DEV_ATTR_DEVICE does (which wins when both are given); so does
 * RPCRDMA_PROVIDER=verbs:rxe0. @attr may be NULL. -ENOENT if no such
 * provider is built in, -ENODEV if it exists but has no usable device (or
 * none of that name). The caller owns *@out and releases it with
 * rpcrdma_dev_close() after every object made from it.
 */
RPCRDMA_API int rpcrdma_dev_open(const char *name, const struct rpcrdma_dev_attr *attr,
				 struct rpcrdma_dev **out);
/*
 * The devices of provider @name (NULL or "": as rpcrdma_dev_open() picks
 * it; a ":DEVICE" suffix is ignored), like ibv_devices: fills the first
 * min(@n, count) entries of @out (@out may be NULL when @n is 0) and
 * returns the count, 0 when the provider has no device (a verbs provider on
 * a host without RDMA hardware or siw/rxe). -ENOENT: no such provider built
 * in; -EINVAL: @n < 0, or @out NULL with @n > 0.
 */
RPCRDMA_API int rpcrdma_dev_list(const char *name, struct rpcrdma_dev_info *out, int n);
/* Close. -EBUSY (and nothing freed) while PDs, CQs, event channels,
 * endpoints or listeners of this device still exist. */
RPCRDMA_API int rpcrdma_dev_close(struct rpcrdma_dev *dev);
RPCRDMA_API int rpcrdma_dev_query(struct rpcrdma_dev *dev, struct rpcrdma_dev_caps *caps);
/* Provider name of an open device; never NULL, owned by the device. */
RPCRDMA_API const char *rpcrdma_dev_provider(const struct rpcrdma_dev *dev);

/*
 * A file descriptor that becomes readable when rpcrdma_dev_progress() has
 * work to do (socket readiness, timers). Owned by the device; do not read
 * from it or close it. For poll()/epoll() only.
 */
RPCRDMA_API int rpcrdma_dev_fd(const struct rpcrdma_dev *dev);

/*
 * Drive every connection, listener and timer of @dev: move bytes between
 * sockets and registered memory, post completions and connection events.
 * Waits up to @timeout_ms for something to happen (0: never waits, i.e.
 * busy-polling; -1: waits until at least one thing happened). Returns the
 * number of completions + events produced (>= 0) or -errno (-EINVAL on a
 * device with a progress thread). Errors of one connection are never
 * returned here: they become events and flush completions of that
 * connection. -EINTR is not an error of the device: just call again.
 * A provider may, within one call, keep receiving a message the peer is
 * in the middle of sending rather than return half way (softiwarp: up to
 * RPCRDMA_SIW_RX_SPIN_US without bytes, README); it never waits for
 * a message that has not started.
 */
RPCRDMA_API int rpcrdma_dev_progress(struct rpcrdma_dev *dev, int timeout_ms);

struct rpcrdma_wc;

/*
 * rpcrdma_dev_progress() followed by rpcrdma_cq_poll(@cq, @wc, @n) when
 * progress produced something (return value > 0), in one step: a provider
 * may reap the completions while it still holds what progress held (one
 * lock round per pass instead of two). Returns what rpcrdma_dev_progress()
 * returns; *@npolled is the number of completions stored in @wc (0 when
 * progress produced nothing or failed). Completions that arrive otherwise
 * (errors of posts) still need rpcrdma_cq_poll() now and then.
 * -EINVAL: @cq not of @dev, @n < 0, a NULL argument.
 */
RPCRDMA_API int rpcrdma_dev_progress_poll(struct rpcrdma_dev *dev, int timeout_ms,
					  struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n,
					  int *npolled);

/* ------------------------------------------------------------------ */
/* Protection domains and memory registration                          */
/* ------------------------------------------------------------------ */

RPCRDMA_API int rpcrdma_pd_alloc(struct rpcrdma_dev *dev, struct rpcrdma_pd **out);
/* -EBUSY while MRs or endpoints still use the PD. */
RPCRDMA_API int rpcrdma_pd_free(struct rpcrdma_pd *pd);

/* Access rights of a registration (RFC 5040 §2.1, RFC 5042 §5). Local read
 * (use as a Send/Write source or the source of a Read Response) is always
 * allowed. Remote write implies the caller trusts the peer with the
 * region's contents; remote read exposes them. */
enum rpcrdma_access {
	RPCRDMA_ACCESS_LOCAL_WRITE = 1u << 0,  /* receive / RDMA Read target */
	RPCRDMA_ACCESS_REMOTE_WRITE = 1u << 1, /* peer may RDMA Write (needs LOCAL_WRITE) */
	RPCRDMA_ACCESS_REMOTE_READ = 1u << 2,  /* peer may RDMA Read */
};

/*
 * Register [addr, addr + length) in @pd with @access (RPCRDMA_ACCESS_*).
 * The memory stays owned by the caller and must stay mapped until the MR
 * is deregistered; the provider neither copies nor pins it. length 0 is
 * allowed (a zero-length region, useful only for zero-length transfers).
 * -EINVAL bad access combination (remote write without local write), or
 * addr + length overflows; -ENOSPC STag table full.
 * The new STag is valid at once: rpcrdma_mr_stag().
 */
RPCRDMA_API int rpcrdma_mr_reg(struct rpcrdma_pd *pd, void *addr, size_t length,
			       unsigned int access, struct rpcrdma_mr **out);
/*
 * Re-register an existing MR over a new range and/or access: the index is
 * kept, the 8-bit key changes (so STags handed out before stop working,
 * RFC 5042 §5.3), and the STag is valid again even if it was invalidated.
 * This is the cheap per-I/O path (no allocation). Must not be called while
 * a posted work request still references the MR.
 */
RPCRDMA_API int rpcrdma_mr_rereg(struct rpcrdma_mr *mr, void *addr, size_t length,
				 unsigned int access);
/*
 * Local invalidate: from now on the STag is refused both for remote access
 * and in local SGEs (RFC 5040 §6.2 "Invalidate STag"), until
 * rpcrdma_mr_rereg(). Takes effect immediately (it is not ordered after
 * earlier posted work; wait for their completions first if that matters).
 * Idempotent.
 */
RPCRDMA_API int rpcrdma_mr_invalidate(struct rpcrdma_mr *mr);
/* Deregister and free. The caller must not have work in flight on it. */
RPCRDMA_API int rpcrdma_mr_dereg(struct rpcrdma_mr *mr);
/*
 * Scope @mr's remote access to endpoint @ep (of the MR's protection
 * domain), as a type-2 memory window bound to a queue pair is in verbs: a
 * tagged access to its STag (RDMA Read Request, RDMA Write) that arrives
 * on any other endpoint is refused as "STag not associated with RDMAP
 * stream" (RFC 5040 §7.4.1): that endpoint's peer gets a Terminate and
 * the endpoint goes to error. Accesses through @ep and local use are as
 * before. @ep NULL lifts the scope. The scope stays across
 * rpcrdma_mr_rereg(); once @ep is destroyed the MR answers no endpoint
 * remotely. -EINVAL: @ep is of another protection domain. -EOPNOTSUPP:
 * the provider cannot scope (verbs on a device without type-2 memory
 * windows, such as Linux siw: an rkey there is valid on every QP of its
 * PD). verbs with type-2 windows (rxe): the STag becomes a window's
 * rkey bound to @ep's QP, whose peer gets a remote access error on any
 * other QP; @ep must be connected (-ENOTCONN), and the scope is re-bound
 * by rpcrdma_mr_rereg() (which then fails once @ep is down).
 */
RPCRDMA_API int rpcrdma_mr_bind_ep(struct rpcrdma_mr *mr, struct rpcrdma_ep *ep);
/* The current STag (both lkey and rkey: iWARP has one). */
RPCRDMA_API uint32_t rpcrdma_mr_stag(const struct rpcrdma_mr *mr);
/* Whether the STag is currently valid (false after a local or remote
 * invalidation). */
RPCRDMA_API bool rpcrdma_mr_valid(const struct rpcrdma_mr *mr);
/* The Tagged Offset of the first byte: the registered virtual address. */
RPCRDMA_API uint64_t rpcrdma_mr_offset(const struct rpcrdma_mr *mr);
RPCRDMA_API size_t rpcrdma_mr_length(const struct rpcrdma_mr *mr);

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */
/* ------------------------------------------------------------------ */

enum rpcrdma_wc_status {
	RPCRDMA_WC_SUCCESS = 0,
	RPCRDMA_WC_LOC_LEN_ERR,     /* incoming Send longer than the posted receive */
	RPCRDMA_WC_LOC_PROT_ERR,    /* a local SGE failed its STag/bounds/access check */
	RPCRDMA_WC_LOC_QP_OP_ERR,   /* local queue error (e.g. IRD/ORD violated) */
	RPCRDMA_WC_WR_FLUSH_ERR,    /* not executed: endpoint in error or disconnected */
	RPCRDMA_WC_REM_ACCESS_ERR,  /* peer refused our STag access (Terminate) */
	RPCRDMA_WC_REM_INV_REQ_ERR, /* peer found our request invalid (Terminate) */
	RPCRDMA_WC_REM_OP_ERR,      /* peer failed to execute it (other Terminate) */
	RPCRDMA_WC_TRANSPORT_ERR,   /* TCP / MPA failure (reset, bad CRC, timeout) */
	RPCRDMA_WC_GENERAL_ERR,
};

enum rpcrdma_wc_opcode {
	RPCRDMA_WC_SEND = 0,
	RPCRDMA_WC_RDMA_WRITE,
	RPCRDMA_WC_RDMA_READ,
	RPCRDMA_WC_RECV, /* an incoming Send placed in a posted receive */
};

enum rpcrdma_wc_flags {
	RPCRDMA_WC_F_WITH_INV = 1u << 0,  /* RECV: the Send carried an Invalidate
					     STag; invalidated_stag names it */
	RPCRDMA_WC_F_SOLICITED = 1u << 1, /* RECV: Send with Solicited Event */
	/* iWARP carries no immediate data; RPCRDMA_WC_F_WITH_IMM is reserved
	 * for providers that do (never set by softiwarp). */
	RPCRDMA_WC_F_WITH_IMM = 1u << 2,
};

/* One work completion. Every field is valid on success; on error wr_id,
 * status, opcode, ep and (for Terminates) vendor_err are. */
struct rpcrdma_wc {
	uint64_t wr_id; /* the caller's cookie from the work request */
	enum rpcrdma_wc_status status;
	enum rpcrdma_wc_opcode opcode;
	uint32_t byte_len;         /* RECV: bytes placed; READ: bytes read; else WR length */
	uint32_t wc_flags;         /* RPCRDMA_WC_F_* */
	uint32_t invalidated_stag; /* with RPCRDMA_WC_F_WITH_INV */
	uint32_t imm_data;         /* with RPCRDMA_WC_F_WITH_IMM (host order) */
	/* For errors caused by a Terminate: (layer << 16) | (etype << 8) | code
	 * of RFC 5040 §7 / RFC 5041 §7, else 0. */
	uint32_t vendor_err;
	struct rpcrdma_ep *ep; /* the endpoint the work belonged to */
};

enum rpcrdma_cq_attr_mask {
	RPCRDMA_CQ_ATTR_CONTEXT = 1u << 0,
};

struct rpcrdma_cq_attr {
	uint32_t comp_mask;
	uint32_t cqe;  /* capacity (required, > 0). Posting more signaled work
			  than fits is the caller's bug: overflowing completions
			  move the endpoint to error. */
	void *context; /* RPCRDMA_CQ_ATTR_CONTEXT */
};

RPCRDMA_API int rpcrdma_cq_create(struct rpcrdma_dev *dev, const struct rpcrdma_cq_attr *attr,
				  struct rpcrdma_cq **out);
/* -EBUSY while endpoints still use the CQ. */
RPCRDMA_API int rpcrdma_cq_destroy(struct rpcrdma_cq *cq);
RPCRDMA_API void *rpcrdma_cq_context(const struct rpcrdma_cq *cq);
/*
 * Reap up to @n completions into @wc (caller's array), oldest first.
 * Returns how many (0 when empty) or -errno. Never blocks and does not
 * drive progress by itself. Completions of one endpoint's send queue appear
 * in posting order, as do those of its receive queue.
 */
RPCRDMA_API int rpcrdma_cq_poll(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n);
/*
 * Arm the CQ: the next completion (with @solicited_only, the next RECV
 * carrying Solicited Event, or any error) makes rpcrdma_cq_fd() readable.
 * Like ibv_req_notify_cq, one-shot: re-arm, then poll again to close the
 * race. Mainly for progress-thread devices; without a progress thread the
 * completions appear during rpcrdma_dev_progress() and the device fd is
 * the thing to wait on.
 */
RPCRDMA_API int rpcrdma_cq_req_notify(struct rpcrdma_cq *cq, bool solicited_only);
/* Readable after an armed completion; owned by the CQ. */
RPCRDMA_API int rpcrdma_cq_fd(const struct rpcrdma_cq *cq);
/* Consume the fd's readiness (call after poll() reported it). */
RPCRDMA_API int rpcrdma_cq_ack_notify(struct rpcrdma_cq *cq);
/*
 * Change @cq's capacity to @cqe (> 0), as ibv_resize_cq: one CQ shared by
 * endpoints that come and go grows with them (a server's). Completions
 * waiting in it stay. -EBUSY when more than @cqe wait (softiwarp: a
 * smaller capacity is taken only while the CQ is empty), -EINVAL @cqe 0
 * or beyond the provider's limit, -EOPNOTSUPP a provider that cannot
 * (then create a CQ per endpoint).
 */
RPCRDMA_API int rpcrdma_cq_resize(struct rpcrdma_cq *cq, uint32_t cqe);

/* ------------------------------------------------------------------ */
/* Connection events                                                   */
/* ------------------------------------------------------------------ */

enum rpcrdma_event_type {
	/* A peer wants to connect to a listener: ev.req must be answered with
	 * rpcrdma_accept() or rpcrdma_reject() (the caller owns it until
	 * then). ev.private_data is the peer's, ev.ird/ev.ord its MPA v2
	 * values (0 for revision 1). */
	RPCRDMA_EV_CONNECT_REQUEST = 0,
	/* The endpoint is connected (both sides) and may transfer data.
	 * Active side: ev.private_data is the peer's reply private data. */
	RPCRDMA_EV_ESTABLISHED,
	/* Active side: the peer rejected; ev.private_data is its reason.
	 * ev.status is -ECONNREFUSED. */
	RPCRDMA_EV_REJECTED,
	/* No connection: active side (TCP refused/unreachable, MPA timeout,
	 * malformed MPA reply, markers demanded), or passive side after
	 * rpcrdma_accept() when the peer's RTR never came. ev.status says why
	 * (-ETIMEDOUT, -ECONNREFUSED, -EPROTO, ...). */
	RPCRDMA_EV_CONNECT_ERROR,
	/* An established connection ended: our disconnect, the peer's, or
	 * a transport error (ev.status 0 for an orderly close, else -errno).
	 * Outstanding work has been flushed to the CQs before this event. */
	RPCRDMA_EV_DISCONNECTED,
	/* A Terminate was sent or received (RFC 5040 §7): ev.term_* say what;
	 * the endpoint is in error, a DISCONNECTED event follows. */
	RPCRDMA_EV_TERMINATE,
};

struct rpcrdma_event {
	enum rpcrdma_event_type type;
	int status;                                /* 0 or -errno, see types */
	struct rpcrdma_ep *ep;                     /* the endpoint (NULL for CONNECT_REQUEST) */
	struct rpcrdma_listener *listener;         /* CONNECT_REQUEST only */
	struct rpcrdma_conn_req *req;              /* CONNECT_REQUEST only */
	void *context;                             /* the ep's or listener's context */
	uint16_t ird, ord;                         /* peer's MPA v2 values */
	uint8_t mpa_rev;                           /* negotiated/requested MPA revision */
	bool crc;                                  /* MPA CRC in use on this connection */
	bool term_local;                           /* TERMINATE: we sent it (else received) */
	uint8_t term_layer, term_etype, term_code; /* TERMINATE: RFC 5040 §4.8 */
	struct sockaddr_storage peer;              /* peer address (CONNECT_REQUEST, ESTABLISHED) */
	uint16_t private_data_len;
	uint8_t private_data[RPCRDMA_MAX_PRIVATE_DATA]; /* a copy: the caller keeps it */
};

enum rpcrdma_evch_attr_mask {
	RPCRDMA_EVCH_ATTR_CONTEXT = 1u << 0,
};

struct rpcrdma_evch_attr {
	uint32_t comp_mask;
	void *context;
};

/* @attr may be NULL. */
RPCRDMA_API int rpcrdma_evch_create(struct rpcrdma_dev *dev, const struct rpcrdma_evch_attr *attr,
				    struct rpcrdma_evch **out);
/* -EBUSY while endpoints or listeners report to it. Undelivered events
 * (and unanswered connection requests: they are rejected) are dropped. */
RPCRDMA_API int rpcrdma_evch_destroy(struct rpcrdma_evch *ch);
/* Take the oldest event: 0 and *ev filled, or -EAGAIN when there is none.
 * Never blocks, does not drive progress. */
RPCRDMA_API int rpcrdma_evch_get(struct rpcrdma_evch *ch, struct rpcrdma_event *ev);
/* Readable while events are queued (level-triggered); owned by the channel. */
RPCRDMA_API int rpcrdma_evch_fd(const struct rpcrdma_evch *ch);

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

enum rpcrdma_ep_attr_mask {
	RPCRDMA_EP_ATTR_CAPS = 1u << 0,      /* max_send_wr .. max_recv_sge */
	RPCRDMA_EP_ATTR_IRD_ORD = 1u << 1,   /* ird, ord */
	RPCRDMA_EP_ATTR_CRC = 1u << 2,       /* mpa_crc */
	RPCRDMA_EP_ATTR_MPA_REV = 1u << 3,   /* mpa_rev */
	RPCRDMA_EP_ATTR_MAX_ULPDU = 1u << 4, /* max_ulpdu */
	RPCRDMA_EP_ATTR_TIMEOUT = 1u << 5,   /* connect_timeout_ms */
	RPCRDMA_EP_ATTR_CONTEXT = 1u << 6,   /* context */
	RPCRDMA_EP_ATTR_RTR = 1u << 7,       /* rtr */
	RPCRDMA_EP_ATTR_SOCKBUF = 1u << 8,   /* sockbuf */
	RPCRDMA_EP_ATTR_SRQ = 1u << 9,       /* srq */
};

/* RFC 6581 §5 peer-to-peer "ready to receive" message the initiator sends
 * after the MPA reply, before the responder may send. */
enum rpcrdma_rtr {
	RPCRDMA_RTR_NONE = 0,  /* no peer-to-peer mode (Linux siw's default) */
	RPCRDMA_RTR_WRITE = 1, /* zero-length RDMA Write (preferred) */
	RPCRDMA_RTR_READ = 2,  /* zero-length RDMA Read */
};

struct rpcrdma_ep_attr {
	uint32_t comp_mask; /* RPCRDMA_EP_ATTR_* */
	/* Required: */
	struct rpcrdma_cq *send_cq; /* completions of post_send */
	struct rpcrdma_cq *recv_cq; /* completions of post_recv (may equal send_cq) */
	struct rpcrdma_evch *evch;  /* where this endpoint's events go */
	/* RPCRDMA_EP_ATTR_CAPS (defaults 128, 128, 4, 4). Work slots are
	 * preallocated to these depths: nothing is allocated per request. */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	/* RPCRDMA_EP_ATTR_IRD_ORD (defaults 16, 16; RFC 6581 §9 caps at
	 * 0x3fff). Both go to the peer in the MPA revision 2 IRD/ORD word.
	 * IRD: inbound Reads we serve at once (a peer exceeding it gets a
	 * Terminate); ORD: Reads we issue at once, bounded by the peer's IRD
	 * once connected (rpcrdma_ep_query_conn()); further Read requests
	 * wait in the send queue. With an effective ORD of 0 (the peer
	 * advertised IRD 0) a Read completes with RPCRDMA_WC_LOC_QP_OP_ERR
	 * and the work behind it goes on. */
	uint32_t ird, ord;
	/* RPCRDMA_EP_ATTR_CRC (default true): ask for MPA CRC32c. CRC is used
	 * when either side asks (RFC 5044 §7.1 "C" bit). */
	bool mpa_crc;
	/* RPCRDMA_EP_ATTR_MPA_REV (default 2): the revision we request when
	 * active. 1 means no IRD/ORD word and no RTR (RFC 5044 §7.1). As
	 * responder we answer revision 1 and 2 requests in kind. */
	uint8_t mpa_rev;
	/* RPCRDMA_EP_ATTR_RTR (default RPCRDMA_RTR_NONE): peer-to-peer mode
	 * when initiating (revision 2 only). As responder we follow the peer. */
	enum rpcrdma_rtr rtr;
	/* RPCRDMA_EP_ATTR_MAX_ULPDU (default 65516, the largest 16-bit
	 * ULPDU_Length whose FPDU stays 4-aligned): largest DDP segment we
	 * send (RFC 5044 §5 MULPDU). Smaller values cost throughput; values
	 * below 64 are raised to 64. */
	uint32_t max_ulpdu;
	/* RPCRDMA_EP_ATTR_TIMEOUT (default 10000): TCP connect + MPA exchange
	 * deadline on either side, in ms. */
	uint32_t connect_timeout_ms;
	/* RPCRDMA_EP_ATTR_SOCKBUF (default 4 MiB): SO_SNDBUF / SO_RCVBUF; 0 leaves
	 * the kernel's autotuning. */
	uint32_t sockbuf;
	void *context; /* RPCRDMA_EP_ATTR_CONTEXT: returned in events */
	/* RPCRDMA_EP_ATTR_SRQ: Sends arriving on this endpoint consume the
	 * receives of @srq (same PD) instead of its own receive queue:
	 * rpcrdma_post_recv() on it says -EINVAL and max_recv_wr is ignored.
	 * Their completions go to recv_cq with wc.ep naming this endpoint. */
	struct rpcrdma_srq *srq;
};

/*
 * Create an unconnected endpoint in @pd. Its queues exist at once: receives
 * may be posted before connecting (and should be: a Send arriving with no
 * posted receive is a fatal DDP error, RFC 5041 §7 "no buffer available").
 * The caller owns *@out; destroy it with rpcrdma_ep_destroy().
 */
RPCRDMA_API int rpcrdma_ep_create(struct rpcrdma_pd *pd, const struct rpcrdma_ep_attr *attr,
				  struct rpcrdma_ep **out);
/* Destroy. A connected endpoint is torn down abortively first (TCP reset,
 * outstanding work flushed into the CQs). Its events not read yet are
 * dropped from the channel (as rdma_destroy_id() does): an event never
 * names an endpoint that no longer exists. */
RPCRDMA_API int rpcrdma_ep_destroy(struct rpcrdma_ep *ep);
RPCRDMA_API void *rpcrdma_ep_context(const struct rpcrdma_ep *ep);

/* Per-connection counters (STYLE habit 10); all monotonic. */
struct rpcrdma_ep_stats {
	uint32_t comp_mask;          /* reserved, 0 */
	uint64_t tx_bytes, rx_bytes; /* TCP payload bytes */
	uint64_t tx_fpdus, rx_fpdus;
	uint64_t sends, recvs;          /* messages */
	uint64_t writes_out, reads_out; /* Writes / Read Requests we issued */
	uint64_t writes_in, reads_in;   /* served for the peer (RPCRDMA_DEV_CAP_PEER_OPS_COUNTED) */
	uint64_t crc_errors, terminates_tx, terminates_rx;
	uint64_t send_eagain; /* times the socket pushed back */
};
RPCRDMA_API int rpcrdma_ep_query_stats(struct rpcrdma_ep *ep, struct rpcrdma_ep_stats *st);

/* Negotiated connection parameters (valid once ESTABLISHED). */
struct rpcrdma_ep_conn_info {
	uint32_t comp_mask; /* reserved, 0 */
	uint8_t mpa_rev;
	bool crc;
	enum rpcrdma_rtr rtr;
	uint32_t ird, ord; /* effective values (ours, bounded by the peer's) */
	uint32_t max_ulpdu;
	struct sockaddr_storage local, peer;
};
RPCRDMA_API int rpcrdma_ep_query_conn(struct rpcrdma_ep *ep, struct rpcrdma_ep_conn_info *ci);

/*
 * Active side: start connecting @ep to @addr (IPv4 or IPv6) and send the
 * MPA request carrying @pdata (@len <= RPCRDMA_MAX_PRIVATE_DATA, copied).
 * Returns at once; the outcome is ESTABLISHED, REJECTED or CONNECT_ERROR
 * on the ep's event channel. -EISCONN if already used.
 */
RPCRDMA_API int rpcrdma_connect(struct rpcrdma_ep *ep, const struct sockaddr *addr,
				socklen_t addrlen, const void *pdata, size_t len);

/*
 * Passive side: listen on @addr (port 0 picks one; read it back with
 * rpcrdma_listener_addr()). Connection requests arrive on @evch as
 * RPCRDMA_EV_CONNECT_REQUEST once the peer's MPA request is complete.
 * @context (may be NULL) comes back in those events.
 */
RPCRDMA_API int rpcrdma_listen(struct rpcrdma_dev *dev, struct rpcrdma_evch *evch,
			       const struct sockaddr *addr, socklen_t addrlen, int backlog,
			       void *context, struct rpcrdma_listener **out);
/* Close the listener; unanswered requests are rejected (their handles die:
 * CONNECT_REQUEST events still queued must not be answered afterwards).
 * Established endpoints are not affected. */
RPCRDMA_API int rpcrdma_listener_destroy(struct rpcrdma_listener *l);
RPCRDMA_API int rpcrdma_listener_addr(const struct rpcrdma_listener *l,
				      struct sockaddr_storage *addr);

/*
 * Accept @req on @ep (a fresh endpoint created by the caller, typically in
 * the same PD as everything it will touch), replying with @pdata. @req is
 * consumed whatever the result. ESTABLISHED follows on ep's event channel
 * (after the peer's RTR when it asked for peer-to-peer mode). Post the
 * receives the peer may need before calling this.
 */
RPCRDMA_API int rpcrdma_accept(struct rpcrdma_conn_req *req, struct rpcrdma_ep *ep,
			       const void *pdata, size_t len);
/* Reject @req with @pdata as the reason (MPA reply with the Reject bit,
 * RFC 5044 §7.1); the connection is closed after the reply is sent. @req is
 * consumed. */
RPCRDMA_API int rpcrdma_reject(struct rpcrdma_conn_req *req, const void *pdata, size_t len);

/*
 * Orderly close: outstanding work is flushed (RPCRDMA_WC_WR_FLUSH_ERR) and
 * RPCRDMA_EV_DISCONNECTED follows. Work already handed to TCP is still
 * delivered to the peer. Idempotent.
 */
RPCRDMA_API int rpcrdma_disconnect(struct rpcrdma_ep *ep);

/* ------------------------------------------------------------------ */
/* Work requests                                                       */
/* ------------------------------------------------------------------ */

/* A scatter/gather element: @length bytes at @addr inside the registered
 * region whose STag is @lkey. Checked when the work executes; a bad one
 * completes the request with RPCRDMA_WC_LOC_PROT_ERR and puts the endpoint
 * in error (as on an RNIC). */
struct rpcrdma_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * Post a receive buffer for one incoming Send (RFC 5040 §5.3: consumed in
 * order). The SGE list is copied; the memory (registered with LOCAL_WRITE)
 * belongs to the provider until the RECV completion. -ENOMEM when the
 * receive queue is full (max_recv_wr), -EINVAL num_sge > max_recv_sge.
 * On an endpoint in error the request is completed with a flush status.
 */
RPCRDMA_API int rpcrdma_post_recv(struct rpcrdma_ep *ep, uint64_t wr_id,
				  const struct rpcrdma_sge *sg, unsigned int num_sge);

enum rpcrdma_send_flags {
	RPCRDMA_SEND_SIGNALED = 1u << 0,   /* produce a completion on success (errors
					     always complete) */
	RPCRDMA_SEND_SOLICITED = 1u << 1,  /* Send with Solicited Event (RFC 5040 §5.3) */
	RPCRDMA_SEND_INVALIDATE = 1u << 2, /* Send with Invalidate: the peer invalidates
					      invalidate_stag on receipt (RFC 5040 §6.2) */
	RPCRDMA_SEND_FENCE = 1u << 3,      /* wait for earlier RDMA Reads to complete */
	/* "More to come" (the doorbell is not rung yet): the provider may hold
	 * the request, so that several posted in a row leave together (one
	 * TCP transmit on softiwarp). Held work starts at the latest with the
	 * next post without this flag on the same endpoint, rpcrdma_ep_flush(),
	 * or the next rpcrdma_dev_progress() of a device without a progress
	 * thread. A provider may also start it at once (verbs: ignored). */
	RPCRDMA_SEND_DEFER = 1u << 4,
};

enum rpcrdma_wr_opcode {
	RPCRDMA_WR_SEND = 0,
	RPCRDMA_WR_RDMA_WRITE,
	RPCRDMA_WR_RDMA_READ,
};

struct rpcrdma_send_wr {
	uint64_t wr_id;
	enum rpcrdma_wr_opcode opcode;
	uint32_t flags;               /* RPCRDMA_SEND_* */
	const struct rpcrdma_sge *sg; /* copied at post time */
	uint32_t num_sge;             /* <= max_send_sge; RDMA Read: exactly 1 (or 0
					   for a zero-length Read) */
	uint32_t invalidate_stag;     /* SEND with RPCRDMA_SEND_INVALIDATE */
	/* RDMA_WRITE: where to write; RDMA_READ: where to read from. */
	uint64_t remote_offset; /* peer's Tagged Offset (its VA) */
	uint32_t remote_stag;
};

/*
 * Post a Send, RDMA Write or RDMA Read (RFC 5040 §5). Executed in posting
 * order; a Write's data is placed at the peer before a later Send completes
 * there (RFC 5040 §5.5). The provider copies @wr; the local memory belongs to
 * the provider until the completion (or, unsignaled, until a later signaled
 * request of the same endpoint completes). Starts transmitting at once
 * when the socket allows (no wait for progress), unless posted with
 * RPCRDMA_SEND_DEFER. Work posted after
 * rpcrdma_connect()/rpcrdma_accept() but before ESTABLISHED is queued and
 * starts once connected. -ENOMEM send queue full (max_send_wr outstanding,
 * counting unsignaled ones not yet retired), -EINVAL malformed request
 * (bad opcode/flags, too many SGEs, Read with more than one SGE, length
 * over max_msg_size), -ENOTCONN neither connect nor accept was called. On
 * an endpoint in error or disconnected the request completes with a flush
 * status (returns 0).
 */
RPCRDMA_API int rpcrdma_post_send(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr);

/* One receive for rpcrdma_post_send_recv(): rpcrdma_post_recv()'s arguments. */
struct rpcrdma_recv_wr {
	uint64_t wr_id;
	const struct rpcrdma_sge *sg;
	unsigned int num_sge;
};

/*
 * rpcrdma_post_recv() of @rwr[0 .. @nrwr) in order, then
 * rpcrdma_post_send(@wr) (nothing is sent when @wr is NULL), in one step: a
 * provider may do all of it in one lock round. The receives are in place
 * before the Send starts, so a requester can give back the receive a reply
 * used together with its next call (RFC 8166 §3.3.1: the receive the call's
 * reply needs is posted before the call leaves). The first receive that
 * fails stops the post: its error is returned and @wr is not posted.
 * *@nposted (may be NULL) is the number of receives posted, so
 * *@nposted < @nrwr tells a failed receive from a failed Send. Otherwise
 * returns what rpcrdma_post_send() returns (0 when @wr is NULL).
 */
RPCRDMA_API int rpcrdma_post_send_recv(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr,
				       const struct rpcrdma_recv_wr *rwr, unsigned int nrwr,
				       unsigned int *nposted);

/*
 * Ring the doorbell: start every request posted on @ep with
 * RPCRDMA_SEND_DEFER that is still held. Cheap when nothing is held. Returns
 * 0 (also on a provider that never holds work) or -errno.
 */
RPCRDMA_API int rpcrdma_ep_flush(struct rpcrdma_ep *ep);

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */
/* ------------------------------------------------------------------ */

enum rpcrdma_srq_attr_mask {
	RPCRDMA_SRQ_ATTR_CONTEXT = 1u << 0,
};

struct rpcrdma_srq_attr {
	uint32_t comp_mask;
	uint32_t max_wr;  /* receives posted at once (required, > 0) */
	uint32_t max_sge; /* SGEs per receive (0: 1) */
	void *context;    /* RPCRDMA_SRQ_ATTR_CONTEXT */
};

/*
 * A shared receive queue, as ibv_create_srq: receives posted to it are
 * taken by whichever endpoint created with it (RPCRDMA_EP_ATTR_SRQ) gets
 * a Send first, so a server's receive buffers need not be posted once per
 * connection. An endpoint takes a receive when a message starts arriving
 * and holds it until the message is complete: a connection that breaks
 * meanwhile flushes that one receive (RPCRDMA_WC_WR_FLUSH_ERR on its
 * recv_cq), the others stay in the queue. Which posted receive a Send
 * takes is the provider's choice (softiwarp: the one posted last, so an
 * idle server keeps touching the same few buffers); wr_id says which.
 * A Send finding the queue empty is the RFC 5041 §7 "no buffer" error of
 * that endpoint's connection, as without one. -EOPNOTSUPP: the provider or
 * device has none (keep receives per endpoint).
 */
RPCRDMA_API int rpcrdma_srq_create(struct rpcrdma_pd *pd, const struct rpcrdma_srq_attr *attr,
				   struct rpcrdma_srq **out);
/* -EBUSY while endpoints use it. Receives still posted are dropped without
 * completions: their memory is the caller's again. */
RPCRDMA_API int rpcrdma_srq_destroy(struct rpcrdma_srq *srq);
RPCRDMA_API void *rpcrdma_srq_context(const struct rpcrdma_srq *srq);
/* rpcrdma_post_recv() for the shared queue: -ENOMEM when max_wr are
 * posted, -EINVAL num_sge > max_sge. */
RPCRDMA_API int rpcrdma_post_srq_recv(struct rpcrdma_srq *srq, uint64_t wr_id,
				      const struct rpcrdma_sge *sg, unsigned int num_sge);
/* Change max_wr (as ibv_modify_srq IBV_SRQ_MAX_WR): -EBUSY when more
 * receives are posted than @max_wr, -EINVAL 0 or beyond the limit. */
RPCRDMA_API int rpcrdma_srq_resize(struct rpcrdma_srq *srq, uint32_t max_wr);
/*
 * Give the memory of idle receives back to the system: the pages wholly
 * inside the buffers of the receives posted to @srq other than the @keep
 * it hands out next are discarded (madvise MADV_DONTNEED): a message that
 * lands in one later finds zeroed pages (a posted receive's content means
 * nothing until it completes). For a server after a burst of connections
 * closed. Receives stay posted. *@bytes (may be NULL): the bytes
 * discarded. -EOPNOTSUPP where a device pins registered memory (verbs):
 * nothing changes. The soft-iWARP provider hands out the receive posted
 * last, so the @keep are those posted last.
 */
RPCRDMA_API int rpcrdma_srq_trim(struct rpcrdma_srq *srq, uint32_t keep, size_t *bytes);

RPCRDMA_EXTERN_C_END

#endif
