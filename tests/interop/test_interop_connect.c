/* SPDX-License-Identifier: MIT */
/*
 * Interop: connection setup and the smallest RPC-over-RDMA exchange with
 * the Linux kernel's svcrdma (nfsd over siw, in the interop guest),
 * through our soft-iWARP provider.
 *
 * For MPA CRC off (what the Linux client asks for) and on:
 *   - MPA revision 2 with the enhanced IRD/ORD word and the RFC 8797
 *     private data the Linux client sends is accepted; the reply is
 *     revision 2, CRC as asked, and carries the server's private data
 *     f6 ab 0e 18 01 00 03 03 (version 1, no remote invalidation, 4 KiB
 *     send and receive inline sizes);
 *   - an NFSv3 NULL call (RDMA_MSG, no chunks, AUTH_SYS) is answered
 *     RDMA_MSG, credit grant 64, MSG_ACCEPTED/SUCCESS, as a plain Send;
 *   - a transport header with rdma_vers 2 is answered RDMA_ERROR ERR_VERS
 *     1..1 (RFC 8166 §4.5.1) with rdma_vers 2 echoed in the fixed words,
 *     decoded by our codec as it is (low 1, high 1), an unknown rdma_proc
 *     RDMA_ERROR ERR_CHUNK
 *     (Linux's answer), and the connection keeps working after both.
 * Our effective IRD 128 / ORD 0 after Linux's IRD 0 / ORD 128 answer.
 * With IRD 2 (RFC 6581 §9): Linux answers ORD 2 (at most our IRD) and a
 * WRITE whose Read chunk has 16 segments completes, its data read back
 * identical, with every Read served and no Terminate (see ird_small).
 * And: an MPA revision 1 request is rejected by the kernel
 * (docs/linux-peer.md: svcrdma needs the IRD/ORD exchange to issue RDMA Reads); and
 * RFC 6581 peer-to-peer mode with a zero-length RDMA Write RTR is accepted
 * (see rtr_compare).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "interop_util.h"
#include "nfs3_client.h"
#include "util/be.h"

/* What Linux 6.1 svcrdma puts in its accept (docs/linux-peer.md). */
static const uint8_t server_pdata[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03};

static struct iop_reply r;
static struct iop_env env;

/* A header with @vers / @proc followed by an NFSv3 NULL call. */
static int bad_header(struct iop_conn *c, uint32_t vers, uint32_t proc, uint32_t want_err)
{
	uint8_t buf[512];
	size_t off;
	uint32_t xid = c->xid++;
	int len = iop_encode_call(c, buf, sizeof(buf), xid, NULL, 100003, 3, 0, NULL, NULL, &off);

	IOP_CHECK(len > 0);
	iop_note_invalid_xid(&env, xid);
	/* Patch the fixed words of the RDMA_MSG header (RFC 8166 §4.2:
	 * xid, vers, credit, proc): the codec refuses to build such
	 * headers on purpose. */
	put_be32(buf + 4, vers);
	put_be32(buf + 12, proc);
	IOP_CHECK(iop_call(c, buf, (uint32_t)len, xid, false, &r) == 0);
	printf("  rdma_vers %u rdma_proc %u -> rdma_vers %u proc %u err %u vers %u..%u credit %u "
	       "(%u bytes)\n",
	       vers, proc, r.hdr.vers, r.hdr.proc, r.hdr.err, r.hdr.vers_low, r.hdr.vers_high,
	       r.hdr.credit, r.msg.len);
	IOP_CHECK(r.hdr.xid == xid);
	/* Linux answers with the rdma_vers of the call in the fixed words
	 * (2 for our vers 2 call); RFC 8166 §4.5.1 leaves it open, and our
	 * codec (rpcrdma1_decode) reads ERR_VERS whatever the version says
	 * (RFC 8166 §7), so low/high below come from the codec itself. */
	IOP_CHECK(r.hdr.vers == vers);
	IOP_CHECK(r.hdr.hdr_len == r.msg.len);
	IOP_CHECK(r.hdr.credit == 64);
	IOP_CHECK(r.hdr.proc == RPCRDMA1_ERROR && r.hdr.err == want_err);
	if (want_err == RPCRDMA1_ERR_VERS) {
		IOP_CHECK(r.hdr.vers_low == 1 && r.hdr.vers_high == 1);
		IOP_CHECK(r.msg.len == RPCRDMA1_ERR_VERS_SIZE);
	} else {
		IOP_CHECK(r.msg.len == RPCRDMA1_ERR_CHUNK_SIZE);
	}
	return 0;
}

static int one(uint16_t port, bool crc)
{
	struct iop_conn c;
	struct rpcrdma_ep_conn_info ci;
	struct rpcrdma_ep_stats st;
	uint64_t t0 = iop_now_ms();
	int rc;

	printf("MPA rev 2, CRC %s, Linux client private data\n", crc ? "on" : "off");
	rc = iop_connect(&c, port, 2, crc, iop_linux_client_pdata, sizeof(iop_linux_client_pdata));
	if (rc) {
		iop_failures++;
		iop_close(&c);
		return -1;
	}
	printf("  established in %llu ms: rev %u crc %d peer IRD %u ORD %u, %u bytes of private "
	       "data\n",
	       (unsigned long long)(iop_now_ms() - t0), c.est.mpa_rev, c.est.crc, c.est.ird,
	       c.est.ord, c.est.private_data_len);
	IOP_EXPECT(c.est.mpa_rev == 2);
	IOP_EXPECT(c.est.crc == crc);
	IOP_EXPECT(c.est.private_data_len == sizeof(server_pdata));
	IOP_EXPECT(memcmp(c.est.private_data, server_pdata, sizeof(server_pdata)) == 0);
	IOP_EXPECT(rpcrdma1_cm_private_decode(c.est.private_data, c.est.private_data_len, &c.pp) ==
		   0);
	IOP_EXPECT(!c.pp.remote_invalidate && c.pp.send_size == 4096 && c.pp.recv_size == 4096);
	/* The server will issue RDMA Reads to us (Read chunks): siw answers
	 * our IRD 128 / ORD 0 with ORD 128 / IRD 0. */
	IOP_EXPECT(c.est.ord == 128 && c.est.ird == 0);
	IOP_EXPECT(rpcrdma_ep_query_conn(c.ep, &ci) == 0);
	IOP_EXPECT(ci.mpa_rev == 2 && ci.crc == crc);
	printf("  effective IRD %u ORD %u, max ULPDU %u\n", ci.ird, ci.ord, ci.max_ulpdu);
	/* ours (RFC 6581 §9): IRD 128 as advertised, ORD 0 (the server's IRD) */
	IOP_EXPECT(ci.ird == 128 && ci.ord == 0);

	t0 = iop_now_ms();
	if (iop_nfs_null(&c, true) == 0)
		printf("  NFSv3 NULL: RDMA_MSG, grant %u, accepted SUCCESS (%llu ms, %u first-Send "
		       "retransmissions)\n",
		       c.grant, (unsigned long long)(iop_now_ms() - t0), c.stalls);
	/* Again without retransmission: now the connection is running. */
	IOP_EXPECT(iop_nfs_null(&c, false) == 0);

	IOP_EXPECT(bad_header(&c, 2, RPCRDMA1_MSG, RPCRDMA1_ERR_VERS) == 0);
	IOP_EXPECT(iop_nfs_null(&c, false) == 0);
	IOP_EXPECT(bad_header(&c, 1, 7, RPCRDMA1_ERR_CHUNK) == 0);
	IOP_EXPECT(iop_nfs_null(&c, false) == 0);

	IOP_EXPECT(rpcrdma_ep_query_stats(c.ep, &st) == 0);
	printf("  stats: %llu sends %llu recvs, %llu/%llu FPDUs tx/rx, %llu CRC errors, %llu "
	       "Terminates received\n",
	       (unsigned long long)st.sends, (unsigned long long)st.recvs,
	       (unsigned long long)st.tx_fpdus, (unsigned long long)st.rx_fpdus,
	       (unsigned long long)st.crc_errors, (unsigned long long)st.terminates_rx);
	IOP_EXPECT(st.crc_errors == 0 && st.terminates_rx == 0);
	/* with a first-Send retransmission both copies are answered */
	IOP_EXPECT(st.recvs == st.sends);
	iop_close(&c);
	return 0;
}

static int rev1(uint16_t port)
{
	struct iop_conn c;
	int rc;

	printf("MPA rev 1, CRC off, Linux client private data\n");
	rc =
	    iop_connect(&c, port, 1, false, iop_linux_client_pdata, sizeof(iop_linux_client_pdata));
	/* docs/linux-peer.md: siw answers with the Reject flag */
	IOP_EXPECT(rc != 0 && c.est.type == RPCRDMA_EV_REJECTED);
	iop_close(&c);
	return 0;
}

/*
 * RFC 6581 peer-to-peer mode with a zero-length RDMA Write as "ready to
 * receive" after the MPA reply. Linux's client does not use it; siw
 * accepts it. It does not cure the first-Send stall (the RTR and the first
 * Send often reach siw as one socket event): three connections without and
 * three with RTR, each must establish and answer NULL; the stall counts
 * are printed for the record.
 *
 * Not run: RTR by zero-length RDMA Read. siw answers IRD 0 to our ORD 0,
 * our provider still sends the Read Request, siw logs "IRQ exceeded or
 * null, size 0" and Linux 6.1 then hits BUG() at
 * drivers/infiniband/core/iwcm.c:969: the guest's iWARP CM is dead and
 * no later connection is answered.
 */
static int rtr_compare(uint16_t port)
{
	unsigned int stalls[2] = {0, 0};

	for (int mode = 0; mode < 2; mode++) {
		for (int i = 0; i < 3; i++) {
			struct iop_conn c;

			iop_connect_rtr = mode ? RPCRDMA_RTR_WRITE : RPCRDMA_RTR_NONE;
			int rc = iop_connect(&c, port, 2, false, iop_linux_client_pdata,
					     sizeof(iop_linux_client_pdata));

			iop_connect_rtr = RPCRDMA_RTR_NONE;
			IOP_EXPECT(rc == 0);
			if (rc == 0) {
				IOP_EXPECT(iop_nfs_null(&c, true) == 0);
				stalls[mode] += c.stalls;
			}
			iop_close(&c);
		}
	}
	printf("first-Send stalls in 3 connections: %u without RTR, %u with a zero-length RDMA "
	       "Write RTR\n",
	       stalls[0], stalls[1]);
	return 0;
}

/*
 * The first-Send stall over many connections (README): each of
 * FIRST_SEND_CONNS connections sends one NFSv3 NULL right after it is
 * established. With our provider's first-frame nudge (on unless
 * RPCRDMA_SIW_NUDGE_MS=0) every one must be answered without a resend,
 * within 1 s (a stalled one would wait for TIMEOUT_MS and fail); with the
 * nudge off iop_call resends after 1 s and the resends are only counted.
 */
#define FIRST_SEND_CONNS 10
static unsigned int first_send_probe(uint16_t port)
{
	unsigned int stalls = 0, ok = 0;
	uint64_t worst = 0;

	for (int i = 0; i < FIRST_SEND_CONNS; i++) {
		struct iop_conn c;
		int rc = iop_connect(&c, port, 2, false, iop_linux_client_pdata,
				     sizeof(iop_linux_client_pdata));

		IOP_EXPECT(rc == 0);
		if (rc == 0) {
			uint64_t t0 = iop_now_ms(), dt;
			int nrc = iop_nfs_null(&c, true);

			IOP_EXPECT(nrc == 0);
			dt = iop_now_ms() - t0;
			stalls += c.stalls;
			ok += nrc == 0 && c.stalls == 0;
			if (dt > worst)
				worst = dt;
		}
		iop_close(&c);
	}
	printf("first Send of %d connections (nudge %s): %u answered without a resend (slowest "
	       "call %llu ms), %u resends after 1 s\n",
	       FIRST_SEND_CONNS, iop_nudge_on() ? "on" : "off", ok, (unsigned long long)worst,
	       stalls);
	if (iop_nudge_on())
		IOP_EXPECT(ok == FIRST_SEND_CONNS && stalls == 0 && worst < 1000);
	return stalls;
}

/*
 * RFC 6581 §9 / RFC 8166 §3.4.5: with our IRD 2, Linux answers ORD 2 and
 * pulls a WRITE's Read chunk of 16 segments (more than our IRD) without
 * ever having more than 2 Read Requests outstanding: our provider would
 * answer a third with a Terminate (qp_rx.c), and then the WRITE fails.
 * The data is READ back (Write chunk) and compared.
 */
static void ird_small(void)
{
	struct iop_env e;
	struct iop_conn c;
	struct iop_fh root, dir, fh;
	struct iop_dbuf src = {0}, back = {0};
	struct rpcrdma_ep_stats st;
	const uint32_t len = 65536, nseg = 16;
	uint32_t w = 0, got = 0;
	stable_how com = UNSTABLE;
	fattr3 a;
	bool eof = false;
	int rc;

	printf("IRD 2, WRITE with a Read chunk of %u segments\n", nseg);
	iop_connect_ird = 2;
	rc = iop_nfs3_setup(&e, &c, &root, false);
	iop_connect_ird = 128;
	if (rc != IOP_PASS) {
		iop_failures++;
		iop_close(&c);
		return;
	}
	printf("  Linux answered IRD %u ORD %u to our IRD 2 / ORD 0\n", c.est.ird, c.est.ord);
	IOP_EXPECT(c.est.ird == 0 && c.est.ord == 2);
	if (iop_nfs3_lookup(&c, &root, "interop", &dir, &a) != NFS3_OK ||
	    iop_dbuf_alloc(&c, &src, len) != 0 || iop_dbuf_alloc(&c, &back, len) != 0) {
		printf("FAIL: LOOKUP interop, buffers\n");
		iop_failures++;
		goto out;
	}
	(void)iop_nfs3_remove(&c, &dir, "irdord-segs");
	IOP_EXPECT(iop_nfs3_create(&c, &dir, "irdord-segs", UNCHECKED, 0644, &fh, &a) == NFS3_OK);
	iop_fill(src.p, len, 0x1dd0);
	iop_nfs3_write_segs = nseg;
	rc = iop_nfs3_write(&c, &fh, 0, len, FILE_SYNC, &src, 0, &w, &com, NULL);
	iop_nfs3_write_segs = 1;
	if (rc != NFS3_OK || w != len)
		fprintf(stderr,
			"RFC 8166 §3.4.5: WRITE of %u segments toward IRD 2: status %d, "
			"%u bytes written\n",
			nseg, rc, w);
	IOP_EXPECT(rc == NFS3_OK && w == len);
	IOP_EXPECT(iop_nfs3_read(&c, &fh, 0, len, &back, 0, &got, &eof) == NFS3_OK && got == len);
	IOP_EXPECT(memcmp(src.p, back.p, len) == 0);
	IOP_EXPECT(rpcrdma_ep_query_stats(c.ep, &st) == 0);
	printf("  %llu Read Requests served, %llu/%llu Terminates tx/rx, read-back %s\n",
	       (unsigned long long)st.reads_in, (unsigned long long)st.terminates_tx,
	       (unsigned long long)st.terminates_rx,
	       memcmp(src.p, back.p, len) ? "differs" : "identical");
	IOP_EXPECT(st.reads_in == nseg && st.terminates_tx == 0 && st.terminates_rx == 0);
	IOP_EXPECT(iop_nfs3_remove(&c, &dir, "irdord-segs") == NFS3_OK);
out:
	iop_dbuf_free(&src);
	iop_dbuf_free(&back);
	iop_close(&c);
}

int main(void)
{
	int rc = iop_env_get(&env);

	if (rc != IOP_PASS)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	one(env.rdma_port, false);
	one(env.rdma_port, true);
	rev1(env.rdma_port);
	rtr_compare(env.rdma_port);
	first_send_probe(env.rdma_port);
	ird_small();
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
