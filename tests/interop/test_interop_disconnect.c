/* SPDX-License-Identifier: MIT */
/*
 * Interop: a server-side disconnect in the middle of a 1 MiB READ, through
 * our client API (include/rpcrdma/client.h) against the Linux kernel's
 * nfsd. `rpc.nfsd 0` cannot do this (it lets in-flight calls finish), so a
 * TCP forwarding proxy runs in this process (a thread, real sockets)
 * between the client and the guest's forwarded NFS/RDMA port:
 *
 *   client --TCP--> proxy (127.0.0.1:ephemeral) --TCP--> QEMU forward -> nfsd
 *
 * On the first connection the proxy forwards the server->client direction
 * until CUT_AT bytes (256 KiB: MPA reply, and then the READ's Write-chunk
 * data, RDMA Write FPDUs) have passed, then resets both sides (SO_LINGER 0,
 * close: a TCP RST each way). Every later connection passes through. It
 * also reads the client->server bytes: after the MPA request (RFC 5044
 * §7.1: 16-byte key, flags/rev, PD_Length, private data) the first FPDU
 * (ULPDU_Length, DDP untagged header, RFC 5041 §4.3/§4.4) must be an
 * RDMAP Send (RFC 5040 §4.3) whose payload starts with the
 * RPC-over-RDMA rdma_xid (RFC 8166 §4.2).
 *
 * Asserted:
 *   - the READ (the client's first call on the proxied connection) is cut
 *     after at least CUT_AT server->client bytes, less than the 1 MiB it
 *     needs: mid-READ;
 *   - the client reconnects through the proxy by itself (stats: 1+
 *     reconnect, 1+ connection error, 1+ retransmission; the call's
 *     result: 2 transmissions) and the READ completes: nfsstat3 OK, 1 MiB
 *     placed by Write chunk, cksum = the guest's cksum of read-1m;
 *   - the rdma_xid of the first Send on the second connection equals the
 *     first connection's, and the call's XID (RFC 8166 §4.2: a
 *     retransmission keeps its XID, so a server's duplicate reply cache
 *     can recognise it);
 *   - a second READ on the new connection completes without
 *     retransmission (nothing left behind by the cut).
 * Then RDMA_ERROR / ERR_VERS through the client API (err_vers below): a
 * second proxy rewrites the rdma_vers of the client's first Send to 2.
 * Linux 6.1 siw can leave a client's first Send unread (README); our
 * provider's first-frame nudge makes it read it, also on the reconnection
 * (the retransmitted READ is the first Send there). With the nudge off
 * (RPCRDMA_SIW_NUDGE_MS=0) the proxy holds the client's first FPDU of
 * each connection until 500 ms after it forwarded the MPA request
 * (RPCRDMA_INTEROP_PROXY_HOLD_MS overrides), and the handles' lookup waits
 * as long after connecting.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nfs3_clnt_api.h"
#include "rpcrdma/client.h"
#include "util/be.h"

#define MIB    (1u << 20)
#define CUT_AT (256u << 10)
#define MAXC   8

/* ------------------------------------------------------------ the proxy */

struct pconn {
	uint64_t c2s, s2c; /* bytes forwarded each way */
	uint8_t head[256]; /* first client->server bytes */
	size_t nhead;
	uint32_t first_xid; /* rdma_xid of the first Send */
	int first_opcode;   /* RDMAP opcode of the first FPDU, -1 unknown */
	uint64_t cut_s2c;   /* s2c bytes when cut (first connection) */
	bool cut;
	unsigned int rewritten; /* bytes of rdma_vers rewritten (4: done) */
};

struct proxy {
	int lfd;
	uint16_t port, target;
	int hold_ms;
	bool cut_first;    /* cut the first connection after CUT_AT s2c bytes */
	bool rewrite_vers; /* first connection: its first Send goes with rdma_vers 2 */
	pthread_t th;
	volatile int stop;
	pthread_mutex_t lock;
	unsigned int nconn;
	struct pconn conn[MAXC];
};

static void rst_close(int fd)
{
	struct linger l = {.l_onoff = 1, .l_linger = 0};

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/* Where the first FPDU starts in the client's stream: after the MPA
 * request frame (0 while its header is incomplete). */
static size_t mpa_req_len(const struct pconn *pc)
{
	if (pc->nhead < 20)
		return 0;
	return 20u + (size_t)get_be16(pc->head + 18);
}

/* The first FPDU: ULPDU_Length (2), DDP control, RDMAP control (opcode in
 * the low 4 bits), then for an untagged message Inv STag, QN, MSN, MO
 * (4 each); the Send's payload follows: rdma_xid first. */
static void parse_first_send(struct pconn *pc)
{
	size_t off = mpa_req_len(pc);

	if (!off || pc->first_opcode >= 0 || pc->nhead < off + 2 + 18 + 8)
		return;
	const uint8_t *f = pc->head + off;

	pc->first_opcode = f[3] & 0x0f;
	if (!(f[2] & 0x80)) /* untagged */
		pc->first_xid = get_be32(f + 20);
}

/* The first Send's rdma_vers word (RFC 8166 §4.2: the second word of the
 * transport header) set to 2 where it lies in the @n bytes about to be
 * forwarded (the stream is at pc->c2s). MPA CRC is off: no CRC to fix. */
static void rewrite_vers(struct pconn *pc, uint8_t *buf, size_t n)
{
	static const uint8_t two[4] = {0, 0, 0, 2};
	uint64_t at = mpa_req_len(pc) + 2 + 18 + 4;

	for (unsigned int i = 0; i < 4; i++)
		if (at + i >= pc->c2s && at + i < pc->c2s + n) {
			buf[at + i - pc->c2s] = two[i];
			pc->rewritten++;
		}
}

static int connect_target(uint16_t port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Forward one connection until either side ends, the cut, or stop. */
static void serve(struct proxy *p, int cfd, unsigned int idx)
{
	static uint8_t buf[64 << 10];
	struct pconn *pc = &p->conn[idx];
	int sfd = connect_target(p->target), one = 1;
	uint64_t req_done_ms = 0;

	if (sfd < 0) {
		close(cfd);
		return;
	}
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (!p->stop) {
		size_t req = mpa_req_len(pc);
		/* Hold the client's bytes after its MPA request for hold_ms. */
		bool hold = p->hold_ms > 0 && req && pc->c2s >= req &&
			    (req_done_ms == 0 || iop_now_ms() < req_done_ms + (uint64_t)p->hold_ms);
		struct pollfd fds[2] = {{.fd = cfd, .events = hold ? 0 : POLLIN},
					{.fd = sfd, .events = POLLIN}};

		if (poll(fds, 2, hold ? 5 : 100) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			size_t want = sizeof(buf);
			ssize_t n;

			/* Up to the end of the MPA request first, so the hold
			 * starts exactly there. */
			if (!req && pc->nhead < 20)
				want = 20 - pc->nhead;
			else if (req && pc->c2s < req)
				want = req - pc->c2s;
			n = recv(cfd, buf, want, 0);
			if (n <= 0)
				break;
			pthread_mutex_lock(&p->lock);
			if (pc->nhead < sizeof(pc->head)) {
				size_t k = sizeof(pc->head) - pc->nhead;

				k = k < (size_t)n ? k : (size_t)n;
				memcpy(pc->head + pc->nhead, buf, k);
				pc->nhead += k;
				parse_first_send(pc);
			}
			if (idx == 0 && p->rewrite_vers && pc->first_opcode == 3)
				rewrite_vers(pc, buf, (size_t)n);
			pc->c2s += (uint64_t)n;
			pthread_mutex_unlock(&p->lock);
			if (!req_done_ms && mpa_req_len(pc) && pc->c2s >= mpa_req_len(pc))
				req_done_ms = iop_now_ms();
			if (send(sfd, buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			size_t want = sizeof(buf);
			ssize_t n;

			if (idx == 0 && p->cut_first && CUT_AT - pc->s2c < want)
				want = CUT_AT - pc->s2c;
			n = recv(sfd, buf, want, 0);
			if (n <= 0)
				break;
			if (send(cfd, buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
			pthread_mutex_lock(&p->lock);
			pc->s2c += (uint64_t)n;
			if (idx == 0 && p->cut_first && pc->s2c >= CUT_AT) {
				pc->cut = true;
				pc->cut_s2c = pc->s2c;
			}
			pthread_mutex_unlock(&p->lock);
			if (pc->cut) {
				/* Both sides at once: the server loses the
				 * connection mid-READ, the client sees a reset. */
				rst_close(sfd);
				rst_close(cfd);
				return;
			}
		}
	}
	close(sfd);
	close(cfd);
}

static void *proxy_main(void *arg)
{
	struct proxy *p = arg;

	while (!p->stop) {
		struct pollfd pf = {.fd = p->lfd, .events = POLLIN};

		if (poll(&pf, 1, 100) <= 0)
			continue;
		int cfd = accept(p->lfd, NULL, NULL);

		if (cfd < 0)
			continue;
		pthread_mutex_lock(&p->lock);
		unsigned int idx = p->nconn < MAXC ? p->nconn++ : MAXC;

		if (idx < MAXC)
			p->conn[idx].first_opcode = -1;
		pthread_mutex_unlock(&p->lock);
		if (idx == MAXC) {
			close(cfd);
			continue;
		}
		serve(p, cfd, idx);
	}
	return NULL;
}

static int proxy_start(struct proxy *p, uint16_t target, int hold_ms, bool cut_first, bool rewrite)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->target = target;
	p->hold_ms = hold_ms;
	p->cut_first = cut_first;
	p->rewrite_vers = rewrite;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->lfd = socket(AF_INET, SOCK_STREAM, 0);
	IOP_CHECK(p->lfd >= 0);
	IOP_CHECK(bind(p->lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	IOP_CHECK(listen(p->lfd, 4) == 0);
	IOP_CHECK(getsockname(p->lfd, (struct sockaddr *)&sin, &sl) == 0);
	p->port = ntohs(sin.sin_port);
	IOP_CHECK(pthread_create(&p->th, NULL, proxy_main, p) == 0);
	return 0;
}

static void proxy_stop(struct proxy *p)
{
	p->stop = 1;
	pthread_join(p->th, NULL);
	close(p->lfd);
	pthread_mutex_destroy(&p->lock);
}

/* ------------------------------------------------------------ NFS bits */

static int read_1m(struct rpcrdma_clnt *cl, const struct iop_fh *fh, uint8_t *buf,
		   struct rpcrdma_call_result *res, READ3res *r)
{
	READ3args a = {.file = iop_fh3(fh), .offset = 0, .count = MIB};
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_RECV_BULK | RPCRDMA_CALL_OPT_RESULT};

	memset(r, 0, sizeof(*r));
	memset(res, 0, sizeof(*res));
	o.recv_bulk[0].base = buf;
	o.recv_bulk[0].len = MIB;
	o.nrecv_bulk = 1;
	o.result = res;
	return rpcrdma_clnt_call(cl, NFSPROC3_READ, (xdrproc_t)xdr_READ3args, &a,
				 (xdrproc_t)xdr_READ3res, r, &o);
}

static struct rpcrdma_clnt *make_clnt(uint16_t port)
{
	struct rpcrdma_clnt_opts co = {0};
	struct rpcrdma_clnt *cl = NULL;
	int rc;

	co.comp_mask = RPCRDMA_CLNT_OPT_PROVIDER | RPCRDMA_CLNT_OPT_INLINE |
		       RPCRDMA_CLNT_OPT_MPA_CRC | RPCRDMA_CLNT_OPT_TIMEOUT |
		       RPCRDMA_CLNT_OPT_REMOTE_INV | RPCRDMA_CLNT_OPT_RETRIES;
	co.provider = "softiwarp";
	co.inline_send = 4096;
	co.inline_recv = 4096;
	co.mpa_crc = 0; /* the proxy reads the FPDUs: no CRC trailer to mind */
	co.timeout_ms = 20000;
	co.remote_invalidate = 1;
	co.retries = 3;
	iop_clnt_auth_root(&co); /* the export is sec=sys */
	rc = rpcrdma_clnt_create("127.0.0.1", port, NFS_PROGRAM, NFS_V3, &co, &cl);
	if (rc) {
		printf("rpcrdma_clnt_create(127.0.0.1:%u): %d (%s)\n", port, rc,
		       rpcrdma_strerror(rc));
		iop_failures++;
		return NULL;
	}
	return cl;
}

static void *nothing_res;

/* void arguments / results (xdr_void has no parameters in libtirpc). */
static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

/*
 * RDMA_ERROR / ERR_VERS through the client API: a proxy rewrites the
 * rdma_vers of the client's first Send to 2; Linux answers RDMA_ERROR
 * ERR_VERS with rdma_vers 2 echoed in the fixed words, and the call must
 * fail with -EPROTONOSUPPORT, its result naming ERR_VERS and the server's
 * range 1..1 (our codec decodes ERR_VERS whatever its rdma_vers, RFC 8166
 * §7). The next call on the same connection succeeds.
 */
static void err_vers(const struct iop_env *env, int hold)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT};
	struct rpcrdma_call_result res;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *cl;
	struct proxy px;
	unsigned int rewritten;
	int rc;

	if (proxy_start(&px, env->rdma_port, hold, false, true) != 0)
		return;
	cl = make_clnt(px.port);
	if (cl) {
		memset(&res, 0, sizeof(res));
		o.result = &res;
		rc = rpcrdma_clnt_call(cl, NFSPROC3_NULL, (xdrproc_t)xdr_nothing, NULL,
				       (xdrproc_t)xdr_nothing, &nothing_res, &o);
		iop_note_invalid_xid(env, res.xid);
		pthread_mutex_lock(&px.lock);
		rewritten = px.conn[0].rewritten;
		pthread_mutex_unlock(&px.lock);
		printf("NULL with rdma_vers 2 (rewritten by the proxy: %u bytes): %d (%s), reply "
		       "proc %u, rdma_err %u, versions %u..%u\n",
		       rewritten, rc, rpcrdma_strerror(rc), res.reply_proc, res.rdma_err,
		       res.mismatch_low, res.mismatch_high);
		IOP_EXPECT(rewritten == 4);
		IOP_EXPECT(rc == -EPROTONOSUPPORT && res.reply_proc == RPCRDMA1_ERROR &&
			   res.rdma_err == RPCRDMA1_ERR_VERS);
		IOP_EXPECT(res.mismatch_low == 1 && res.mismatch_high == 1);
		rc = rpcrdma_clnt_call(cl, NFSPROC3_NULL, (xdrproc_t)xdr_nothing, NULL,
				       (xdrproc_t)xdr_nothing, &nothing_res, NULL);
		printf("NULL again (rdma_vers 1): %d (%s)\n", rc, rpcrdma_strerror(rc));
		IOP_EXPECT(rc == 0);
		IOP_EXPECT(rpcrdma_clnt_stats(cl, &st) == 0 && st.err_vers_rx == 1 &&
			   st.bad_headers == 0 && st.reconnects == 0);
		rpcrdma_clnt_destroy(cl);
	}
	proxy_stop(&px);
}

int main(void)
{
	struct iop_env env;
	struct iop_fh root, dir, f;
	struct rpcrdma_clnt *cl;
	struct rpcrdma_call_result res;
	struct rpcrdma_xprt_stats st;
	READ3res r;
	struct proxy px;
	uint8_t *buf = NULL;
	uint32_t want = 0, read_xid = 0;
	uint64_t size = 0, t0;
	char ck[600];
	const char *h = getenv("RPCRDMA_INTEROP_PROXY_HOLD_MS");
	int hold = h ? atoi(h) : iop_nudge_on() ? 0 : 500;
	int rc = iop_env_get(&env);

	if (rc != IOP_PASS)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(ck, sizeof(ck), "%s/export.cksum", env.guest_out);
	if (iop_cksum_lookup(ck, "read-1m", &want, &size) != 0 || size != MIB) {
		printf("FAIL: no cksum of read-1m from the guest (%s)\n", ck);
		return IOP_FAIL;
	}
	if (iop_mount(env.mount_port, "/export", root.data, &root.len) != 0) {
		printf("FAIL: MOUNT /export over TCP (127.0.0.1:%u)\n", env.mount_port);
		return IOP_FAIL;
	}
	buf = aligned_alloc(4096, MIB);
	if (!buf || proxy_start(&px, env.rdma_port, hold, true, false) != 0) {
		free(buf);
		return IOP_FAIL;
	}
	printf("proxy 127.0.0.1:%u -> 127.0.0.1:%u, cut after %u server->client bytes on the "
	       "first connection, client's first FPDU held %d ms\n",
	       px.port, env.rdma_port, CUT_AT, hold);

	/* The file handles first, over a direct connection of their own: the
	 * READ must be the first call on the proxied connection (the one cut),
	 * so that the first Send of each proxied connection is the READ. */
	cl = make_clnt(env.rdma_port);
	if (!cl)
		goto out;
	if (hold > 0)
		usleep((unsigned int)hold * 1000u); /* first-Send stall, see above */
	rc =
	    iop_clnt_lookup(cl, &root, "interop", &dir) || iop_clnt_lookup(cl, &dir, "read-1m", &f);
	rpcrdma_clnt_destroy(cl);
	if (rc)
		goto out;

	cl = make_clnt(px.port);
	if (!cl)
		goto out;
	t0 = iop_now_ms();
	memset(buf, 0, MIB);
	rc = read_1m(cl, &f, buf, &res, &r);
	printf("READ 1 MiB through the proxy: %d (%s) after %llu ms, nfsstat3 %d count %u, xid "
	       "0x%08x, %u transmissions, %u bytes placed by Write chunk\n",
	       rc, rpcrdma_strerror(rc), (unsigned long long)(iop_now_ms() - t0), r.status,
	       r.READ3res_u.resok.count, res.xid, res.transmissions, res.recv_bulk_len[0]);
	IOP_EXPECT(rc == 0 && r.status == NFS3_OK && r.READ3res_u.resok.count == MIB);
	IOP_EXPECT(res.recv_bulk_len[0] == MIB && res.write_chunks == 1);
	IOP_EXPECT(res.transmissions == 2);
	read_xid = res.xid;
	if (rc == 0) {
		printf("cksum %u (guest %u)\n", iop_cksum(buf, MIB), want);
		IOP_EXPECT(iop_cksum(buf, MIB) == want);
	}
	IOP_EXPECT(rpcrdma_clnt_stats(cl, &st) == 0);
	printf("client stats: %llu calls %llu replies, %llu retransmits, %llu reconnects, %llu "
	       "conn errors\n",
	       (unsigned long long)st.calls, (unsigned long long)st.replies,
	       (unsigned long long)st.retransmits, (unsigned long long)st.reconnects,
	       (unsigned long long)st.conn_errors);
	IOP_EXPECT(st.retransmits >= 1 && st.reconnects >= 1 && st.conn_errors >= 1);

	/* A second READ on the new connection: no retransmission. */
	memset(buf, 0, MIB);
	rc = read_1m(cl, &f, buf, &res, &r);
	printf("second READ: %d, %u transmissions, cksum %s\n", rc, res.transmissions,
	       rc == 0 && iop_cksum(buf, MIB) == want ? "ok" : "WRONG");
	IOP_EXPECT(rc == 0 && r.status == NFS3_OK && res.transmissions == 1 &&
		   iop_cksum(buf, MIB) == want);
	rpcrdma_clnt_destroy(cl);

	/* The proxy's view of the bytes. */
	pthread_mutex_lock(&px.lock);
	for (unsigned int i = 0; i < px.nconn; i++)
		printf("proxied connection %u: %llu bytes client->server, %llu server->client%s; "
		       "first FPDU RDMAP opcode %d, rdma_xid 0x%08x\n",
		       i, (unsigned long long)px.conn[i].c2s, (unsigned long long)px.conn[i].s2c,
		       px.conn[i].cut ? " (cut here)" : "", px.conn[i].first_opcode,
		       px.conn[i].first_xid);
	IOP_EXPECT(px.nconn == 2);
	if (px.nconn >= 2) {
		/* RFC 5040 §4.3: opcode 3 = Send (5: Send with Solicited Event) */
		IOP_EXPECT(px.conn[0].first_opcode == 3 || px.conn[0].first_opcode == 5);
		IOP_EXPECT(px.conn[1].first_opcode == 3 || px.conn[1].first_opcode == 5);
		IOP_EXPECT(px.conn[0].cut && px.conn[0].cut_s2c >= CUT_AT &&
			   px.conn[0].cut_s2c < MIB);
		IOP_EXPECT(!px.conn[1].cut && px.conn[1].s2c > 2u * MIB);
		IOP_EXPECT(px.conn[0].first_xid == px.conn[1].first_xid);
		IOP_EXPECT(px.conn[0].first_xid == read_xid);
	}
	pthread_mutex_unlock(&px.lock);
	proxy_stop(&px);

	err_vers(&env, hold);
	free(buf);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;

out:
	proxy_stop(&px);
	free(buf);
	printf("%s (%d failed expectations)\n", iop_failures ? "FAIL" : "PASS", iop_failures);
	return iop_failures ? IOP_FAIL : IOP_PASS;
}
