/* SPDX-License-Identifier: MIT */
/*
 * Wire test (label "wire"): our RPC-over-RDMA Version One decoder against
 * Wireshark's rpcordma dissector on real Linux traffic.
 *
 * For each capture of the Linux kernel client and server talking over siw
 * (linux-siw-nfsv3.pcap.gz, linux-siw-nfsv4.1.pcap.gz in the directory
 * given as argv[1], tests/data/captures; tshark reads gzip), tshark (two-pass) exports every frame that carries an
 * RPC-over-RDMA header as JSON with raw bytes (-x): the header's own bytes
 * ("rpcordma_raw", which spans exactly the transport header) and the fields
 * the dissector decoded. For every message we decode those bytes with
 * rpcrdma1_decode_buf() and assert:
 *   - it decodes, and consumes exactly the bytes tshark attributes to the
 *     header;
 *   - same xid, version, credit, proc;
 *   - same number of Read chunks (positions), Write chunks and Reply chunk
 *     presence, the same segment count per Write chunk and Reply chunk, and
 *     the same handle / length / offset for every segment in order;
 *   - re-encoding the decoded header gives back the captured bytes;
 *   - the kernel's calls pass our responder checks (rpcrdma1_check_call)
 *     and its replies our requester checks (rpcrdma1_check_reply); a
 *     message is a reply when an earlier message carried the same xid.
 * It also requires that the captures hold at least one message with each of
 * a Read list, a Write list and a Reply chunk, and 200 messages in all, so
 * the comparison cannot pass vacuously.
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

#define MAX_FIELD 256 /* values of one repeated field in one message */

enum section { SEC_NONE, SEC_READ, SEC_WRITE, SEC_REPLY };

struct list {
	unsigned n;
	uint64_t v[MAX_FIELD];
};

/* What tshark says about one message. */
struct tmsg {
	long frame;
	uint8_t raw[4096];
	size_t raw_len;
	int have_raw;
	int have_xid;
	uint64_t xid, vers, credit, proc;
	uint64_t reads_count, writes_count, reply_count;
	int have_align;
	uint64_t align, thresh;
	int have_err;
	uint64_t errcode, vers_low, vers_high;
	enum section sec;
	struct list positions;
	struct list handle[4], length[4], offset[4]; /* by section */
	struct list segcount_write, segcount_reply;
	int overflow;
};

static int failures;
static unsigned total_msgs, with_reads, with_writes, with_reply, total_segs;
static unsigned calls, replies;
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

static void push(struct tmsg *m, struct list *l, uint64_t v)
{
	if (l->n == MAX_FIELD) {
		m->overflow = 1;
		return;
	}
	l->v[l->n++] = v;
}

/* The first "..." string on the line (tshark prints one per line). */
static int quoted(const char *line, char *out, size_t cap)
{
	const char *a = strchr(line, '"');
	if (!a)
		return -1;
	const char *b = strchr(a + 1, '"');
	if (!b || (size_t)(b - a - 1) >= cap)
		return -1;
	memcpy(out, a + 1, (size_t)(b - a - 1));
	out[b - a - 1] = 0;
	return 0;
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
	if (m->overflow) {
		fail(m, "too many fields for this test's buffers");
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
	if (h.hdr_len != m->raw_len) {
		snprintf(msg, sizeof(msg), "header length %zu, tshark's rpcordma spans %zu",
			 h.hdr_len, m->raw_len);
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
	if (rpcrdma1_encode(&x, &h) || rpcrdma_xdr_getpos(&x) != m->raw_len ||
	    memcmp(out, m->raw, m->raw_len) != 0)
		fail(m, "re-encoding does not reproduce the captured header");
}

/* One line of tshark's pretty-printed JSON. */
static void parse_line(struct tmsg *m, const char *line, int *want_raw)
{
	char key[96], val[8192];

	if (*want_raw) {
		*want_raw = 0;
		if (quoted(line, val, sizeof(val)))
			return;
		long n = tl_unhex(val, m->raw, sizeof(m->raw));
		if (n < 0) {
			m->overflow = 1;
			return;
		}
		m->raw_len = (size_t)n;
		m->have_raw = 1;
		return;
	}
	if (quoted(line, key, sizeof(key)))
		return;
	const char *colon = strstr(line, "\":");
	if (!colon)
		return;
	const char *rest = colon + 2;
	if (strcmp(key, "rpcordma_raw") == 0) {
		*want_raw = 1; /* ["hex", pos, len, ...]: the hex is on the next line */
		return;
	}
	if (quoted(rest, val, sizeof(val)))
		return; /* objects and arrays: not a value we compare */
	uint64_t v = strtoull(val, NULL, 0);

	if (strcmp(key, "frame.number") == 0)
		m->frame = (long)v;
	else if (strcmp(key, "rpcordma.xid") == 0)
		m->xid = v, m->have_xid = 1;
	else if (strcmp(key, "rpcordma.version") == 0)
		m->vers = v;
	else if (strcmp(key, "rpcordma.flow_control") == 0)
		m->credit = v;
	else if (strcmp(key, "rpcordma.msg_type") == 0)
		m->proc = v;
	else if (strcmp(key, "rpcordma.rdma_align") == 0)
		m->align = v, m->have_align = 1;
	else if (strcmp(key, "rpcordma.rdma_thresh") == 0)
		m->thresh = v;
	else if (strcmp(key, "rpcordma.errcode") == 0)
		m->errcode = v, m->have_err = 1;
	else if (strcmp(key, "rpcordma.vers_low") == 0)
		m->vers_low = v;
	else if (strcmp(key, "rpcordma.vers_high") == 0)
		m->vers_high = v;
	else if (strcmp(key, "rpcordma.reads_count") == 0)
		m->reads_count = v, m->sec = SEC_READ;
	else if (strcmp(key, "rpcordma.writes_count") == 0)
		m->writes_count = v, m->sec = SEC_WRITE;
	else if (strcmp(key, "rpcordma.reply_count") == 0)
		m->reply_count = v, m->sec = SEC_REPLY;
	else if (strcmp(key, "rpcordma.position") == 0)
		push(m, &m->positions, v);
	else if (strcmp(key, "rpcordma.segment_count") == 0)
		push(m, m->sec == SEC_REPLY ? &m->segcount_reply : &m->segcount_write, v);
	else if (strcmp(key, "rpcordma.rdma_handle") == 0)
		push(m, &m->handle[m->sec], v);
	else if (strcmp(key, "rpcordma.rdma_length") == 0)
		push(m, &m->length[m->sec], v);
	else if (strcmp(key, "rpcordma.rdma_offset") == 0)
		push(m, &m->offset[m->sec], v);
}

static int run_capture(const char *path)
{
	static struct tmsg m;
	char cmd[4200];
	char line[16384];

	if (strchr(path, '\'')) {
		fprintf(stderr, "capture path with a quote: %s\n", path);
		return -1;
	}
	/* Two-pass (-2) as every wire test here; only frames with an
	 * RPC-over-RDMA header; raw bytes (-x); only the frame and rpcordma
	 * layers in full (-J) to keep the output small. */
	snprintf(cmd, sizeof(cmd),
		 "tshark -n -2 -r '%s' -Y rpcordma -T json -x -J 'frame rpcordma' 2>/dev/null",
		 path);
	FILE *f = popen(cmd, "r");
	if (!f) {
		perror("popen tshark");
		return -1;
	}
	unsigned before = total_msgs;
	int in_msg = 0, want_raw = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"_index\"")) {
			if (in_msg)
				compare(&m);
			memset(&m, 0, sizeof(m));
			m.frame = -1;
			in_msg = 1;
			continue;
		}
		if (in_msg)
			parse_line(&m, line, &want_raw);
	}
	if (in_msg)
		compare(&m);
	int st = pclose(f);
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
	       "%u with a Reply chunk, %u segments in all\n",
	       total_msgs, calls, replies, with_reads, with_writes, with_reply, total_segs);
	if (total_msgs < 200 || !with_reads || !with_writes || !with_reply || calls < 100 ||
	    replies < 100) {
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
