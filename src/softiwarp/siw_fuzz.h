/* SPDX-License-Identifier: MIT */
/*
 * Test and fuzz hook into the softiwarp receive path (internal, not part of
 * the public API). It builds one endpoint whose "TCP" socket is one end of
 * an AF_UNIX socketpair; siw_fuzz_feed() writes raw bytes into the other
 * end and runs the endpoint's receive state machine (MPA start frame or
 * FPDU/DDP/RDMAP parser, CRC, protection checks, placement) over them until
 * they are consumed or the endpoint has failed. Whatever the endpoint sends
 * back (MPA reply, Read Responses, Terminate) is read and discarded, but
 * counted and kept (the last SIW_FUZZ_TX_KEEP bytes) for assertions.
 *
 * In memory (siw_fuzz_cfg.in_memory) the same endpoint has no socket: its
 * descriptor is a stand-in whose byte stream is memory (the socket wrappers
 * of siw.h), and siw_fuzz_feed() calls the receive and transmit steps
 * itself instead of the progress engine. The device, region, receive
 * buffers, CQ and event channel are made by the first siw_fuzz_create() and
 * kept for the life of the process; siw_fuzz_destroy() removes only the
 * endpoint and undoes what an input did to the region (its bytes, an
 * invalidation), so that every input starts from the same state. Each feed
 * hands its bytes over as one arrival (a receive gets at most what one
 * feed gave). One in-memory harness exists at a time (-EBUSY otherwise).
 * It does not run epoll, timers or real short reads of a kernel socket:
 * the socketpair mode does.
 *
 * The endpoint owns one 64 KiB region registered with local write, remote
 * read and remote write, mapped at a fixed address when possible so seeds
 * can name it: its STag and Tagged Offset are in siw_fuzz_info(). Eight
 * receives of 4 KiB each (in a separate receive area) are kept posted: each
 * completion is reaped and the receive reposted by siw_fuzz_feed().
 *
 * Every call returns 0 or -errno like the rest of the library; a feed that
 * drives the endpoint into error is not a failure of the call: it returns 0
 * and siw_fuzz_info().state says ERROR. Never crashes on any input (that is
 * what the fuzz target checks, with ASan).
 *
 * Test code: declared and built only with RPCRDMA_TEST_HOOKS.
 */
#ifndef RPCRDMA_SIW_FUZZ_H
#define RPCRDMA_SIW_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef RPCRDMA_TEST_HOOKS

#define SIW_FUZZ_TX_KEEP 4096u

enum siw_fuzz_mode {
	/* The connection is up (MPA done): input is a stream of FPDUs. */
	SIW_FUZZ_RTS = 0,
	/* We are the passive side waiting for an "MPA ID Req Frame"; a valid
	 * request is accepted automatically (no private data), then FPDUs. */
	SIW_FUZZ_MPA_RESPONDER,
	/* We sent an MPA request and wait for the "MPA ID Rep Frame". */
	SIW_FUZZ_MPA_INITIATOR,
};

struct siw_fuzz_cfg {
	enum siw_fuzz_mode mode;
	bool crc;           /* SIW_FUZZ_RTS: MPA CRC in use; else what we ask for */
	uint8_t mpa_rev;    /* SIW_FUZZ_RTS / INITIATOR: 1 or 2 (0 = 2) */
	uint32_t ird, ord;  /* 0 = 4 */
	uint32_t max_ulpdu; /* 0 = default */
	/* SIW_FUZZ_MPA_INITIATOR: RFC 6581 RTR offered in our request
	 * (enum rpcrdma_rtr: 0 none, 1 zero-length Write, 2 zero-length Read) */
	uint8_t rtr;
	/* Read Response receive prediction (qp_rx_read.c, otherwise opt-in with
	 * RPCRDMA_SIW_RX_PREDICT=1) */
	bool pred_read;
	/* RDMA Reads posted at creation (at most 3 and ord), so that Read
	 * Responses have a sink: Read i reads 4 KiB << i from remote STag
	 * 0xc0de00 + i, TO i << 16, into the region from offset 32768 on (the
	 * Reads one after the other). Responder mode: none can be posted. */
	uint8_t reads;
	/* no socket: see above */
	bool in_memory;
};

enum siw_fuzz_state {
	SIW_FUZZ_ST_MPA = 0, /* still in MPA negotiation */
	SIW_FUZZ_ST_RTS,     /* established */
	SIW_FUZZ_ST_ERROR,   /* Terminate sent/received, or connection failed */
	SIW_FUZZ_ST_CLOSED,
};

struct siw_fuzz_info {
	enum siw_fuzz_state state;
	uint32_t stag;        /* STag of the 64 KiB region */
	uint64_t to;          /* its Tagged Offset (address of byte 0) */
	uint32_t len;         /* 65536 */
	uint32_t recvs_done;  /* RECV completions reaped (success) */
	uint32_t flushes;     /* completions with an error status */
	uint64_t tx_bytes;    /* bytes the endpoint sent back */
	uint32_t tx_keep_len; /* valid bytes in tx_keep (the last ones sent) */
	uint8_t tx_keep[SIW_FUZZ_TX_KEEP];
	/* the last Terminate we sent (term_sent false if none) */
	bool term_sent;
	uint8_t term_layer, term_etype, term_code;
	/* FPDUs received through prediction, mispredictions (qp_rx_read.c) */
	uint64_t pred_fpdus, pred_miss;
};

struct siw_fuzz;

int siw_fuzz_create(const struct siw_fuzz_cfg *cfg, struct siw_fuzz **out);
/* Feed @len raw bytes (any split across calls is equivalent). */
int siw_fuzz_feed(struct siw_fuzz *f, const uint8_t *data, size_t len);
/* The peer closes its end (orderly, after what was fed). */
int siw_fuzz_close(struct siw_fuzz *f);
/* Where the endpoint is (what siw_fuzz_info() says in .state, cheaper). */
enum siw_fuzz_state siw_fuzz_state(struct siw_fuzz *f);
/* Snapshot of the endpoint; *info is overwritten. */
int siw_fuzz_info(struct siw_fuzz *f, struct siw_fuzz_info *info);
void siw_fuzz_destroy(struct siw_fuzz *f);
/* Free the in-memory harness's resources (none is in use): the next
 * in-memory siw_fuzz_create() makes them again. Until then they hold the
 * region's fixed address, which a socketpair harness then does not get. */
void siw_fuzz_mem_release(void);
/* Base address of the 64 KiB region (to check what was placed). */
uint8_t *siw_fuzz_region(struct siw_fuzz *f);

#endif /* RPCRDMA_TEST_HOOKS */

#endif
