/* SPDX-License-Identifier: MIT */
/*
 * Shared code of the interop test programs (ctest label "interop"): they
 * run on the host against the Linux kernel's NFS server (svcrdma over siw)
 * in the QEMU guest of tests/interop/harness, reached through QEMU's port forwards.
 *
 * The transport of the library is not used here on purpose: these
 * programs drive our soft-iWARP provider directly and build every
 * RPC-over-RDMA message by hand with the Version One header codec
 * (src/transport/rpcrdma1_hdr.h), the RPC header codec (rpc.h) and rpcgen
 * routines over our XDR adapter (tirpc.h), so each byte the kernel sees is
 * one the test chose and can name when the kernel disagrees.
 */
#ifndef RPCRDMA_TESTS_INTEROP_UTIL_H
#define RPCRDMA_TESTS_INTEROP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "rpcrdma/provider.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/tirpc.h"
#include "rpcrdma/xdr.h"
#include "transport/connect_private.h"
#include "transport/rpcrdma1_hdr.h"

/* Exit codes (STYLE habit 9). */
#define IOP_PASS 0
#define IOP_FAIL 1
#define IOP_SKIP 77

extern int iop_failures;

/* Record a failed expectation (with location) and go on. */
#define IOP_EXPECT(c)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__,     \
				#c);                                                               \
			iop_failures++;                                                            \
		}                                                                                  \
	} while (0)
/* Record a failed expectation and return -1 from the calling function. */
#define IOP_CHECK(c)                                                                               \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			iop_failures++;                                                            \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/* Where the guest is. */
struct iop_env {
	uint16_t rdma_port;  /* host port forwarded to the guest's 20049 (svcrdma) */
	uint16_t mount_port; /* host port forwarded to the guest's mountd (tcp 20048) */
	char state[512];     /* ctest state dir ("" when run by the host hook) */
	char guest_out[512]; /* host path of the guest's /peer/out */
};

/*
 * Find the guest: RPCRDMA_INTEROP_STATE (set by ctest) names the state dir
 * that guest-start.sh filled; RPCRDMA_INTEROP_RDMA_PORT / _MOUNT_PORT /
 * _GUEST_OUT are used when the host hook runs a program directly. Returns
 * IOP_PASS, or IOP_SKIP after printing why there is no guest.
 */
int iop_env_get(struct iop_env *e);

/* The server's address: $RPCRDMA_INTEROP_ADDR, else 127.0.0.1 (the host's
 * forward to the guest). Inside the guest (verbs-guest-test.sh) it is the
 * guest's own eth0 address, and $RPCRDMA_INTEROP_PROVIDER (default
 * softiwarp) names the provider iop_connect() opens, e.g. "verbs:siw0". */
const char *iop_addr(void);

/* Record that the message with @xid is deliberately not a valid Version
 * One header (STATE/invalid-xids): the capture check lets exactly those
 * Sends go undecoded by Wireshark's rpcordma dissector. */
void iop_note_invalid_xid(const struct iop_env *e, uint32_t xid);

/* Monotonic milliseconds. */
uint64_t iop_now_ms(void);

/* RFC 8797 private data exactly as the Linux client sends it:
 * f6 ab 0e 18 01 01 03 03 (remote invalidation OK, 4 KiB each way). */
extern const uint8_t iop_linux_client_pdata[8];

/* Inline buffer size: the kernel sends at most 4 KiB (its private data). */
#define IOP_INLINE 4096u
#define IOP_NRECV  32u

/* One connection to svcrdma and its receive/send buffers. */
struct iop_conn {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *evch;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *buf_mr;
	uint8_t *buf;                  /* IOP_NRECV receive slots, then one send slot */
	struct rpcrdma_event est;      /* the ESTABLISHED event */
	struct rpcrdma1_cm_private pp; /* the server's private data, decoded */
	uint32_t xid;                  /* next xid */
	uint32_t grant;                /* credits the server granted last */
	unsigned int stalls;           /* first-Send retransmissions (see iop_call) */
	bool inv_offered;              /* our private data offered remote invalidation */
};

/* Whether @c's provider counts the peer's RDMA Writes and Reads in its
 * endpoint stats (RPCRDMA_DEV_CAP_PEER_OPS_COUNTED). */
bool iop_peer_ops_counted(const struct iop_conn *c);

/* Connect to 127.0.0.1:@port with MPA revision @rev (2: with IRD 128 /
 * ORD 0, what the Linux client advertises), CRC as @crc, private data @pd.
 * RFC 8797 private data goes with its Remote Invalidation flag cleared when
 * the device cannot honour it (no RPCRDMA_DEV_CAP_REMOTE_INV: the verbs
 * provider, whose ibv_reg_mr regions Linux siw and rxe refuse to
 * invalidate remotely); c->inv_offered says what was sent.
 * 0 with c->est the ESTABLISHED event; else -errno with c->est the event
 * that came instead (type printed). */
int iop_connect(struct iop_conn *c, uint16_t port, uint8_t rev, bool crc, const void *pd,
		size_t pdlen);
/* RFC 6581 peer-to-peer mode for the next iop_connect() calls (default
 * RPCRDMA_RTR_NONE, what the Linux client uses). */
extern enum rpcrdma_rtr iop_connect_rtr;
/* The IRD the next iop_connect() calls advertise (default 128). */
extern uint32_t iop_connect_ird;
void iop_close(struct iop_conn *c);
/* Wait up to @timeout_ms for the next connection event of @c (0 or
 * -ETIMEDOUT). */
int iop_wait_event(struct iop_conn *c, struct rpcrdma_event *ev, int timeout_ms);
/* Ask the guest for action @what (guest/nfs-server.sh: nfsd-stop,
 * nfsd-start) through the shared folder and wait up to @timeout_ms for its
 * answer; 0 and the answer's first line in @answer, or -1. */
int iop_guest_cmd(const struct iop_env *e, const char *what, int timeout_ms, char *answer,
		  size_t cap);

/* Run one shell line in the guest (guest/nfs-server.sh: /peer/cmd-sh-@tag,
 * answered in /peer/out/sh-@tag.done) and wait up to @timeout_ms. 0 with
 * *@status its exit status and @answer its first output line, or -1 (no
 * answer, or TIMEOUT in the guest). */
int iop_guest_sh(const struct iop_env *e, const char *tag, const char *line, int timeout_ms,
		 int *status, char *answer, size_t cap);
/* The same in two steps, so a test can serve the NFS traffic the command
 * causes (e.g. a delegation recall) while it runs: queue @line under @tag
 * (letters, digits, '-'; a stale answer is removed first), 0 or -1; then
 * wait for the answer as iop_guest_sh() does (on -1 @answer says why). */
int iop_guest_sh_start(const struct iop_env *e, const char *tag, const char *line);
int iop_guest_sh_wait(const struct iop_env *e, const char *tag, int timeout_ms, int *status,
		      char *answer, size_t cap);

/* A received message, copied out of its receive slot (reposted at once). */
struct iop_msg {
	uint32_t len;
	uint32_t wc_flags; /* RPCRDMA_WC_F_* */
	uint32_t inv_stag; /* with RPCRDMA_WC_F_WITH_INV */
	uint8_t data[IOP_INLINE];
};

/* Post @len bytes from the send slot as one Send (signaled) and wait for
 * its completion. */
int iop_send(struct iop_conn *c, const void *msg, uint32_t len);
/* Wait up to @timeout_ms for one incoming Send. -ETIMEDOUT, or -EIO for an
 * error completion (printed). */
int iop_recv(struct iop_conn *c, struct iop_msg *m, int timeout_ms);

/* A decoded reply: transport header, RPC reply header, and a cursor over
 * the results (inline part). */
struct iop_reply {
	struct iop_msg msg;
	struct rpcrdma1_hdr hdr;
	struct rpcrdma_rpc_reply rpc;
	struct rpcrdma_xdr x; /* at the procedure's results */
	XDR xdrs;             /* the same, as a TI-RPC stream */
};

/*
 * Encode an RDMA_MSG call into @buf (@cap bytes): transport header with
 * credit request 128 and chunk lists @ch (NULL: none), then the RPC call
 * header (AUTH_SYS uid 0 gid 0, as root: the export has no_root_squash),
 * then @args via rpcgen routine @xargs (NULL: none) over our XDR adapter.
 * *@rpc_off receives where the RPC message starts. Returns the length or
 * -errno.
 */
int iop_encode_call(struct iop_conn *c, uint8_t *buf, size_t cap, uint32_t xid,
		    const struct rpcrdma1_chunks *ch, uint32_t prog, uint32_t vers, uint32_t proc,
		    xdrproc_t xargs, void *args, size_t *rpc_off);

/*
 * Send @len bytes of @msg and wait for the reply to @xid (messages for
 * other xids are reported and skipped), then decode the transport header
 * and, for RDMA_MSG, the RPC reply header. 0 or -errno.
 *
 * Linux 6.1 siw sends its MPA reply before it reads the socket, so a first
 * Send can sit unread until the next socket event (docs/linux-peer.md).
 * Our provider's first-frame nudge (src/softiwarp/cm.c: one zero-length
 * RDMA Write when nothing came back 20 ms after the first frame) is that
 * event. Only with the nudge off (RPCRDMA_SIW_NUDGE_MS=0, iop_nudge_on()
 * false) does @retry still send a call unanswered after 1 s again (same
 * xid; both copies may be answered, the second reply is skipped by the
 * next call), counted in c->stalls.
 */
bool iop_nudge_on(void);
int iop_call(struct iop_conn *c, const void *msg, uint32_t len, uint32_t xid, bool retry,
	     struct iop_reply *r);

/* NFSv3 NULL over @c (transport RDMA_MSG, no chunks), asserting the reply. */
int iop_nfs_null(struct iop_conn *c, bool retry);

/* Make the client API's calls carry AUTH_SYS root (uid 0, gid 0, no gids,
 * machine "rpcrdma-interop"; RFC 5531 §10.2), as the raw calls above do:
 * the guest exports sec=sys with no_root_squash (guest/nfs-server.sh), so
 * nfsd refuses AUTH_NONE beyond the root's GETATTR/FSINFO. */
struct rpcrdma_clnt_opts;
void iop_clnt_auth_root(struct rpcrdma_clnt_opts *co);

/* MOUNTPROC3_MNT of @path over TCP through libtirpc (clnttcp_create to
 * 127.0.0.1:@port, AUTH_SYS root). 0 and the root handle, or -1. */
int iop_mount(uint16_t port, const char *path, uint8_t *fh, uint32_t *fhlen);

/* POSIX cksum (IEEE 802.3 CRC-32 over the data, then its length in
 * little-endian bytes, complemented), as coreutils' cksum prints it. */
uint32_t iop_cksum(const void *p, size_t n);
/* Look @fname up in a file of `cksum` lines ("CRC SIZE NAME"). 0, or -1 if
 * absent. */
int iop_cksum_lookup(const char *file, const char *fname, uint32_t *crc, uint64_t *size);

/* Deterministic test data (xorshift). */
void iop_fill(uint8_t *p, size_t n, uint64_t seed);

#endif
