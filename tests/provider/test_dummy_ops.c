// SPDX-License-Identifier: MIT
/*
 * The dummy ops (src/provider/dummy_ops.c) through the public provider API
 * (include/rpcrdma/provider.h). The device here belongs to a provider that
 * implements nothing: its ops table is empty until
 * rpcrdma_prov_fill_dummies(), as a real provider's table is when it is
 * registered. Then:
 *   - every entry point reaches its dummy and gets -EOPNOTSUPP; the getters
 *     that cannot fail answer STag 0, not valid, offset 0, length 0;
 *   - constructors leave their out-parameter untouched; the query calls
 *     hand back zeroed structs; a dummy never blocks (progress with -1);
 *   - the optional ops stay NULL, so the dispatcher's fallbacks run:
 *     progress_poll = progress then poll, post_send_recv = one post at a
 *     time (stops at the first failed receive), ep_flush = 0;
 *   - ops a provider did fill in are kept;
 *   - NULL and out-of-range arguments are refused (-EINVAL) before any op,
 *     and nothing crashes.
 * Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "provider/provider_int.h"
#include "rpcrdma/provider.h"

#include "lib/check.h"

/* An entry point that must reach its dummy. */
#define CHECK_NOTSUP(call) CHECK((call) == -EOPNOTSUPP)

/* A device of a provider with no ops of its own, and one object of each
 * kind, as the provider would embed them in its own objects. */
static struct rpcrdma_dev_ops ops;
static struct rpcrdma_dev dev = {.ops = &ops, .name = "dummy"};
static struct rpcrdma_pd pd = {.dev = &dev};
static struct rpcrdma_mr mr = {.pd = &pd};
static int cq_ctx, ch_ctx, ep_ctx;
static struct rpcrdma_cq cq = {.dev = &dev, .context = &cq_ctx};
static struct rpcrdma_evch ch = {.dev = &dev, .context = &ch_ctx};
static struct rpcrdma_ep ep = {.dev = &dev, .pd = &pd, .context = &ep_ctx};
static struct rpcrdma_listener lst = {.dev = &dev};
static struct rpcrdma_conn_req req = {.dev = &dev};

/* A second device, of another provider, for the "same device" checks. */
static struct rpcrdma_dev other = {.ops = &ops, .name = "other"};
static struct rpcrdma_cq other_cq = {.dev = &other};

/* A sentinel an out-parameter must still hold after a failed constructor. */
#define UNTOUCHED ((void *)0x5a5a)

static void test_fill(void)
{
	static const struct rpcrdma_dev_ops none;

	CHECK(memcmp(&ops, &none, sizeof(ops)) == 0);
	rpcrdma_prov_fill_dummies(&ops);
	/* the optional ops have no dummy: NULL selects the fallback */
	CHECK(ops.ep_flush == NULL);
	CHECK(ops.progress_poll == NULL);
	CHECK(ops.post_send_recv == NULL);
	CHECK(ops.close != NULL && ops.post_send != NULL && ops.mr_length != NULL);
	/* filling again changes nothing */
	struct rpcrdma_dev_ops again = ops;
	rpcrdma_prov_fill_dummies(&again);
	CHECK(memcmp(&again, &ops, sizeof(ops)) == 0);
}

static void test_device(void)
{
	struct rpcrdma_dev_caps caps;
	struct rpcrdma_wc wc[2];
	int npolled = 7;

	CHECK_NOTSUP(rpcrdma_dev_close(&dev));
	memset(&caps, 0xa5, sizeof(caps));
	CHECK_NOTSUP(rpcrdma_dev_query(&dev, &caps));
	CHECK(caps.comp_mask == 0 && caps.provider[0] == 0 && caps.max_msg_size == 0);
	CHECK(strcmp(rpcrdma_dev_provider(&dev), "dummy") == 0);
	CHECK_NOTSUP(rpcrdma_dev_fd(&dev));
	CHECK_NOTSUP(rpcrdma_dev_progress(&dev, 0));
	CHECK_NOTSUP(rpcrdma_dev_progress(&dev, -1)); /* returns, does not wait */
	/* fallback: progress fails, so nothing is polled */
	CHECK_NOTSUP(rpcrdma_dev_progress_poll(&dev, -1, &cq, wc, 2, &npolled));
	CHECK(npolled == 0);
}

static void test_memory(void)
{
	static uint8_t buf[64];
	struct rpcrdma_pd *pd_out = UNTOUCHED;
	struct rpcrdma_mr *mr_out = UNTOUCHED;
	const unsigned int rw =
	    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE | RPCRDMA_ACCESS_REMOTE_READ;

	CHECK_NOTSUP(rpcrdma_pd_alloc(&dev, &pd_out));
	CHECK(pd_out == UNTOUCHED);
	CHECK_NOTSUP(rpcrdma_pd_free(&pd));
	CHECK_NOTSUP(rpcrdma_mr_reg(&pd, buf, sizeof(buf), rw, &mr_out));
	CHECK_NOTSUP(rpcrdma_mr_reg(&pd, NULL, 0, 0, &mr_out)); /* zero-length region */
	CHECK(mr_out == UNTOUCHED);
	CHECK_NOTSUP(rpcrdma_mr_rereg(&mr, buf, sizeof(buf), RPCRDMA_ACCESS_LOCAL_WRITE));
	CHECK_NOTSUP(rpcrdma_mr_invalidate(&mr));
	CHECK_NOTSUP(rpcrdma_mr_dereg(&mr));
	CHECK_NOTSUP(rpcrdma_mr_bind_ep(&mr, &ep));
	CHECK_NOTSUP(rpcrdma_mr_bind_ep(&mr, NULL));
	{
		/* an endpoint of another PD: refused before the provider */
		struct rpcrdma_pd pd2 = {.dev = &dev};
		struct rpcrdma_ep ep2 = {.dev = &dev, .pd = &pd2};

		CHECK(rpcrdma_mr_bind_ep(&mr, &ep2) == -EINVAL);
		CHECK(rpcrdma_mr_bind_ep(NULL, &ep) == -EINVAL);
	}
	/* getters that cannot fail: neutral values */
	CHECK(rpcrdma_mr_stag(&mr) == 0);
	CHECK(!rpcrdma_mr_valid(&mr));
	CHECK(rpcrdma_mr_offset(&mr) == 0);
	CHECK(rpcrdma_mr_length(&mr) == 0);
}

static void test_cq_evch(void)
{
	struct rpcrdma_cq_attr cattr = {.cqe = 4};
	struct rpcrdma_cq *cq_out = UNTOUCHED;
	struct rpcrdma_evch *ch_out = UNTOUCHED;
	struct rpcrdma_wc wc[4];
	struct rpcrdma_event ev, ev0;

	CHECK_NOTSUP(rpcrdma_cq_create(&dev, &cattr, &cq_out));
	CHECK(cq_out == UNTOUCHED);
	CHECK_NOTSUP(rpcrdma_cq_destroy(&cq));
	CHECK(rpcrdma_cq_context(&cq) == &cq_ctx); /* the base object's, no op */
	CHECK_NOTSUP(rpcrdma_cq_poll(&cq, wc, 4));
	CHECK_NOTSUP(rpcrdma_cq_poll(&cq, wc, 0));
	CHECK_NOTSUP(rpcrdma_cq_req_notify(&cq, false));
	CHECK_NOTSUP(rpcrdma_cq_req_notify(&cq, true));
	CHECK_NOTSUP(rpcrdma_cq_fd(&cq));
	CHECK_NOTSUP(rpcrdma_cq_ack_notify(&cq));

	CHECK_NOTSUP(rpcrdma_evch_create(&dev, NULL, &ch_out)); /* attr may be NULL */
	CHECK(ch_out == UNTOUCHED);
	CHECK_NOTSUP(rpcrdma_evch_destroy(&ch));
	memset(&ev, 0x3c, sizeof(ev));
	ev0 = ev;
	CHECK_NOTSUP(rpcrdma_evch_get(&ch, &ev)); /* not -EAGAIN: no events at all */
	CHECK(memcmp(&ev, &ev0, sizeof(ev)) == 0);
	CHECK_NOTSUP(rpcrdma_evch_fd(&ch));
}

static void test_connections(void)
{
	struct rpcrdma_ep_attr attr = {.send_cq = &cq, .recv_cq = &cq, .evch = &ch};
	struct rpcrdma_ep *ep_out = UNTOUCHED;
	struct rpcrdma_listener *l_out = UNTOUCHED;
	struct rpcrdma_ep_stats st;
	struct rpcrdma_ep_conn_info ci;
	struct sockaddr_storage ss;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(20049)};
	static const uint8_t pdata[RPCRDMA_MAX_PRIVATE_DATA];
	const struct sockaddr *sa = (const struct sockaddr *)&sin;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_NOTSUP(rpcrdma_ep_create(&pd, &attr, &ep_out));
	CHECK(ep_out == UNTOUCHED);
	CHECK_NOTSUP(rpcrdma_ep_destroy(&ep));
	CHECK(rpcrdma_ep_context(&ep) == &ep_ctx);
	memset(&st, 0xa5, sizeof(st));
	CHECK_NOTSUP(rpcrdma_ep_query_stats(&ep, &st));
	CHECK(st.comp_mask == 0 && st.tx_bytes == 0 && st.send_eagain == 0);
	memset(&ci, 0xa5, sizeof(ci));
	CHECK_NOTSUP(rpcrdma_ep_query_conn(&ep, &ci));
	CHECK(ci.comp_mask == 0 && ci.ird == 0 && ci.peer.ss_family == 0);

	CHECK_NOTSUP(rpcrdma_connect(&ep, sa, sizeof(sin), NULL, 0));
	CHECK_NOTSUP(rpcrdma_connect(&ep, sa, sizeof(sin), pdata, sizeof(pdata)));
	CHECK_NOTSUP(rpcrdma_listen(&dev, &ch, sa, sizeof(sin), 8, NULL, &l_out));
	CHECK(l_out == UNTOUCHED);
	CHECK_NOTSUP(rpcrdma_listener_destroy(&lst));
	CHECK_NOTSUP(rpcrdma_listener_addr(&lst, &ss));
	CHECK_NOTSUP(rpcrdma_accept(&req, &ep, pdata, 16));
	CHECK_NOTSUP(rpcrdma_accept(&req, &ep, NULL, 0));
	CHECK_NOTSUP(rpcrdma_reject(&req, pdata, 16));
	CHECK_NOTSUP(rpcrdma_reject(&req, NULL, 0));
	CHECK_NOTSUP(rpcrdma_disconnect(&ep));
}

static void test_work(void)
{
	static uint8_t buf[256];
	struct rpcrdma_sge sge = {.addr = (uintptr_t)buf, .length = sizeof(buf), .lkey = 1};
	struct rpcrdma_send_wr wr = {.wr_id = 1, .sg = &sge, .num_sge = 1};
	struct rpcrdma_recv_wr rwr[2] = {{.wr_id = 2, .sg = &sge, .num_sge = 1},
					 {.wr_id = 3, .sg = &sge, .num_sge = 1}};
	unsigned int nposted;

	CHECK_NOTSUP(rpcrdma_post_recv(&ep, 9, &sge, 1));
	CHECK_NOTSUP(rpcrdma_post_recv(&ep, 9, NULL, 0));
	for (int op = RPCRDMA_WR_SEND; op <= RPCRDMA_WR_RDMA_READ; op++) {
		wr.opcode = (enum rpcrdma_wr_opcode)op;
		CHECK_NOTSUP(rpcrdma_post_send(&ep, &wr));
	}
	wr.opcode = RPCRDMA_WR_SEND;
	/* fallback, one at a time: the first receive fails, nothing is sent */
	nposted = 99;
	CHECK_NOTSUP(rpcrdma_post_send_recv(&ep, &wr, rwr, 2, &nposted));
	CHECK(nposted == 0);
	nposted = 99;
	CHECK_NOTSUP(rpcrdma_post_send_recv(&ep, &wr, NULL, 0, &nposted));
	CHECK(nposted == 0);
	CHECK_NOTSUP(rpcrdma_post_send_recv(&ep, NULL, rwr, 1, NULL));
	nposted = 99;
	CHECK(rpcrdma_post_send_recv(&ep, NULL, NULL, 0, &nposted) == 0); /* nothing to do */
	CHECK(nposted == 0);
	/* no ep_flush op: the provider never holds work */
	CHECK(rpcrdma_ep_flush(&ep) == 0);
}

/* NULL and out-of-range arguments stop in the dispatcher (-EINVAL): the
 * dummies, like every op, are never handed them. */
static void test_refused(void)
{
	static uint8_t buf[16];
	static const uint8_t big[RPCRDMA_MAX_PRIVATE_DATA + 1];
	struct rpcrdma_cq_attr cattr = {.cqe = 0};
	struct rpcrdma_ep_attr attr = {.send_cq = &other_cq, .recv_cq = &cq, .evch = &ch};
	struct rpcrdma_sge sge = {0};
	struct rpcrdma_send_wr wr = {.num_sge = 1, .sg = NULL};
	struct rpcrdma_wc wc;
	struct rpcrdma_pd *pd_out = UNTOUCHED;
	struct rpcrdma_mr *mr_out = UNTOUCHED;
	struct rpcrdma_cq *cq_out = UNTOUCHED;
	struct rpcrdma_ep *ep_out = UNTOUCHED;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	const struct sockaddr *sa = (const struct sockaddr *)&sin;
	struct rpcrdma_ep other_ep = {.dev = &other, .pd = &pd};
	int npolled = 5;
	unsigned int nposted = 5;

	CHECK(rpcrdma_dev_close(NULL) == -EINVAL);
	CHECK(rpcrdma_dev_query(&dev, NULL) == -EINVAL);
	CHECK(rpcrdma_dev_fd(NULL) == -EINVAL);
	CHECK(rpcrdma_dev_progress(NULL, 0) == -EINVAL);
	CHECK(rpcrdma_dev_progress_poll(&dev, 0, &other_cq, &wc, 1, &npolled) == -EINVAL);
	CHECK(rpcrdma_dev_progress_poll(&dev, 0, &cq, &wc, -1, &npolled) == -EINVAL);
	CHECK(rpcrdma_dev_progress_poll(&dev, 0, &cq, &wc, 1, NULL) == -EINVAL);
	CHECK(strcmp(rpcrdma_dev_provider(NULL), "") == 0);

	CHECK(rpcrdma_pd_alloc(&dev, NULL) == -EINVAL);
	CHECK(rpcrdma_pd_alloc(NULL, &pd_out) == -EINVAL && pd_out == UNTOUCHED);
	CHECK(rpcrdma_pd_free(NULL) == -EINVAL);
	/* remote write without local write; unknown access bit; no address;
	 * a range past the end of the address space */
	CHECK(rpcrdma_mr_reg(&pd, buf, 16, RPCRDMA_ACCESS_REMOTE_WRITE, &mr_out) == -EINVAL);
	CHECK(rpcrdma_mr_reg(&pd, buf, 16, 1u << 7, &mr_out) == -EINVAL);
	CHECK(rpcrdma_mr_reg(&pd, NULL, 16, 0, &mr_out) == -EINVAL);
	CHECK(rpcrdma_mr_reg(&pd, (void *)(UINTPTR_MAX - 7), 16, 0, &mr_out) == -EINVAL);
	CHECK(mr_out == UNTOUCHED);
	CHECK(rpcrdma_mr_rereg(&mr, NULL, 16, 0) == -EINVAL);
	CHECK(rpcrdma_mr_rereg(NULL, buf, 16, 0) == -EINVAL);
	CHECK(rpcrdma_mr_invalidate(NULL) == -EINVAL);
	CHECK(rpcrdma_mr_dereg(NULL) == -EINVAL);
	CHECK(rpcrdma_mr_stag(NULL) == 0 && !rpcrdma_mr_valid(NULL));
	CHECK(rpcrdma_mr_offset(NULL) == 0 && rpcrdma_mr_length(NULL) == 0);

	CHECK(rpcrdma_cq_create(&dev, &cattr, &cq_out) == -EINVAL && cq_out == UNTOUCHED);
	CHECK(rpcrdma_cq_create(&dev, NULL, &cq_out) == -EINVAL);
	CHECK(rpcrdma_cq_poll(&cq, &wc, -1) == -EINVAL);
	CHECK(rpcrdma_cq_poll(&cq, NULL, 1) == -EINVAL);
	CHECK(rpcrdma_cq_req_notify(NULL, false) == -EINVAL);
	CHECK(rpcrdma_cq_fd(NULL) == -EINVAL && rpcrdma_cq_ack_notify(NULL) == -EINVAL);
	CHECK(rpcrdma_cq_destroy(NULL) == -EINVAL && rpcrdma_cq_context(NULL) == NULL);
	CHECK(rpcrdma_evch_create(&dev, NULL, NULL) == -EINVAL);
	CHECK(rpcrdma_evch_get(&ch, NULL) == -EINVAL && rpcrdma_evch_fd(NULL) == -EINVAL);
	CHECK(rpcrdma_evch_destroy(NULL) == -EINVAL);

	/* an endpoint's CQs and event channel must be of the PD's device */
	CHECK(rpcrdma_ep_create(&pd, &attr, &ep_out) == -EINVAL && ep_out == UNTOUCHED);
	attr.send_cq = NULL;
	CHECK(rpcrdma_ep_create(&pd, &attr, &ep_out) == -EINVAL);
	CHECK(rpcrdma_ep_destroy(NULL) == -EINVAL && rpcrdma_ep_context(NULL) == NULL);
	CHECK(rpcrdma_ep_query_stats(&ep, NULL) == -EINVAL);
	CHECK(rpcrdma_ep_query_conn(NULL, NULL) == -EINVAL);
	CHECK(rpcrdma_connect(&ep, NULL, 0, NULL, 0) == -EINVAL);
	CHECK(rpcrdma_connect(&ep, sa, sizeof(sin), big, sizeof(big)) == -EINVAL);
	CHECK(rpcrdma_connect(&ep, sa, sizeof(sin), NULL, 4) == -EINVAL);
	CHECK(rpcrdma_listen(&other, &ch, sa, sizeof(sin), 1, NULL,
			     &(struct rpcrdma_listener *){0}) == -EINVAL);
	CHECK(rpcrdma_listener_destroy(NULL) == -EINVAL);
	CHECK(rpcrdma_listener_addr(&lst, NULL) == -EINVAL);
	/* accept/reject consume the request even when refusing: the
	 * provider's reject (the dummy here) runs, its answer is dropped */
	CHECK(rpcrdma_accept(&req, &other_ep, NULL, 0) == -EINVAL);
	CHECK(rpcrdma_accept(&req, NULL, NULL, 0) == -EINVAL);
	CHECK(rpcrdma_accept(&req, &ep, big, sizeof(big)) == -EINVAL);
	CHECK(rpcrdma_accept(NULL, &ep, NULL, 0) == -EINVAL);
	CHECK(rpcrdma_reject(&req, big, sizeof(big)) == -EINVAL);
	CHECK(rpcrdma_reject(NULL, NULL, 0) == -EINVAL);
	CHECK(rpcrdma_disconnect(NULL) == -EINVAL);

	CHECK(rpcrdma_post_recv(&ep, 1, NULL, 1) == -EINVAL);
	CHECK(rpcrdma_post_recv(NULL, 1, &sge, 1) == -EINVAL);
	CHECK(rpcrdma_post_send(&ep, &wr) == -EINVAL);
	CHECK(rpcrdma_post_send(&ep, NULL) == -EINVAL);
	CHECK(rpcrdma_post_send_recv(&ep, NULL, NULL, 2, &nposted) == -EINVAL && nposted == 0);
	nposted = 5;
	CHECK(rpcrdma_post_send_recv(&ep, &wr, NULL, 0, &nposted) == -EINVAL && nposted == 0);
	CHECK(rpcrdma_post_send_recv(NULL, NULL, NULL, 0, NULL) == -EINVAL);
	CHECK(rpcrdma_ep_flush(NULL) == -EINVAL);
}

/* A provider's own ops survive the fill; the gaps get dummies. */
static int my_query_calls;

static int my_query(struct rpcrdma_dev *d, struct rpcrdma_dev_caps *caps)
{
	(void)d;
	my_query_calls++;
	caps->max_sge = 3;
	return 0;
}

static uint32_t my_stag(const struct rpcrdma_mr *m)
{
	(void)m;
	return 0x1234;
}

static void test_kept(void)
{
	struct rpcrdma_dev_ops mine = {.query = my_query, .mr_stag = my_stag};
	struct rpcrdma_dev d = {.ops = &mine, .name = "mine"};
	struct rpcrdma_pd p = {.dev = &d};
	struct rpcrdma_mr m = {.pd = &p};
	struct rpcrdma_dev_caps caps;

	rpcrdma_prov_fill_dummies(&mine);
	CHECK(mine.query == my_query && mine.mr_stag == my_stag);
	CHECK(rpcrdma_dev_query(&d, &caps) == 0 && my_query_calls == 1 && caps.max_sge == 3);
	CHECK(rpcrdma_mr_stag(&m) == 0x1234);
	CHECK_NOTSUP(rpcrdma_dev_close(&d));
	CHECK(!rpcrdma_mr_valid(&m));
}

/* How a provider is reached at all: by name through the registry. */
static void test_registry(void)
{
	struct rpcrdma_dev *d = UNTOUCHED;

	CHECK(rpcrdma_dev_open("no-such-provider", NULL, &d) == -ENOENT && d == UNTOUCHED);
	CHECK(rpcrdma_dev_open("softiwarp", NULL, NULL) == -EINVAL);
}

int main(void)
{
	test_fill();
	test_device();
	test_memory();
	test_cq_evch();
	test_connections();
	test_work();
	test_refused();
	test_kept();
	test_registry();
	if (failures) {
		fprintf(stderr, "test_dummy_ops: %d checks failed\n", failures);
		return 1;
	}
	printf("test_dummy_ops: every op answered as documented\n");
	return 0;
}
