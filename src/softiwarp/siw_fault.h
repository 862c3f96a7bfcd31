/* SPDX-License-Identifier: MIT */
/*
 * Fault injection (test builds only, RPCRDMA_TEST_HOOKS): a device opened
 * with RPCRDMA_SIW_FAULT set misbehaves once, at a point the variable
 * names or a seed picks, so tests can show what the layers above do when
 * the wire or the provider fails. The shipped library has none of it:
 * siw_tx_sendmsg() is the raw system call there.
 *
 * RPCRDMA_SIW_FAULT (fault.c parses it; malformed: no fault):
 *   cut:N          the FPDU stream is cut at its byte N: bytes before N are
 *                  sent, then the socket is shut down both ways
 *   corrupt:N      byte N of the FPDU stream goes out with a bit flipped
 *                  (CRC on: the peer must catch it)
 *   delay:N:MS     the send carrying byte N waits MS milliseconds first
 *   drop:K         FPDU K (0 = the first after the MPA exchange) is not
 *                  sent at all (the peer sees the stream without it)
 *   cut-op:K       the K-th work request posted (1 = the first) shuts the
 *                  socket down before it is queued
 *   refuse-reg:K   the K-th memory registration fails with -ENOMEM
 *   cut-setup:N:K  connection setups N..N+K-1 (1 = the first connect of
 *                  the device) are cut in the MPA exchange: the request
 *                  goes out, then the socket is shut down both ways, so
 *                  the connect fails before ESTABLISHED (a reconnect that
 *                  keeps failing, then gets through)
 *   mute-reads:K   from the K-th RDMA Read Request received on (1 = the
 *                  first), Read Requests are taken (their MSN counted) but
 *                  never answered: a peer that keeps the connection up and
 *                  leaves the other side's Reads hanging (a rogue client)
 *   pin:0          not a fault, for as long as the device lives:
 *                  registrations are charged to RLIMIT_MEMLOCK as Linux
 *                  siw charges them (siw_umem_get: the pages each spans,
 *                  per process, root too), beyond it -ENOMEM, and the
 *                  device reports RPCRDMA_DEV_CAP_PINS_MEMORY (the number
 *                  is unused)
 *   seed:S:SPAN    one of the above, picked by seed S: byte positions in
 *                  [0, SPAN), FPDU/op/registration numbers below 16
 * Byte and FPDU positions count what one endpoint sends after its MPA
 * exchange. A fault fires once per device (the first endpoint to get
 * there), so a reconnect over the same device goes through clean;
 * cut-setup fires K times, on consecutive setups; mute-reads on every Read
 * Request from the K-th on. seed: never picks either.
 */
#ifndef RPCRDMA_SIW_FAULT_H
#define RPCRDMA_SIW_FAULT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

enum siw_fault_kind {
	SIW_FAULT_NONE = 0,
	SIW_FAULT_CUT,
	SIW_FAULT_CORRUPT,
	SIW_FAULT_DELAY,
	SIW_FAULT_DROP,
	SIW_FAULT_CUT_OP,
	SIW_FAULT_REFUSE_REG,
	SIW_FAULT_CUT_SETUP,
	SIW_FAULT_MUTE_READ,
	SIW_FAULT_PIN,
};

struct siw_fault_cfg {
	enum siw_fault_kind kind;
	uint64_t at;       /* byte, FPDU, op or registration number */
	uint32_t delay_ms; /* SIW_FAULT_DELAY */
	uint32_t count;    /* SIW_FAULT_CUT_SETUP: setups cut from `at` on */
};

/* Per endpoint: where its FPDU stream is (logical bytes handed to TCP or
 * dropped) and the FPDU being walked. */
struct siw_fault_ep {
	uint64_t pos;      /* stream bytes consumed so far */
	uint64_t hdr_at;   /* stream offset of the FPDU whose header is read next */
	uint64_t drop_end; /* the dropped FPDU ends here (0: not found yet) */
	uint32_t idx;      /* index of the FPDU at hdr_at */
	uint8_t hdr[2];    /* its MPA length field, as far as seen */
	uint8_t hdr_have;
};

struct siw_dev;
struct siw_ep;

/* Parse @s (RPCRDMA_SIW_FAULT) into @f; false (and SIW_FAULT_NONE) when it
 * is malformed. */
bool siw_fault_parse(const char *s, struct siw_fault_cfg *f);

/* A sendmsg() of the endpoint's FPDU stream through the fault (the raw
 * system call's result and errno). */
ssize_t siw_fault_sendmsg(struct siw_ep *ep, struct msghdr *mh);
/* A work request is being posted on @ep: true when the fault cut the
 * connection here (the caller goes on; the socket is dead). */
void siw_fault_post(struct siw_ep *ep);
/* A registration on @dev: -ENOMEM when the fault refuses it, else 0. */
int siw_fault_reg(struct siw_dev *dev);
/* The active side of @ep has just sent its MPA request: the fault may
 * shut the socket down here (the connect then fails). */
void siw_fault_setup(struct siw_ep *ep);
/* @ep received a valid RDMA Read Request: true when the fault leaves it
 * unanswered. */
bool siw_fault_mute_read(struct siw_ep *ep);

struct siw_mr;
#ifdef RPCRDMA_TEST_HOOKS
/* pin:0: @mr's charge becomes the pages [@addr, @addr + @length) spans
 * (NULL, 0: none, at deregistration); -ENOMEM and no change beyond
 * RLIMIT_MEMLOCK. 0 without the fault. */
int siw_fault_pin(const struct siw_dev *dev, struct siw_mr *mr, const void *addr, size_t length);
/* the capability flags the fault adds (RPCRDMA_DEV_CAP_PINS_MEMORY) */
uint32_t siw_fault_caps(const struct siw_dev *dev);
#else
static inline int siw_fault_pin(const struct siw_dev *dev, struct siw_mr *mr, const void *addr,
				size_t length)
{
	(void)dev;
	(void)mr;
	(void)addr;
	(void)length;
	return 0;
}
static inline uint32_t siw_fault_caps(const struct siw_dev *dev)
{
	(void)dev;
	return 0;
}
#endif

#endif
