// SPDX-License-Identifier: MIT
/*
 * The duplicate request cache alone (src/transport/drc.c): keys (XID,
 * address without port, program/version/procedure, CRC32c of the call),
 * a duplicate of a call in progress parked and the older one dropped, a
 * done call replayed with the same results (bulk items included), a
 * checksum mismatch is a miss, bounds by entries and by bytes with the
 * least recently used out first, abandon.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/xdr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/client.h"
#include "transport/drc.h"

static int fails;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

static struct sockaddr_storage peer(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
	return ss;
}

static void key(struct svc_drc_key *k, const char *ip, uint16_t port, uint32_t xid, uint32_t proc,
		const char *msg)
{
	struct sockaddr_storage ss = peer(ip, port);

	svc_drc_key(k, &ss, xid, 100003, 3, proc, msg, strlen(msg));
}

/* Results of a test reply: a number and a DDP-eligible item. */
struct res {
	u_int n;
	rpcrdma_bulk b;
};

static bool_t xdr_res(XDR *x, struct res *r)
{
	return xdr_u_int(x, &r->n) && rpcrdma_xdr_bulk(x, &r->b);
}

/* Replay @e into memory and decode it as struct res. */
static bool replay_decode(struct svc_drc_entry *e, struct res *out, uint8_t *data, uint32_t cap)
{
	static uint8_t buf[1 << 16];
	struct rpcrdma_rpc_reply rep;
	xdrproc_t xres;
	void *arg;
	XDR x;
	bool ok;

	svc_drc_reply_of(e, 77, &rep, &xres, &arg);
	if (rep.xid != 77 || !xres)
		return false;
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	ok = (*xres)(&x, arg);
	xdr_destroy(&x);
	if (!ok)
		return false;
	memset(out, 0, sizeof(*out));
	out->b.base = data;
	out->b.len = cap;
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_DECODE);
	ok = xdr_res(&x, out);
	xdr_destroy(&x);
	return ok;
}

static void done(struct svc_drc *d, struct svc_drc_entry *e, u_int n, uint8_t *data, uint32_t len)
{
	struct rpcrdma_rpc_reply rep = {.xid = 1};
	struct res r = {n, {data, len, 0}};
	struct rpcrdma_svc_req *w = NULL;

	CHECK(!svc_drc_done(d, e, &rep, (xdrproc_t)xdr_res, &r, &w) && !w);
}

int main(void)
{
	struct rpcrdma_svc_req *r1 = (void *)0x1000, *r2 = (void *)0x2000, *r3 = (void *)0x3000;
	struct rpcrdma_svc_req *dropped, *w;
	struct svc_drc_entry *e, *e2;
	struct svc_drc_stats st;
	struct svc_drc_key k, k2;
	struct svc_drc *d;
	static uint8_t data[3000], got[4096];
	struct res out;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	CHECK(svc_drc_new(4, 1u << 20, &d) == 0);

	/* miss, then a duplicate while it runs (parked; the next replaces
	 * it), then done: the waiter is handed back with the entry. */
	key(&k, "10.0.0.1", 700, 5, 8, "call-a");
	CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN && e && !dropped);
	key(&k2, "10.0.0.1", 701, 5, 8, "call-a"); /* reconnected: another port */
	CHECK(svc_drc_lookup(d, &k2, r2, &e2, &dropped) == SVC_DRC_PARKED && !dropped);
	CHECK(svc_drc_lookup(d, &k2, r3, &e2, &dropped) == SVC_DRC_PARKED && dropped == r2);
	{
		struct rpcrdma_rpc_reply rep = {.xid = 5};
		struct res r = {42, {data, sizeof(data), 0}};

		w = NULL;
		CHECK(svc_drc_done(d, e, &rep, (xdrproc_t)xdr_res, &r, &w) && w == r3);
		/* the handler's memory may go now: the cache has a copy */
		CHECK(replay_decode(e, &out, got, sizeof(got)));
		CHECK(out.n == 42 && out.b.len == sizeof(data) &&
		      memcmp(got, data, sizeof(data)) == 0);
		svc_drc_put(d, e);
	}
	/* done: replayed */
	CHECK(svc_drc_lookup(d, &k2, r2, &e2, &dropped) == SVC_DRC_REPLAY && e2 == e);
	CHECK(replay_decode(e2, &out, got, sizeof(got)) && out.n == 42);
	svc_drc_put(d, e2);
	/* same XID and address, another call (checksum): a miss. The old
	 * entry is freed by it, so the new one may have its address (it does
	 * under ThreadSanitizer's allocator): the replay below with n == 7
	 * shows it is the new entry, not a pointer comparison. */
	key(&k2, "10.0.0.1", 700, 5, 8, "call-b");
	CHECK(svc_drc_lookup(d, &k2, r1, &e2, &dropped) == SVC_DRC_RUN && e2);
	done(d, e2, 7, data, 10);
	CHECK(svc_drc_lookup(d, &k2, r1, &e2, &dropped) == SVC_DRC_REPLAY);
	CHECK(replay_decode(e2, &out, got, sizeof(got)) && out.n == 7 && out.b.len == 10);
	svc_drc_put(d, e2);
	/* another address, or another procedure: a miss */
	key(&k2, "10.0.0.2", 700, 5, 8, "call-b");
	CHECK(svc_drc_lookup(d, &k2, r1, &e2, &dropped) == SVC_DRC_RUN);
	svc_drc_abandon(d, e2, &w);
	CHECK(w == NULL);
	/* abandoned: forgotten */
	CHECK(svc_drc_lookup(d, &k2, r1, &e2, &dropped) == SVC_DRC_RUN);
	svc_drc_abandon(d, e2, &w);

	/* Entry bound (4), LRU: xids 100..103 done, 100 used again, then
	 * 104 and 105 push out 101 and 102. */
	svc_drc_free(d);
	CHECK(svc_drc_new(4, 1u << 20, &d) == 0);
	for (uint32_t x = 100; x < 104; x++) {
		key(&k, "10.0.0.1", 700, x, 1, "c");
		CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN && e);
		done(d, e, x, data, 16);
	}
	key(&k, "10.0.0.1", 700, 100, 1, "c");
	CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_REPLAY);
	svc_drc_put(d, e);
	for (uint32_t x = 104; x < 106; x++) {
		key(&k, "10.0.0.1", 700, x, 1, "c");
		CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN && e);
		done(d, e, x, data, 16);
	}
	svc_drc_stats(d, &st);
	CHECK(st.entries == 4 && st.evictions == 2 && st.hits == 1);
	{
		static const uint32_t kept[] = {100, 103, 104, 105}, gone[] = {101, 102};

		for (int i = 0; i < 4; i++) {
			key(&k, "10.0.0.1", 700, kept[i], 1, "c");
			CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_REPLAY);
			CHECK(replay_decode(e, &out, got, sizeof(got)) && out.n == kept[i]);
			svc_drc_put(d, e);
		}
		for (int i = 0; i < 2; i++) {
			key(&k, "10.0.0.1", 700, gone[i], 1, "c");
			CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN);
			svc_drc_abandon(d, e, &w);
		}
	}
	svc_drc_free(d);

	/* Byte bound 16 KiB (2 KiB per reply at most): a 3000-byte reply is
	 * not kept; 1000-byte ones are, at most 16 KiB of them. */
	CHECK(svc_drc_new(1000, 16384, &d) == 0);
	key(&k, "10.0.0.1", 700, 1, 1, "big");
	CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN && e);
	done(d, e, 1, data, sizeof(data));
	CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN && e);
	svc_drc_abandon(d, e, &w);
	for (uint32_t x = 0; x < 40; x++) {
		key(&k, "10.0.0.1", 700, 1000 + x, 1, "small");
		CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN && e);
		done(d, e, x, data, 1000);
		svc_drc_stats(d, &st);
		CHECK(st.bytes <= 16384);
	}
	svc_drc_stats(d, &st);
	printf("byte bound: %llu entries, %llu bytes, %llu evictions\n",
	       (unsigned long long)st.entries, (unsigned long long)st.bytes,
	       (unsigned long long)st.evictions);
	CHECK(st.entries >= 10 && st.entries <= 16 && st.evictions == 40 - st.entries);
	/* the newest is still there, the oldest is not */
	key(&k, "10.0.0.1", 700, 1039, 1, "small");
	CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_REPLAY);
	CHECK(replay_decode(e, &out, got, sizeof(got)) && out.n == 39 && out.b.len == 1000 &&
	      memcmp(got, data, 1000) == 0);
	svc_drc_put(d, e);
	key(&k, "10.0.0.1", 700, 1000, 1, "small");
	CHECK(svc_drc_lookup(d, &k, r1, &e, &dropped) == SVC_DRC_RUN);
	svc_drc_abandon(d, e, &w);
	svc_drc_free(d);
	if (fails) {
		fprintf(stderr, "%d check(s) failed\n", fails);
		return 1;
	}
	printf("ok\n");
	return 0;
}
