/* SPDX-License-Identifier: MIT */
/*
 * Wire test (label "wire"): our RPC-over-RDMA Version One decoder against
 * Wireshark's rpcordma dissector on real Linux traffic.
 *
 * For each capture of the Linux kernel client and server talking over siw
 * (linux-siw-nfsv3.pcap.gz, linux-siw-nfsv4.1.pcap.gz in the directory
 * given as argv[1], tests/data/captures; tshark reads gzip), tshark (two
 * passes, -2, as every wire test here) lists every frame that carries an
 * RPC-over-RDMA header with -T fields: every rpcordma field, all
 * occurrences, and the TCP payload with the MPA length and DDP offset that
 * place the Send's bytes in it (as tests/xprt/xprt_v2_wire.sh reads
 * tcp.payload). We decode those bytes with rpcrdma1_decode_buf() and
 * assert:
 *   - it decodes, and its header length is the one tshark's fields add up
 *     to (RFC 8166 §4.2 sizes); in an RDMA_MSG whose RPC message tshark
 *     decodes, that message's xid is the word right after our header;
 *   - same xid, version, credit, proc;
 *   - same number of Read chunks (positions), Write chunks and Reply chunk
 *     presence, the same segment count per Write chunk and Reply chunk, and
 *     the same handle / length / offset for every segment in order;
 *   - re-encoding the decoded header gives back the captured bytes;
 *   - the kernel's calls pass our responder checks (rpcrdma1_check_call)
 *     and its replies our requester checks (rpcrdma1_check_reply); a
 *     message is a reply when an earlier message carried the same xid.
 * It also requires that the captures hold at least one message with each of
 * a Read list, a Write list and a Reply chunk, 200 messages in all and 100
 * RPC messages found after the header, so the comparison cannot pass
 * vacuously.
 *
 * Exit 77 (skip) when tshark or the captures are missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/hex.h"
#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"
#include "util/be.h"

#define MAX_FIELD 256 /* values of one repeated field in one message */

enum section { SEC_NONE, SEC_READ, SEC_WRITE, SEC_REPLY };

struct list {
	unsigned n;
	uint64_t v[MAX_FIELD];
};

/* What tshark says about one message. */
struct tmsg {
	long frame;
	uint8_t raw[65536]; /* the Send's bytes in this FPDU */
	size_t raw_len;
	int have_raw;
	int have_xid;
	uint64_t xid, vers, credit, proc;
	uint64_t reads_count, writes_count, reply_count;
	int have_align;
	uint64_t align, thresh;
	int have_err;
	uint64_t errcode, vers_low, vers_high;
	struct list positions;
	struct list handle[4], length[4], offset[4]; /* by section */
	struct list segcount_write, segcount_reply;
	size_t tshark_hdr_len; /* what tshark's fields add up to */
};

static int failures;
static unsigned total_msgs, with_reads, with_writes, with_reply, total_segs;
static unsigned calls, replies, rpc_after_hdr;
static uint32_t seen_xid[8192];
static unsigned nseen;

/* Calls come first on the wire; there are no retransmissions in these
 * captures, so a repeated xid is the reply. */
static int is_reply(uint32_t xid)
{
	for (unsigned i = 0; i < nseen; i++)
		if (seen_xid[i] == xid)
			return 1;
	if (nseen < sizeof(seen_xid) / sizeof(seen_xid[0]))
		seen_xid[nseen++] = xid;
	return 0;
}

static void fail(const struct tmsg *m, const char *what)
{
	fprintf(stderr, "frame %ld: %s\n", m->frame, what);
	failures++;
}

static void check_list(const struct tmsg *m, const char *what, const struct list *l,
		       const uint64_t *ours, unsigned n)
{
	char msg[160];
	if (l->n != n) {
		snprintf(msg, sizeof(msg), "%s: tshark shows %u values, we decoded %u", what, l->n,
			 n);
		fail(m, msg);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		if (l->v[i] != ours[i]) {
			snprintf(msg, sizeof(msg), "%s[%u]: tshark 0x%llx, ours 0x%llx", what, i,
				 (unsigned long long)l->v[i], (unsigned long long)ours[i]);
			fail(m, msg);
		}
	}
}

static void compare(const struct tmsg *m)
{
	static struct rpcrdma1_hdr h;
	static uint64_t
	    tmp[RPCRDMA1_MAX_READ_SEGS + RPCRDMA1_MAX_WRITE_SEGS + RPCRDMA1_MAX_REPLY_SEGS];
	char msg[160];

	if (!m->have_raw || !m->have_xid) {
		fail(m, "tshark gave no rpcordma bytes or fields");
		return;
	}
	total_msgs++;
	int rc = rpcrdma1_decode_buf(m->raw, m->raw_len, &h);
	if (rc) {
		snprintf(msg, sizeof(msg), "decode failed: %d (%s), %zu bytes", rc, strerror(-rc),
			 m->raw_len);
		fail(m, msg);
		return;
	}
	if (h.hdr_len != m->tshark_hdr_len) {
		snprintf(msg, sizeof(msg), "header length %zu, tshark's fields span %zu", h.hdr_len,
			 m->tshark_hdr_len);
		fail(m, msg);
	}
	if (h.xid != m->xid || h.vers != m->vers || h.credit != m->credit || h.proc != m->proc) {
		snprintf(msg, sizeof(msg), "fixed words differ: ours %08x/%u/%u/%u", h.xid, h.vers,
			 h.credit, h.proc);
		fail(m, msg);
	}
	if (m->have_align && (h.align != m->align || h.thresh != m->thresh))
		fail(m, "MSGP align/thresh differ");
	if (m->have_err &&
	    (h.err != m->errcode || (h.err == RPCRDMA1_ERR_VERS &&
				     (h.vers_low != m->vers_low || h.vers_high != m->vers_high))))
		fail(m, "RDMA_ERROR body differs");

	const struct rpcrdma1_chunks *c = &h.chunks;
	if (h.proc <= RPCRDMA1_MSGP) {
		/* Read list: tshark shows one position per Read chunk. */
		uint32_t nchunks = 0;
		if (rpcrdma1_check_read_list(c, &nchunks))
			fail(m, "Read list breaks the position rules");
		if (m->reads_count != nchunks) {
			snprintf(msg, sizeof(msg), "reads_count %llu, our Read chunks %u",
				 (unsigned long long)m->reads_count, nchunks);
			fail(m, msg);
		}
		unsigned k = 0;
		for (uint32_t i = 0; i < c->nreads;) {
			uint32_t pos, ns;
			uint64_t len;
			rpcrdma1_read_chunk(c, i, &pos, &ns, &len);
			tmp[k++] = pos;
			i += ns;
		}
		check_list(m, "read positions", &m->positions, tmp, k);
		for (uint32_t i = 0; i < c->nreads; i++)
			tmp[i] = c->reads[i].seg.handle;
		check_list(m, "read handles", &m->handle[SEC_READ], tmp, c->nreads);
		for (uint32_t i = 0; i < c->nreads; i++)
			tmp[i] = c->reads[i].seg.length;
		check_list(m, "read lengths", &m->length[SEC_READ], tmp, c->nreads);
		for (uint32_t i = 0; i < c->nreads; i++)
			tmp[i] = c->reads[i].seg.offset;
		check_list(m, "read offsets", &m->offset[SEC_READ], tmp, c->nreads);

		/* Write list: per-chunk segment counts then every segment. */
		if (m->writes_count != c->nwrites)
			fail(m, "writes_count differs");
		for (uint32_t i = 0; i < c->nwrites; i++)
			tmp[i] = c->writes[i].nsegs;
		check_list(m, "write chunk segment counts", &m->segcount_write, tmp, c->nwrites);
		k = 0;
		for (uint32_t i = 0; i < c->nwrites; i++)
			for (uint32_t s = 0; s < c->writes[i].nsegs; s++)
				tmp[k++] = c->wsegs[c->writes[i].first + s].handle;
		check_list(m, "write handles", &m->handle[SEC_WRITE], tmp, k);
		k = 0;
		for (uint32_t i = 0; i < c->nwrites; i++)
			for (uint32_t s = 0; s < c->writes[i].nsegs; s++)
				tmp[k++] = c->wsegs[c->writes[i].first + s].length;
		check_list(m, "write lengths", &m->length[SEC_WRITE], tmp, k);
		k = 0;
		for (uint32_t i = 0; i < c->nwrites; i++)
			for (uint32_t s = 0; s < c->writes[i].nsegs; s++)
				tmp[k++] = c->wsegs[c->writes[i].first + s].offset;
		check_list(m, "write offsets", &m->offset[SEC_WRITE], tmp, k);

		/* Reply chunk */
		if (m->reply_count != (c->reply_present ? 1u : 0u))
			fail(m, "reply_count differs");
		tmp[0] = c->nreply;
		check_list(m, "reply segment count", &m->segcount_reply, tmp,
			   c->reply_present ? 1 : 0);
		for (uint32_t i = 0; i < c->nreply; i++)
			tmp[i] = c->reply[i].handle;
		check_list(m, "reply handles", &m->handle[SEC_REPLY], tmp, c->nreply);
		for (uint32_t i = 0; i < c->nreply; i++)
			tmp[i] = c->reply[i].length;
		check_list(m, "reply lengths", &m->length[SEC_REPLY], tmp, c->nreply);
		for (uint32_t i = 0; i < c->nreply; i++)
			tmp[i] = c->reply[i].offset;
		check_list(m, "reply offsets", &m->offset[SEC_REPLY], tmp, c->nreply);

		with_reads += c->nreads > 0;
		with_writes += c->nwrites > 0;
		with_reply += c->reply_present;
		total_segs += c->nreads + c->nwsegs + c->nreply;
	}

	if (is_reply(h.xid)) {
		replies++;
		rc = rpcrdma1_check_reply(&h);
		if (rc) {
			snprintf(msg, sizeof(msg), "reply fails rpcrdma1_check_reply: %d", rc);
			fail(m, msg);
		}
	} else {
		calls++;
		rc = rpcrdma1_check_call(&h);
		if (rc) {
			snprintf(msg, sizeof(msg), "call fails rpcrdma1_check_call: %d", rc);
			fail(m, msg);
		}
	}

	/* Our encoder reproduces the kernel's bytes. */
	static uint8_t out[4096];
	struct rpcrdma_xdr x;
	rpcrdma_xdr_init(&x, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	if (rpcrdma1_encode(&x, &h) || rpcrdma_xdr_getpos(&x) != h.hdr_len ||
	    memcmp(out, m->raw, h.hdr_len) != 0)
		fail(m, "re-encoding does not reproduce the captured header");
}

/*
 * The columns asked of tshark (-T fields), in this order. Every rpcordma
 * field the dissector has, with all occurrences (-E occurrence=a, values
 * joined by the aggregator ','), plus what locates the header's bytes: the
 * TCP payload, the MPA length of the FPDU in it, DDP's message offset and
 * RDMAP's opcode; and the RPC xid tshark decodes after the header.
 */
enum col {
	C_FRAME,
	C_PAYLOAD,
	C_MPA_LEN,
	C_DDP_MO,
	C_OPCODE,
	C_XID,
	C_VERS,
	C_CREDIT,
	C_PROC,
	C_READS,
	C_WRITES,
	C_REPLY,
	C_POSITION,
	C_SEGCOUNT,
	C_HANDLE,
	C_LENGTH,
	C_OFFSET,
	C_ALIGN,
	C_THRESH,
	C_ERRCODE,
	C_VERS_LOW,
	C_VERS_HIGH,
	C_RPC_XID,
	NCOLS
};

static const char *const col_field[NCOLS] = {
    [C_FRAME] = "frame.number",
    [C_PAYLOAD] = "tcp.payload",
    [C_MPA_LEN] = "iwarp_mpa.ulpdulength",
    [C_DDP_MO] = "iwarp_ddp.mo",
    [C_OPCODE] = "iwarp_rdma.opcode",
    [C_XID] = "rpcordma.xid",
    [C_VERS] = "rpcordma.version",
    [C_CREDIT] = "rpcordma.flow_control",
    [C_PROC] = "rpcordma.msg_type",
    [C_READS] = "rpcordma.reads_count",
    [C_WRITES] = "rpcordma.writes_count",
    [C_REPLY] = "rpcordma.reply_count",
    [C_POSITION] = "rpcordma.position",
    [C_SEGCOUNT] = "rpcordma.segment_count",
    [C_HANDLE] = "rpcordma.rdma_handle",
    [C_LENGTH] = "rpcordma.rdma_length",
    [C_OFFSET] = "rpcordma.rdma_offset",
    [C_ALIGN] = "rpcordma.rdma_align",
    [C_THRESH] = "rpcordma.rdma_thresh",
    [C_ERRCODE] = "rpcordma.errcode",
    [C_VERS_LOW] = "rpcordma.vers_low",
    [C_VERS_HIGH] = "rpcordma.vers_high",
    [C_RPC_XID] = "rpc.xid",
};

/* MPA length (RFC 5044 §4.1) then the untagged DDP / RDMAP header (RFC
 * 5041 §4.3 and RFC 5040 §4.1: control 2, reserved ULP 4, QN 4, MSN 4,
 * MO 4): a Send's bytes start this far into its FPDU. */
#define FPDU_SEND_DATA_OFF (2 + 18)
#define DDP_UNTAGGED_HDR   18

/* One column's values ("a,b,c"; empty: none) into @l. */
static int parse_list(char *text, struct list *l)
{
	l->n = 0;
	if (!*text)
		return 0;
	for (char *v = strtok(text, ","); v; v = strtok(NULL, ",")) {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(v, &end, 0);
		if (errno || end == v || *end || l->n == MAX_FIELD)
			return -1;
		l->v[l->n++] = x;
	}
	return 0;
}

/* A column that holds one value at most; @have says whether it did. */
static int one(const struct list *l, uint64_t *v, int *have)
{
	if (l->n > 1)
		return -1;
	*v = l->n ? l->v[0] : 0;
	if (have)
		*have = l->n == 1;
	return 0;
}

/* Values [from, from + n) of @src into @dst. */
static void slice(struct list *dst, const struct list *src, unsigned from, unsigned n)
{
	dst->n = n;
	memcpy(dst->v, src->v + from, n * sizeof(src->v[0]));
}

/* The header length tshark's fields imply (RFC 8166 §4.2 / RFC 5666
 * §4.3): the fixed words, then by proc the chunk lists (a Read segment is
 * discriminator, position, handle, length, 64-bit offset; a Write or Reply
 * chunk a discriminator and a count, then 16 bytes per segment; each list
 * ends in a zero discriminator) or the RDMA_ERROR body. */
static size_t tshark_hdr_len(const struct tmsg *m, unsigned nread, unsigned nwsegs, unsigned nreply)
{
	size_t len = 16;
	if (m->proc <= RPCRDMA1_MSGP) {
		len += m->proc == RPCRDMA1_MSGP ? 8 : 0;
		len += 4 + 24 * (size_t)nread;
		len += 4 + 8 * (size_t)m->writes_count + 16 * (size_t)nwsegs;
		len += 4 + (m->reply_count ? 4 + 16 * (size_t)nreply : 0);
	} else if (m->proc == RPCRDMA1_ERROR) {
		len += 4 + (m->errcode == RPCRDMA1_ERR_VERS ? 8 : 0);
	}
	return len;
}

/*
 * One line of tshark's output (NCOLS columns separated by '|') into @m.
 * tshark lists every rdma_handle / rdma_length / rdma_offset of a message
 * in wire order with no section: the Write chunks' and the Reply chunk's
 * segment counts say how many of them are the Write list's and the Reply
 * chunk's (Read segments carry no count: they are the ones before). A
 * frame must hold one FPDU, carrying the start (MO 0) of a Send: the
 * captures are laid out so, and any other layout fails rather than being
 * skipped.
 */
static int parse_line(struct tmsg *m, char *line, uint64_t *rpc_xid, int *have_rpc_xid)
{
	static struct list col[NCOLS];
	static uint8_t payload[sizeof(m->raw) + FPDU_SEND_DATA_OFF];
	char *text[NCOLS];
	uint64_t mpa_len, mo, opcode;

	line[strcspn(line, "\n")] = 0;
	for (unsigned i = 0; i < NCOLS; i++) {
		text[i] = strsep(&line, "|");
		if (!text[i])
			return -1;
	}
	if (line)
		return -1; /* more columns than asked for */
	for (unsigned i = 0; i < NCOLS; i++)
		if (i != C_PAYLOAD && parse_list(text[i], &col[i]))
			return -1;
	uint64_t frame;
	if (one(&col[C_FRAME], &frame, NULL))
		return -1;
	m->frame = (long)frame;
	if (col[C_XID].n != 1 || col[C_MPA_LEN].n != 1 || col[C_DDP_MO].n != 1 ||
	    col[C_OPCODE].n != 1) {
		fail(m, "not one FPDU with one RPC-over-RDMA message in this frame");
		return 0;
	}
	m->xid = col[C_XID].v[0];
	m->have_xid = 1;
	if (one(&col[C_VERS], &m->vers, NULL) || one(&col[C_CREDIT], &m->credit, NULL) ||
	    one(&col[C_PROC], &m->proc, NULL) || one(&col[C_READS], &m->reads_count, NULL) ||
	    one(&col[C_WRITES], &m->writes_count, NULL) ||
	    one(&col[C_REPLY], &m->reply_count, NULL) ||
	    one(&col[C_ALIGN], &m->align, &m->have_align) ||
	    one(&col[C_THRESH], &m->thresh, NULL) ||
	    one(&col[C_ERRCODE], &m->errcode, &m->have_err) ||
	    one(&col[C_VERS_LOW], &m->vers_low, NULL) ||
	    one(&col[C_VERS_HIGH], &m->vers_high, NULL) ||
	    one(&col[C_RPC_XID], rpc_xid, have_rpc_xid) || one(&col[C_MPA_LEN], &mpa_len, NULL) ||
	    one(&col[C_DDP_MO], &mo, NULL) || one(&col[C_OPCODE], &opcode, NULL))
		return -1;

	/* RFC 5040 §4.3: opcodes 3-6 are the Sends. */
	long n = tl_unhex(text[C_PAYLOAD], payload, sizeof(payload));
	if (opcode < 3 || opcode > 6 || mo != 0 || n < FPDU_SEND_DATA_OFF ||
	    (uint64_t)get_be16(payload) != mpa_len || mpa_len < DDP_UNTAGGED_HDR ||
	    (uint64_t)n < 2 + mpa_len) {
		fail(m, "the frame does not start with one FPDU holding the start of a Send");
		return 0;
	}
	m->raw_len = (size_t)mpa_len - DDP_UNTAGGED_HDR;
	memcpy(m->raw, payload + FPDU_SEND_DATA_OFF, m->raw_len);
	m->have_raw = 1;

	/* Split the segment lists by section. */
	const struct list *sc = &col[C_SEGCOUNT];
	if (sc->n != m->writes_count + m->reply_count || m->reply_count > 1 ||
	    col[C_LENGTH].n != col[C_HANDLE].n || col[C_OFFSET].n != col[C_HANDLE].n) {
		fail(m, "tshark's segment counts do not add up");
		return 0;
	}
	unsigned nwsegs = 0, nreply = m->reply_count ? (unsigned)sc->v[sc->n - 1] : 0;
	for (unsigned i = 0; i < m->writes_count; i++)
		nwsegs += (unsigned)sc->v[i];
	slice(&m->segcount_write, sc, 0, (unsigned)m->writes_count);
	slice(&m->segcount_reply, sc, (unsigned)m->writes_count, (unsigned)m->reply_count);
	if (nwsegs + nreply > col[C_HANDLE].n) {
		fail(m, "tshark shows fewer segments than its counts");
		return 0;
	}
	unsigned nread = col[C_HANDLE].n - nwsegs - nreply;
	const unsigned first[4] = {0, 0, nread, nread + nwsegs};
	const unsigned count[4] = {0, nread, nwsegs, nreply};
	for (unsigned s = SEC_READ; s <= SEC_REPLY; s++) {
		slice(&m->handle[s], &col[C_HANDLE], first[s], count[s]);
		slice(&m->length[s], &col[C_LENGTH], first[s], count[s]);
		slice(&m->offset[s], &col[C_OFFSET], first[s], count[s]);
	}
	slice(&m->positions, &col[C_POSITION], 0, col[C_POSITION].n);
	m->tshark_hdr_len = tshark_hdr_len(m, nread, nwsegs, nreply);
	return 0;
}

static int run_capture(const char *path)
{
	static struct tmsg m;
	char cmd[4200];
	char *line = NULL;
	size_t cap = 0;
	int len;

	if (strchr(path, '\'')) {
		fprintf(stderr, "capture path with a quote: %s\n", path);
		return -1;
	}
	/* Two-pass (-2) as every wire test here (tshark reads the .gz
	 * itself); only frames with an RPC-over-RDMA header; one line per
	 * frame, the columns of col_field[] separated by '|', every
	 * occurrence of a field joined by ','. */
	len = snprintf(cmd, sizeof(cmd),
		       "tshark -n -2 -r '%s' -Y rpcordma -T fields -E separator='|' "
		       "-E occurrence=a -E aggregator=,",
		       path);
	for (unsigned i = 0; i < NCOLS; i++)
		len += snprintf(cmd + len, sizeof(cmd) - (size_t)len, " -e %s", col_field[i]);
	snprintf(cmd + len, sizeof(cmd) - (size_t)len, " 2>/dev/null");
	FILE *f = popen(cmd, "r");
	if (!f) {
		perror("popen tshark");
		return -1;
	}
	unsigned before = total_msgs;
	int bad = 0;
	while (getline(&line, &cap, f) > 0) {
		uint64_t rpc_xid = 0;
		int have_rpc_xid = 0;

		memset(&m, 0, sizeof(m));
		m.frame = -1;
		unsigned before_fail = (unsigned)failures;
		if (parse_line(&m, line, &rpc_xid, &have_rpc_xid)) {
			fprintf(stderr, "tshark line not understood: %s\n", line);
			bad = 1;
			break;
		}
		if ((unsigned)failures != before_fail)
			continue;
		compare(&m);
		/* The header ends where the RPC message tshark decodes in an
		 * RDMA_MSG starts: its xid is the word at our hdr_len. */
		if (m.proc == RPCRDMA1_MSG && have_rpc_xid && m.tshark_hdr_len + 4 <= m.raw_len) {
			const uint8_t *p = m.raw + m.tshark_hdr_len;
			if (get_be32(p) != rpc_xid)
				fail(&m, "the RPC message tshark decodes does not start where the "
					 "header ends");
			rpc_after_hdr++;
		}
	}
	free(line);
	int st = pclose(f);
	if (bad)
		return -1;
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "tshark on %s failed (status %d)\n", path, st);
		return -1;
	}
	printf("%s: %u RPC-over-RDMA messages compared\n", path, total_msgs - before);
	return 0;
}

static int have_tshark(void)
{
	const char *p = getenv("PATH");
	char dir[4096];
	while (p && *p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n && n < sizeof(dir) - 8) {
			memcpy(dir, p, n);
			strcpy(dir + n, "/tshark");
			if (access(dir, X_OK) == 0)
				return 1;
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"linux-siw-nfsv3.pcap.gz", "linux-siw-nfsv4.1.pcap.gz"};
	const char *dir = argc > 1 ? argv[1] : "tests/data/captures";
	char path[4096];

	if (!have_tshark()) {
		printf("SKIP: tshark not installed\n");
		return 77;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (access(path, R_OK) != 0) {
			printf("SKIP: capture %s not readable: %s\n", path, strerror(errno));
			return 77;
		}
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (run_capture(path))
			return 1;
	}
	printf("%u messages (%u calls, %u replies): %u with a Read list, %u with a Write list, "
	       "%u with a Reply chunk, %u segments in all; %u RPC messages found right after "
	       "the header\n",
	       total_msgs, calls, replies, with_reads, with_writes, with_reply, total_segs,
	       rpc_after_hdr);
	if (total_msgs < 200 || !with_reads || !with_writes || !with_reply || calls < 100 ||
	    replies < 100 || rpc_after_hdr < 100) {
		printf("FAIL: the captures did not exercise every list (need >= 200 messages and "
		       "each kind of chunk)\n");
		return 1;
	}
	if (failures) {
		printf("FAIL: %d mismatch(es)\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
