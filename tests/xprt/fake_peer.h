/* SPDX-License-Identifier: MIT */
/*
 * A misbehaving RPC-over-RDMA responder for the client's tests: a thread
 * speaking the provider API (include/rpcrdma/provider.h) directly, no
 * rpcrdma server. It listens on a port, accepts one connection at a time
 * (a new one replaces the old) and answers Short calls (RDMA_MSG, empty
 * chunk lists, AUTH_NONE) to any procedure whose argument is one u_int
 * with the result arg + 1 (xdr_u_int both ways), in the way its mode says.
 *
 * And a plain TCP listener that accepts connections and never answers
 * (an MPA request then waits for ever).
 */
#ifndef FAKE_PEER_H
#define FAKE_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma.h"

enum fp_mode {
	FP_OK = 0,       /* every call answered correctly */
	FP_SILENT,       /* nothing answered */
	FP_BAD_RPC_XID,  /* first a reply with the call's rdma_xid and another RPC XID
			    (result 0xbad), then the right reply */
	FP_BAD_RDMA_XID, /* first a reply with another rdma_xid and the call's RPC XID
			    (result 0xbad), then the right reply */
	FP_CALL,         /* first an RPC CALL carrying the call's XID in both headers,
			    then the right reply */
	FP_UNMATCHED,    /* only a reply whose rdma_xid and RPC XID match no call */
	FP_SOME,         /* every other call answered (the 1st, 3rd, ...) */
	FP_HOLD,         /* calls held until `batch` are; then a duplicate of the last
			    reply sent before (if any), a 100 ms pause, and the held
			    replies. In any other mode, replies still held go out
			    first when the next call arrives (late replies). */
	FP_VANISH,       /* at the first call: the connection and the listener close */
	FP_FIT,          /* a strict responder, as Linux's svcrdma (issue 32): the call's
		   u_int argument N is the RPC reply's size in bytes (a multiple
		   of 4, at least 28: header, then opaque<N - 28>, byte i = i &
		   0xff). 28 + N <= 1024: inline; else into the call's Reply
		   chunk (RDMA Write, then RDMA_NOMSG); else ERR_CHUNK.
		   `reply_chunks` counts calls that offered a Reply chunk. */
	/* Version Two (the client must speak it; any other call is answered
	 * ERR_VERS 1..1 in Version One, as a Version One server would): */
	FP_V2_OK,      /* every call answered in Version Two */
	FP_V2_OPT,     /* first an RDMA2_OPTIONAL (unknown opttype, optdir REPLY)
			  with the call's xid, then the right reply */
	FP_V2_ERRX,    /* first an RDMA2_ERROR with errcode 9 and the call's xid,
			  then the right reply */
	FP_V2_DIR,     /* first a reply whose rdma_direction says CALL, then the
			  right reply */
	FP_V2_EARLY,   /* first a Version Two reply to no call (another xid), then
			  the right reply */
	FP_V2_OPTCALL, /* first an RDMA2_OPTIONAL (unknown opttype, optdir CALL,
			  xid opt_xid: the peer's own call), then the right reply */
	FP_V2_TRUNC,   /* first an RDMA2_MSG header cut after its proc word, with
			  the call's xid, then the right reply */
	FP_V2_REFUSE,  /* only an RDMA2_ERROR ERR_BAD_HEADER (2) with the call's
			  xid and rdma_credit bad_credit: the call refused */
	FP_V1_DROP2,   /* a Version One server that drops every Version Two
			  message silently (no ERR_VERS) and answers Version One
			  calls as FP_OK */
	/* Reliable replies (docs/reliable-replies.md), as a responder we did
	 * not write might send them: every reply is RDMA_NOMSG (RDMA2_NOMSG,
	 * direction REPLY) with one Position-Zero Read chunk exposing the
	 * RPC reply; pull-completion notifications are counted (dones). */
	FP_RR,       /* Version One (RFC 5666 §3.8 / 4.3) */
	FP_RR_EXTRA, /* the same, after one to no call (another xid) */
	FP_V2_RR,    /* Version Two (pull completion: our RDMA2_OPTIONAL) */
};

#define FP_MAXHELD 64
#define FP_NRR     64 /* replies exposed at once at most (FP_RR) */

struct fake_peer {
	/* set by the test (any time) */
	_Atomic int mode;
	_Atomic uint32_t credit; /* rdma_credit of every message sent (default 8) */
	_Atomic uint32_t batch;  /* FP_HOLD (default 1) */
	/* rdma_credit of ERR_VERS answers (default UINT32_MAX: `credit`) and
	 * of the bad headers FP_V2_ERRX, _DIR and _TRUNC send first (default 3) */
	_Atomic uint32_t vers_credit;
	_Atomic uint32_t bad_credit;
	_Atomic uint32_t opt_xid;       /* FP_V2_OPTCALL (default 0x0ff10001) */
	_Atomic uint32_t vers_delay_ms; /* pause before each ERR_VERS (default 0) */
	/* the client's transport properties answered with the same list
	 * (optdir REPLY) after this many ms; -1 (default): never, as a
	 * responder silent to them */
	_Atomic int32_t props_delay_ms;
	/* read by the test */
	uint16_t port;
	_Atomic uint32_t calls;        /* calls received */
	_Atomic uint32_t sent;         /* messages sent */
	_Atomic uint32_t conns;        /* connections accepted */
	_Atomic bool gone;             /* FP_VANISH happened */
	_Atomic uint32_t reply_chunks; /* FP_FIT: calls that offered a Reply chunk */
	_Atomic uint32_t err_chunks;   /* FP_FIT: ERR_CHUNK sent */
	/* Version Two messages received that are not calls: RDMA2_ERRORs
	 * (the last one's xid and errcode), and the client's transport
	 * properties (RDMA2_OPTIONAL of opttype 0x52444d01: its optinfo,
	 * words in host order) */
	_Atomic uint32_t errs_rx;
	_Atomic uint32_t err_xid, err_code;
	_Atomic uint32_t props_rx;
	uint32_t props[48];
	_Atomic uint32_t props_words;
	_Atomic uint32_t v2_dropped; /* FP_V1_DROP2: Version Two messages dropped */
	/* reliable replies: notifications received (RDMA_DONE, or the Version
	 * Two pull completion), and those naming an XID exposed and not yet
	 * notified (each counted once) */
	_Atomic uint32_t dones, dones_ok;
	/* set by the test after fp_start, before the client connects: the
	 * receives posted per connection (0: 32); strict: a consumed receive
	 * is re-posted only just before the next reply is sent (the peer
	 * promises receives through its grants only, RFC 8166 §3.3.1), so a
	 * message beyond them (a notification counted nowhere) overruns */
	_Atomic uint32_t recvs;
	_Atomic bool strict;
	/* set by the test before the client connects: a Version One CONF_RDMA
	 * call (program 100417 version 1 procedure 1, RFC 5666 §6) is
	 * answered with ccp_reply (config_rdma_reply, three words) when
	 * ccp_on, its three argument words kept in ccp_args (ccp_calls
	 * counts them); pdata_size not 0: accept with RFC 8797 private data
	 * giving this send and receive size (else with none) */
	_Atomic bool ccp_on;
	_Atomic uint32_t ccp_reply[3];
	_Atomic uint32_t ccp_args[3];
	_Atomic uint32_t ccp_calls;
	_Atomic uint32_t pdata_size;
	/* the thread's own */
	pthread_t thr;
	_Atomic bool stop;
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	struct rpcrdma_cq *cq;
	struct rpcrdma_evch *ch;
	struct rpcrdma_listener *l;
	struct rpcrdma_ep *ep;
	struct rpcrdma_mr *mr;
	uint32_t nsend;
	uint32_t held[FP_MAXHELD][3]; /* rdma_xid, rpc_xid, arg */
	uint32_t nheld;
	uint32_t odd;     /* FP_SOME */
	uint32_t last[3]; /* the last reply sent: rdma_xid, rpc_xid, result */
	bool have_last;
	uint32_t exp_xid[FP_NRR], nexp; /* FP_RR: XIDs exposed (0: none) */
	uint32_t repost[32], nrepost;   /* strict: receives to re-post */
	struct rpcrdma_mr *rrmr;
	uint8_t rrbuf[FP_NRR][32]; /* FP_RR: the exposed replies */
	uint8_t buf[96][1024];     /* 32 receives, 64 sends */
	uint8_t wbuf[8192];        /* FP_FIT: the source of a Reply chunk's Write
				      (registered with buf: right after it) */
};

/* Start on 127.0.0.1 port @port (0: any; p->port says which). 0 or -1. */
int fp_start(struct fake_peer *p, uint16_t port, enum fp_mode mode);
/* Stop the thread, close everything. */
void fp_stop(struct fake_peer *p);

/* A TCP listener thread on @port that accepts and reads, never writes. */
struct tcp_mute {
	pthread_t thr;
	int fd;
	_Atomic bool stop;
	_Atomic uint32_t accepted;
};
int tcp_mute_start(struct tcp_mute *t, uint16_t port);
void tcp_mute_stop(struct tcp_mute *t);

#endif
