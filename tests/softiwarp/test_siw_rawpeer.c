/* SPDX-License-Identifier: MIT */
/*
 * The provider against a hand-written iWARP peer. The forked child speaks
 * MPA / DDP / RDMAP itself over a plain TCP socket, with every byte built
 * here from RFC 5044, RFC 6581, RFC 5041 and RFC 5040 (siw_test_util.c:
 * start frames, FPDUs with CRC32c, DDP headers) — nothing from
 * src/softiwarp. The parent runs the provider and obeys the child's
 * commands (accept with these attributes, expect this receive, expect this
 * Terminate, connect to me, post these Reads) over the control socket, and
 * asserts the provider's side of each exchange.
 *
 * Asserted on the wire (child):
 *  - MPA reply to a revision 2 request: key, flags exactly C|H|rev 2, the
 *    IRD/ORD word bounded by ours (RFC 6581 §5), the private data;
 *    revision 1 request: revision 1 reply without IRD/ORD word;
 *  - the provider's own MPA request as initiator: flags, IRD/ORD, private
 *    data byte-exact;
 *  - a Send FPDU with CRC, a two-segment tagged Write followed by a Send,
 *    a Read Request answered by Read Responses (tagged to our sink STag and
 *    TO, contiguous, Last flag on the last, CRC valid, bytes checksummed);
 *  - Terminates, byte-exact control fields in RFC 5040 §4.8 order: bad
 *    STag on a Write (DDP tagged "Invalid STag", with the terminated DDP
 *    header when D is set), bad source STag on a Read Request (RDMAP
 *    remote protection "Invalid STag"), a bad CRC (LLP, MPA CRC error),
 *    more Read Requests than the negotiated IRD; each followed by close;
 *  - markers requested: an MPA reply with the Reject bit and no connection;
 *  - reserved flag 0x0800 (as Linux siw sets it): accepted as usual;
 *  - the provider's ORD: with the peer's IRD 2, never more than two Read
 *    Requests outstanding on the wire;
 *  - RFC 6581 RTR towards a responder with IRD 0: never a zero-length Read
 *    Request; the Write RTR when the responder allows it, else an MPA
 *    Terminate "no matching RTR model" and close; as responder with IRD 0
 *    to a Read-only RTR offer: an MPA reply with the Reject bit.
 * Asserted by the provider (parent): the CONNECT_REQUEST fields (revision,
 * IRD/ORD, private data), placed bytes, TERMINATE events (sent and
 * received) with layer/etype/code, incl. a Terminate written in Linux
 * siw's reversed bit order (`21 02 03 00`, docs/linux-peer.md) and the
 * same in RFC order (`12 02 c0 00`), both decoded as DDP / untagged / no
 * buffer available.
 */
#include "siw_test_util.h"
#include "softiwarp/siw.h" /* siw_dev_rx_spin_stats */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
	MSG_PORT = 1,
	CMD_ACCEPT, /* a: bit 0 crc, bit 1 64 KiB socket buffers; u0: ird; u1: want rev; u2: want ird; u3: want ord;
			   u4: pd len (pd in data); u5: 1 = expect no request at all */
	CMD_RECV,          /* u0: len; u1: hash */
	CMD_TERM,          /* a: local; u0..: allowed packed codes, u5: count */
	CMD_QUIET,         /* u0: ms: no events in that time */
	CMD_CONNECT,       /* a: port; u0: ird; u1: ord; pd in data (u4 len) */
	CMD_READS,         /* u0: count; u1: len; u2: remote stag */
	CMD_READS_DONE,    /* u0: count; u1: len */
	CMD_EVENT,         /* u0: event type */
	CMD_CONNECT_RTR,   /* a: port; u0: rtr; u1: 1 = expect ESTABLISHED with a Write RTR,
			    0 = expect CONNECT_ERROR -EPROTO with an MPA Terminate */
	CMD_ACCEPT_REFUSE, /* accept with IRD 0: rpcrdma_accept must fail -EPROTO */
	CMD_CONNECT_NUDGE, /* a: port; u0: RPCRDMA_SIW_NUDGE_MS to set (1000000 = unset);
			      connect (no RTR), post receives, Send 32 bytes u1 ms after
			      ESTABLISHED */
	CMD_WPRED,         /* a: 0 = prediction off (RPCRDMA_SIW_RX_PREDICT=0, as unset),
			      2 = unset, 4 = query spins; set: refill wp, reply its STag/TO,
			      u0: 0 = RPCRDMA_SIW_RX_SPIN_US unset, else set to u0 - 1 (the
			      device reads them again); query spins: the device's receive
			      spins, hits, misses, shared */
	CMD_WPCHK,         /* u0: offset in the wp buffer; u1: len; u2: hash; a: 1 = ro */
	CMD_CLOSE,
	CMD_END,
	MSG_OK,
};

#define RW_LEN  ((size_t)1 << 20)
#define RO_LEN  ((size_t)32 << 20)
#define RO_SEED 0x524f
/* Write cases: a 64 KiB region registered in the middle of a
 * 128 KiB buffer, so the bytes on both sides of it can be checked */
#define WP_BUF  ((size_t)128 << 10)
#define WP_OFF  ((size_t)4096)
#define WP_LEN  ((size_t)64 << 10)
#define WP_SEED 0x5750
#define RD_SEED 0x5000

static uint64_t verified;

/* ------------------------------------------------------------------ */
/* child: the raw peer                                                 */
/* ------------------------------------------------------------------ */

static struct siwt_msg cmd_reply;

/* Sends a command to the parent and waits for its MSG_OK (the parent
 * asserts its side; u[] carries results). */
static int cmd(int ctl, struct siwt_msg *m)
{
	if (siwt_send_msg(ctl, m))
		return -1;
	return siwt_expect(ctl, MSG_OK, &cmd_reply);
}

static int cmd4(int ctl, uint32_t type, uint32_t a, uint64_t u0, uint64_t u1)
{
	struct siwt_msg m = {.type = type, .a = a};

	m.u[0] = u0;
	m.u[1] = u1;
	return cmd(ctl, &m);
}

static int cmd_term(int ctl, bool local, uint32_t t0, uint32_t t1, uint32_t t2)
{
	struct siwt_msg m = {.type = CMD_TERM, .a = local};

	m.u[0] = t0;
	m.u[1] = t1;
	m.u[2] = t2;
	m.u[5] = t2 ? 3 : t1 ? 2 : 1;
	return cmd(ctl, &m);
}

/* Child-side connection state. */
struct raw {
	int fd;
	bool crc;
	uint32_t msn[3]; /* next MSN per queue we send on */
};

static int send_fpdu(struct raw *r, const uint8_t *ulpdu, size_t len)
{
	uint8_t f[70000];

	return siwt_write_all(r->fd, f, siwt_fpdu(f, ulpdu, len, r->crc));
}

static int send_msg_untagged(struct raw *r, unsigned op, unsigned qn, const void *payload,
			     size_t len, uint32_t inv)
{
	uint8_t u[70000];
	size_t h = siwt_ddp_untagged(u, true, op, inv, qn, r->msn[qn]++, 0);

	memcpy(u + h, payload, len);
	return send_fpdu(r, u, h + len);
}

/* The Send FPDU as the RDMAP Send of RFC 5040 §4.3. */
static int raw_send(struct raw *r, const void *p, size_t len)
{
	return send_msg_untagged(r, SIWT_OP_SEND, 0, p, len, 0);
}

/* MPA request, then read the reply: returns the reply's flag word and
 * fills ird/ord words and private data; -errno on failure. */
static int mpa_connect(struct raw *r, uint16_t port, uint16_t bits, uint16_t ird, uint16_t ord,
		       const void *pd, size_t pdlen, uint16_t *rird, uint16_t *rord, uint8_t *rpd,
		       size_t *rpdlen)
{
	uint8_t f[600], h[20];
	size_t got;

	memset(r, 0, sizeof(*r));
	r->msn[0] = r->msn[1] = r->msn[2] = 1;
	r->fd = siwt_tcp_connect(port);
	if (r->fd < 0) {
		SIWT_CHECK(0, "tcp connect: %s", strerror(-r->fd));
		return r->fd;
	}
	size_t n = siwt_mpa_frame(f, true, bits, ird, ord, pd, pdlen);
	if (siwt_write_all(r->fd, f, n))
		return -EIO;
	int rc = siwt_read_exact(r->fd, h, 20, 5000, &got);
	if (rc) {
		SIWT_CHECK(0, "no MPA reply (%zu bytes, %s)", got, strerror(-rc));
		return rc;
	}
	SIWT_CHECK(memcmp(h, "MPA ID Rep Frame", 16) == 0, "reply key is not \"MPA ID Rep Frame\"");
	uint16_t rbits = get_be16(h + 16), plen = get_be16(h + 18);
	uint8_t body[600];
	if (plen > 512 + 4) {
		SIWT_CHECK(0, "reply private data length %u > 516", plen);
		return -EPROTO;
	}
	rc = siwt_read_exact(r->fd, body, plen, 5000, &got);
	if (rc) {
		SIWT_CHECK(0, "short MPA reply private data");
		return rc;
	}
	size_t off = 0;
	if ((rbits & SIWT_MPA_H) && plen >= 4) {
		*rird = get_be16(body);
		*rord = get_be16(body + 2);
		off = 4;
	}
	*rpdlen = plen - off;
	memcpy(rpd, body + off, plen - off);
	r->crc = (rbits & SIWT_MPA_C) != 0;
	return rbits;
}

static uint16_t g_port; /* the provider's listening port (main) */

/* The provider accepts (CMD_ACCEPT in *m: its IRD 4, MPA rev 2, IRD/ORD
 * 4/4 wanted, no private data) and we connect with the MPA flags @bits.
 * Returns the reply's flags, or -1 (a failure is already counted). The
 * reply to the command is in cmd_reply. */
static int raw_connect44(int ctl, struct siwt_msg *m, struct raw *r, uint16_t bits, uint16_t *rird,
			 uint16_t *rord, uint8_t *rpd, size_t *rpdlen)
{
	m->u[0] = 4;
	m->u[1] = 2;
	m->u[2] = 4;
	m->u[3] = 4;
	siwt_send_msg(ctl, m);
	int got = mpa_connect(r, g_port, bits, 4, 4, NULL, 0, rird, rord, rpd, rpdlen);
	if (siwt_expect(ctl, MSG_OK, &cmd_reply) || got < 0)
		return -1;
	return got;
}

/* Reads FPDUs until a Terminate (skipping others, e.g. Read Responses);
 * returns the Terminate ULPDU length or -errno. */
static int read_terminate(struct raw *r, uint8_t *u, size_t cap)
{
	for (int i = 0; i < 100000; i++) {
		bool ok = true;
		int len = siwt_read_fpdu(r->fd, u, cap, r->crc, &ok, 5000);
		if (len < 0)
			return len;
		SIWT_CHECK(ok, "FPDU with a bad CRC from the provider");
		if (len >= 2 && (u[1] & 0x0f) == SIWT_OP_TERMINATE)
			return len;
	}
	return -EPROTO;
}

/* Checks a Terminate ULPDU (RFC 5040 §4.8) against layer/etype/code and,
 * when D is set, the terminated DDP header against the one we sent. */
static void check_terminate(const uint8_t *u, int len, uint8_t layer, uint8_t etype, uint8_t code,
			    const uint8_t *our_hdr, size_t our_hdr_len, uint16_t our_seg_len,
			    const uint8_t *our_rdmap_hdr)
{
	if (len < 22) {
		SIWT_CHECK(0, "Terminate ULPDU too short (%d)", len);
		return;
	}
	siwt_hexdump(stdout, "Terminate ULPDU", u, (size_t)len);
	SIWT_EQ(u[0], 0x41);                     /* untagged, Last, DDP v1 */
	SIWT_EQ(u[1], 0x40 | SIWT_OP_TERMINATE); /* RDMAP v1, Terminate */
	SIWT_EQ(get_be32(u + 6), 2);             /* QN 2 */
	SIWT_EQ(get_be32(u + 10), 1);            /* first message on queue 2 */
	SIWT_EQ(get_be32(u + 14), 0);            /* MO */
	const uint8_t *t = u + 18;
	SIWT_EQ(t[0] >> 4, layer);
	SIWT_EQ(t[0] & 0x0f, etype);
	SIWT_EQ(t[1], code);
	bool m = t[2] & 0x80, d = t[2] & 0x40, rb = t[2] & 0x20;
	SIWT_CHECK((t[2] & 0x1f) == 0 && t[3] == 0, "Terminate reserved bits set: %02x %02x", t[2],
		   t[3]);
	(void)m;
	size_t off = 22;
	if (d && our_hdr) {
		if (off + 2 + our_hdr_len > (size_t)len) {
			SIWT_CHECK(0, "D bit set but no DDP header follows");
			return;
		}
		SIWT_EQ(get_be16(u + off), our_seg_len);
		SIWT_CHECK(memcmp(u + off + 2, our_hdr, our_hdr_len) == 0,
			   "terminated DDP header differs from the one we sent");
		off += 2 + our_hdr_len;
	}
	if (rb && our_rdmap_hdr && d && our_hdr) {
		SIWT_CHECK(off + 28 <= (size_t)len, "R bit set but no RDMAP header follows");
		if (off + 28 <= (size_t)len)
			SIWT_CHECK(memcmp(u + off, our_rdmap_hdr, 28) == 0,
				   "terminated RDMAP header differs from our Read Request");
	}
}

static void expect_close(struct raw *r)
{
	/* we close our half as a peer does after a Terminate; the provider
	 * must close its half too (not keep the stream open) */
	shutdown(r->fd, SHUT_WR);
	SIWT_CHECK(siwt_wait_closed(r->fd, 3000) == 0,
		   "the provider kept the connection open after the Terminate");
	close(r->fd);
	r->fd = -1;
}

/* R1: request/reply fields, Send, Write, Read, bad CRC -> Terminate. */
static void case_basic(int ctl)
{
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 1};
	static const char pd[] = "hello-rawpeer";
	uint8_t rpd[600], u[70000];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;

	m.u[0] = 6;  /* provider IRD */
	m.u[1] = 2;  /* want rev */
	m.u[2] = 8;  /* want ird */
	m.u[3] = 4;  /* want ord */
	m.u[4] = 13; /* pd */
	memcpy(m.data, pd, 13);
	siwt_send_msg(ctl, &m);
	int bits = mpa_connect(&r, g_port, SIWT_MPA_C | SIWT_MPA_H | 2, 8, 4, pd, 13, &rird, &rord,
			       rpd, &rpdlen);
	if (siwt_expect(ctl, MSG_OK, &cmd_reply) || bits < 0)
		return;
	/* RFC 5044 §7.1 + RFC 6581 §5 */
	SIWT_EQ(bits, SIWT_MPA_C | SIWT_MPA_H | 2);
	SIWT_CHECK((rird & 0xc000) == 0 && (rord & 0xc000) == 0,
		   "peer-to-peer bits in the reply without a request: %04x %04x", rird, rord);
	SIWT_CHECK((rord & 0x3fff) <= 8, "responder ORD %u exceeds our IRD 8", rord & 0x3fff);
	SIWT_CHECK((rird & 0x3fff) >= 4 && (rird & 0x3fff) <= 6,
		   "responder IRD %u: want >= our ORD 4 and <= its configured 6", rird & 0x3fff);
	SIWT_EQ(rpdlen, 7);
	SIWT_CHECK(memcmp(rpd, "reply!!", 7) == 0, "reply private data differs");
	uint32_t rw_stag = (uint32_t)cmd_reply.u[0], ro_stag = (uint32_t)cmd_reply.u[2];
	uint64_t rw_to = cmd_reply.u[1], ro_to = cmd_reply.u[3];

	/* Send */
	uint8_t payload[1000];
	siwt_fill(payload, 300, 0x301);
	raw_send(&r, payload, 300);
	cmd4(ctl, CMD_RECV, 0, 300, siwt_hash(payload, 300));

	/* Write in two DDP segments (RFC 5041 §5.2: TO advances), then a
	 * Send: the Write is placed when the Send completes */
	uint8_t w[2000];
	siwt_fill(w, 2000, 0x302);
	size_t h = siwt_ddp_tagged(u, false, SIWT_OP_WRITE, rw_stag, rw_to + 1001);
	memcpy(u + h, w, 1200);
	send_fpdu(&r, u, h + 1200);
	h = siwt_ddp_tagged(u, true, SIWT_OP_WRITE, rw_stag, rw_to + 1001 + 1200);
	memcpy(u + h, w + 1200, 800);
	send_fpdu(&r, u, h + 800);
	struct siwt_msg wm = {.type = CMD_RECV};
	siwt_fill(payload, 5, 0x303);
	raw_send(&r, payload, 5);
	wm.u[0] = 5;
	wm.u[1] = siwt_hash(payload, 5);
	wm.u[2] = 1001; /* and check RW region [1001, 3001) */
	wm.u[3] = 2000;
	wm.u[4] = siwt_hash(w, 2000);
	cmd(ctl, &wm);

	/* Read Request for 70001 bytes at RO offset 99 into our "STag"
	 * 0x00ab1201, TO 0x10 (RFC 5040 §4.4) */
	uint8_t rr[28];
	put_be32(rr, 0x00ab1201u);
	put_be64(rr + 4, 0x10);
	put_be32(rr + 12, 70001);
	put_be32(rr + 16, ro_stag);
	put_be64(rr + 20, ro_to + 99);
	send_msg_untagged(&r, SIWT_OP_READ_REQ, 1, rr, 28, 0);
	uint8_t *got = malloc(70001), *want = malloc(RO_LEN);
	size_t have = 0;
	bool last = false;
	while (!last && have <= 70001) {
		bool ok = true;
		int len = siwt_read_fpdu(r.fd, u, sizeof(u), r.crc, &ok, 5000);
		if (len < 14) {
			SIWT_CHECK(0, "Read Response missing (%d)", len);
			break;
		}
		SIWT_CHECK(ok, "Read Response FPDU with a bad CRC");
		SIWT_CHECK((u[0] & 0x80) && (u[0] & 0x03) == 1,
			   "Read Response not tagged / DDP v1");
		SIWT_EQ(u[1], 0x40 | SIWT_OP_READ_RESP);
		SIWT_EQ(get_be32(u + 2), 0x00ab1201u);
		SIWT_EQ(get_be64(u + 6), 0x10 + have);
		size_t pl = (size_t)len - 14;
		if (have + pl > 70001) {
			SIWT_CHECK(0, "Read Response longer than requested");
			break;
		}
		memcpy(got + have, u + 14, pl);
		have += pl;
		last = u[0] & 0x40;
	}
	SIWT_EQ(have, 70001);
	siwt_fill(want, RO_LEN, RO_SEED);
	SIWT_CHECK(siwt_hash(got, 70001) == siwt_hash(want + 99, 70001),
		   "Read Response bytes differ from the source");
	verified += 70001;
	free(got);
	free(want);

	/* a Send with a corrupted CRC: RFC 5044 §8 / RFC 5040 §7: LLP
	 * layer (2), MPA error (0), MPA CRC error (2) */
	size_t l = siwt_ddp_untagged(u, true, SIWT_OP_SEND, 0, 0, r.msn[0]++, 0);
	memset(u + l, 0x55, 40);
	uint8_t f[200];
	size_t fl = siwt_fpdu(f, u, l + 40, true);
	f[fl - 1] ^= 0x01;
	siwt_write_all(r.fd, f, fl);
	int tl = read_terminate(&r, u, sizeof(u));
	if (tl > 0)
		check_terminate(u, tl, 2, 0, 2, NULL, 0, 0, NULL);
	else
		SIWT_CHECK(0, "no Terminate after a bad CRC (%s)", strerror(-tl));
	expect_close(&r);
	cmd_term(ctl, true, SIWT_TERM(2, 0, 2), 0, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* R2/R3: Write to an unknown STag; Read Request naming an unknown source
 * STag. CRC off on this connection. */
static void case_bad_stag(int ctl, bool read)
{
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 0};
	uint8_t rpd[600], u[300];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;

	int bits = raw_connect44(ctl, &m, &r, SIWT_MPA_H | 2, &rird, &rord, rpd, &rpdlen);
	if (bits < 0)
		return;
	SIWT_EQ(bits, SIWT_MPA_H | 2); /* neither side asked for CRC */
	uint8_t hdr[64];
	size_t h;
	uint16_t seglen;
	if (!read) {
		h = siwt_ddp_tagged(u, true, SIWT_OP_WRITE, 0x00dead01u, 0x1000);
		memset(u + h, 0xee, 50);
		memcpy(hdr, u, h);
		seglen = (uint16_t)(h + 50);
		send_fpdu(&r, u, h + 50);
	} else {
		h = siwt_ddp_untagged(u, true, SIWT_OP_READ_REQ, 0, 1, r.msn[1]++, 0);
		put_be32(u + h, 0x00ab1201u);
		put_be64(u + h + 4, 0x10);
		put_be32(u + h + 12, 100);
		put_be32(u + h + 16, 0x00dead01u);
		put_be64(u + h + 20, 0x1000);
		memcpy(hdr, u, h + 28); /* DDP header, then the RDMAP Read Request header */
		seglen = (uint16_t)(h + 28);
		send_fpdu(&r, u, h + 28);
	}
	int tl = read_terminate(&r, u, sizeof(u));
	if (tl > 0) {
		if (!read) /* RFC 5041 §7.2: DDP, tagged buffer, invalid STag */
			check_terminate(u, tl, 1, 1, 0, hdr, h, seglen, NULL);
		else /* RFC 5040 §7.1: RDMAP, remote protection, invalid STag */
			check_terminate(u, tl, 0, 1, 0, hdr, h, seglen, hdr + h);
	} else {
		SIWT_CHECK(0, "no Terminate for an invalid STag (%s)", strerror(-tl));
	}
	expect_close(&r);
	cmd_term(ctl, true, read ? SIWT_TERM(0, 1, 0) : SIWT_TERM(1, 1, 0), 0, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* R4: markers demanded: RFC 5044 §7.1: we cannot send markers, so the
 * reply carries the Reject bit and the connection never comes up. */
/* A second peer asks for markers: an MPA reply with the Reject bit, then
 * the provider closes. */
static void markers_refused(void)
{
	struct raw r;
	uint8_t rpd[600];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;
	int bits = mpa_connect(&r, g_port, SIWT_MPA_M | SIWT_MPA_H | 2, 4, 4, NULL, 0, &rird, &rord,
			       rpd, &rpdlen);

	if (bits >= 0)
		SIWT_CHECK(bits & SIWT_MPA_R, "markers requested but the reply (%04x) accepts",
			   bits);
	expect_close(&r);
}

static void case_markers(int ctl)
{
	struct siwt_msg m = {.type = CMD_ACCEPT};

	m.u[5] = 1; /* no CONNECT_REQUEST may surface */
	siwt_send_msg(ctl, &m);
	markers_refused();
	siwt_expect(ctl, MSG_OK, &cmd_reply);
}

/* R5 + R6/R7: reserved flag 0x0800 tolerated; then a Terminate from us in
 * Linux siw's or RFC bit order, decoded by the provider. */
static void case_reserved_and_term(int ctl, bool linux_order)
{
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 0};
	uint8_t rpd[600], t[64];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;

	/* the Linux xprtrdma client's request (docs/linux-peer.md): rev 2,
	 * enhanced, CRC off, IRD 128 / ORD 0, RFC 8797 private data; plus the
	 * reserved flag 0x0800 Linux siw may set */
	static const uint8_t rfc8797[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
	m.u[0] = 4;
	m.u[1] = 2;
	m.u[2] = 0x80;
	m.u[3] = 0;
	m.u[4] = sizeof(rfc8797);
	memcpy(m.data, rfc8797, sizeof(rfc8797));
	siwt_send_msg(ctl, &m);
	int bits = mpa_connect(&r, g_port, 0x0800 | SIWT_MPA_H | 2, 0x80, 0, rfc8797,
			       sizeof(rfc8797), &rird, &rord, rpd, &rpdlen);
	if (siwt_expect(ctl, MSG_OK, &cmd_reply) || bits < 0)
		return;
	SIWT_CHECK(!(bits & SIWT_MPA_R), "request with reserved flag 0x0800 rejected");
	uint8_t p[64];
	siwt_fill(p, 64, 0x305);
	raw_send(&r, p, 64);
	cmd4(ctl, CMD_RECV, 0, 64, siwt_hash(p, 64));
	/* "DDP, untagged buffer, no buffer available", M and D set, then
	 * the DDP Segment Length and the terminated untagged DDP header */
	if (linux_order) {
		t[0] = 0x21; /* EType << 4 | Layer */
		t[1] = 0x02;
		t[2] = 0x03; /* M, D in the low bits */
		t[3] = 0x00;
	} else {
		t[0] = 0x12; /* RFC 5040 §4.8: Layer << 4 | EType */
		t[1] = 0x02;
		t[2] = 0xc0; /* M, D */
		t[3] = 0x00;
	}
	put_be16(t + 4, 18 + 10);
	siwt_ddp_untagged(t + 6, true, SIWT_OP_SEND, 0, 0, 7, 0);
	send_msg_untagged(&r, SIWT_OP_TERMINATE, 2, t, 6 + 18, 0);
	expect_close(&r);
	cmd_term(ctl, false, SIWT_TERM(1, 2, 2), 0, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* R11: malformed DDP/RDMAP headers, one per connection, each answered by
 * the Terminate RFC 5041 §7.2 / RFC 5040 §7.1 assign to it. */
struct bad_hdr {
	const char *name;
	uint8_t layer, etype, code;
};

static const struct bad_hdr bad_hdrs[] = {
    {"untagged DDP version 0", 1, 2, 0x06},
    {"tagged DDP version 0", 1, 1, 0x04},
    {"RDMAP version 0", 0, 2, 0x05},
    {"reserved opcode 9", 0, 2, 0x06},
    {"untagged QN 3", 1, 2, 0x01},
    {"MSN 5, 1 expected", 1, 2, 0x03},
    {"unsolicited Read Response", 0, 2, 0x06},
    {"Send in a tagged segment", 0, 2, 0x06},
};

static void case_bad_header(int ctl, unsigned which)
{
	const struct bad_hdr *b = &bad_hdrs[which];
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 0};
	uint8_t rpd[600], u[300];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0, h = 0;

	if (raw_connect44(ctl, &m, &r, SIWT_MPA_H | 2, &rird, &rord, rpd, &rpdlen) < 0)
		return;
	uint32_t rw_stag = (uint32_t)cmd_reply.u[0];
	uint64_t rw_to = cmd_reply.u[1];
	switch (which) {
	case 0:
		h = siwt_ddp_untagged(u, true, SIWT_OP_SEND, 0, 0, 1, 0);
		u[0] &= (uint8_t)~0x03; /* DV 0 */
		break;
	case 1:
		h = siwt_ddp_tagged(u, true, SIWT_OP_WRITE, rw_stag, rw_to);
		u[0] &= (uint8_t)~0x03;
		break;
	case 2:
		h = siwt_ddp_untagged(u, true, SIWT_OP_SEND, 0, 0, 1, 0);
		u[1] &= 0x3f; /* RV 0 */
		break;
	case 3:
		h = siwt_ddp_untagged(u, true, 9, 0, 0, 1, 0);
		break;
	case 4:
		h = siwt_ddp_untagged(u, true, SIWT_OP_SEND, 0, 3, 1, 0);
		break;
	case 5:
		h = siwt_ddp_untagged(u, true, SIWT_OP_SEND, 0, 0, 5, 0);
		break;
	case 6:
		h = siwt_ddp_tagged(u, true, SIWT_OP_READ_RESP, rw_stag, rw_to);
		break;
	default:
		h = siwt_ddp_tagged(u, true, SIWT_OP_SEND, rw_stag, rw_to);
		break;
	}
	memset(u + h, 0x77, 16);
	send_fpdu(&r, u, h + 16);
	int tl = read_terminate(&r, u, sizeof(u));
	if (tl > 0) {
		printf("%s:\n", b->name);
		check_terminate(u, tl, b->layer, b->etype, b->code, NULL, 0, 0, NULL);
	} else {
		SIWT_CHECK(0, "%s: no Terminate (%s)", b->name, strerror(-tl));
	}
	expect_close(&r);
	cmd_term(ctl, true, SIWT_TERM(b->layer, b->etype, b->code), 0, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* Several small Sends in one TCP write (the receive fast path of qp_rx.c
 * takes whole Sends from the stage): all delivered in order with their
 * payloads (MSN order, RFC 5041 §5.3). @bad 1..3: the third Send of the
 * batch has a wrong MSN / QN / MO; the two before complete, it gets the
 * Terminate of RFC 5041 §7.2 with its header. Send with SE completes with
 * the solicited flag, Send without. CRC off (the fast path's case). */
static void case_batch(int ctl, unsigned bad)
{
	static const uint8_t codes[] = {0, 0x03, 0x01, 0x04}; /* MSN range, QN, MO */
	static const size_t lens[] = {10, 0, 100, 77};
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 0};
	uint8_t rpd[600], u[300], batch[600], hdr[64], pl[4][100];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0, bl = 0, hl = 0;
	uint16_t seglen = 0;

	if (raw_connect44(ctl, &m, &r, SIWT_MPA_H | 2, &rird, &rord, rpd, &rpdlen) < 0)
		return;
	/* one Send alone first: the connection is up (RFC 6581 §6) */
	siwt_fill(pl[0], 20, 0x4200);
	raw_send(&r, pl[0], 20);
	struct siwt_msg rm = {.type = CMD_RECV};
	rm.u[0] = 20;
	rm.u[1] = siwt_hash(pl[0], 20);
	rm.u[5] = 1; /* repost: four receives posted again */
	cmd(ctl, &rm);
	for (unsigned i = 0; i < 4; i++) {
		uint32_t qn = 0, msn = r.msn[0]++, mo = 0;

		if (bad && i == 2) {
			if (bad == 1)
				msn += 7;
			else if (bad == 2)
				qn = 3;
			else
				mo = 5;
		}
		size_t h = siwt_ddp_untagged(u, true, i & 1 ? SIWT_OP_SEND_SE : SIWT_OP_SEND, 0, qn,
					     msn, mo);
		siwt_fill(pl[i], lens[i], 0x4210 + i);
		memcpy(u + h, pl[i], lens[i]);
		if (bad && i == 2) {
			memcpy(hdr, u, h);
			hl = h;
			seglen = (uint16_t)(h + lens[i]);
		}
		bl += siwt_fpdu(batch + bl, u, h + lens[i], false);
	}
	SIWT_CHECK(bl <= 512, "batch of %zu bytes does not fit one stage", bl);
	siwt_write_all(r.fd, batch, bl);
	/* no reposts: the batch takes the four posted receives, none is left
	 * to be flushed after this case */
	rm.u[5] = 0;
	for (unsigned i = 0; i < (bad ? 2u : 4u); i++) {
		rm.u[0] = lens[i];
		rm.u[1] = siwt_hash(pl[i], lens[i]);
		rm.a = i & 1 ? 2 : 1; /* solicited flag expected / not */
		cmd(ctl, &rm);
	}
	if (bad) {
		int tl = read_terminate(&r, u, sizeof(u));

		if (tl > 0)
			check_terminate(u, tl, 1, 2, codes[bad], hdr, hl, seglen, NULL);
		else
			SIWT_CHECK(0, "batch %u: no Terminate (%s)", bad, strerror(-tl));
		expect_close(&r);
		cmd_term(ctl, true, SIWT_TERM(1, 2, codes[bad]), 0, 0);
	} else {
		close(r.fd);
	}
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* R8: revision 1 request: revision 1 reply, no IRD/ORD word. */
static void case_rev1(int ctl)
{
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 1};
	uint8_t rpd[600];
	uint16_t rird = 0xffff, rord = 0xffff;
	size_t rpdlen = 0;

	m.u[0] = 4;
	m.u[1] = 1;
	m.u[4] = 5;
	memcpy(m.data, "rev-1", 5);
	siwt_send_msg(ctl, &m);
	int bits =
	    mpa_connect(&r, g_port, SIWT_MPA_C | 1, 0, 0, "rev-1", 5, &rird, &rord, rpd, &rpdlen);
	if (siwt_expect(ctl, MSG_OK, &cmd_reply) || bits < 0)
		return;
	SIWT_EQ(bits, SIWT_MPA_C | 1);
	SIWT_EQ(rpdlen, 7); /* "reply!!", no IRD/ORD word in front */
	SIWT_CHECK(memcmp(rpd, "reply!!", 7) == 0, "rev 1 reply private data differs");
	uint8_t p[10];
	siwt_fill(p, 10, 0x306);
	raw_send(&r, p, 10);
	cmd4(ctl, CMD_RECV, 0, 10, siwt_hash(p, 10));
	close(r.fd);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* Waits until @fd's receive queue stops growing (the sender is blocked on
 * a full socket): at least 64 KiB queued and unchanged over 3 polls 20 ms
 * apart, at most @ms. Returns the queued byte count. */
static int wait_clogged(int fd, int ms)
{
	int last = -1, same = 0;

	for (uint64_t end = siwt_now_ms() + (uint64_t)ms; siwt_now_ms() < end;) {
		int q = 0;

		poll(NULL, 0, 20);
		if (ioctl(fd, FIONREAD, &q) < 0)
			return -errno;
		same = q == last ? same + 1 : 0;
		last = q;
		if (q >= 65536 && same >= 3)
			return q;
	}
	return last;
}

/* R9: more Read Requests than the provider's IRD (2): Terminate. Two
 * 16 MiB Reads are sent and their Read Responses left unread until the
 * provider is blocked on a full socket, in the middle of a batch of Read
 * Response FPDUs (usually in the middle of one FPDU); only then the third
 * Read Request arrives. RFC 5040 §7 / RFC 5041 §7: the provider finishes
 * the FPDU it has started (the stream stays framed), sends the Terminate
 * right after it, drops the Read Response FPDUs not yet started, and
 * closes. Asserted: every FPDU before the Terminate is a well-formed Read
 * Response at the sink STag with contiguous TOs, fewer than the 32 MiB
 * requested arrive, the Terminate follows, then the close; the TERMINATE
 * event is local (parent).
 * The provider's socket buffers are 64 KiB here (SO_SNDBUF 128 KiB in
 * Linux): with the default 4 MiB (8 MiB in Linux) it blocked 8.4 MB into
 * the first 16 MiB Read, and one send after a preemption of the provider
 * between its receive and its send pass (a loaded machine) took the rest
 * of that Read before the third Request was parsed, which freed an IRD
 * slot and let the Request through. Now that takes over a hundred sends
 * in a row without a receive pass, which a blocked socket cuts short. */
static void case_ird(int ctl)
{
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 2};
	uint8_t rpd[600], u[70000];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;
	const uint32_t sink_stag = 0x00ab1201u, rlen = 16u << 20;
	/* the parent's source region, filled the same way here */
	uint8_t *ref = siwt_alloc_buf(RO_LEN);

	if (ref)
		siwt_fill(ref, RO_LEN, RO_SEED);

	m.u[0] = 2;
	m.u[1] = 2;
	m.u[2] = 4;
	m.u[3] = 2;
	siwt_send_msg(ctl, &m);
	int bits =
	    mpa_connect(&r, g_port, SIWT_MPA_H | 2, 4, 2, NULL, 0, &rird, &rord, rpd, &rpdlen);
	if (siwt_expect(ctl, MSG_OK, &cmd_reply) || bits < 0 || !ref) {
		SIWT_CHECK(ref, "out of memory");
		if (ref)
			siwt_free_buf(ref, RO_LEN);
		return;
	}
	SIWT_EQ(rird & 0x3fff, 2);
	for (int i = 0; i < 3; i++) {
		uint8_t rr[28];
		put_be32(rr, sink_stag);
		put_be64(rr + 4, (uint64_t)i << 28);
		put_be32(rr + 12, rlen);
		put_be32(rr + 16, (uint32_t)cmd_reply.u[2]);
		put_be64(rr + 20, cmd_reply.u[3] + ((uint64_t)i << 20));
		if (i == 2) {
			int q = wait_clogged(r.fd, 5000);
			SIWT_CHECK(q >= 65536, "the provider did not fill the socket (%d bytes)",
				   q);
			printf("child: third Read Request sent with %d bytes of Read Responses "
			       "queued\n",
			       q);
		}
		send_msg_untagged(&r, SIWT_OP_READ_REQ, 1, rr, 28, 0);
	}
	/* RFC 5040 §5.2 / RFC 6581: the third exceeds the IRD the provider
	 * announced. DDP untagged "no buffer available" / "MSN range not
	 * valid" on queue 1, or RDMAP "catastrophic, localized". */
	struct siwt_msg tm = {.type = CMD_TERM, .a = 1};
	tm.u[0] = SIWT_TERM(1, 2, 2);
	tm.u[1] = SIWT_TERM(1, 2, 3);
	tm.u[2] = SIWT_TERM(0, 2, 7);
	tm.u[5] = 3;
	/* the provider can only send its Terminate once we drain the Read
	 * Responses in front of it: read while the parent waits */
	siwt_send_msg(ctl, &tm);
	unsigned rd = 0, nfpdu = 0;
	uint64_t to = 0, got = 0;
	int tl = -EPROTO;
	while (!siwt_failures) {
		bool ok = true;
		int len = siwt_read_fpdu(r.fd, u, sizeof(u), r.crc, &ok, 5000);
		if (len < 0) {
			SIWT_CHECK(0,
				   "stream ended after %u Read Response FPDUs (%llu bytes) "
				   "without a Terminate: %s",
				   nfpdu, (unsigned long long)got, strerror(-len));
			break;
		}
		if (len >= 2 && (u[1] & 0x0f) == SIWT_OP_TERMINATE) {
			tl = len;
			break;
		}
		/* RFC 5041 §4: tagged, RDMAP Read Response, our sink STag,
		 * TO continuing where the previous FPDU ended */
		if (len < 14 || (u[0] & 0x80) == 0 || (u[1] & 0x0f) != SIWT_OP_READ_RESP ||
		    rd >= 2) {
			SIWT_CHECK(0, "FPDU %u is no Read Response (len %d, %02x %02x)", nfpdu, len,
				   len > 1 ? u[0] : 0, len > 1 ? u[1] : 0);
			break;
		}
		SIWT_EQ(get_be32(u + 2), sink_stag);
		SIWT_EQ(get_be64(u + 6), ((uint64_t)rd << 28) + to);
		if (ref && rd * (1ull << 20) + to + (uint64_t)len - 14u <= RO_LEN) {
			SIWT_CHECK(
			    memcmp(u + 14, ref + rd * (1ull << 20) + to, (size_t)len - 14u) == 0,
			    "Read Response %u at offset %llu carries wrong bytes", rd,
			    (unsigned long long)to);
			verified += (uint64_t)len - 14u;
		}
		to += (uint64_t)len - 14u;
		got += (uint64_t)len - 14u;
		nfpdu++;
		if (u[0] & 0x40) { /* Last: this Read's response is complete */
			SIWT_EQ(to, rlen);
			rd++;
			to = 0;
		}
	}
	SIWT_CHECK(tl > 0, "no Terminate on the wire for IRD overflow (%d)", tl);
	SIWT_CHECK(got < 2ull * rlen,
		   "all %llu Read Response bytes were sent before the Terminate: the overflow was "
		   "detected too late to test the partly written batch",
		   (unsigned long long)got);
	printf("child: %u Read Response FPDUs (%llu bytes) before the Terminate\n", nfpdu,
	       (unsigned long long)got);
	if (tl > 0) {
		bool ok = true;
		SIWT_EQ(u[0], 0x41);
		SIWT_EQ(get_be32(u + 6), 2); /* QN 2 */
		SIWT_CHECK(siwt_read_fpdu(r.fd, u, sizeof(u), r.crc, &ok, 300) < 0,
			   "an FPDU followed the Terminate");
	}
	expect_close(&r);
	siwt_expect(ctl, MSG_OK, &cmd_reply);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
	if (ref)
		siwt_free_buf(ref, RO_LEN);
}

/* The provider's first-frame nudge: a zero-length RDMA Write in the RFC
 * 6581 RTR form (tagged, Last, STag 0, TO 0, no payload). */
static bool is_nudge(const uint8_t *u, int len)
{
	return len == 14 && u[0] == 0xc1 && u[1] == (0x40 | SIWT_OP_WRITE) &&
	       get_be32(u + 2) == 0 && get_be64(u + 6) == 0;
}

/* R10: the provider initiates to our raw listener. Checks its MPA request
 * and that it keeps at most IRD=2 (our value) Read Requests outstanding. */
static void case_initiator(int ctl)
{
	uint16_t port = 0;
	int lfd = siwt_tcp_listen(&port);
	uint8_t h[600], u[70000], f[70100];
	size_t got;
	struct raw r;
	static const char pd[] = "initiator-pd";
	const unsigned nreads = 6, rlen = 1000;

	if (lfd < 0) {
		SIWT_CHECK(0, "listen: %s", strerror(-lfd));
		return;
	}
	struct siwt_msg m = {.type = CMD_CONNECT, .a = port};
	m.u[0] = 5;
	m.u[1] = 9;
	m.u[4] = 12;
	memcpy(m.data, pd, 12);
	siwt_send_msg(ctl, &m); /* answered once ESTABLISHED, below */
	memset(&r, 0, sizeof(r));
	r.msn[0] = r.msn[1] = r.msn[2] = 1;
	struct pollfd pfd = {.fd = lfd, .events = POLLIN};
	if (poll(&pfd, 1, 5000) != 1) {
		SIWT_CHECK(0, "the provider never connected");
		close(lfd);
		return;
	}
	r.fd = accept(lfd, NULL, NULL);
	close(lfd);
	/* RFC 5044 §7.1 / RFC 6581 §5: exactly what we configured */
	if (siwt_read_exact(r.fd, h, 20 + 4 + 12, 5000, &got)) {
		SIWT_CHECK(0, "short MPA request (%zu bytes)", got);
		return;
	}
	SIWT_CHECK(memcmp(h, "MPA ID Req Frame", 16) == 0, "request key wrong");
	SIWT_EQ(get_be16(h + 16), SIWT_MPA_C | SIWT_MPA_H | 2);
	SIWT_EQ(get_be16(h + 18), 4 + 12);
	SIWT_EQ(get_be16(h + 20), 5); /* IRD, no peer-to-peer bits */
	SIWT_EQ(get_be16(h + 22), 9); /* ORD */
	SIWT_CHECK(memcmp(h + 24, pd, 12) == 0, "request private data differs");
	/* our reply: CRC on (it asked), IRD 2, ORD 0 */
	size_t n = siwt_mpa_frame(f, false, SIWT_MPA_C | SIWT_MPA_H | 2, 2, 0, "ok", 2);
	siwt_write_all(r.fd, f, n);
	r.crc = true;
	if (siwt_expect(ctl, MSG_OK, &cmd_reply))
		return;
	/* the provider posts 6 Reads of 1000 bytes at TO 0x1000 * i of our
	 * fake STag 0x7701 */
	cmd4(ctl, CMD_READS, 0, nreads, rlen);
	unsigned seen = 0, answered = 0, nudges = 0;
	uint32_t sink[8];
	uint64_t sto[8];
	while (answered < nreads) {
		/* collect Read Requests until the line is quiet (and at least
		 * one is outstanding: a loaded machine may be slow to send) */
		uint64_t give_up = siwt_now_ms() + 10000;
		for (;;) {
			bool ok = true;
			int len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 300);
			if (len == -ETIMEDOUT && (seen > answered || siwt_now_ms() > give_up))
				break;
			if (len == -ETIMEDOUT)
				continue;
			if (is_nudge(u, len)) {
				/* we stay silent for 300 ms: the provider's
				 * first-frame nudge, repeated while we stay
				 * silent, at most 6 times (cm.c) */
				nudges++;
				SIWT_CHECK(nudges <= 6, "%u zero-length Writes", nudges);
				continue;
			}
			if (len < 18 + 28) {
				SIWT_CHECK(0, "expected a Read Request, got %d", len);
				return;
			}
			SIWT_CHECK(ok, "Read Request with a bad CRC");
			SIWT_EQ(u[1], 0x40 | SIWT_OP_READ_REQ);
			SIWT_EQ(get_be32(u + 6), 1);         /* QN 1 */
			SIWT_EQ(get_be32(u + 10), seen + 1); /* MSN */
			sink[seen] = get_be32(u + 18);
			sto[seen] = get_be64(u + 22);
			SIWT_EQ(get_be32(u + 30), rlen);
			SIWT_EQ(get_be32(u + 34), 0x7701);
			SIWT_EQ(get_be64(u + 38), 0x1000ull * seen);
			seen++;
			SIWT_CHECK(seen - answered <= 2,
				   "%u Read Requests outstanding, our IRD is 2 (RFC 6581 §5)",
				   seen - answered);
			if (seen > nreads || siwt_failures)
				return;
		}
		if (seen == answered) {
			SIWT_CHECK(0, "no Read Request outstanding (%u answered)", answered);
			return;
		}
		/* answer the oldest with one Read Response */
		size_t hl =
		    siwt_ddp_tagged(u, true, SIWT_OP_READ_RESP, sink[answered], sto[answered]);
		siwt_fill(u + hl, rlen, RD_SEED + answered);
		send_fpdu(&r, u, hl + rlen);
		answered++;
	}
	cmd4(ctl, CMD_READS_DONE, 0, nreads, rlen);
	close(r.fd);
	cmd4(ctl, CMD_EVENT, 0, RPCRDMA_EV_DISCONNECTED, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* Listens, lets the provider connect with RTR type @rtr, checks its MPA
 * request's RTR bits and answers with IRD @ird_w / ORD @ord_w (RTR bits
 * included). Returns the accepted socket (CRC on: the provider asks for
 * it) or -1. */
static int rtr_listen_reply(int ctl, struct raw *r, unsigned rtr, uint16_t ird_w, uint16_t ord_w,
			    unsigned expect_established)
{
	uint16_t port = 0;
	int lfd = siwt_tcp_listen(&port);
	uint8_t h[64], f[64];
	size_t got;

	if (lfd < 0) {
		SIWT_CHECK(0, "listen: %s", strerror(-lfd));
		return -1;
	}
	struct siwt_msg m = {.type = CMD_CONNECT_RTR, .a = port};
	m.u[0] = rtr;
	m.u[1] = expect_established;
	siwt_send_msg(ctl, &m); /* answered once the provider reported */
	memset(r, 0, sizeof(*r));
	r->msn[0] = r->msn[1] = r->msn[2] = 1;
	struct pollfd pfd = {.fd = lfd, .events = POLLIN};
	if (poll(&pfd, 1, 5000) != 1) {
		SIWT_CHECK(0, "the provider never connected");
		close(lfd);
		return -1;
	}
	r->fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (siwt_read_exact(r->fd, h, 20 + 4, 5000, &got)) {
		SIWT_CHECK(0, "short MPA request (%zu bytes)", got);
		return -1;
	}
	/* RFC 6581 §9: P2P in the IRD word, the one RTR type offered in ORD */
	SIWT_EQ(get_be16(h + 16), SIWT_MPA_C | SIWT_MPA_H | 2);
	SIWT_EQ(get_be16(h + 20) & 0x8000, 0x8000);
	SIWT_EQ(get_be16(h + 22) & 0xc000, rtr == RPCRDMA_RTR_READ ? 0x4000 : 0x8000);
	size_t n = siwt_mpa_frame(f, false, SIWT_MPA_C | SIWT_MPA_H | 2, ird_w, ord_w, NULL, 0);
	siwt_write_all(r->fd, f, n);
	r->crc = true;
	return r->fd;
}

/* R11: RFC 6581 RTR towards a responder with IRD 0. (a) It picked the
 * Read RTR only: the provider must not send the zero-length Read Request
 * (it would exceed IRD 0; Linux 6.1 BUG()s on it) but an MPA Terminate
 * "no matching RTR model" (RFC 6581 §10: layer LLP, type MPA, code 7),
 * then close; the application gets CONNECT_ERROR -EPROTO. (b) It allows
 * both Write and Read RTR: the provider sends the zero-length Write
 * (tagged, Last, TO 0, no payload) and is ESTABLISHED; never a Read
 * Request (zero-length Writes may follow: the first-frame nudge). */
static void case_rtr_ird0(int ctl)
{
	struct raw r;
	uint8_t u[70000];
	bool ok = true;

	/* (a) */
	if (rtr_listen_reply(ctl, &r, RPCRDMA_RTR_READ, 0x8000 | 0, 0x4000 | 4, 0) < 0)
		return;
	int len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 5000);
	SIWT_CHECK(len >= 2, "no FPDU after the MPA reply (%d)", len);
	if (len >= 2) {
		SIWT_CHECK(ok, "FPDU with a bad CRC");
		SIWT_CHECK((u[1] & 0x0f) != SIWT_OP_READ_REQ,
			   "Read Request sent as RTR to a responder with IRD 0");
		SIWT_EQ(u[1] & 0x0f, SIWT_OP_TERMINATE);
	}
	if (len >= 22 && (u[1] & 0x0f) == SIWT_OP_TERMINATE) {
		SIWT_EQ(u[0], 0x41);         /* untagged, Last, DDP v1 */
		SIWT_EQ(get_be32(u + 6), 2); /* QN 2 */
		SIWT_EQ(u[18], 0x20);        /* layer LLP, type MPA */
		SIWT_EQ(u[19], 0x07);        /* no matching RTR model */
	}
	expect_close(&r);
	siwt_expect(ctl, MSG_OK, &cmd_reply);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
	if (siwt_failures)
		return;

	/* (b) */
	if (rtr_listen_reply(ctl, &r, RPCRDMA_RTR_READ, 0x8000 | 0, 0xc000 | 4, 1) < 0)
		return;
	len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 5000);
	SIWT_EQ(len, 14);
	if (len == 14) {
		SIWT_CHECK(ok, "RTR with a bad CRC");
		SIWT_EQ(u[0], 0xc1);                 /* tagged, Last, DDP v1 */
		SIWT_EQ(u[1], 0x40 | SIWT_OP_WRITE); /* RDMAP v1, Write */
		SIWT_EQ(get_be64(u + 6), 0);         /* TO 0 */
	}
	siwt_expect(ctl, MSG_OK, &cmd_reply);
	/* nothing but zero-length Writes afterwards: never a Read Request */
	for (;;) {
		len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 300);
		if (len < 0)
			break;
		SIWT_CHECK(len == 14 && (u[1] & 0x0f) == SIWT_OP_WRITE,
			   "unexpected FPDU after the Write RTR (len %d, op %u)", len,
			   len > 1 ? u[1] & 0x0fu : 0u);
		if (siwt_failures)
			break;
	}
	close(r.fd);
	cmd4(ctl, CMD_EVENT, 0, RPCRDMA_EV_DISCONNECTED, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* R12: we initiate towards the provider offering only the Read RTR; the
 * provider accepts with IRD 0: it must refuse (MPA reply with the Reject
 * bit, RFC 5044 §7.1; rpcrdma_accept -EPROTO) instead of establishing a
 * connection whose RTR it would have to answer with a Terminate. */
static void case_rtr_passive_ird0(int ctl)
{
	uint8_t f[64], h[64];
	size_t got;
	struct raw r;

	siwt_send4(ctl, CMD_ACCEPT_REFUSE, 0, 0, 0);
	memset(&r, 0, sizeof(r));
	r.fd = siwt_tcp_connect(g_port);
	if (r.fd < 0) {
		SIWT_CHECK(0, "tcp connect: %s", strerror(-r.fd));
		return;
	}
	size_t n = siwt_mpa_frame(f, true, SIWT_MPA_H | 2, 0x8000 | 4, 0x4000 | 4, NULL, 0);
	siwt_write_all(r.fd, f, n);
	int rc = siwt_read_exact(r.fd, h, 20, 5000, &got);
	SIWT_CHECK(rc == 0, "no MPA reply (%zu bytes)", got);
	if (rc == 0) {
		SIWT_CHECK(memcmp(h, "MPA ID Rep Frame", 16) == 0, "reply key wrong");
		SIWT_CHECK(get_be16(h + 16) & SIWT_MPA_R, "reply without the Reject bit: %04x",
			   get_be16(h + 16));
	}
	siwt_expect(ctl, MSG_OK, &cmd_reply);
	SIWT_CHECK(siwt_wait_closed(r.fd, 3000) == 0, "the provider kept the rejected stream open");
	close(r.fd);
}

/* R13: the first-frame nudge of the active provider (cm.c): it sends a
 * Send right after the MPA reply; mode 0: we stay silent: a zero-length
 * Write in the RTR form, at least 20 ms (the default delay) after our MPA
 * reply, then while we stay silent
 * five more with the delay doubled each time (40, 80, 160, 320, 640 ms:
 * nudge k no sooner than 20 * (2^k - 1) ms after our reply), then nothing;
 * mode 3: the same with the Send posted 15 ms after ESTABLISHED: the
 * delay counts from that first frame, not from RTS (>= 35 ms after our
 * reply; a check at RTS + 20 ms would have nudged 5 ms after the Send);
 * mode 1: RPCRDMA_SIW_NUDGE_MS=0: no nudge; mode 2 (period 100 ms): we
 * answer the Send at once: no nudge in the 400 ms after. */
static void case_nudge(int ctl, unsigned mode)
{
	uint16_t port = 0;
	int lfd = siwt_tcp_listen(&port);
	uint8_t h[64], f[64], u[70000];
	size_t got;
	struct raw r;

	if (lfd < 0) {
		SIWT_CHECK(0, "listen: %s", strerror(-lfd));
		return;
	}
	struct siwt_msg m = {.type = CMD_CONNECT_NUDGE, .a = port};
	/* mode 2: a 100 ms period, so that our answer (sent at once) surely
	 * comes first even on a loaded machine; 1000000: leave it unset */
	m.u[0] = mode == 1 ? 0 : mode == 2 ? 100 : 1000000;
	m.u[1] = mode == 3 ? 15 : 0;
	siwt_send_msg(ctl, &m);
	memset(&r, 0, sizeof(r));
	r.msn[0] = r.msn[1] = r.msn[2] = 1;
	struct pollfd pfd = {.fd = lfd, .events = POLLIN};
	if (poll(&pfd, 1, 5000) != 1) {
		SIWT_CHECK(0, "the provider never connected");
		close(lfd);
		return;
	}
	r.fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (siwt_read_exact(r.fd, h, 20 + 4, 5000, &got)) {
		SIWT_CHECK(0, "short MPA request (%zu bytes)", got);
		return;
	}
	size_t n = siwt_mpa_frame(f, false, SIWT_MPA_C | SIWT_MPA_H | 2, 4, 4, NULL, 0);
	uint64_t t_reply = siwt_now_ms();
	siwt_write_all(r.fd, f, n);
	r.crc = true;
	bool ok = true;
	int len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 5000);
	uint64_t t_send = siwt_now_ms();
	SIWT_EQ(len, 18 + 32);
	SIWT_EQ(len > 1 ? u[1] & 0x0f : 0, SIWT_OP_SEND);
	if (siwt_expect(ctl, MSG_OK, &cmd_reply) || siwt_failures)
		return;
	uint8_t p[10];
	siwt_fill(p, sizeof(p), 0x7a);
	if (mode == 2)
		raw_send(&r, p, sizeof(p));
	if (mode == 0 || mode == 3) {
		len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 3000);
		uint64_t t_nudge = siwt_now_ms();
		SIWT_CHECK(len > 0 && is_nudge(u, len),
			   "no zero-length Write while we stay silent (%d)", len);
		SIWT_CHECK(ok, "nudge with a bad CRC");
		printf("child: nudge %llu ms after the MPA reply, %llu ms after the Send\n",
		       (unsigned long long)(t_nudge - t_reply),
		       (unsigned long long)(t_nudge - t_send));
		uint64_t min_ms = mode == 3 ? 34 : 19; /* ms clock: 1 ms slack */
		SIWT_CHECK(t_nudge - t_reply >= min_ms,
			   "nudge %llu ms after the MPA reply, want >= %llu",
			   (unsigned long long)(t_nudge - t_reply), (unsigned long long)min_ms + 1);
		/* An upper bound in time is not safe under load (CI read it
		 * 1107 ms after the Send on a busy CPU): that the first nudge
		 * left on time is proven by the count instead: exactly six
		 * while we stay silent, so none of the schedule was skipped. */
		SIWT_CHECK(t_nudge - t_send <= 3000, "nudge %llu ms after the Send",
			   (unsigned long long)(t_nudge - t_send));
		/* the repeats, the delay doubled each time. Only lower bounds
		 * are safe under load (we may read a nudge late, never early):
		 * nudge k leaves at least 20 * (2^k - 1) ms after the first
		 * frame, which left after our MPA reply (1 ms clock slack). */
		uint64_t prev = t_nudge, due = 20;
		for (unsigned i = 2; i <= 6 && !siwt_failures; i++) {
			due += 20ull << (i - 1);
			len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 3000);
			uint64_t t = siwt_now_ms();
			SIWT_CHECK(len > 0 && is_nudge(u, len), "no nudge %u while silent (%d)", i,
				   len);
			SIWT_CHECK(t - t_reply + 1 >= due,
				   "nudge %u %llu ms after the MPA reply, want >= %llu", i,
				   (unsigned long long)(t - t_reply), (unsigned long long)due);
			prev = t;
		}
		printf("child: 6 nudges while silent, the last %llu ms after the MPA reply\n",
		       (unsigned long long)(prev - t_reply));
	}
	/* nothing (more) while we stay silent */
	len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, mode == 1 ? 300 : 400);
	SIWT_CHECK(len == -ETIMEDOUT, "%s FPDU (len %d, %02x %02x) from the provider",
		   mode == 0 || mode == 3 ? "a second" : "an unexpected", len, len > 1 ? u[0] : 0,
		   len > 1 ? u[1] : 0);
	if (mode == 2)
		cmd4(ctl, CMD_RECV, 0, sizeof(p), siwt_hash(p, sizeof(p)));
	close(r.fd);
	cmd4(ctl, CMD_EVENT, 0, RPCRDMA_EV_DISCONNECTED, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* R14: the provider as passive side receives zero-length Writes in RTS
 * (the nudge of a peer like us: STag 0; Linux's RTR form: STag 1) with no
 * STag validation, no completion and no Terminate; a Send around them
 * completes normally. */
static void case_nudge_rx(int ctl)
{
	struct raw r;
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = 1};
	uint8_t rpd[600], u[70000];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;

	if (raw_connect44(ctl, &m, &r, SIWT_MPA_C | SIWT_MPA_H | 2, &rird, &rord, rpd, &rpdlen) < 0)
		return;
	uint8_t p[40];
	siwt_fill(p, sizeof(p), 0x7b);
	raw_send(&r, p, 20);
	for (uint32_t stag = 0; stag < 2; stag++) {
		size_t hl = siwt_ddp_tagged(u, true, SIWT_OP_WRITE, stag, 0);
		send_fpdu(&r, u, hl);
	}
	raw_send(&r, p + 20, 20);
	cmd4(ctl, CMD_RECV, 0, 20, siwt_hash(p, 20));
	cmd4(ctl, CMD_RECV, 0, 20, siwt_hash(p + 20, 20));
	bool ok = true;
	int len = siwt_read_fpdu(r.fd, u, sizeof(u), true, &ok, 300);
	SIWT_CHECK(len == -ETIMEDOUT,
		   "the provider sent an FPDU (len %d, op %d) after our "
		   "zero-length Writes",
		   len, len > 1 ? u[1] & 0x0f : -1);
	close(r.fd);
	cmd4(ctl, CMD_EVENT, 0, RPCRDMA_EV_DISCONNECTED, 0);
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
}

/* Cases to run: all, or those named in argv[1] (comma-separated). */
/* Writes into the wp buffer: our FPDUs carry 1000 payload bytes (more than
 * the provider's 512-byte header stage) and every message goes out with one
 * write(), so the provider finds the following FPDUs in its socket. The
 * child keeps a model of the wp buffer. */
static uint8_t wp_model[WP_BUF];

struct wbuild {
	uint8_t b[16384];
	size_t n;
};

static void wb_tagged(struct raw *r, struct wbuild *w, uint32_t stag, uint64_t to, bool last,
		      const uint8_t *p, size_t len, uint8_t *hdr_copy)
{
	uint8_t u[1100];
	size_t h = siwt_ddp_tagged(u, last, SIWT_OP_WRITE, stag, to);

	memcpy(u + h, p, len);
	if (hdr_copy)
		memcpy(hdr_copy, u, h);
	w->n += siwt_fpdu(w->b + w->n, u, h + len, r->crc);
}

static void wb_send(struct raw *r, struct wbuild *w, const uint8_t *p, size_t len)
{
	uint8_t u[1100];
	size_t h = siwt_ddp_untagged(u, true, SIWT_OP_SEND, 0, 0, r->msn[0]++, 0);

	memcpy(u + h, p, len);
	w->n += siwt_fpdu(w->b + w->n, u, h + len, r->crc);
}

/* One Write message at region offset off, cut into FPDUs of the given
 * payload lengths (contiguous TOs), applied to the model. */
static void wb_write(struct raw *r, struct wbuild *w, uint32_t stag, uint64_t to0, size_t off,
		     const size_t *cut, unsigned n, uint64_t seed)
{
	uint8_t d[1000];

	for (unsigned i = 0; i < n; i++) {
		siwt_fill(d, cut[i], seed + i);
		wb_tagged(r, w, stag, to0 + off, i + 1 == n, d, cut[i], NULL);
		memcpy(wp_model + WP_OFF + off, d, cut[i]);
		off += cut[i];
	}
}

/* The provider's wp buffer equals the model in [lo, hi) (buffer offsets) */
static void wp_check(int ctl, size_t lo, size_t hi)
{
	struct siwt_msg m = {.type = CMD_WPCHK};

	if (hi <= lo)
		return;
	m.u[0] = lo;
	m.u[1] = hi - lo;
	m.u[2] = siwt_hash(wp_model + lo, hi - lo);
	cmd(ctl, &m);
}

/* the Send that follows a Write: received byte-exact */
static void wp_sync(int ctl, struct raw *r, struct wbuild *w, uint64_t seed)
{
	uint8_t p[40];

	siwt_fill(p, sizeof(p), seed);
	wb_send(r, w, p, sizeof(p));
	siwt_write_all(r->fd, w->b, w->n);
	w->n = 0;
	struct siwt_msg m = {.type = CMD_RECV};
	m.u[0] = sizeof(p);
	m.u[1] = siwt_hash(p, sizeof(p));
	m.u[5] = 1;
	cmd(ctl, &m);
}

/* CMD_WPRED u0 of the next wp_connect (0: the spin knob unset) */
static uint64_t wp_spin_arg;

static int wp_connect(int ctl, struct raw *r, unsigned mode, bool crc, uint32_t *stag, uint64_t *to,
		      uint32_t *ro_stag, uint64_t *ro_to)
{
	struct siwt_msg m = {.type = CMD_ACCEPT, .a = crc};
	uint8_t rpd[600];
	uint16_t rird = 0, rord = 0;
	size_t rpdlen = 0;

	if (cmd4(ctl, CMD_WPRED, mode, wp_spin_arg, 0))
		return -1;
	*stag = (uint32_t)cmd_reply.u[0];
	*to = cmd_reply.u[1];
	siwt_fill(wp_model, WP_BUF, WP_SEED);
	if (raw_connect44(ctl, &m, r, (uint16_t)((crc ? SIWT_MPA_C : 0) | SIWT_MPA_H | 2), &rird,
			  &rord, rpd, &rpdlen) < 0)
		return -1;
	*ro_stag = (uint32_t)cmd_reply.u[2];
	*ro_to = cmd_reply.u[3];
	return 0;
}

/* wp_connect with a fresh FPDU builder (NULL, the test failed, when either
 * failed) */
static struct wbuild *wp_open(int ctl, struct raw *r, unsigned mode, bool crc, uint32_t *stag,
			      uint64_t *to, uint32_t *ro_stag, uint64_t *ro_to)
{
	struct wbuild *w = calloc(1, sizeof(*w));

	SIWT_CHECK(w != NULL, "calloc");
	if (w && wp_connect(ctl, r, mode, crc, stag, to, ro_stag, ro_to)) {
		free(w);
		return NULL;
	}
	return w;
}

/* closes our side (when still open), has the provider drop its endpoint
 * and reset the receive knobs */
static void wp_close(int ctl, struct raw *r, struct wbuild *w)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	cmd4(ctl, CMD_CLOSE, 0, 0, 0);
	cmd4(ctl, CMD_WPRED, 2, 0, 0);
	free(w);
}

/* R6: a Write whose second FPDU names another STag without remote write
 * access, goes past the region, or names an unknown STag: a Terminate
 * carrying the offending header; nothing placed but the first FPDU, nothing
 * in the other STag's region. */
static void case_write_hostile(int ctl, unsigned kind)
{
	static const size_t c2500[] = {1000, 1000, 500};
	static const uint32_t want[] = {SIWT_TERM(0, 1, 2), SIWT_TERM(1, 1, 1), SIWT_TERM(1, 1, 0)};
	struct raw r;
	uint32_t stag, ro_stag, bad_stag;
	uint64_t to, ro_to, bad_to;
	uint8_t d[1000], hdr[32], u[300];
	struct wbuild *w = wp_open(ctl, &r, 0, kind == 1, &stag, &to, &ro_stag, &ro_to);

	if (!w)
		return;
	wb_write(&r, w, stag, to, 0, c2500, 3, 0x300);
	wp_sync(ctl, &r, w, 0x400);
	bad_stag = kind == 0 ? ro_stag : kind == 1 ? stag : 0x00dead01u;
	bad_to = kind == 0 ? ro_to : kind == 1 ? to + WP_LEN - 500 : to + 6000;
	siwt_fill(d, 1000, 0x310);
	wb_tagged(&r, w, stag, to + 5000, false, d, 1000, NULL);
	memcpy(wp_model + WP_OFF + 5000, d, 1000);
	siwt_fill(d, 1000, 0x311);
	wb_tagged(&r, w, bad_stag, bad_to, true, d, 1000, hdr);
	siwt_write_all(r.fd, w->b, w->n);
	int tl = read_terminate(&r, u, sizeof(u));
	if (tl > 0)
		check_terminate(u, tl, (uint8_t)(want[kind] >> 16), (uint8_t)(want[kind] >> 8),
				(uint8_t)want[kind], hdr, 14, 14 + 1000, NULL);
	else
		SIWT_CHECK(0, "no Terminate for the second FPDU (%s)", strerror(-tl));
	expect_close(&r);
	cmd_term(ctl, true, want[kind], 0, 0);
	wp_check(ctl, 0, WP_BUF);
	wp_check(ctl, WP_OFF, WP_OFF + 6000);
	struct siwt_msg m = {.type = CMD_WPCHK, .a = 1};
	siwt_fill(d, 1000, RO_SEED);
	m.u[0] = 0;
	m.u[1] = 1000;
	m.u[2] = siwt_hash(d, 1000);
	cmd(ctl, &m);
	verified += 3500;
	wp_close(ctl, &r, w);
}

/* R7: the receive spin (verbs.c progress_run), seen in the device's spin
 * counters. Complete messages (a whole Write and a Send in one write())
 * never spin. A Write sent half (first FPDU, L clear), the rest after a
 * pause: with a 1 s budget and a 10 ms pause the provider spins once and
 * no spin runs out of budget (the rest ends it with a hit, unless a yield
 * found the CPU shared with another process first: then it ends at once);
 * with a 20 ms budget and a 300 ms pause one spin ends without bytes (its
 * budget passed, or the CPU was shared) and the rest is received as usual;
 * with RPCRDMA_SIW_RX_SPIN_US=0 nothing spins. Every byte placed as sent,
 * nothing else in the buffer touched. */
static void case_spin(int ctl)
{
	static const size_t c2000[] = {1000, 1000};
	static const struct {
		uint32_t us, pause_ms;
		bool hit;
	} runs[] = {{1000000, 10, true}, {20000, 300, false}, {0, 10, false}};

	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]) && !siwt_failures; i++) {
		struct raw r;
		struct wbuild *w;
		uint32_t stag, ro_stag;
		uint64_t to, ro_to, s0[4], s1[4], d1[4];
		uint8_t d[1000];

		wp_spin_arg = (uint64_t)runs[i].us + 1;
		w = wp_open(ctl, &r, 2, i == 1, &stag, &to, &ro_stag, &ro_to);
		wp_spin_arg = 0;
		if (!w)
			return;
		cmd4(ctl, CMD_WPRED, 4, 0, 0);
		memcpy(s0, cmd_reply.u, sizeof(s0));
		/* complete messages: no spin */
		wb_write(&r, w, stag, to, 100, c2000, 2, 0x500 + i * 16);
		wp_sync(ctl, &r, w, 0x600 + i * 16);
		cmd4(ctl, CMD_WPRED, 4, 0, 0);
		memcpy(s1, cmd_reply.u, sizeof(s1));
		SIWT_CHECK(s1[0] == s0[0], "spin %u us: complete messages spun %llu times",
			   runs[i].us, (unsigned long long)(s1[0] - s0[0]));
		/* half a Write, a pause, the rest and a Send */
		siwt_fill(d, 1000, 0x700 + i * 16);
		wb_tagged(&r, w, stag, to + 9000, false, d, 1000, NULL);
		memcpy(wp_model + WP_OFF + 9000, d, 1000);
		siwt_write_all(r.fd, w->b, w->n);
		w->n = 0;
		usleep(runs[i].pause_ms * 1000u);
		siwt_fill(d, 700, 0x701 + i * 16);
		wb_tagged(&r, w, stag, to + 10000, true, d, 700, NULL);
		memcpy(wp_model + WP_OFF + 10000, d, 700);
		wp_sync(ctl, &r, w, 0x800 + i * 16);
		cmd4(ctl, CMD_WPRED, 4, 0, 0);
		for (unsigned k = 0; k < 4; k++)
			d1[k] = cmd_reply.u[k] - s1[k];
		/* one spin with a budget (none without), ended by the rest
		 * (hit) or by its budget (miss), or by a shared CPU */
		uint64_t spins = runs[i].us ? 1u : 0u, good = runs[i].hit ? d1[1] : d1[2],
			 bad = runs[i].hit ? d1[2] : d1[1];
		SIWT_CHECK(
		    d1[0] == spins && bad == 0 && good + d1[3] == spins,
		    "spin %u us, pause %u ms: %llu spins, %llu hits, %llu misses, %llu shared "
		    "(want %llu, ended by a %s or a shared CPU)",
		    runs[i].us, runs[i].pause_ms, (unsigned long long)d1[0],
		    (unsigned long long)d1[1], (unsigned long long)d1[2], (unsigned long long)d1[3],
		    (unsigned long long)spins, runs[i].hit ? "hit" : "miss");
		wp_check(ctl, 0, WP_BUF);
		verified += 2000 + 1700 + 80;
		wp_close(ctl, &r, w);
	}
}

/* R8: a device with one connection, busy-polled (parent_loop: poll() on the
 * device fd, then rpcrdma_dev_progress(dev, 0)), receives on that
 * connection's socket directly and asks epoll only every 16th call
 * (verbs.c progress_once): its listener must still be served. While a
 * connection is up, a second peer asks for markers: the MPA reply with the
 * Reject bit comes, and the first connection still carries a Write and a
 * Send byte-exact before and after. */
static void case_solo(int ctl)
{
	static const size_t c3000[] = {1000, 1000, 1000};
	struct raw r;
	uint32_t stag, ro_stag;
	uint64_t to, ro_to;
	struct wbuild *w = wp_open(ctl, &r, 2, true, &stag, &to, &ro_stag, &ro_to);

	if (!w)
		return;
	wb_write(&r, w, stag, to, 0, c3000, 3, 0x900);
	wp_sync(ctl, &r, w, 0x910);
	markers_refused();
	wb_write(&r, w, stag, to, 5000, c3000, 3, 0x920);
	wp_sync(ctl, &r, w, 0x930);
	wp_check(ctl, 0, WP_BUF);
	verified += 6000 + 80;
	wp_close(ctl, &r, w);
}

static const char *only;

static bool want(const char *name)
{
	if (!only)
		return true;
	size_t l = strlen(name);
	for (const char *p = only; (p = strstr(p, name)) != NULL; p += l)
		if ((p == only || p[-1] == ',') && (p[l] == ',' || p[l] == 0))
			return true;
	return false;
}

static int child_main(int ctl, void *arg)
{
	struct siwt_msg m;

	(void)arg;
	if (siwt_expect(ctl, MSG_PORT, &m))
		return -1;
	g_port = (uint16_t)m.a;
	if (want("basic"))
		case_basic(ctl);
	if (want("badstag") && !siwt_failures)
		case_bad_stag(ctl, false);
	if (want("badstag") && !siwt_failures)
		case_bad_stag(ctl, true);
	if (want("markers") && !siwt_failures)
		case_markers(ctl);
	if (want("linuxterm") && !siwt_failures)
		case_reserved_and_term(ctl, true);
	if (want("rfcterm") && !siwt_failures)
		case_reserved_and_term(ctl, false);
	if (want("rev1") && !siwt_failures)
		case_rev1(ctl);
	for (unsigned i = 0; i < sizeof(bad_hdrs) / sizeof(bad_hdrs[0]); i++)
		if (want("badhdr") && !siwt_failures)
			case_bad_header(ctl, i);
	for (unsigned i = 0; i < 4; i++)
		if (want("batch") && !siwt_failures)
			case_batch(ctl, i);
	if (want("ird") && !siwt_failures)
		case_ird(ctl);
	if (want("initiator") && !siwt_failures)
		case_initiator(ctl);
	if (want("rtrird0") && !siwt_failures)
		case_rtr_ird0(ctl);
	if (want("rtrpassive") && !siwt_failures)
		case_rtr_passive_ird0(ctl);
	for (unsigned mode = 0; mode < 4; mode++)
		if (want("nudge") && !siwt_failures)
			case_nudge(ctl, mode);
	if (want("nudgerx") && !siwt_failures)
		case_nudge_rx(ctl);
	for (unsigned kind = 0; kind < 3; kind++)
		if (want("writebad") && !siwt_failures)
			case_write_hostile(ctl, kind);
	if (want("spin") && !siwt_failures)
		case_spin(ctl);
	if (want("solo") && !siwt_failures)
		case_solo(ctl);
	struct siwt_msg end = {.type = CMD_END};
	end.u[0] = verified;
	siwt_send_msg(ctl, &end);
	return siwt_failures ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* parent: the provider, obeying the child's commands                  */
/* ------------------------------------------------------------------ */

static uint8_t *rw, *ro, *sink, *wp;
static struct rpcrdma_mr *rw_mr, *ro_mr, *sink_mr, *rb_mr, *wp_mr;
static uint8_t rbuf[4][70000];
static unsigned next_recv;

static int post_recvs(struct siwt_node *n, void *arg)
{
	(void)arg;
	next_recv = 0;
	for (unsigned i = 0; i < 4; i++)
		if (siwt_post_recv1(n, i, rbuf[i], sizeof(rbuf[i]), rpcrdma_mr_stag(rb_mr)))
			return -1;
	return 0;
}

static void reply_ok(int ctl, uint64_t u0, uint64_t u1, uint64_t u2, uint64_t u3)
{
	struct siwt_msg m = {.type = MSG_OK};

	m.a = (uint32_t)siwt_failures;
	m.u[0] = u0;
	m.u[1] = u1;
	m.u[2] = u2;
	m.u[3] = u3;
	siwt_send_msg(ctl, &m);
}

static void do_accept(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req, est;

	if (c->u[5]) {
		/* the provider must refuse on its own: no request surfaces */
		siwt_pump_for(n, 500);
		SIWT_CHECK(n->ev_n == 0, "a request the provider must refuse surfaced as %s",
			   siwt_event_str(n->ev[0].type));
		n->ev_n = 0;
		reply_ok(ctl, 0, 0, 0, 0);
		return;
	}
	siwt_ep_attr(n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_IRD_ORD;
	a.mpa_crc = c->a & 1u;
	a.ird = (uint32_t)c->u[0];
	a.ord = 4;
	if (c->a & 2u) {
		a.comp_mask |= RPCRDMA_EP_ATTR_SOCKBUF;
		a.sockbuf = 64u << 10;
	}
	if (siwt_accept(n, &a, post_recvs, NULL, "reply!!", 7, &req, &est) == 0) {
		SIWT_EQ(req.mpa_rev, c->u[1]);
		if (c->u[1] == 2) {
			SIWT_EQ(req.ird, c->u[2]);
			SIWT_EQ(req.ord, c->u[3]);
		}
		SIWT_EQ(req.private_data_len, c->u[4]);
		SIWT_CHECK(memcmp(req.private_data, c->data, c->u[4]) == 0,
			   "request private data differs");
	}
	reply_ok(ctl, rpcrdma_mr_stag(rw_mr), rpcrdma_mr_offset(rw_mr), rpcrdma_mr_stag(ro_mr),
		 rpcrdma_mr_offset(ro_mr));
}

static void do_recv(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	struct rpcrdma_wc wc;
	unsigned id = next_recv++;

	if (siwt_expect_wc(n, true, id, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RECV, &wc) == 0) {
		SIWT_EQ(wc.byte_len, c->u[0]);
		/* a: 1 = Send (no solicited flag), 2 = Send with SE */
		if (c->a)
			SIWT_EQ(!!(wc.wc_flags & RPCRDMA_WC_F_SOLICITED), c->a == 2);
		SIWT_CHECK(siwt_hash(rbuf[id % 4], c->u[0]) == c->u[1], "received Send differs");
		/* u5: post the buffer again (cases with more than 4 Sends) */
		if (c->u[5])
			SIWT_CHECK(siwt_post_recv1(n, id + 4, rbuf[id % 4], sizeof(rbuf[0]),
						   rpcrdma_mr_stag(rb_mr)) == 0,
				   "post_recv");
		verified += c->u[0];
		if (c->u[3]) {
			SIWT_CHECK(siwt_hash(rw + c->u[2], c->u[3]) == c->u[4],
				   "Write not placed when the following Send completed");
			verified += c->u[3];
		}
	}
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_term(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	uint32_t allowed[3] = {(uint32_t)c->u[0], (uint32_t)c->u[1], (uint32_t)c->u[2]};
	struct rpcrdma_event ev;

	siwt_expect_terminate(n, c->a, allowed, (unsigned)c->u[5]);
	siwt_expect_event(n, RPCRDMA_EV_DISCONNECTED, &ev, 5000);
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_connect(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event est;
	struct rpcrdma_ep_conn_info ci;

	siwt_ep_attr(n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_IRD_ORD;
	a.ird = (uint32_t)c->u[0];
	a.ord = (uint32_t)c->u[1];
	if (siwt_connect(n, &a, NULL, NULL, (uint16_t)c->a, c->data, c->u[4], &est) == 0) {
		SIWT_EQ(est.private_data_len, 2);
		SIWT_CHECK(memcmp(est.private_data, "ok", 2) == 0, "reply private data differs");
		SIWT_EQ(est.ird, 2);
		if (rpcrdma_ep_query_conn(n->ep, &ci) == 0) {
			SIWT_EQ(ci.ord, 2); /* bounded by the peer's IRD */
			SIWT_EQ(ci.crc, 1);
		}
	}
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_reads(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	for (unsigned i = 0; i < c->u[0]; i++) {
		struct rpcrdma_sge sg = {(uintptr_t)(sink + i * 2048), (uint32_t)c->u[1],
					 rpcrdma_mr_stag(sink_mr)};
		siwt_post(n, 50 + i, RPCRDMA_WR_RDMA_READ, RPCRDMA_SEND_SIGNALED, &sg, 1, 0x7701,
			  0x1000ull * i, 0);
	}
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_reads_done(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	uint8_t want[2048];

	for (unsigned i = 0; i < c->u[0]; i++) {
		struct rpcrdma_wc wc;
		if (siwt_expect_wc(n, false, 50 + i, RPCRDMA_WC_SUCCESS, RPCRDMA_WC_RDMA_READ, &wc))
			break;
		siwt_fill(want, c->u[1], RD_SEED + i);
		SIWT_CHECK(siwt_hash(sink + i * 2048, c->u[1]) == siwt_hash(want, c->u[1]),
			   "Read %u placed wrong bytes", i);
		verified += c->u[1];
	}
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_connect_rtr(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event ev;
	struct rpcrdma_ep_conn_info ci;
	struct sockaddr_in sa;

	siwt_ep_attr(n, &a);
	a.comp_mask |= RPCRDMA_EP_ATTR_RTR;
	a.rtr = (enum rpcrdma_rtr)c->u[0];
	int rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
	SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
	if (rc) {
		reply_ok(ctl, 0, 0, 0, 0);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)c->a);
	rc = rpcrdma_connect(n->ep, (struct sockaddr *)&sa, sizeof(sa), NULL, 0);
	SIWT_CHECK(rc == 0, "connect: %s", strerror(-rc));
	if (rc == 0 && c->u[1]) {
		if (siwt_expect_event(n, RPCRDMA_EV_ESTABLISHED, &ev, 5000) == 0 &&
		    rpcrdma_ep_query_conn(n->ep, &ci) == 0) {
			SIWT_EQ(ci.rtr, RPCRDMA_RTR_WRITE);
			SIWT_EQ(ci.ord, 0); /* bounded by the responder's IRD 0 */
		}
	} else if (rc == 0) {
		if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_ERROR, &ev, 5000) == 0) {
			SIWT_EQ(ev.status, -EPROTO);
			SIWT_EQ(ev.term_local, 1);
			SIWT_EQ(ev.term_layer, 2);
			SIWT_EQ(ev.term_etype, 0);
			SIWT_EQ(ev.term_code, 7);
		}
		/* the one event: no DISCONNECTED (nor ESTABLISHED) later */
		siwt_pump_for(n, 300);
		SIWT_CHECK(n->ev_n == 0, "event %s after CONNECT_ERROR",
			   siwt_event_str(n->ev[0].type));
		n->ev_n = 0;
	}
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_accept_refuse(struct siwt_node *n, int ctl)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event req;

	if (siwt_expect_event(n, RPCRDMA_EV_CONNECT_REQUEST, &req, 5000) == 0) {
		siwt_ep_attr(n, &a);
		a.comp_mask |= RPCRDMA_EP_ATTR_IRD_ORD;
		a.ird = 0;
		a.ord = 4;
		int rc = rpcrdma_ep_create(n->pd, &a, &n->ep);
		SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
		if (rc == 0) {
			rc = rpcrdma_accept(req.req, n->ep, NULL, 0);
			SIWT_EQ(rc, -EPROTO);
			rpcrdma_ep_destroy(n->ep);
			n->ep = NULL;
		}
	}
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_connect_nudge(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	struct rpcrdma_ep_attr a;
	struct rpcrdma_event ev;
	char v[16];

	if (c->u[0] == 1000000) {
		unsetenv("RPCRDMA_SIW_NUDGE_MS");
	} else {
		snprintf(v, sizeof(v), "%u", (unsigned)c->u[0]);
		setenv("RPCRDMA_SIW_NUDGE_MS", v, 1);
	}
	siwt_node_reread_env(n);
	siwt_ep_attr(n, &a);
	if (siwt_connect(n, &a, post_recvs, NULL, (uint16_t)c->a, NULL, 0, &ev) == 0) {
		if (c->u[1])
			siwt_pump_for(n, (int)c->u[1]);
		/* from registered memory (the Read sink's tail) */
		uint8_t *msg = sink + 60000;
		struct rpcrdma_sge sg = {(uintptr_t)msg, 32, rpcrdma_mr_stag(sink_mr)};

		memcpy(msg, "first Send right after the reply", 32);
		siwt_post(n, 7, RPCRDMA_WR_SEND, RPCRDMA_SEND_SIGNALED, &sg, 1, 0, 0, 0);
	}
	unsetenv("RPCRDMA_SIW_NUDGE_MS");
	siwt_node_reread_env(n);
	reply_ok(ctl, 0, 0, 0, 0);
}

static void do_wpred(struct siwt_node *n, int ctl, const struct siwt_msg *c)
{
	if (c->a == 4) {
		uint64_t sp[4];

		siw_dev_rx_spin_stats(n->dev, sp);
		reply_ok(ctl, sp[0], sp[1], sp[2], sp[3]);
		return;
	}
	unsetenv("RPCRDMA_SIW_RX_SPIN_US");
	if (c->u[0]) {
		char v[24];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)(c->u[0] - 1));
		setenv("RPCRDMA_SIW_RX_SPIN_US", v, 1);
	}
	unsetenv("RPCRDMA_SIW_RX_PREDICT");
	if (c->a == 0)
		setenv("RPCRDMA_SIW_RX_PREDICT", "0", 1);
	siwt_node_reread_env(n);
	siwt_fill(wp, WP_BUF, WP_SEED);
	/* flushed receives of the last connection: not this one's */
	siwt_pump_for(n, 20);
	siwt_forget(n);
	reply_ok(ctl, rpcrdma_mr_stag(wp_mr), rpcrdma_mr_offset(wp_mr), 0, 0);
}

static void do_wpchk(int ctl, const struct siwt_msg *c)
{
	const uint8_t *b = c->a ? ro : wp;
	size_t cap = c->a ? RO_LEN : WP_BUF;

	if (c->u[0] > cap || c->u[1] > cap - c->u[0])
		SIWT_CHECK(0, "check range %llu+%llu out of the buffer",
			   (unsigned long long)c->u[0], (unsigned long long)c->u[1]);
	else
		SIWT_CHECK(siwt_hash(b + c->u[0], c->u[1]) == c->u[2],
			   "%s buffer [%llu, %llu) differs from the model", c->a ? "ro" : "wp",
			   (unsigned long long)c->u[0], (unsigned long long)(c->u[0] + c->u[1]));
	reply_ok(ctl, 0, 0, 0, 0);
}

static void parent_loop(struct siwt_node *n, int ctl)
{
	struct siwt_msg c;
	struct rpcrdma_event ev;

	for (;;) {
		if (siwt_pump_until_msg(n, ctl, &c, 60000)) {
			SIWT_CHECK(0, "no command from the raw peer");
			return;
		}
		switch (c.type) {
		case CMD_ACCEPT:
			do_accept(n, ctl, &c);
			break;
		case CMD_RECV:
			do_recv(n, ctl, &c);
			break;
		case CMD_TERM:
			do_term(n, ctl, &c);
			break;
		case CMD_CONNECT:
			do_connect(n, ctl, &c);
			break;
		case CMD_READS:
			do_reads(n, ctl, &c);
			break;
		case CMD_READS_DONE:
			do_reads_done(n, ctl, &c);
			break;
		case CMD_CONNECT_RTR:
			do_connect_rtr(n, ctl, &c);
			break;
		case CMD_ACCEPT_REFUSE:
			do_accept_refuse(n, ctl);
			break;
		case CMD_CONNECT_NUDGE:
			do_connect_nudge(n, ctl, &c);
			break;
		case CMD_WPRED:
			do_wpred(n, ctl, &c);
			break;
		case CMD_WPCHK:
			do_wpchk(ctl, &c);
			break;
		case CMD_EVENT:
			siwt_expect_event(n, (enum rpcrdma_event_type)c.u[0], &ev, 5000);
			reply_ok(ctl, 0, 0, 0, 0);
			break;
		case CMD_CLOSE:
			if (n->ep)
				rpcrdma_ep_destroy(n->ep);
			n->ep = NULL;
			siwt_forget(n);
			reply_ok(ctl, 0, 0, 0, 0);
			break;
		case CMD_END:
			verified += c.u[0];
			return;
		default:
			SIWT_CHECK(0, "unknown command %u", c.type);
			return;
		}
	}
}

/* Usage: test_siw_rawpeer [CASE,CASE...]  (basic badstag markers linuxterm
 * rfcterm rev1 badhdr batch ird initiator rtrird0 rtrpassive nudge nudgerx
 * writebad spin solo;
 * default all) */
int main(int argc, char **argv)
{
	uint64_t t0 = siwt_now_ms();
	struct siwt_node n;
	int ctl, rc;

	memset(&n, 0, sizeof(n));
	only = argc > 1 ? argv[1] : NULL;

	alarm(90);
	pid_t pid = siwt_fork(child_main, NULL, &ctl, 80);
	if (pid < 0)
		return 1;
	rw = siwt_alloc_buf(RW_LEN);
	ro = siwt_alloc_buf(RO_LEN);
	sink = siwt_alloc_buf(65536);
	wp = siwt_alloc_buf(WP_BUF);
	if (!rw || !ro || !sink || !wp || siwt_node_open(&n) || siwt_listen(&n))
		goto out;
	siwt_fill(rw, RW_LEN, 0x5257);
	siwt_fill(ro, RO_LEN, RO_SEED);
	rc = rpcrdma_mr_reg(n.pd, rw, RW_LEN,
			    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &rw_mr);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, ro, RO_LEN, RPCRDMA_ACCESS_REMOTE_READ, &ro_mr);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, sink, 65536, RPCRDMA_ACCESS_LOCAL_WRITE, &sink_mr);
	rc = rc ? rc : rpcrdma_mr_reg(n.pd, rbuf, sizeof(rbuf), RPCRDMA_ACCESS_LOCAL_WRITE, &rb_mr);
	rc = rc ? rc
		: rpcrdma_mr_reg(n.pd, wp + WP_OFF, WP_LEN,
				 RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &wp_mr);
	SIWT_CHECK(rc == 0, "mr_reg: %s", strerror(-rc));
	if (rc)
		goto out;
	siwt_send4(ctl, MSG_PORT, n.port, 0, 0);
	parent_loop(&n, ctl);
out:
	siwt_wait_child(pid, siwt_failures ? 1 : 30);
	if (rw_mr)
		rpcrdma_mr_dereg(rw_mr);
	if (ro_mr)
		rpcrdma_mr_dereg(ro_mr);
	if (sink_mr)
		rpcrdma_mr_dereg(sink_mr);
	if (rb_mr)
		rpcrdma_mr_dereg(rb_mr);
	if (wp_mr)
		rpcrdma_mr_dereg(wp_mr);
	siwt_node_close(&n);
	siwt_free_buf(rw, RW_LEN);
	siwt_free_buf(ro, RO_LEN);
	siwt_free_buf(sink, 65536);
	siwt_free_buf(wp, WP_BUF);
	close(ctl);
	return siwt_finish("test_siw_rawpeer", verified, t0);
}
